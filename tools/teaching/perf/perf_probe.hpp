#pragma once
// A chapter's performance probe: what perf_probe_main.cpp asks of exercises/perf.cpp, the
// instructor's file that says how one exercise is scored for speed. The probe runs three
// versions of the exercise's work: the reference solution, the starter's naive way (the baseline
// of the model score) and the student's submission, each on data perf.cpp prepares.
#include <string>

namespace perf_probe {

/// ReferenceAgain: the reference on data of its own where the data can differ between runs, so
/// that in the timed rounds (reference, submission, reference again) no run follows a run on the
/// same data, which would find it warm in the cache.
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

/// Makes the data for a traced run (`traced`: small, for the simulator) or a timed run (large).
void prepare(bool traced);

/// Runs one version once on the prepared data.
void run(Which which);

}  // namespace perf_probe
