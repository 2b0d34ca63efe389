#pragma once
// A chapter's performance probe: what perf_probe_main.cpp asks of exercises/perf.cpp, the
// instructor's file that says how one exercise is scored for speed. The probe runs three
// versions of the exercise's work: the reference solution, the starter's naive way (the baseline
// of the model score) and the student's submission, each on data perf.cpp prepares.
// The measured score runs the submission in a process of its own, which the timing process starts
// with the kit's unwritten starter linked in: that process times the reference, reads the
// submission's CPU clock from outside and checks the submission's results.
#include <cstdint>
#include <string>

namespace perf_probe {

/// ReferenceAgain: the reference on data of its own, so that in the timed rounds (reference,
/// submission, reference again) no run follows a run on the same data, which would find it warm
/// in the cache.
enum class Which { Reference, Baseline, Submission, ReferenceAgain };

/// The cache the model score simulates, as cachesim's -s -E -b.
struct ModelCache {
    int s = 0, E = 0, b = 0;
};

/// What the exercise is (one line for the report) and the model's cache.
struct Spec {
    std::string exercise;
    ModelCache cache;
};
Spec spec();

/// Empty when the submission's result is correct; else why not (one line).
std::string check();

/// Makes the data of one version for a traced run (`traced`: small, for the simulator) or a
/// timed run (large).
void prepare(bool traced, Which which);

/// Gives a version's next run inputs made from `seed`, which the timing process draws for each
/// round: no answer can be worked out before its round starts, nor kept from an earlier one.
void vary(Which which, std::uint32_t seed);

/// Runs one version once on the prepared data.
void run(Which which);

/// What the version's last run computed, as bytes the timing process can check.
std::string result(Which which);

/// Empty when `submitted` (the submission's result(), from its own process, on the inputs of the
/// seed the reference last ran on) is right; else why not (one line).
std::string result_problem(const std::string& submitted);

}  // namespace perf_probe
