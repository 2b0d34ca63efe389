// cachesim's --policy opt and --classify: hand-worked traces, the cachelab
// reference traces, and random traces held to the plain model and to OPT's bounds.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cachebook/miss_kinds.hpp"
#include "cachelab_reference.hpp"
#include "cachesim.hpp"
#include "support.hpp"

using namespace cachebook;
using namespace cachesim;

namespace {

using cachebook_test::test_data;

// The accesses of a trace file, as --policy opt and --classify read it.
Accesses trace_accesses(const std::string& path, bool modify_once = false) {
    Result result;
    const std::vector<LackeyRecord> records = read_records(path, false, 1, result);
    return accesses_of(records, modify_once);
}

Counts simulate(const Options& options, const std::vector<LackeyRecord>& records) {
    Simulator sim(options);
    sim.feed(records);
    return sim.hierarchy().counts(0);
}

}  // namespace

TEST_CASE("cachesim: accesses_of() makes M a load then a store, and drops I", "[cachesim][miss_kinds]") {
    const std::vector<LackeyRecord> records{{'I', 4, 0x400}, {'L', 8, 0x10}, {'M', 4, 0x20}, {'S', 1, 0x30}};
    const Accesses a = accesses_of(records, false);
    CHECK(a.addresses == std::vector<std::uint64_t>{0x10, 0x20, 0x20, 0x30});
    CHECK(a.writes == std::vector<bool>{false, false, true, true});
    const Accesses once = accesses_of(records, true);
    CHECK(once.addresses == std::vector<std::uint64_t>{0x10, 0x20, 0x30});
    CHECK(once.writes == std::vector<bool>{false, true, true});
}

TEST_CASE("cachesim --policy opt on yi.trace, worked by hand", "[cachesim][miss_kinds]") {
    // yi.trace: L 10, M 20, L 22, S 18, L 110, L 210, M 12. With -s 4 -E 2 -b 4
    // (16 sets of 2 lines of 16 B), lines 0x1, 0x2, 0x11, 0x21 and 0x1 again:
    // set 1 sees 0x1 0x1(S) 0x11 0x21 0x1 0x1; set 2 sees 0x2 0x2 0x2.
    // Set 1 under OPT: 0x1 misses; the store hits; 0x11 misses (empty way);
    // 0x21 misses in a full set and evicts 0x11, never used again (LRU evicts
    // 0x1 there); M 12 hits twice. Set 2: one miss, two hits.
    // Misses 4, hits 5, evictions 1 (the reference, LRU: hits 4, misses 5, evictions 2).
    const Accesses a = trace_accesses(test_data("cachelab/yi.trace"));
    const Counts opt = optimal_counts(geometry(4, 2, 4), a.addresses, a.writes);
    CHECK(summary_line(opt) == "hits:5 misses:4 evictions:1");
    CHECK(opt.dirty_evictions == 0);  // 0x11 was only read
    // Kinds of LRU's 5 misses: 4 lines touched; the fully associative LRU cache of
    // 32 lines misses only on first touches (capacity 0); conflict 5 - 4 = 1.
    CHECK(split_misses(5, geometry(4, 2, 4), a.addresses) == MissKinds{5, 4, 0, 1});
}

TEST_CASE("cachesim --policy opt equals the cachelab reference where there is no choice", "[cachesim][miss_kinds]") {
    // Direct-mapped (E = 1), a miss has only one way to evict: every policy,
    // OPT among them, gives the reference's counts. With more ways OPT misses
    // no more than the reference's LRU.
    for (const auto& r : cachebook_test::kCachelabRows) {
        INFO(fmt::format("-s {} -E {} -b {} {}", r.s, r.E, r.b, r.trace));
        const Accesses a = trace_accesses(test_data("cachelab/") + r.trace);
        const CacheConfig config = geometry(r.s, r.E, r.b);
        Counts opt = optimal_counts(config, a.addresses);
        if (r.E == 1) {
            CHECK(summary_line(opt) == summary_line(r.reference));
        } else {
            CHECK(opt.misses <= r.reference.misses);
            CHECK(opt.accesses() == r.reference.accesses());
        }
        const MissKinds k = split_misses(r.reference.misses, config, a.addresses);
        CHECK(static_cast<std::int64_t>(k.compulsory) + k.capacity + k.conflict ==
              static_cast<std::int64_t>(r.reference.misses));
        CHECK(k.compulsory <= opt.misses);
    }
}

TEST_CASE("cachesim: OPT and the kinds on random traces, against the simulator",
          "[cachesim][miss_kinds][differential]") {
    std::mt19937_64 rng(20261202);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    for (int t = 0; t < 1000; ++t) {
        const int s = static_cast<int>(pick(0, 3)), E = static_cast<int>(pick(1, 6)), b = static_cast<int>(pick(1, 4));
        const bool fifo = pick(0, 2) == 0, modify_once = pick(0, 3) == 0;
        Options options;
        options.levels.push_back(geometry(s, E, b, fifo ? Policy::FIFO : Policy::LRU));
        options.modify_once = modify_once;
        std::vector<std::uint64_t> pool(pick(2, 40));
        for (auto& a : pool) a = pick(0, std::uint64_t{1} << pick(6, 12));
        std::vector<LackeyRecord> records(pick(1, 300));
        for (auto& r : records) r = {"ILLLSSSMM"[pick(0, 8)], 4, pool[pick(0, pool.size() - 1)]};
        INFO(fmt::format("case {}: -s {} -E {} -b {}, {}, modify once {}", t, s, E, b, fifo ? "fifo" : "lru",
                         modify_once));

        const Counts online = simulate(options, records);
        const Accesses a = accesses_of(records, modify_once);
        const Counts opt = optimal_counts(options.levels[0], a.addresses, a.writes);
        REQUIRE(opt.accesses() == online.accesses());
        REQUIRE(opt.misses <= online.misses);
        if (E == 1) REQUIRE(opt == online);  // one way: no choice, even of the dirty lines

        const MissKinds k = split_misses(online.misses, options.levels[0], a.addresses);
        REQUIRE(static_cast<std::int64_t>(k.compulsory) + k.capacity + k.conflict ==
                static_cast<std::int64_t>(online.misses));
        REQUIRE(k.compulsory <= opt.misses);
        REQUIRE(k.capacity >= 0);
        if (s == 0 && !fifo) REQUIRE(k.conflict == 0);  // the fully associative LRU cache is itself

        // One case in ten through the text of a trace and read_records().
        if (t % 10 == 0) {
            const std::string path =
                (std::filesystem::temp_directory_path() / fmt::format("cachebook-opt-{}.trace", ::getpid())).string();
            {
                std::ofstream out(path);
                for (const LackeyRecord& r : records)
                    out << (r.op == 'I' ? fmt::format("I  {:08x},4\n", r.address)
                                        : fmt::format(" {} {:08x},4\n", r.op, r.address));
            }
            const Accesses again = trace_accesses(path, modify_once);
            std::remove(path.c_str());
            REQUIRE(again.addresses == a.addresses);
            REQUIRE(again.writes == a.writes);
        }
    }
}
