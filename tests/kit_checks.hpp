#pragma once
// What the tests of the measuring rule share (test_claim.cpp, test_experiment.cpp and
// test_core_share.cpp): the order both timers call two sides in, and the kit's answer when the
// threads of a claim did not each get a core.
#include <catch2/catch.hpp>
#include <string>

#include "cachebook/experiment.hpp"

namespace cachebook_test {

/// The calls of a slow side (S) and a fast side (F) timed six runs a side: one untimed call of
/// each, then the runs in A B B A order, so that each side runs first in three runs and second in
/// three. measure_claim (claim.hpp) and run_experiment (experiment.hpp) both call them so.
inline const std::string kSixRunsAbba =
    "SF"  // untimed
    "SF"
    "FS"
    "SF"
    "FS"
    "SF"
    "FS";

/// No verdict, with the rule's figures (`rule`: "2.00x against at least 1.50x, noise 0 %") and
/// the share each thread got (`shares`: "0.97, 0.45") in the reason: the kit's answer to a claim
/// whose threads did not each have a core, whether a probe or the threads themselves said so.
inline void check_no_core_each(const cachebook::ClaimResult& r, const std::string& rule, const std::string& shares) {
    CHECK(r.verdict == cachebook::Verdict::inconclusive);
    CHECK(r.reason == rule + ": the threads got " + shares +
                          " of a core, one below 0.70: they did not each have a core of their own");
}

}  // namespace cachebook_test
