#include "cachebook/bandwidth.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"

namespace cachebook {

// [snippet: read_sum]
std::uint64_t read_sum(const std::uint64_t* words, std::size_t count, std::size_t stride, std::size_t passes) {
    // Four sums, so that the additions do not form one chain that the loads would wait on.
    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t pass = 0; pass < passes; ++pass) {
        std::size_t i = 0;
        for (; i + 3 * stride < count; i += 4 * stride) {
            s0 += words[i];
            s1 += words[i + stride];
            s2 += words[i + 2 * stride];
            s3 += words[i + 3 * stride];
        }
        for (; i < count; i += stride) s0 += words[i];
    }
    return s0 + s1 + s2 + s3;
}
// [end: read_sum]

double read_gbs(const PageBuffer& buf, std::size_t bytes, std::size_t stride, std::size_t min_bytes, int runs) {
    const std::size_t count = bytes / sizeof(std::uint64_t);
    if (count == 0 || bytes > buf.size() || stride == 0 || runs < 1)
        throw std::invalid_argument("read_gbs: needs 8 bytes or more inside the buffer, a stride and a run");
    const auto* words = reinterpret_cast<const std::uint64_t*>(buf.data());
    const std::size_t per_pass = (count + stride - 1) / stride;
    const std::size_t passes = std::max<std::size_t>(1, min_bytes / (per_pass * sizeof(std::uint64_t)));
    std::uint64_t sink = read_sum(words, count, stride, 1);  // the untimed pass: the data comes in
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        const auto t0 = Clock::now();
        sink += read_sum(words, count, stride, passes);
        best = std::min(best, seconds_since(t0));
    }
    do_not_optimize(sink);
    return static_cast<double>(per_pass * passes * sizeof(std::uint64_t)) / best / 1e9;
}

namespace {

std::size_t geometric_mean(std::size_t a, std::size_t b) {
    const double mean = std::sqrt(static_cast<double>(a) * static_cast<double>(b));
    return static_cast<std::size_t>(mean) / 64 * 64;  // whole lines
}

}  // namespace

LevelSizes level_sizes(std::size_t l1, std::size_t l2, std::size_t l3) {
    constexpr std::size_t kMiB = std::size_t{1} << 20;
    LevelSizes sizes;
    sizes.l1 = l1 / 2;
    sizes.l2 = l1 != 0 && l2 > l1 ? geometric_mean(l1, l2) : 0;
    sizes.l3 = l2 != 0 && l3 > l2 ? std::min(geometric_mean(l2, l3), 4 * l2) : 0;
    const std::size_t last = l3 != 0 ? l3 : l2 != 0 ? l2 : l1;
    sizes.memory = std::clamp(4 * last, 16 * kMiB, 128 * kMiB);
    return sizes;
}

LevelSizes level_sizes_of_this_machine() {
    std::size_t bytes[3] = {0, 0, 0};
    for (int level = 1; level <= 3; ++level)
        if (const auto c = machine().data_cache(level)) bytes[level - 1] = c->size_bytes;
    return level_sizes(bytes[0], bytes[1], bytes[2]);
}

std::vector<LevelBandwidth> read_bandwidth_by_level(const LevelSizes& sizes, std::size_t min_bytes, int runs) {
    std::vector<LevelBandwidth> levels = {
        {"L1", sizes.l1, {}}, {"L2", sizes.l2, {}}, {"L3", sizes.l3, {}}, {"memory", sizes.memory, {}}};
    std::size_t largest = 0;
    for (const auto& l : levels) largest = std::max(largest, l.bytes);
    if (largest == 0) return levels;
    const PageBuffer buf(largest, PageSize::Huge);
    for (auto& l : levels)
        if (l.bytes >= sizeof(std::uint64_t)) l.gbs = read_gbs(buf, l.bytes, 1, min_bytes, runs);
    return levels;
}

}  // namespace cachebook
