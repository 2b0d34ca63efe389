#pragma once
/// @file conditions.hpp
/// @brief The conditions of a run: what on this machine can distort a measurement.
///
/// Chapter 7 explains each one; `make doctor` prints them before a reader measures, and every
/// chapter's `--json` records them, so that a result can be read with its conditions. Each
/// check reads /proc and /sys (below `root`, for tests) and never fails: a file it cannot read
/// makes the item "unknown", with the reason.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cachebook {

/// One condition of the run.
struct Condition {
    std::string item;    ///< "cpus", "governor", "boost", "smt", "hypervisor", "counters", "thp", "load", "memory"
    std::string state;   ///< what was found, in words ("performance", "2 cpus, 1 core each", ...)
    bool fit = true;     ///< false when the item can distort the chapters' measurements
    std::string effect;  ///< what the item does to the measurements (empty when fit)
    std::string fix;     ///< a command that fixes it, where one exists
};

/// Every condition, read below `root` ("" is the real machine: /proc, /sys and the counters).
std::vector<Condition> run_conditions(const std::string& root = "");

/// The conditions as JSON: an array of {item, state, fit, effect, fix}, every value a string or
/// a bool (no number: the book's check for hand-typed numbers reads every number of a result).
nlohmann::json conditions_json(const std::vector<Condition>& conditions);

}  // namespace cachebook
