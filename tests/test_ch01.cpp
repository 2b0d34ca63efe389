// Chapter 1's claims: the course notes' worked address, the first steps of two walks, and the stepper.
#include <catch2/catch.hpp>

#include "../chapters/01_row_major/lab.hpp"

TEST_CASE("&a[2][5] of double a[100][300] at 0x1000 is byte 40 of line 139", "[ch01]") {
    const auto ex = ch01::address_example(64);
    CHECK(ex.at_2_5.address == 0x22E8);
    CHECK(ex.at_2_5.address == 8936);
    CHECK(ex.at_2_5.line == 139);
    CHECK(ex.at_2_5.offset == 40);
    CHECK(ex.at_2_6.line == 139);  // same line
    CHECK(ex.at_2_6.offset == 48);
    CHECK(ex.row_stride_bytes == 2400);
    CHECK(ex.lines_between_rows > 37.0);
    CHECK(ex.at_2_5_column_major.address == 0x1000 + (5 * 100 + 2) * 8);
}

TEST_CASE("a row walk steps by one element, a column walk by one row", "[ch01]") {
    const auto row = cachebook::row_major_trace(4);
    const auto col = cachebook::col_major_trace(4);
    CHECK(std::vector<std::uint64_t>(row.begin(), row.begin() + 6) == std::vector<std::uint64_t>{0, 8, 16, 24, 32, 40});
    CHECK(std::vector<std::uint64_t>(col.begin(), col.begin() + 6) == std::vector<std::uint64_t>{0, 32, 64, 96, 8, 40});
    using C = cachebook::Cell;
    const auto plain = cachebook::visit_order(4);
    const auto tiled = cachebook::visit_order(4, 2);
    CHECK(std::vector<C>(plain.begin(), plain.begin() + 8) ==
          std::vector<C>{{0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}, {1, 1}, {1, 2}, {1, 3}});
    CHECK(std::vector<C>(tiled.begin(), tiled.begin() + 8) ==
          std::vector<C>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}});
}

TEST_CASE("the stepper: a row walk misses once per line, whatever the cache", "[ch01]") {
    const std::size_t cache_lines = GENERATE(1u, 2u, 4u, 8u);
    const auto run = ch01::run_stepper(true, cache_lines);
    CHECK(run.misses == 8);
    CHECK(run.hits == 24);
    CHECK(ch01::stepper_grid(run)[0] == "MHHHMHHH");
}

TEST_CASE("the stepper: a column walk needs the column's lines to fit", "[ch01]") {
    // A column of int a[4][8] with 16-byte lines spans 4 lines.
    const auto fits = ch01::run_stepper(false, 4);
    CHECK(fits.misses == 8);
    CHECK(ch01::stepper_grid(fits)[0] == "MHHHMHHH");
    const auto small = ch01::run_stepper(false, 3);
    CHECK(small.misses == 32);  // LRU cycling over 4 lines with 3 slots misses every time
    CHECK(ch01::stepper_grid(small)[2] == "MMMMMMMM");
    CHECK(ch01::stepper_grid(small, 5)[1] == "M.......");  // after five steps: column 0 and a[0][1]
}

TEST_CASE("the stepper records the cache after every step", "[ch01]") {
    const auto run = ch01::run_stepper(false, 2);
    REQUIRE(run.steps.size() == 32);
    CHECK(run.steps[0].cache_after == std::vector<std::uint64_t>{0});
    CHECK(run.steps[1].line == 2);
    CHECK(run.steps[2].cache_after.size() == 2);
}
