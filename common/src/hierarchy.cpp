// The cache hierarchy of chapter 8's AMAT page (amat.md shows the snippets) and of the time model.
#include "cachebook/hierarchy.hpp"

#include <stdexcept>
#include <utility>

#include "cachebook/chase.hpp"
#include "cachebook/trace.hpp"

namespace cachebook {

// [snippet: hierarchy]
double LevelCounts::miss_rate() const {
    return accesses == 0 ? 0.0 : static_cast<double>(misses) / static_cast<double>(accesses);
}

Hierarchy::Hierarchy(const std::vector<CacheConfig>& levels, std::optional<std::uint64_t> placement_seed)
    : counts_(levels.size()) {
    for (const auto& config : levels) caches_.emplace_back(config);
    if (placement_seed) placement_.emplace(*placement_seed);
}

void Hierarchy::access(std::uint64_t address) {
    if (placement_) address = placement_->physical(address);
    for (std::size_t k = 0; k < caches_.size(); ++k) {
        ++counts_[k].accesses;
        if (caches_[k].access(address).hit) return;  // this level holds it: the load stops here
        ++counts_[k].misses;                         // else it goes on to the next level
    }
}

void Hierarchy::reset_counts() {
    for (auto& c : counts_) c = {};
}
// [end: hierarchy]

std::uint64_t PagePlacement::physical(std::uint64_t address) {
    const std::uint64_t page = address / kPageBytes;
    auto [at, added] = frame_of_.try_emplace(page, 0);
    if (added) {
        constexpr std::uint64_t kFrames = std::uint64_t{1} << 36;  // 256 TiB of frames: a 48-bit space
        std::uint64_t frame = uniform_below(state_, kFrames);
        while (!frames_taken_.insert(frame).second) frame = uniform_below(state_, kFrames);
        at->second = frame;
    }
    return at->second * kPageBytes + address % kPageBytes;
}

// [snippet: walks]
Walk row_walk(std::size_t n) {
    return [n](Hierarchy& h) {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) h.access(row_major_address(0, i, j, n, sizeof(int)));
    };
}

Walk column_walk(std::size_t n) {
    return [n](Hierarchy& h) {
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t i = 0; i < n; ++i) h.access(row_major_address(0, i, j, n, sizeof(int)));
    };
}

Walk chase_walk(std::vector<std::uint32_t> next, std::size_t line) {
    return [next = std::move(next), line](Hierarchy& h) {
        std::uint32_t node = 0;
        for (std::size_t hop = 0; hop < next.size(); ++hop) {
            h.access(static_cast<std::uint64_t>(node) * line);
            node = next[node];
        }
    };
}

Walk sequential_walk(std::size_t bytes, std::size_t line) {
    return [bytes, line](Hierarchy& h) {
        for (std::size_t offset = 0; offset < bytes; offset += line) h.access(offset);
    };
}
// [end: walks]

// [snippet: warm]
std::vector<LevelCounts> warm_counts(const std::vector<CacheConfig>& levels, const Walk& walk) {
    Hierarchy h(levels);
    walk(h);  // the warm-up pass
    h.reset_counts();
    walk(h);  // the pass that counts
    return h.counts();
}
// [end: warm]

std::vector<LevelCounts> placed_counts(const std::vector<CacheConfig>& levels, const Walk& walk, int placements) {
    if (placements < 1) throw std::invalid_argument("placed_counts: one placement or more");
    std::vector<LevelCounts> sum(levels.size());
    for (int p = 1; p <= placements; ++p) {
        Hierarchy h(levels, static_cast<std::uint64_t>(p));
        walk(h);
        h.reset_counts();
        walk(h);
        for (std::size_t k = 0; k < sum.size(); ++k) {
            sum[k].accesses += h.counts()[k].accesses;
            sum[k].misses += h.counts()[k].misses;
        }
    }
    for (auto& c : sum)
        c = {c.accesses / static_cast<std::uint64_t>(placements), c.misses / static_cast<std::uint64_t>(placements)};
    return sum;
}

}  // namespace cachebook
