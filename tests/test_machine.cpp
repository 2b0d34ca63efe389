// The machine module on fixtures (tests/fixtures/machine): what each source reports, where each
// figure comes from, and what chapters 2, 4, 5 and 9 derive from the caches on each fixture.
#include <catch2/catch.hpp>
#include <string>

#include "../chapters/02_loop_orders/lab.hpp"
#include "../chapters/04_tiling/lab.hpp"
#include "cachebook/machine.hpp"
#include "matmul.hpp"

namespace {

using cachebook::Source;

cachebook::Machine fixture(const std::string& name) {
    return cachebook::detect_machine(std::string(CACHEBOOK_TEST_DATA) + "/../fixtures/machine/" + name);
}

// A micro-kernel of 6 x 16, the shape of the AVX2 default; only mr and nr matter to the blocks.
ch09::MicroKernel kernel_6x16() {
    ch09::MicroKernel k;
    k.mr = 6;
    k.nr = 16;
    return k;
}

// Chapter 2's footprint of column 0 of int a[2048][2048] in the machine's cache of `level`.
ch02::ColumnFootprint column_in(const cachebook::Machine& m, int level) {
    const auto geometry = ch02::cache_geometry(m.data_cache(level));
    REQUIRE(geometry);
    return ch02::column_footprint(*geometry, 2048, 2048, sizeof(int));
}

}  // namespace

TEST_CASE("machine fixture none: no source reports anything", "[machine]") {
    const auto m = fixture("none");
    CHECK(m.caches.empty());
    CHECK(m.cpu_model.empty());
    CHECK(m.cpu_model_source == Source::unknown);
    CHECK(m.nominal_ghz == 0);
    CHECK_FALSE(m.line_bytes());
    CHECK(m.line_source() == Source::unknown);
    REQUIRE(m.notes.size() == 3);
    CHECK(m.notes[0].rfind("hwloc: ", 0) == 0);
    CHECK(m.notes[1] == "sysconf: not in the fixture");
    CHECK(m.notes[2] == "sysfs: no cache directories for cpu0");
    const auto why = m.why_unknown("the L2");
    CHECK(why.rfind("the L2 unknown: no source reports it here (fixture none)", 0) == 0);
    // What the chapters derive: no tile (chapter 4 then takes the course notes' tile), no geometry
    // (chapter 2 prints unknown), and chapter 9's blocks from the common sizes.
    CHECK_FALSE(ch04::machine_tile(m, 512));
    CHECK_FALSE(ch02::cache_geometry(m.data_cache(1)));
    const auto b = ch09::machine_blocking(kernel_6x16(), m);
    CHECK(b.kc == 384);   // 3/4 of 32 KiB / (16 x 4 B), a multiple of 8
    CHECK(b.mc == 126);   // 3/4 of 256 KiB / (384 x 4 B) = 128, down to a multiple of 6
    CHECK(b.nc == 2720);  // half of 8 MiB / (384 x 4 B) = 2730, down to a multiple of 16
}

#ifdef CACHEBOOK_HAVE_HWLOC
TEST_CASE("machine fixture l3_32m: hwloc's topology, L1d 32 KiB, L2 512 KiB, L3 32 MiB", "[machine]") {
    const auto m = fixture("l3_32m");
    REQUIRE(m.caches.size() == 3);
    const auto l1 = m.data_cache(1), l2 = m.data_cache(2), l3 = m.data_cache(3);
    REQUIRE(l1);
    REQUIRE(l2);
    REQUIRE(l3);
    CHECK(l1->name() == "L1d");
    CHECK(l1->size_bytes == 32768);
    CHECK(l1->ways == 8);
    CHECK(l1->line_bytes == 64);
    CHECK(l1->sets == 64);
    CHECK(l1->shared_cpus == "0");
    CHECK(l1->source == Source::hwloc);
    CHECK(l2->size_bytes == 524288);
    CHECK(l2->ways == 8);
    CHECK(l2->sets == 1024);
    CHECK(l3->size_bytes == 33554432);
    CHECK(l3->ways == 16);
    CHECK(l3->shared_cpus == "0-1");
    CHECK(m.cpu_model == "Fixture CPU, 32 KiB L1d");
    CHECK(m.cpu_model_source == Source::hwloc);
    CHECK(m.line_bytes() == 64);
    CHECK(m.line_source() == Source::hwloc);
    CHECK(m.notes[0] == "hwloc: L1d 32 KiB, L2 512 KiB, L3 32 MiB");

    const auto tile = ch04::machine_tile(m, 512);
    REQUIRE(tile);
    CHECK(tile->tile == 32);  // 3 x 32^2 x 8 = 24 KiB <= 32 KiB < 3 x 64^2 x 8
    const auto f1 = column_in(m, 1), f2 = column_in(m, 2);
    CHECK(f1.lines == 2048);
    CHECK(f1.sets == 1);  // rows 8192 B apart = 128 lines, a multiple of the 64 sets
    CHECK(f1.capacity == 8);
    CHECK(f2.sets == 8);  // 1024 sets / 128
    CHECK(f2.capacity == 64);
    const auto b = ch09::machine_blocking(kernel_6x16(), m);
    CHECK(b.kc == 384);
    CHECK(b.mc == 252);   // 3/4 of 512 KiB / (384 x 4 B) = 256, down to a multiple of 6
    CHECK(b.nc == 4096);  // half of 32 MiB / (384 x 4 B) = 10922: at most 4096
}
#else
TEST_CASE("machine fixture l3_32m: a build without hwloc says so", "[machine]") {
    const auto m = fixture("l3_32m");
    CHECK(m.caches.empty());
    CHECK(m.notes[0] == "hwloc: this build has no hwloc");
}
#endif

TEST_CASE("machine fixture line128: sysfs only, 128-byte lines and no L3", "[machine]") {
    const auto m = fixture("line128");
    REQUIRE(m.caches.size() == 3);
    CHECK(m.caches[0].name() == "L1d");
    CHECK(m.caches[1].name() == "L1i");
    CHECK(m.caches[2].name() == "L2");
    const auto l1 = m.data_cache(1), l2 = m.data_cache(2);
    REQUIRE(l1);
    REQUIRE(l2);
    CHECK_FALSE(m.data_cache(3));
    CHECK(l1->size_bytes == 131072);
    CHECK(l1->sets == 128);
    CHECK(l1->source == Source::sysfs);
    CHECK(l2->size_bytes == 12u << 20);
    CHECK(l2->ways == 12);
    CHECK(l2->shared_cpus == "0-3");
    CHECK(m.line_bytes() == 128);
    CHECK(m.line_source() == Source::sysfs);
    CHECK(m.cpu_model.empty());

    const auto tile = ch04::machine_tile(m, 512);
    REQUIRE(tile);
    CHECK(tile->tile == 64);  // 3 x 64^2 x 8 = 96 KiB <= 128 KiB < 3 x 128^2 x 8
    const auto f1 = column_in(m, 1), f2 = column_in(m, 2);
    CHECK(f1.lines == 2048);  // a row of 8192 B is 64 lines of 128 B: each row in its own line
    CHECK(f1.sets == 2);      // 128 sets / 64
    CHECK(f1.capacity == 16);
    CHECK(f2.sets == 128);  // 8192 sets / 64
    CHECK(f2.capacity == 1536);
    const auto b = ch09::machine_blocking(kernel_6x16(), m);
    CHECK(b.kc == 1536);  // 3/4 of 128 KiB / (16 x 4 B)
    CHECK(b.mc == 1536);  // 3/4 of 12 MiB / (1536 x 4 B) = 1536, a multiple of 6
    CHECK(b.nc == 672);   // no L3: half of 8 MiB / (1536 x 4 B) = 682, down to a multiple of 16
}

TEST_CASE("machine fixture sysconf_only: sysconf's figures and /proc/cpuinfo", "[machine]") {
    const auto m = fixture("sysconf_only");
    const auto l1 = m.data_cache(1), l2 = m.data_cache(2), l3 = m.data_cache(3);
    REQUIRE(l1);
    REQUIRE(l2);
    REQUIRE(l3);
    CHECK(l1->size_bytes == 49152);
    CHECK(l1->ways == 12);
    CHECK(l1->sets == 64);
    CHECK(l1->source == Source::sysconf);
    CHECK(l2->size_bytes == 1u << 20);
    CHECK(l3->ways == 16);
    CHECK(l1->shared_cpus.empty());  // sysconf does not say
    // The L1i has a size but no ways or line: both stay unknown, so no sets either.
    REQUIRE(m.caches.size() == 4);
    CHECK(m.caches[1].name() == "L1i");
    CHECK(m.caches[1].ways == 0);
    CHECK(m.caches[1].sets == 0);
    CHECK(m.cpu_model == "Fixture CPU from cpuinfo");
    CHECK(m.cpu_model_source == Source::cpuinfo);
    CHECK(m.nominal_ghz == Approx(2.45));
    CHECK(m.line_bytes() == 64);

    const auto tile = ch04::machine_tile(m, 512);
    REQUIRE(tile);
    CHECK(tile->tile == 32);  // 3 x 32^2 x 8 = 24 KiB <= 48 KiB < 3 x 64^2 x 8 = 96 KiB
    const auto f1 = column_in(m, 1), f2 = column_in(m, 2);
    CHECK(f1.sets == 1);
    CHECK(f1.capacity == 12);
    CHECK(f2.sets == 16);  // 2048 sets / 128
    CHECK(f2.capacity == 128);
    const auto b = ch09::machine_blocking(kernel_6x16(), m);
    CHECK(b.kc == 576);   // 3/4 of 48 KiB / (16 x 4 B)
    CHECK(b.mc == 336);   // 3/4 of 1 MiB / (576 x 4 B) = 341, down to a multiple of 6
    CHECK(b.nc == 4096);  // half of 32 MiB / (576 x 4 B) = 7281: at most 4096
}

TEST_CASE("the real machine: every cache carries a source, and sets agree with the geometry", "[machine]") {
    const auto& m = cachebook::machine();
    for (const auto& c : m.caches) {
        INFO(c.name());
        CHECK(c.source != Source::unknown);
        CHECK(c.size_bytes > 0);
        if (c.sets > 0) CHECK(c.sets * c.ways * c.line_bytes == c.size_bytes);
    }
    CHECK(m.notes.size() == 3);
}

TEST_CASE("a size prints in the largest binary unit it reaches, exactly where two decimals can say it", "[machine]") {
    using cachebook::size_text;
    CHECK(size_text(0) == "0 B");
    CHECK(size_text(1023) == "1023 B");
    CHECK(size_text(1024) == "1 KiB");
    CHECK(size_text(48 << 10) == "48 KiB");
    CHECK(size_text(1536) == "1.5 KiB");
    CHECK(size_text(1280 << 10) == "1.25 MiB");  // an L2 of 1.25 MiB, as Intel reports it
    CHECK(size_text(1536 << 10) == "1.5 MiB");
    CHECK(size_text(2 << 20) == "2 MiB");
    CHECK(size_text(std::size_t{300} << 20) == "300 MiB");
    CHECK(size_text(std::size_t{3} << 30) == "3 GiB");
    CHECK(size_text(50628) == "49.4 KiB");  // a measured cliff: not a whole number of any unit
    CHECK(size_text(7708185) == "7.4 MiB");
    CHECK(size_text((std::size_t{1} << 20) - 1) == "1.0 MiB");  // not "1024.0 KiB"
}
