#pragma once
// Chapter 1: where a[i][j] lives, which line holds it, and what a walk touches.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ch01 {

enum class Layout { RowMajor, ColumnMajor };

/// A two-dimensional array as the compiler lays it out.
struct ArrayShape {
    std::uint64_t base = 0;
    std::size_t rows = 0, cols = 0;
    std::size_t elem = 8;  // bytes per element
    Layout layout = Layout::RowMajor;
};

/// Where one element lands: its byte address, its line and its byte within the line.
struct Location {
    std::uint64_t address = 0;
    std::uint64_t line = 0;
    std::uint64_t offset = 0;
};

/// The address of a[i][j] and the line that holds it.
Location locate(const ArrayShape& a, std::size_t i, std::size_t j, std::size_t line_bytes);

/// The course notes' worked example: double a[100][300] at 0x1000, element a[2][5].
struct AddressExample {
    ArrayShape shape;
    std::size_t line_bytes = 64;
    Location at_2_5, at_2_6, at_3_5;
    std::uint64_t row_stride_bytes = 0;  // &a[3][5] - &a[2][5]
    double lines_between_rows = 0;       // that stride in lines
    Location at_2_5_column_major;        // the same element if the language were column-major
};
AddressExample address_example(std::size_t line_bytes = 64);

/// One step of the stepper: which cell was read, its line, hit or miss, and
/// the lines held afterwards (least recently filled first).
struct Step {
    std::size_t i = 0, j = 0;
    std::uint64_t line = 0;
    bool hit = false;
    std::vector<std::uint64_t> cache_after;
};

/// A walk of the stepper's int a[4][8] (16-byte lines) through a small fully
/// associative LRU cache.
struct StepperRun {
    std::string walk;  // "row" or "column"
    std::size_t rows = 0, cols = 0, elem = 0, line_bytes = 0, cache_lines = 0;
    std::vector<Step> steps;
    std::uint64_t hits = 0, misses = 0;
};

/// Walks a rows x cols array of `elem`-byte values row by row (`by_rows`) or
/// column by column, through a fully associative LRU cache of `cache_lines`.
StepperRun run_stepper(bool by_rows, std::size_t cache_lines, std::size_t rows = 4, std::size_t cols = 8,
                       std::size_t elem = 4, std::size_t line_bytes = 16);

}  // namespace ch01
