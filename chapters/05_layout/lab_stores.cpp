// Chapter 5's experiment, stores: one array, well beyond the caches where that is affordable,
// read, read and written, and written with plain and with non-temporal stores, each loop timed
// in turn by the thread's CPU clock; and the claim that non-temporal stores beat plain ones.
#include <fmt/format.h>

#include <algorithm>

#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch05 {

StreamSize stores_stream_size(std::int64_t stream_mib, bool quick) {
    return stream_size(stream_mib, quick, std::size_t{768} << 20, 1);
}

namespace {

// One round of the four loops, each checked: plain stores write `value`, read-modify-write
// makes every word value + 1, and the sum must read n of those (true when it does). The
// non-temporal stores then write value + 2, which time_stores checks after the last round.
bool stores_round(int r, std::vector<std::uint64_t>& a, std::uint64_t value, StoreTimes& t) {
    const std::size_t n = a.size();
    std::uint64_t sum = 0;
    time_run(
        r, [&] { plain_stores(a.data(), n, value); }, t.store);
    time_run(
        r, [&] { read_modify_write(a.data(), n); }, t.modify);
    time_run(
        r, [&] { sum = read_only(a.data(), n); }, t.read_only);
    cachebook::do_not_optimize(sum);
    time_run(
        r, [&] { streaming_stores(a.data(), n, value + 2); }, t.stream);
    return sum == n * (value + 1);
}

}  // namespace

StoreTimes time_stores(std::size_t n, int runs) {
    StoreTimes t;
    t.n = n;
    t.stream_instruction = streaming_store_instruction();
    t.fit = cache_fit(n * sizeof(std::uint64_t));
    std::vector<std::uint64_t> a(n);  // every page touched here, before any timing
    t.cpu_share = cachebook::cpu_shares(cachebook::usable_cpus());
    t.same_result = true;
    std::uint64_t value = 0;
    for (int r = -1; r < runs; ++r, value += 3) t.same_result = stores_round(r, a, value, t) && t.same_result;
    // The last round's non-temporal stores wrote value + 2, with value already moved on by 3.
    t.same_result = t.same_result && read_only(a.data(), n) == n * (value - 1);
    t.cpu_share = std::min(t.cpu_share, cachebook::cpu_shares(cachebook::usable_cpus()));
    return t;
}

cachebook::ClaimResult stores_claim(const StoreTimes& t) {
    cachebook::ClaimResult r;
    r.threshold = kStoreOverStream.threshold;
    if (t.stream_instruction.empty()) {
        r.reason = "this instruction set has no non-temporal store the book uses: plain stores ran in its place";
        return r;
    }
    r = decide_bandwidth_claim(t.store, t.stream, kStoreOverStream, t.cpu_share);
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
