// Chapter 5 exercises: the reference answers (not handed out).
#include <algorithm>

#include "exercise.hpp"

namespace ch05_exercise {

std::size_t struct_size(const std::vector<FieldSpec>& fields) {
    std::size_t offset = 0, largest = 1;
    for (const FieldSpec& f : fields) {
        offset = (offset + f.align - 1) / f.align * f.align;  // the hole before the field
        offset += f.size;
        largest = std::max(largest, f.align);
    }
    return (offset + largest - 1) / largest * largest;  // the tail, so that arrays stay aligned
}

std::uint64_t lines_brought_in(std::uint64_t n, std::size_t struct_bytes, const std::vector<Range>& used,
                               std::size_t line_bytes) {
    // The loop walks forward, so a line is new exactly when it is past the last
    // line counted. Ranges are visited in address order within each struct.
    std::vector<Range> sorted = used;
    std::sort(sorted.begin(), sorted.end(), [](const Range& a, const Range& b) { return a.offset < b.offset; });
    std::uint64_t count = 0;
    bool any = false;
    std::uint64_t last = 0;
    for (std::uint64_t i = 0; i < n; ++i)
        for (const Range& r : sorted) {
            if (r.size == 0) continue;
            const std::uint64_t first_line = (i * struct_bytes + r.offset) / line_bytes;
            const std::uint64_t last_line = (i * struct_bytes + r.offset + r.size - 1) / line_bytes;
            for (std::uint64_t line = first_line; line <= last_line; ++line)
                if (!any || line > last) {
                    ++count;
                    last = line;
                    any = true;
                }
        }
    return count;
}

Placement place_field(std::size_t field, std::size_t n) {
    // Struct of arrays: each field's n values side by side, so the loop's lines hold only x and
    // vx; the cold part (24 bytes a particle) after the six arrays of doubles.
    return {field * 8 * n, kParticleFieldBytes[field]};
}

}  // namespace ch05_exercise
