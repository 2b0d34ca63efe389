#pragma once
// Chapter 1's lab: what the program prints and records of the lesson's examples (the
// stepper's grids, the walks' first cells, the JSON the book's page and stepper read).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cachebook/trace.hpp"
#include "row_major.hpp"

namespace ch01 {

/// The M / H / . grid of a walk after its first `upto` steps (all by default).
std::vector<std::string> stepper_grid(const StepperRun& run, std::size_t upto = SIZE_MAX);

/// The first `count` cells of a visit order, as "(i,j) (i,j) ...".
std::string cells_text(const std::vector<cachebook::Cell>& order, std::size_t count);
/// The first `count` cells of a visit order as JSON pairs.
nlohmann::json cells_json(const std::vector<cachebook::Cell>& order, std::size_t count);
/// The first `count` addresses of a trace.
std::vector<std::uint64_t> first_addresses(const std::vector<std::uint64_t>& trace, std::size_t count);

nlohmann::json to_json(const Location& l);
nlohmann::json to_json(const StepperRun& r);

}  // namespace ch01
