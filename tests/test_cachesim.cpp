// cachesim: the eight cachelab reference rows, the reference's verbose output,
// and a differential test against a second, deliberately plain model.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <list>
#include <random>
#include <string>
#include <vector>

#include "cachebook/miss_kinds.hpp"
#include "cachebook/trace.hpp"
#include "cachelab_reference.hpp"
#include "cachesim.hpp"
#include "support.hpp"

using namespace cachebook;
using namespace cachesim;

namespace {

using cachebook_test::test_data;

cachesim::Options one_level(int s, int E, int b) {
    cachesim::Options o;
    o.levels.push_back(cachesim::geometry(s, E, b));
    return o;
}

Counts run_file(const cachesim::Options& options, const std::string& path, std::string* verbose_text = nullptr) {
    cachesim::Simulator sim(options);
    if (verbose_text) {
        std::FILE* out = std::tmpfile();
        sim.run(path, false, 1, out);
        std::rewind(out);
        char buffer[4096];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) verbose_text->append(buffer, n);
        std::fclose(out);
    } else {
        sim.run(path);
    }
    return sim.hierarchy().counts(0);
}

// ---------------------------------------------------------------------------
// The plain model: one std::list per set, most recent (LRU) or newest (FIFO)
// line at the front; a hit moves the line to the front under LRU; a miss in a
// full set drops the back. It follows the documented rules of cachesim
// (hierarchy.hpp, cachesim.hpp) without sharing any code with them.
struct PlainLine {
    std::uint64_t line;
    bool dirty;
};

struct PlainLevel {
    unsigned block_bits;
    std::uint64_t sets;
    std::size_t ways;
    bool fifo;
    std::vector<std::list<PlainLine>> set_lists;
    Counts counts;
};

struct PlainModel {
    std::vector<PlainLevel> levels;
    bool inclusive = false, split = false, modify_once = false;
    std::uint64_t memory_writebacks = 0;
    std::string verbose;

    std::list<PlainLine>& set_of(PlainLevel& l, std::uint64_t line) { return l.set_lists[line % l.sets]; }

    void write_back(std::size_t from, std::uint64_t address) {
        for (std::size_t j = from + 1; j < levels.size(); ++j) {
            const std::uint64_t line = address >> levels[j].block_bits;
            for (PlainLine& x : set_of(levels[j], line))
                if (x.line == line) {
                    x.dirty = true;
                    return;
                }
        }
        ++memory_writebacks;
    }

    // One line at level k; returns true on a hit and counts evictions.
    bool touch(std::size_t k, std::uint64_t line, bool write, int& l1_evictions) {
        PlainLevel& l = levels[k];
        auto& lines = set_of(l, line);
        for (auto it = lines.begin(); it != lines.end(); ++it) {
            if (it->line != line) continue;
            it->dirty = it->dirty || write;
            if (!l.fifo) lines.splice(lines.begin(), lines, it);
            return true;
        }
        lines.push_front({line, write});
        if (lines.size() > l.ways) {
            const PlainLine gone = lines.back();
            lines.pop_back();
            ++l.counts.evictions;
            if (k == 0) ++l1_evictions;
            const std::uint64_t address = gone.line << l.block_bits;
            if (gone.dirty) {
                ++l.counts.dirty_evictions;
                write_back(k, address);
            }
            if (inclusive) {
                for (std::size_t j = 0; j < k; ++j) {
                    PlainLevel& up = levels[j];
                    const std::uint64_t first = address >> up.block_bits;
                    const std::uint64_t last = (address + (std::uint64_t{1} << l.block_bits) - 1) >> up.block_bits;
                    for (std::uint64_t u = first; u <= last; ++u) {
                        auto& upper = set_of(up, u);
                        for (auto it = upper.begin(); it != upper.end(); ++it)
                            if (it->line == u) {
                                if (it->dirty) write_back(k, u << up.block_bits);
                                upper.erase(it);
                                break;
                            }
                    }
                }
            }
        }
        return false;
    }

    // One reference; appends its verbose words; returns the level that hit.
    std::size_t reference(std::uint64_t address, std::uint32_t size, bool write) {
        int l1_evictions = 0;
        std::size_t level = 0;
        for (; level < levels.size(); ++level) {
            const unsigned b = levels[level].block_bits;
            bool hit = true;
            const std::uint64_t end = split ? address + size - 1 : address;
            for (std::uint64_t line = address >> b; line <= end >> b; ++line)
                hit = touch(level, line, write && level == 0, l1_evictions) && hit;
            if (hit) {
                ++levels[level].counts.hits;
                break;
            }
            ++levels[level].counts.misses;
        }
        verbose += level == 0 ? " hit" : " miss";
        for (int e = 0; e < l1_evictions; ++e) verbose += " eviction";
        for (std::size_t k = 1; level > 0 && k < levels.size(); ++k) {
            verbose += fmt::format(" L{}:{}", k + 1, level == k ? "hit" : "miss");
            if (level == k) break;
        }
        return level;
    }

    void feed(const LackeyRecord& r) {
        if (r.op == 'I') return;
        verbose += fmt::format("{} {:x},{}", r.op, r.address, r.size);
        if (r.op == 'L') reference(r.address, r.size, false);
        if (r.op == 'S') reference(r.address, r.size, true);
        if (r.op == 'M' && modify_once) reference(r.address, r.size, true);
        if (r.op == 'M' && !modify_once) {
            reference(r.address, r.size, false);
            reference(r.address, r.size, true);
        }
        verbose += '\n';
    }
};

std::string lackey_text(const std::vector<LackeyRecord>& records) {
    std::string text;
    for (const LackeyRecord& r : records)
        text += r.op == 'I' ? fmt::format("I  {:08x},{}\n", r.address, r.size)
                            : fmt::format(" {} {:08x},{}\n", r.op, r.address, r.size);
    return text;
}

}  // namespace

// [threads]: Simulator::run reads the trace on a second thread (label threads: TSan runs it).
TEST_CASE("cachesim reproduces the eight rows of the cachelab reference", "[cachesim][reference][threads]") {
    for (const auto& r : cachebook_test::kCachelabRows) {
        INFO(fmt::format("-s {} -E {} -b {} {}", r.s, r.E, r.b, r.trace));
        const Counts c = run_file(one_level(r.s, r.E, r.b), test_data("cachelab/") + r.trace);
        CHECK(cachesim::summary_line(c) == cachesim::summary_line(r.reference));
    }
}

TEST_CASE("cachesim -v prints each access as the reference does", "[cachesim][reference]") {
    std::string verbose;
    const Counts c = run_file(one_level(4, 1, 4), test_data("cachelab/yi.trace"), &verbose);
    CHECK(verbose ==
          "L 10,1 miss\n"
          "M 20,1 miss hit\n"
          "L 22,1 hit\n"
          "S 18,1 hit\n"
          "L 110,1 miss eviction\n"
          "L 210,1 miss eviction\n"
          "M 12,1 miss eviction hit\n");
    CHECK(cachesim::summary_line(c) == "hits:4 misses:5 evictions:3");
}

TEST_CASE("cachesim agrees with a plain list model on thousands of random traces", "[cachesim][differential]") {
    std::mt19937_64 rng(20261130);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    int through_text = 0;
    const int cases = 3000;
    for (int t = 0; t < cases; ++t) {
        // A configuration: 1 to 3 levels, LRU or FIFO, inclusive or not, split, modify once.
        cachesim::Options options;
        PlainModel plain;
        const std::size_t levels = t < cases / 3 ? 1 : pick(1, 3);
        const bool fifo = pick(0, 3) == 0;
        plain.inclusive = levels > 1 && pick(0, 1) == 1;
        plain.split = pick(0, 2) == 0;
        plain.modify_once = pick(0, 3) == 0;
        int block_bits = static_cast<int>(pick(0, 4));
        for (std::size_t k = 0; k < levels; ++k) {
            const int s = static_cast<int>(pick(0, 3)), E = static_cast<int>(pick(1, 6));
            if (k > 0)
                block_bits = plain.inclusive ? block_bits + static_cast<int>(pick(0, 1)) : static_cast<int>(pick(0, 4));
            options.levels.push_back(cachesim::geometry(s, E, block_bits, fifo ? Policy::FIFO : Policy::LRU));
            plain.levels.push_back({static_cast<unsigned>(block_bits),
                                    std::uint64_t{1} << s,
                                    static_cast<std::size_t>(E),
                                    fifo,
                                    std::vector<std::list<PlainLine>>(std::size_t{1} << s),
                                    {}});
        }
        options.inclusion = plain.inclusive ? Inclusion::Inclusive : Inclusion::NonInclusive;
        options.split = plain.split;
        options.modify_once = plain.modify_once;

        // A trace: addresses from a small pool (so lines come back), some far apart.
        std::vector<std::uint64_t> pool(pick(2, 40));
        const std::uint64_t span = std::uint64_t{1} << pick(6, 14);
        for (auto& a : pool) a = pick(0, 9) == 0 ? pick(0, std::uint64_t{1} << 40) : pick(0, span);
        std::vector<LackeyRecord> records(pick(1, 300));
        for (auto& r : records) {
            r.op = "ILLLSSSMM"[pick(0, 8)];
            r.address = pool[pick(0, pool.size() - 1)] + pick(0, 3);
            r.size = static_cast<std::uint32_t>(pick(0, 3) == 0 ? pick(1, 64) : std::uint64_t{1} << pick(0, 3));
        }

        cachesim::Simulator sim(options);
        std::string verbose;
        sim.feed(records, &verbose);
        for (const auto& r : records) plain.feed(r);

        INFO(fmt::format("case {}: {} level(s), {}, {}, split {}, modify once {}, {} records", t, levels,
                         fifo ? "fifo" : "lru", plain.inclusive ? "inclusive" : "non-inclusive", plain.split,
                         plain.modify_once, records.size()));
        for (std::size_t k = 0; k < levels; ++k) {
            INFO("level L" << k + 1);
            REQUIRE(sim.hierarchy().counts(static_cast<int>(k)) == plain.levels[k].counts);
        }
        REQUIRE(sim.hierarchy().memory_writebacks() == plain.memory_writebacks);
        REQUIRE(verbose == plain.verbose);

        // --policy opt and --classify on the first level (one line per access: not with --split).
        if (!plain.split) {
            const cachesim::Accesses a = cachesim::accesses_of(records, plain.modify_once);
            const Counts l1 = plain.levels[0].counts, opt = optimal_counts(options.levels[0], a.addresses, a.writes);
            REQUIRE(opt.accesses() == l1.accesses());
            REQUIRE(opt.misses <= l1.misses);
            if (options.levels[0].ways == 1 && levels == 1) REQUIRE(opt == l1);  // one way: no choice to make
            const MissKinds k = split_misses(l1.misses, options.levels[0], a.addresses);
            REQUIRE(static_cast<std::int64_t>(k.compulsory) + k.capacity + k.conflict ==
                    static_cast<std::int64_t>(l1.misses));
        }

        // One case in ten also goes through the text of a trace and the reader.
        if (t % 10 == 0) {
            const std::string path =
                (std::filesystem::temp_directory_path() / fmt::format("cachebook-diff-{}.trace", ::getpid())).string();
            std::ofstream(path) << lackey_text(records);
            cachesim::Simulator from_text(options);
            const cachesim::Result result = from_text.run(path, false, 2);
            std::remove(path.c_str());
            REQUIRE(from_text.hierarchy().counts(0) == plain.levels[0].counts);
            REQUIRE(result.lines == records.size());
            ++through_text;
        }
    }
    CHECK(through_text == cases / 10);
}

TEST_CASE("cachesim: an inclusive L2 drops what it evicts from L1, a non-inclusive one does not", "[cachesim]") {
    // L1: one set of 2 lines; L2: direct-mapped, 2 sets of 16-byte lines.
    // Lines 0x00 and 0x20 share L2 set 0, so reading 0x20 evicts 0x00 from L2.
    const std::vector<LackeyRecord> trace{{'L', 1, 0x00}, {'L', 1, 0x20}, {'L', 1, 0x00}};
    for (const Inclusion inc : {Inclusion::Inclusive, Inclusion::NonInclusive}) {
        cachesim::Options o = one_level(0, 2, 4);
        o.levels.push_back(cachesim::geometry(1, 1, 4));
        o.inclusion = inc;
        cachesim::Simulator sim(o);
        sim.feed(trace);
        const cachesim::Hierarchy& h = sim.hierarchy();
        if (inc == Inclusion::Inclusive) {
            CHECK(h.counts(0) == Counts{0, 3, 0, 0});  // the third read misses: L2 took 0x00 out of L1
            CHECK(h.back_invalidations(1) == 2);
        } else {
            CHECK(h.counts(0) == Counts{1, 2, 0, 0});  // L1 still holds 0x00
            CHECK(h.back_invalidations(1) == 0);
        }
    }
}

TEST_CASE("cachesim: a dirty line leaving L1 is written back to L2, and from L2 to memory", "[cachesim]") {
    cachesim::Options o = one_level(0, 1, 4);         // L1: a single 16-byte line
    o.levels.push_back(cachesim::geometry(0, 1, 4));  // L2: also one line
    cachesim::Simulator sim(o);
    sim.feed(std::vector<LackeyRecord>{{'S', 4, 0x00}, {'L', 4, 0x40}});
    // The load evicts dirty 0x00 from L1 (written back to L2, which holds it), then
    // L2 fills 0x40 and evicts 0x00, now dirty: one write-back to memory.
    CHECK(sim.hierarchy().counts(0).dirty_evictions == 1);
    CHECK(sim.hierarchy().counts(1).dirty_evictions == 1);
    CHECK(sim.hierarchy().memory_writebacks() == 1);
}

TEST_CASE("cachesim: --split counts a straddling access once, as cachegrind does", "[cachesim]") {
    // An 8-byte load at 0x3c covers lines 0 and 1 of 64 bytes.
    const std::vector<LackeyRecord> trace{{'L', 8, 0x3c}, {'L', 4, 0x40}};
    cachesim::Options o = one_level(2, 2, 6);
    cachesim::Simulator plain(o);
    plain.feed(trace);
    CHECK(plain.hierarchy().counts(0) == Counts{0, 2, 0, 0});  // the reference looks at the first byte only
    o.split = true;
    cachesim::Simulator split(o);
    split.feed(trace);
    CHECK(split.hierarchy().counts(0) == Counts{1, 1, 0, 0});  // one miss (two lines filled), then a hit
}

TEST_CASE("cachesim: --modify-once counts M as one reference", "[cachesim]") {
    const std::vector<LackeyRecord> trace{{'M', 4, 0x100}, {'M', 4, 0x100}};
    cachesim::Options o = one_level(2, 2, 4);
    cachesim::Simulator twice(o);
    twice.feed(trace);
    CHECK(twice.hierarchy().counts(0) == Counts{3, 1, 0, 0});
    o.modify_once = true;
    cachesim::Simulator once(o);
    once.feed(trace);
    CHECK(once.hierarchy().counts(0) == Counts{1, 1, 0, 0});
}

TEST_CASE("cachesim: regions split the counts, and add up to the total", "[cachesim]") {
    // Transpose of a 32 x 32 float matrix: src at 0, dst at 4096.
    std::vector<LackeyRecord> trace;
    for_each_transpose_access(32, 0, 4, [&](const Access& a) { trace.push_back({a.write ? 'S' : 'L', 4, a.address}); });
    trace.push_back({'L', 4, 1 << 20});  // outside both
    cachesim::Options o = one_level(2, 2, 6);
    o.regions = {cachesim::parse_region("dst:0x1000:4096"), cachesim::parse_region("src:0:4096")};
    cachesim::Simulator sim(o);
    sim.feed(trace);
    const cachesim::Hierarchy& h = sim.hierarchy();
    const Counts src = h.counts(0, sim.region_stream(1)), dst = h.counts(0, sim.region_stream(0));
    const Counts other = h.counts(0, sim.other_stream());
    CHECK(src.accesses() == 1024);
    CHECK(dst.accesses() == 1024);
    CHECK(other == Counts{0, 1, 1, 0});
    CHECK(src.hits + dst.hits + other.hits == h.counts(0).hits);
    CHECK(src.misses + dst.misses + other.misses == h.counts(0).misses);
    CHECK(src.evictions + dst.evictions + other.evictions == h.counts(0).evictions);
    // The row-order read misses once per 64-byte line (16 floats); the column-order write always misses.
    CHECK(src.misses == 1024 / 16);
    CHECK(dst.misses == 1024);
}

TEST_CASE("cachesim: bad regions and geometries are refused with a reason", "[cachesim]") {
    CHECK_THROWS_WITH(cachesim::parse_region("a:10"), Catch::Contains("name:start:length"));
    CHECK_THROWS_WITH(cachesim::parse_region(":0:10"), Catch::Contains("empty name"));
    CHECK_THROWS_WITH(cachesim::parse_region("a:zz:10"), Catch::Contains("bad start"));
    CHECK_THROWS_WITH(cachesim::parse_region("a:0:0"), Catch::Contains("bad length"));
    CHECK_THROWS_WITH(cachesim::parse_region("a:0xffffffffffffffff:2"), Catch::Contains("past the end"));
    cachesim::Options o = one_level(1, 1, 4);
    o.regions = {cachesim::parse_region("a:0:100"), cachesim::parse_region("b:50:100")};
    CHECK_THROWS_WITH(cachesim::Simulator(o), Catch::Contains("a and b overlap"));
    CHECK_THROWS_WITH(cachesim::geometry(29, 1, 4), Catch::Contains("0 to 28"));
    CHECK_THROWS_WITH(cachesim::geometry(20, 1024, 4), Catch::Contains("2^28 lines"));
    CHECK_THROWS_WITH(cachesim::parse_level("--L2", "4,2", Policy::LRU, 1), Catch::Contains("expected s,E,b"));
    CHECK(cachesim::parse_level("--L2", "10,16,6", Policy::LRU, 1).capacity_bytes() == 1024 * 16 * 64);
}

TEST_CASE("cachesim: the transpose trace it generates is the transpose", "[cachesim]") {
    std::FILE* f = std::tmpfile();
    cachesim::write_transpose_trace(f, 8);
    std::rewind(f);
    std::vector<LackeyRecord> got(200);
    std::size_t n = 0;
    {
        LackeyReader reader(::fileno(f), "generated");
        n = reader.read(got);
    }
    std::fclose(f);
    std::vector<LackeyRecord> expect;
    for_each_transpose_access(8, 0, 4, [&](const Access& a) { expect.push_back({a.write ? 'S' : 'L', 4, a.address}); });
    got.resize(n);
    CHECK(got == expect);
}

TEST_CASE("cachesim: the batched path (no -v) agrees with the general one and the plain model",
          "[cachesim][differential]") {
    // One LRU or FIFO level of up to 8 ways, no regions, no --split: feed()
    // without verbose text runs the cache a block at a time. The same records
    // go through the general path (with verbose text) and the plain model, in
    // chunks of up to 5000 records (more than one block), mixing both paths on one simulator.
    std::mt19937_64 rng(20261201);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    int batched = 0;
    for (int t = 0; t < 400; ++t) {
        const bool fifo = pick(0, 3) == 0;
        const int s = static_cast<int>(pick(0, 6)), E = static_cast<int>(pick(1, 9)), b = static_cast<int>(pick(0, 6));
        cachesim::Options options;
        options.levels.push_back(cachesim::geometry(s, E, b, fifo ? Policy::FIFO : Policy::LRU));
        options.modify_once = pick(0, 3) == 0;
        PlainModel plain;
        plain.modify_once = options.modify_once;
        plain.levels.push_back({static_cast<unsigned>(b),
                                std::uint64_t{1} << s,
                                static_cast<std::size_t>(E),
                                fifo,
                                std::vector<std::list<PlainLine>>(std::size_t{1} << s),
                                {}});
        cachesim::Simulator mixed(options), general(options);
        batched += mixed.hierarchy().batch_ready();
        std::vector<std::uint64_t> pool(pick(2, 200));
        const std::uint64_t span = std::uint64_t{1} << pick(8, 16);
        for (auto& a : pool) a = pick(0, 9) == 0 ? rng() : pick(0, span);
        INFO(fmt::format("case {}: -s {} -E {} -b {} {}{}", t, s, E, b, fifo ? "fifo" : "lru",
                         options.modify_once ? " modify once" : ""));
        for (int chunk = 0; chunk < 4; ++chunk) {
            std::vector<LackeyRecord> records(pick(0, 5000));
            for (auto& r : records) {
                r.op = "ILLLSSSMMX"[pick(0, 9)];  // 'X' is no record the reader gives; feed() counts it with I
                r.address = pool[pick(0, pool.size() - 1)] + pick(0, 3);
                r.size = static_cast<std::uint32_t>(pick(1, 16));
            }
            std::string verbose_mixed, verbose_general;
            mixed.feed(records, chunk % 2 == 0 ? nullptr : &verbose_mixed);
            general.feed(records, &verbose_general);
            for (const auto& r : records)
                if (r.op != 'X') plain.feed(r);
            REQUIRE(mixed.hierarchy().counts(0) == general.hierarchy().counts(0));
            REQUIRE(mixed.hierarchy().counts(0) == plain.levels[0].counts);
            REQUIRE(mixed.hierarchy().memory_writebacks() == general.hierarchy().memory_writebacks());
            REQUIRE(mixed.hierarchy().counts(0).dirty_evictions == plain.levels[0].counts.dirty_evictions);
            const cachesim::Result &x = mixed.tally(), &y = general.tally();
            REQUIRE(x.loads == y.loads);
            REQUIRE(x.stores == y.stores);
            REQUIRE(x.modifies == y.modifies);
            REQUIRE(x.instructions == y.instructions);
        }
    }
    CHECK(batched > 200);  // most cases took the batched path (the rest: 9 ways or 1-byte lines)
}
