// Chapter 6 exercises: the reference answers (not handed out).
#include <map>

#include "exercise.hpp"

namespace ch06_exercise {

std::uint64_t padded_record_address(std::uint64_t base, int thread, std::size_t record_bytes, std::size_t line_bytes) {
    // Start at a line boundary, and step by the record rounded up to whole lines.
    const std::uint64_t first = (base + line_bytes - 1) / line_bytes * line_bytes;
    const std::uint64_t stride = (record_bytes + line_bytes - 1) / line_bytes * line_bytes;
    return first + static_cast<std::uint64_t>(thread) * stride;
}

std::uint64_t predict_transfers(std::size_t elem_size, std::size_t field_offset, int workers,
                                std::uint64_t writes_per_worker, std::size_t burst) {
    // Count the workers whose field lies in each line. Every worker has the
    // same number of bursts, ceil(writes / burst), and the turns go round in
    // worker order, so on a line with two or more writers the previous burst
    // on that line always came from another worker: every burst but the very
    // first moves the line. A line with one writer never moves.
    std::map<std::uint64_t, std::uint64_t> writers;
    for (int w = 0; w < workers; ++w) ++writers[(static_cast<std::uint64_t>(w) * elem_size + field_offset) / 64];
    const std::uint64_t bursts = (writes_per_worker + burst - 1) / burst;
    std::uint64_t transfers = 0;
    for (const auto& [line, n] : writers)
        if (n >= 2) transfers += n * bursts - 1;
    return transfers;
}

}  // namespace ch06_exercise
