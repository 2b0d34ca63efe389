#pragma once
// Chapter 5 exercises. Write the bodies in starter.cpp; `make grade CH=05` scores them.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ch05_exercise {

/// One field of a struct: its size and its alignment in bytes (alignment a power of two).
struct FieldSpec {
    std::size_t size = 0;
    std::size_t align = 1;
};

/// Exercise 1 (padding and field order): the sizeof of a struct whose fields
/// come in this order, laid out as C and C++ compilers do on x86-64: each field
/// at the next offset that is a multiple of its alignment, and the whole size
/// rounded up to a multiple of the largest alignment. Fields char, double,
/// int (sizes and alignments 1, 8 and 4) give 24; double, int, char give 16.
/// The grader compares your answer with what the compiler says (sizeof) for real structs.
std::size_t struct_size(const std::vector<FieldSpec>& fields);

/// A byte range within a struct: [offset, offset + size).
struct Range {
    std::size_t offset = 0, size = 0;
};

/// Exercise 2 (AoS line counts): a loop reads, from each of n structs of
/// `struct_bytes` bytes stored one after another from a line boundary, the
/// byte ranges [offset, offset + size) listed in `used` (offsets within the
/// struct). How many distinct lines of `line_bytes` bytes does it bring in?
/// For the course notes' particle (72 bytes, x at 0 and vx at 24, 8 bytes each) and a
/// million particles the answer is 1,125,000. The grader runs the loop's
/// addresses through the book's cache model.
std::uint64_t lines_brought_in(std::uint64_t n, std::size_t struct_bytes, const std::vector<Range>& used,
                               std::size_t line_bytes);

}  // namespace ch05_exercise
