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

/// Where one field of particle k lives: bytes [offset + k x stride, offset + k x stride + its size) of a buffer.
struct Placement {
    std::size_t offset = 0, stride = 0;
};

/// The fields of the chapter's particle as exercise 3 places them: x, y, z, vx, vy, vz
/// (fields 0 to 5, 8 bytes each) and the cold part, id and name (field 6, 24 bytes).
inline constexpr std::size_t kParticleFields = 7;
inline constexpr std::size_t kParticleFieldBytes[kParticleFields] = {8, 8, 8, 8, 8, 8, 24};

/// Exercise 3 (a layout for the hot loop, scored for speed): place the fields of n particles
/// in one line-aligned buffer of at most 2 x 72 x n bytes, each field at a multiple of 8
/// bytes and no two fields of any particles overlapping, so that the hot loop
/// x += vx * dt, over every particle in order, brings in as few lines as it can. The
/// chapter's array of Particle places field f at its offsetof with stride 72. The cases check
/// the placement; the instructor's performance score simulates the loop's misses and times it
/// beside the reference solution's layout.
Placement place_field(std::size_t field, std::size_t n);

}  // namespace ch05_exercise
