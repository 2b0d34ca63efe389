// The cache hierarchy of chapter 8's AMAT page (amat.md shows the snippets) and of the time model.
#include "cachebook/hierarchy.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>
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
        const auto result = caches_[k].access(address);
        if (result.hit) return;  // this level holds it: the load stops here
        ++counts_[k].misses;     // else it goes on to the next level
        if (k == 0) {
            if (last_miss_set_ == result.set) ++counts_[0].same_set_misses;
            last_miss_set_ = result.set;
        }
    }
}

void Hierarchy::reset_counts() {
    for (auto& c : counts_) c = {};
    last_miss_set_.reset();
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

namespace {

constexpr std::size_t kDouble = sizeof(double);

// The three matrices one after the other, each starting a page.
MatmulLayout page_aligned(std::size_t n) {
    return MatmulLayout::packed(n, kDouble, PagePlacement::kPageBytes);
}

// One unit of a plain nest: x the outermost variable's value, then y and z; `load(i, j, k, m)`
// loads element m (0 A[i][k], 1 B[k][j], 2 C[i][j]).
template <class Load>
void plain_unit(LoopOrder order, std::size_t n, std::size_t x, Load&& load) {
    // Which operand each order's inner loop leaves in place: A for inner j, B for inner i, C for inner k.
    const std::string_view name = order_name(order);
    const int kept = name[2] == 'j' ? 0 : name[2] == 'i' ? 1 : 2;
    for (std::size_t y = 0; y < n; ++y) {
        std::size_t v[3];  // the values of i, j, k by name
        const auto set = [&](char var, std::size_t value) { v[var == 'i' ? 0 : var == 'j' ? 1 : 2] = value; };
        set(name[0], x);
        set(name[1], y);
        set(name[2], 0);
        load(v[0], v[1], v[2], kept);  // once, before the inner loop
        for (std::size_t z = 0; z < n; ++z) {
            set(name[2], z);
            for (int m = 0; m < 3; ++m)
                if (m != kept) load(v[0], v[1], v[2], m);
        }
    }
}

// One unit of the blocked product: the tiles of C at (ii, jj), every kk, inside i, k, j.
template <class Load>
void tiled_unit(std::size_t n, std::size_t t, std::size_t ii, std::size_t jj, Load&& load) {
    for (std::size_t kk = 0; kk < n; kk += t)
        for (std::size_t i = ii; i < std::min(ii + t, n); ++i)
            for (std::size_t k = kk; k < std::min(kk + t, n); ++k) {
                load(i, jj, k, 0);  // A[i][k], kept in a register over j
                for (std::size_t j = jj; j < std::min(jj + t, n); ++j) {
                    load(i, j, k, 1);
                    load(i, j, k, 2);
                }
            }
}

}  // namespace

std::size_t matmul_units(std::size_t n, std::size_t tile) {
    if (tile == 0) return n;
    const std::size_t tiles = (n + tile - 1) / tile;
    return tiles * tiles;
}

Walk matmul_walk(LoopOrder order, std::size_t n, std::size_t tile, std::size_t first, std::size_t count) {
    if (first + count > matmul_units(n, tile)) throw std::invalid_argument("matmul_walk: units beyond the product");
    return [=](Hierarchy& h) {
        const MatmulLayout at = page_aligned(n);
        const auto load = [&](std::size_t i, std::size_t j, std::size_t k, int m) {
            h.access(m == 0   ? row_major_address(at.a, i, k, n, kDouble)
                     : m == 1 ? row_major_address(at.b, k, j, n, kDouble)
                              : row_major_address(at.c, i, j, n, kDouble));
        };
        const std::size_t tiles = tile == 0 ? 0 : (n + tile - 1) / tile;
        for (std::size_t u = first; u < first + count; ++u) {
            if (tile == 0)
                plain_unit(order, n, u, load);
            else
                tiled_unit(n, tile, u / tiles * tile, u % tiles * tile, load);
        }
    };
}

Walk matmul_touch(std::size_t n) {
    return [n](Hierarchy& h) {
        const MatmulLayout at = page_aligned(n);
        for (std::uint64_t offset = 0; offset < at.c + n * n * kDouble; offset += kDouble) h.access(offset);
    };
}

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
    return placed_counts(levels, walk, walk, placements);
}

std::vector<LevelCounts> placed_counts(const std::vector<CacheConfig>& levels, const Walk& warm, const Walk& counted,
                                       int placements) {
    if (placements < 1) throw std::invalid_argument("placed_counts: one placement or more");
    std::vector<LevelCounts> sum(levels.size());
    for (int p = 1; p <= placements; ++p) {
        Hierarchy h(levels, static_cast<std::uint64_t>(p));
        warm(h);
        h.reset_counts();
        counted(h);
        for (std::size_t k = 0; k < sum.size(); ++k) {
            sum[k].accesses += h.counts()[k].accesses;
            sum[k].misses += h.counts()[k].misses;
            sum[k].same_set_misses += h.counts()[k].same_set_misses;
        }
    }
    const auto n = static_cast<std::uint64_t>(placements);
    for (auto& c : sum) c = {c.accesses / n, c.misses / n, c.same_set_misses / n};
    return sum;
}

}  // namespace cachebook
