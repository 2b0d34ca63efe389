// Chapter 5's experiment, stores: one array, well beyond the caches where that is affordable,
// written with plain and with non-temporal stores (the claim, declared), read, and read and
// written (beside it, for the table); and the premises the claim needs.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "lab.hpp"

namespace ch05 {

StreamSize stores_stream_size(std::int64_t stream_mib, bool quick) {
    return stream_size(stream_mib, quick, std::size_t{768} << 20, 1);
}

namespace {

// The four loops, each checked once: plain stores write 7, read-modify-write makes every word 8,
// the sum reads n of those, and the non-temporal stores then write 9.
bool stores_right(std::vector<std::uint64_t>& a) {
    const std::size_t n = a.size();
    plain_stores(a.data(), n, 7);
    read_modify_write(a.data(), n);
    const bool modified = read_only(a.data(), n) == n * 8;
    streaming_stores(a.data(), n, 9);
    return modified && read_only(a.data(), n) == n * 9;
}

}  // namespace

StoresExperiment::StoresExperiment(std::size_t n, int runs)
    : a_(n),  // every page touched here, before any timing
      declared_{"stores",
                "plain stores / non-temporal stores",
                [this] { plain_stores(a_.data(), a_.size(), 3), cachebook::clobber_memory(); },
                [this] { streaming_stores(a_.data(), a_.size(), 5), cachebook::clobber_memory(); },
                {.runs = runs, .quick_runs = cachebook::kMinRunsPerSide},
                {.threshold = kStoreOverStream, .memory_bound = true}} {}

StoreTimes StoresExperiment::run(bool quick) {
    StoreTimes t;
    t.n = a_.size();
    t.stream_instruction = streaming_store_instruction();
    t.fit = cache_fit(t.n * sizeof(std::uint64_t));
    t.same_result = stores_right(a_);
    t.claim = cachebook::run_experiment(declared_, quick, experiment_instruments());
    t.store = timing_of(t.claim.slow_runs);
    t.stream = timing_of(t.claim.fast_runs);
    // The read-only sum, the premise's yardstick, and read-modify-write make no claim of their own.
    std::tie(t.modify, t.read_only) = time_beside(
        declared_, t.claim.calls_per_run, quick,
        [&] { read_modify_write(a_.data(), t.n), cachebook::clobber_memory(); },
        [&] { sink_ += read_only(a_.data(), t.n), cachebook::do_not_optimize(sink_); });
    return t;
}

cachebook::ClaimResult stores_claim(const StoreTimes& t) {
    cachebook::ClaimResult r = t.claim.result;
    if (t.stream_instruction.empty()) {
        r = {};
        r.threshold = kStoreOverStream;
        r.reason = "this instruction set has no non-temporal store the book uses: plain stores ran in its place";
        return r;
    }
    if (!t.fit.within.empty()) {
        r.verdict = cachebook::Verdict::inconclusive;
        r.reason += fmt::format(
            "; but the array lies within {}, where plain stores hit and non-temporal ones still go to memory, "
            "so this says nothing of memory traffic",
            t.fit.within);
    }
    const double store_over_read = t.read_only.runs.empty() ? 0 : t.store.min() / t.read_only.min();
    if (t.fit.within.empty() && store_over_read > 0 && store_over_read < kStoreOverReadPremise) {
        r.verdict = cachebook::Verdict::inconclusive;
        r.reason += fmt::format(
            "; but plain stores took {:.2f} times the read-only sum, under {:.1f}: the lines they read for "
            "ownership cost this machine no time, so non-temporal stores have nothing to save",
            store_over_read, kStoreOverReadPremise);
    }
    return r;
}

}  // namespace ch05
