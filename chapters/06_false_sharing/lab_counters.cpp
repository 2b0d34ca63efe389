// Chapter 6's hardware counters: perf stat's cache-misses and LLC-load-misses around a race,
// counted in this process (cachebook/perf_counters.hpp), or why there are none.
#include "lab.hpp"

namespace ch06 {

std::pair<CounterReading, CounterReading> count_race_misses(const std::vector<int>& cpus, std::uint64_t increments) {
    CounterReading packed, padded;
    if (cpus.size() < 2) {
        packed.why_not = padded.why_not = "needs 2 cpus";
        return {packed, padded};
    }
    for (auto [reading, spacing] : {std::pair{&packed, Spacing::Packed}, std::pair{&padded, Spacing::Padded}})
        *reading = count_misses(  // a structured binding is captured by copy: clang allows no other
            [&, spacing = spacing] { race_once(Op::AtomicFetchAdd, spacing, 2, cpus, increments); });
    return {packed, padded};
}

}  // namespace ch06
