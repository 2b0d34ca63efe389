// The time model (time_model.hpp) on cases worked by hand, the traffic it takes from the
// hierarchy's counts, and the page placement of the hierarchy (hierarchy.hpp).
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "cachebook/hierarchy.hpp"
#include "cachebook/in_flight.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/time_model.hpp"

using cachebook::Combine;
using cachebook::LevelPrice;
using cachebook::LevelTraffic;
using cachebook::predict;
using cachebook::Work;

TEST_CASE("time model: 12 loads in flight at 36 ns give 3 ns an independent miss", "[time_model]") {
    const std::vector<LevelPrice> memory = {{"memory", 36, 64, 12}};
    const Work one_miss{{{1, 64}}, false, false, 0};  // bandwidth: 64 B at 64 GB/s, 1 ns
    const auto p = predict(memory, one_miss, Combine::overlapped);
    CHECK(p.ns == 3.0);
    CHECK(p.levels[0].latency_ns == 3.0);
    CHECK(p.levels[0].bandwidth_ns == 1.0);
    CHECK(p.bottleneck == "latency-bound in memory");
    // The same miss, dependent, waits the whole latency.
    CHECK(predict(memory, {{{1, 64}}, true, false, 0}, Combine::overlapped).ns == 36.0);
}

TEST_CASE("time model: dependent loads add each level's latencies, as AMAT does", "[time_model]") {
    const std::vector<LevelPrice> levels = {{"L1", 1, 100, 10}, {"L2", 4, 50, 10}, {"memory", 100, 20, 16}};
    const Work chase{{{100, 800}, {10, 640}, {2, 128}}, true, false, 0};
    for (Combine c : {Combine::overlapped, Combine::added}) {
        const auto p = predict(levels, chase, c);
        CHECK(p.ns == 340.0);  // 100 x 1 + 10 x 4 + 2 x 100: a chain cannot overlap, whatever `c`
        CHECK(p.bottleneck == "latency-bound in memory");
    }
}

TEST_CASE("time model: independent loads, levels overlapped or added", "[time_model]") {
    // L1: 1000 loads of 8 B at 80 GB/s = 100 ns; latency 1000 x 1 / 20 = 50 ns: bandwidth-bound.
    // memory: 125 lines, 8000 B at 20 GB/s = 400 ns; latency 125 x 100 / 16 = 781.25 ns: latency-bound.
    const std::vector<LevelPrice> levels = {{"L1", 1, 80, 20}, {"memory", 100, 20, 16}};
    const Work work{{{1000, 8000}, {125, 8000}}, false, false, 50};
    const auto overlapped = predict(levels, work, Combine::overlapped);
    CHECK(overlapped.levels[0].ns() == 100.0);
    CHECK(overlapped.levels[1].ns() == 781.25);
    CHECK(overlapped.ns == 781.25);  // the largest of 50, 100 and 781.25
    CHECK(overlapped.bottleneck == "latency-bound in memory");
    const auto added = predict(levels, work, Combine::added);
    CHECK(added.ns == 931.25);  // 50 + 100 + 781.25
    CHECK(added.bottleneck == "latency-bound in memory");
    // Prefetched, memory pays its bandwidth only: 400 ns.
    const auto streamed = predict(levels, {work.levels, false, true, 50}, Combine::overlapped);
    CHECK(streamed.ns == 400.0);
    CHECK(streamed.bottleneck == "bandwidth-bound in memory");
    CHECK(predict(levels, {work.levels, false, true, 50}, Combine::added).ns == 550.0);
}

TEST_CASE("time model: the core's work, when it is the largest, sets the time", "[time_model]") {
    const std::vector<LevelPrice> l1 = {{"L1", 1, 80, 20}};
    const auto p = predict(l1, {{{1000, 8000}}, false, false, 1000}, Combine::overlapped);
    CHECK(p.ns == 1000.0);
    CHECK(p.bottleneck == "core-bound");
    CHECK(predict(l1, {{{1000, 8000}}, false, false, 1000}, Combine::added).ns == 1100.0);
}

TEST_CASE("time model: the core's chained adds, priced at the profile's latency of one add", "[time_model]") {
    const cachebook::CorePrice core{0.25, 0.5};
    CHECK(cachebook::core_ns(core, {0.5, 0}, 1000) == 125.0);  // the row sum: two paddq a four ints
    CHECK(cachebook::core_ns(core, {1, 0}, 1000) == 250.0);    // a column sum: one add a load
    CHECK(cachebook::core_ns(core, {1, 0.5}, 1000) == 500.0);  // 250 + 1000 x 0.5 x 0.5
    CHECK(cachebook::core_ns(core, {}, 1000) == 0.0);          // no chain: the loads alone
}

namespace {

// L1 of 4 sets x 2 ways of 64 B (512 B, within a page: placement moves none of its sets), then memory.
cachebook::PricedMachine small_machine(double int_add_ns, double fp_add_ns) {
    cachebook::PricedMachine m;
    m.caches = {{4, 2, 64}};
    m.prices = {{"L1", 1, 8, 1}, {"memory", 100, 64, 16}};
    m.core = {int_add_ns, fp_add_ns};
    return m;
}

}  // namespace

TEST_CASE("predict_walk: the larger of the core's chain and the levels, or their sum", "[time_model]") {
    // A row sum of 16 x 16 ints (1 KiB, 16 lines) through 512 B: the warm pass leaves none of the
    // lines the counted pass starts with, so memory serves all 16 lines (1024 B at 64 GB/s: 16 ns,
    // prefetched) and L1 the other 240 loads; 256 loads of 4 B pass L1's ports: 1024 B at 8 GB/s,
    // 128 ns. The core: 256 loads x 0.5 adds x 2 ns = 256 ns.
    const auto m = small_machine(2, 1);
    const auto p = cachebook::predict_walk(m, {cachebook::row_walk(16), 4, false, true, {}, 1, cachebook::kRowSumCore});
    CHECK(p.loads == 256);
    CHECK(p.overlapped.levels[0].ns() == 128.0);
    CHECK(p.overlapped.levels[1].ns() == 16.0);
    CHECK(p.overlapped.ns == 256.0);
    CHECK(p.overlapped.bottleneck == "core-bound");
    CHECK(p.added.ns == 400.0);  // 256 + 128 + 16
    // A faster core (0.5 ns an add: 64 ns) leaves L1's ports the bottleneck.
    const auto fast = cachebook::predict_walk(small_machine(0.5, 1),
                                              {cachebook::row_walk(16), 4, false, true, {}, 1, cachebook::kRowSumCore});
    CHECK(fast.overlapped.ns == 128.0);
    CHECK(fast.overlapped.bottleneck == "bandwidth-bound in L1");
}

TEST_CASE("predict_walk: a column whose lines share one L1 set waits for the set's refills", "[time_model]") {
    // 16 rows a page apart, 4 columns: the L1 of 4 sets x 2 ways keeps 2 of a column's 16 lines
    // (all in set 0), so each of the 64 loads misses it, all but the first to the set of the miss
    // before: 63 refills at 3 ns = 189 ns, over L2's latency 64 x 4 / 16 = 16 ns.
    auto m = small_machine(0.25, 0.5);
    m.caches = {{4, 2, 64}, {1024, 16, 64}};
    m.prices = {{"L1", 1, 1000, 1, 3}, {"L2", 4, 1000, 16}, {"memory", 100, 1000, 16}};
    const cachebook::Walk column = [](cachebook::Hierarchy& h) {
        for (std::uint64_t j = 0; j < 4; ++j)
            for (std::uint64_t i = 0; i < 16; ++i) h.access(i * 4096 + j * 4);
    };
    const auto p = cachebook::predict_walk(m, {column, 4, false, false, {}, 1, {}}, 1);
    CHECK(p.overlapped.levels[0].refill_ns == 189.0);
    CHECK(p.overlapped.ns == 189.0);
    CHECK(p.overlapped.bottleneck == "refill-bound in L1");
}

TEST_CASE("predict_matmul: an inner loop over k chains one double add a multiply-add, the others none",
          "[time_model]") {
    // Levels nearly free, so that the core's work shows: ijk at n = 4 is 64 multiply-adds, 64 addsd
    // in one chain at 0.5 ns.
    auto m = small_machine(0.25, 0.5);
    m.prices = {{"L1", 1e-9, 1e9, 1}, {"memory", 1e-9, 1e9, 1}};
    const auto ijk = cachebook::predict_matmul(m, cachebook::LoopOrder::ijk, 4, 0, false);
    REQUIRE(ijk.has_value());
    CHECK(ijk->loads == 4 * 4 * 9);  // per (i, j): C once, then A and B four times each
    CHECK(ijk->overlapped.ns == Approx(32.0).epsilon(1e-12));
    CHECK(ijk->overlapped.bottleneck == "core-bound");
    const auto ikj = cachebook::predict_matmul(m, cachebook::LoopOrder::ikj, 4, 0, true);
    REQUIRE(ikj.has_value());
    CHECK(ikj->overlapped.ns < 1e-3);
    CHECK(ikj->overlapped.bottleneck != "core-bound");
}

TEST_CASE("time model: L1 misses to the set of the miss before wait for the set's refill", "[time_model]") {
    // 1000 loads miss L1, 900 of them to the set of the miss before; L2 serves all 1000.
    // L1: 1000 loads of 4 B at 80 GB/s = 50 ns; refills 900 x 2 ns = 1800 ns.
    // L2: 64000 B at 64 GB/s = 1000 ns; latency 1000 x 4 / 10 = 400 ns.
    const std::vector<LevelPrice> levels = {{"L1", 1, 80, 20, 2}, {"L2", 4, 64, 10}};
    const Work work{{{0, 4000, 900}, {1000, 64000}}, false, false, 0};
    const auto p = predict(levels, work, Combine::overlapped);
    CHECK(p.levels[0].refill_ns == 1800.0);
    CHECK(p.levels[0].ns() == 1800.0);
    CHECK(p.ns == 1800.0);
    CHECK(p.bottleneck == "refill-bound in L1");
    CHECK(predict(levels, work, Combine::added).ns == 2800.0);  // 1800 + 1000
    // A chain of dependent loads pays latencies only: the refill is inside each load's latency.
    CHECK(predict(levels, {work.levels, true, false, 0}, Combine::overlapped).levels[0].refill_ns == 0.0);
}

TEST_CASE("hierarchy: misses to the set of the miss before, counted at the first level", "[time_model]") {
    // L1 of 4 sets x 2 ways of 64 B. Three lines 256 B apart share set 0 and overflow its two
    // ways: walked twice, the second walk misses all three, each to set 0 as the miss before.
    cachebook::Hierarchy h({{4, 2, 64}, {64, 4, 64}});
    for (int pass = 0; pass < 2; ++pass)
        for (std::uint64_t a : {0, 256, 512}) h.access(a);
    CHECK(h.counts()[0].misses == 6);
    CHECK(h.counts()[0].same_set_misses == 5);  // every miss but the first
    CHECK(h.counts()[1].same_set_misses == 0);  // the first level's only
    h.reset_counts();
    for (std::uint64_t a : {0, 64, 256, 320, 512, 576}) h.access(a);  // sets 0, 1, 0, 1, ...: none follows its own
    CHECK(h.counts()[0].misses == 6);
    CHECK(h.counts()[0].same_set_misses == 0);
    // Through traffic_of, L1's same-set misses go with its traffic, and no other level's.
    const auto t = cachebook::traffic_of({{10, 6, 5}, {6, 0, 0}}, 8, 64);
    CHECK(t[0].same_set_misses == 5);
    CHECK(t[1].same_set_misses == 0);
}

TEST_CASE("time model: bad prices and mismatched levels are refused", "[time_model]") {
    const Work work{{{1, 64}}, false, false, 0};
    CHECK_THROWS_AS(predict({}, work, Combine::overlapped), std::invalid_argument);
    CHECK_THROWS_AS(predict({{"L1", 1, 0, 1}}, work, Combine::overlapped), std::invalid_argument);
    CHECK_THROWS_AS(predict({{"L1", 1, 10, 0.5}}, work, Combine::overlapped), std::invalid_argument);
}

TEST_CASE("traffic_of: hits of each level, L1's bytes from every load, memory from the last misses", "[time_model]") {
    const std::vector<cachebook::LevelCounts> counts = {{1000, 100}, {100, 40}};
    const auto t = cachebook::traffic_of(counts, 4, 64);
    REQUIRE(t.size() == 3);
    CHECK(t[0].loads == 900);
    CHECK(t[0].bytes == 4000);  // all 1000 loads pass L1's ports
    CHECK(t[1].loads == 60);
    CHECK(t[1].bytes == 60 * 64);
    CHECK(t[2].loads == 40);
    CHECK(t[2].bytes == 40 * 64);
}

TEST_CASE("page placement keeps the offset, a page's frame and distinct frames", "[time_model]") {
    cachebook::PagePlacement place(5);
    const auto a = place.physical(4096 * 7 + 100);
    CHECK(a % 4096 == 100);
    CHECK(place.physical(4096 * 7 + 200) == a - 100 + 200);  // the same page, the same frame
    std::vector<std::uint64_t> frames;
    for (std::uint64_t page = 0; page < 1000; ++page) frames.push_back(place.physical(page * 4096) / 4096);
    std::sort(frames.begin(), frames.end());
    CHECK(std::adjacent_find(frames.begin(), frames.end()) == frames.end());
}

TEST_CASE("placed counts: an L1 indexed within the page counts as without placement", "[time_model]") {
    // L1: 64 sets x 64 B = one page, so its sets are the same whatever frame a page lands in; the
    // L2 (1024 sets x 64 B = 16 pages) sees the frames.
    const std::vector<cachebook::CacheConfig> levels = {{64, 2, 64}, {1024, 2, 64}};
    for (const auto& walk : {cachebook::row_walk(64), cachebook::column_walk(256)}) {
        const auto plain = cachebook::warm_counts(levels, walk);
        const auto placed = cachebook::placed_counts(levels, walk, 3);
        CHECK(placed[0].accesses == plain[0].accesses);
        CHECK(placed[0].misses == plain[0].misses);
        CHECK(placed[1].accesses == plain[1].accesses);
    }
    CHECK_THROWS_AS(cachebook::placed_counts(levels, cachebook::row_walk(8), 0), std::invalid_argument);
}

TEST_CASE("profile: prices take latency, reads and loads in flight, and refuse a level without them", "[time_model]") {
    cachebook::Profile p;
    cachebook::LevelProfile l1;
    l1.name = "L1";
    l1.latency_ns = {1.0, 0, "chase"};
    l1.read_gbs = {80.0, 0, "reads"};
    l1.in_flight = {0.5, 0, "knee"};  // below one: priced as one
    cachebook::LevelProfile memory;
    memory.name = "memory";
    memory.latency_ns = {100.0, 0.1, "chase"};
    memory.read_gbs = {20.0, 0.1, "reads"};
    p.levels = {l1, memory};
    CHECK_FALSE(p.prices({"L1", "memory"}).has_value());  // memory has no loads in flight
    p.levels[1].in_flight = {16.0, 0, "knee"};
    const auto prices = p.prices({"L1", "memory"});
    REQUIRE(prices.has_value());
    CHECK((*prices)[0].in_flight == 1.0);
    CHECK((*prices)[1].latency_ns == 100.0);
    CHECK((*prices)[1].gbs == 20.0);  // no vector figure: the 8-byte one
    p.levels[1].vector_read_gbs = {30.0, 0, "vector reads"};
    p.levels[0].vector_read_gbs = {300.0, 0, "vector reads"};
    CHECK((*p.prices({"L1", "memory"}))[1].gbs == 30.0);  // whole lines: the widest loads' figure
    CHECK((*p.prices({"L1", "memory"}))[0].gbs == 80.0);  // L1 serves the loads themselves
    CHECK_FALSE(p.prices({"L2"}).has_value());
    const auto json = cachebook::profile_json(p);
    CHECK(json["levels"][1]["latency_ns"]["value"] == 100.0);
    CHECK(json["levels"][0]["store_gbs"]["value"].is_null());
    CHECK(json["levels"][0]["stream_store_gbs"]["value"].is_null());
}

TEST_CASE("profile: a level of unknown size is not measured, and says why", "[time_model]") {
    cachebook::LevelSizes none;  // every size 0
    const auto p = cachebook::measure_profile(none, {.runs = 1});
    REQUIRE(p.levels.size() == 4);
    for (const auto& l : p.levels) {
        CHECK_FALSE(l.latency_ns.value.has_value());
        CHECK(l.latency_ns.source.rfind("not measured: ", 0) == 0);
    }
    // The core needs no cache size: measured on every machine, a double add no faster than an integer one.
    REQUIRE(p.core.int_add_ns.value.has_value());
    REQUIRE(p.core.fp_add_ns.value.has_value());
    REQUIRE(p.core.peak_gflops.value.has_value());
    CHECK(*p.core.int_add_ns.value > 0);
    CHECK(*p.core.fp_add_ns.value >= 0.9 * *p.core.int_add_ns.value);
    CHECK(*p.core.peak_gflops.value > 0);
}

TEST_CASE("knee_of over counts past sixteen: the knee is a count, in flight the first over the best", "[time_model]") {
    const std::vector<std::size_t> counts = {1, 2, 4, 16, 24, 32};
    const std::vector<double> ns = {240, 120, 60, 15, 10.5, 10};
    const auto knee = cachebook::knee_of(counts, ns);
    CHECK(knee.k == 24);  // 10.5 <= 1.1 x 10
    CHECK(knee.best_ns == 10.0);
    CHECK(knee.in_flight == 24.0);
    using Counts = std::vector<std::size_t>;
    using Times = std::vector<double>;
    CHECK_THROWS_AS(cachebook::knee_of(Counts{2, 4}, Times{1.0, 2.0}), std::invalid_argument);  // not from one chase
    CHECK_THROWS_AS(cachebook::knee_of(Counts{1, 2}, Times{1.0}), std::invalid_argument);
}

namespace {

cachebook::Profile two_levels() {
    cachebook::Profile p;
    cachebook::LevelProfile l1, memory;
    l1.name = "L1";
    l1.bytes = 16384;
    l1.latency_ns = {1.25, 0, "chase"};
    l1.read_gbs = {80.0, 0.5, "reads"};
    l1.in_flight = {10.0, 0, "knee"};
    memory.name = "memory";
    memory.bytes = 1 << 26;
    memory.latency_ns = {100.0, 0.25, "chase"};
    memory.read_gbs = {20.0, 0, "reads"};
    memory.stream_store_gbs = {12.5, 0.1, "streaming stores"};
    memory.in_flight = {24.0, 0, "knee"};
    p.levels = {l1, memory};
    p.l3_reach = {std::nullopt, 0, "not measured: no L3"};
    p.core = {{0.25, 0.02, "integer chain"}, {0.5, 0, "double chain"}, {std::nullopt, 0, "not measured"}};
    p.l1_set_refill_ns = {2.0, 0.05, "chases in one set"};
    p.vector_bytes = 32;
    p.probe_seconds = 1.5;
    return p;
}

}  // namespace

TEST_CASE("profile: its JSON reads back figure for figure", "[time_model]") {
    const auto p = cachebook::profile_from_json(cachebook::profile_json(two_levels()));
    REQUIRE(p.levels.size() == 2);
    CHECK(p.levels[0].latency_ns.value == 1.25);
    CHECK(p.levels[0].read_gbs.spread == 0.5);
    CHECK(p.levels[1].in_flight.value == 24.0);
    CHECK(p.levels[1].bytes == std::size_t{1} << 26);
    CHECK_FALSE(p.levels[0].store_gbs.value.has_value());
    CHECK_FALSE(p.l3_reach.value.has_value());
    CHECK(p.vector_bytes == 32);
    CHECK(p.levels[1].stream_store_gbs.value == 12.5);
    CHECK(p.levels[1].stream_store_gbs.spread == 0.1);
    CHECK_FALSE(p.levels[0].stream_store_gbs.value.has_value());
    CHECK(p.l1_set_refill_ns.value == 2.0);
    CHECK(p.prices({"L1", "memory"})->front().set_refill_ns == 2.0);  // L1's alone
    CHECK(p.prices({"L1", "memory"})->back().set_refill_ns == 0.0);
    CHECK(p.core.int_add_ns.value == 0.25);
    CHECK(p.core.int_add_ns.spread == 0.02);
    CHECK(p.core.fp_add_ns.source == "double chain");
    CHECK_FALSE(p.core.peak_gflops.value.has_value());
    CHECK(cachebook::profile_json(p) == cachebook::profile_json(two_levels()));
    REQUIRE(p.core_price().has_value());
    CHECK(p.core_price()->int_add_ns == 0.25);
    CHECK(p.core_price()->fp_add_ns == 0.5);
    auto without = two_levels();
    without.core.fp_add_ns = {};
    CHECK_FALSE(without.core_price().has_value());
    auto old = cachebook::profile_json(two_levels());
    old.erase("core");  // a file of the shape before the core's figures: refused, so measured again
    CHECK_THROWS_AS(cachebook::profile_from_json(old), nlohmann::json::exception);
}

TEST_CASE("profile: with CACHEBOOK_PROFILE_DIR the programs of a run read the one file of this machine and build",
          "[time_model]") {
    const auto dir = std::filesystem::temp_directory_path() / ("cachebook-profile-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    cachebook::write_json((dir / ("profile-" + cachebook::profile_key() + ".json")).string(),
                          cachebook::profile_json(two_levels()));
    const auto p = cachebook::shared_profile_in(dir.string());  // read, not measured: the figures are the file's
    std::filesystem::remove_all(dir);
    REQUIRE(p.levels.size() == 2);
    CHECK(p.levels[1].latency_ns.value == 100.0);
    CHECK(p.origin.find("shared") != std::string::npos);
}

TEST_CASE("priced: an L3 without ways runs with the L2's, no larger than the profile's reach", "[time_model]") {
    const auto l2 = cachebook::CacheConfig::from_capacity(1 << 20, 16, 64);
    cachebook::CacheInfo l3;
    l3.level = 3;
    l3.size_bytes = std::size_t{508} << 20;
    l3.line_bytes = 64;  // ways 0: not reported
    auto profile = two_levels();
    profile.l3_reach = {double(std::size_t{32} << 20), 0, "chases"};
    std::string note;
    const auto c = cachebook::modelled_l3(l3, l2, profile, note);
    REQUIRE(c.has_value());
    CHECK(c->ways == 16);
    CHECK(c->capacity_bytes() == std::size_t{32} << 20);
    CHECK(note ==
          "the L3's ways unknown: run with the L2's 16; the L3 run at 32 MiB, the reach the profile measured, "
          "of 508 MiB reported");
    l3.ways = 12;  // reported, and no reach measured: the machine's L3 as it says
    profile.l3_reach = {std::nullopt, 0, "not measured"};
    note.clear();
    const auto whole = cachebook::modelled_l3(l3, l2, profile, note);
    REQUIRE(whole.has_value());
    CHECK(whole->ways == 12);
    CHECK(whole->capacity_bytes() == l3.size_bytes - l3.size_bytes % (12 * 64));
    CHECK(note.empty());
    l3.size_bytes = 0;
    CHECK_FALSE(cachebook::modelled_l3(l3, l2, profile, note).has_value());
}

TEST_CASE("matmul walk: the loads the compiled loop makes, the kept operand once before the inner loop",
          "[time_model]") {
    using cachebook::LoopOrder;
    const std::vector<cachebook::CacheConfig> l1 = {cachebook::CacheConfig::fully_associative(1024, 64)};
    const auto loads = [&](const cachebook::Walk& w) {
        cachebook::Hierarchy h(l1);
        w(h);
        return h.counts()[0].accesses;
    };
    // ikj, n = 4, one value of i: per k, A[i][k] once and B, C four times each: 4 x 9.
    CHECK(loads(cachebook::matmul_walk(LoopOrder::ikj, 4, 0, 0, 1)) == 36);
    CHECK(loads(cachebook::matmul_walk(LoopOrder::jki, 4, 0, 1, 2)) == 72);  // B kept over i
    // Blocked, n = 4, tiles of 2, one (ii, jj): two kk, each 2 x 2 x (1 + 2 x 2) loads.
    CHECK(loads(cachebook::matmul_walk(LoopOrder::ikj, 4, 2, 0, 1)) == 40);
    CHECK(cachebook::matmul_units(4, 0) == 4);
    CHECK(cachebook::matmul_units(520, 32) == 17 * 17);
    CHECK_THROWS_AS(cachebook::matmul_walk(LoopOrder::ikj, 4, 2, 3, 2), std::invalid_argument);
    // Every double of the three page-aligned 4 x 4 matrices once: A, B and C a page each.
    CHECK(loads(cachebook::matmul_touch(4)) == 2 * 4096 / 8 + 16);
}

TEST_CASE("padded claims: ns a unit at each size and their ratio, or not priced with the reason", "[time_model]") {
    cachebook::WalkPrediction power, padded;
    power.overlapped.ns = 1000;  // 100 units: 10 ns a unit
    power.added.ns = 1200;
    power.overlapped.bottleneck = "latency-bound in L3";
    padded.overlapped.ns = 500;  // 125 units: 4 ns a unit
    padded.added.ns = 500;
    padded.overlapped.bottleneck = "bandwidth-bound in L2";
    cachebook::PaddedPair pair{"jki", "jki", "N = 512", "N = 520", "a multiply-add", power, padded,
                               100,   125,   8,         2,         "the core",       ""};
    const auto claims = cachebook::padded_claims(pair);
    REQUIRE(claims.size() == 3);
    CHECK(claims[0].key == "jki_ns");
    CHECK(claims[0].what == "jki, N = 512, ns a multiply-add");
    CHECK(claims[0].predicted == 10.0);
    CHECK(claims[0].predicted_added == 12.0);
    CHECK(claims[1].predicted == 4.0);
    CHECK(claims[2].key == "jki_power_over_padded");
    CHECK(claims[2].predicted == 2.5);
    CHECK(claims[2].measured == 4.0);  // 8 / 2
    CHECK(claims[2].bottleneck == "N = 512 latency-bound in L3, N = 520 bandwidth-bound in L2");
    pair.padded.reset();
    for (const auto& c : cachebook::padded_claims(pair)) {
        CHECK_FALSE(c.predicted.has_value());
        CHECK_FALSE(c.why_not.empty());
    }
}
