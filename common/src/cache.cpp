#include "cachebook/cache.hpp"

#include <fmt/format.h>

#include <bit>
#include <span>
#include <stdexcept>

namespace cachebook {

// [snippet: cache_config]
Policy parse_policy(std::string_view name) {
    if (name == "lru") return Policy::LRU;
    if (name == "fifo") return Policy::FIFO;
    if (name == "random") return Policy::Random;
    if (name == "plru") return Policy::PLRU;
    throw std::invalid_argument(fmt::format("unknown replacement policy '{}' (lru, fifo, random, plru)", name));
}

std::string_view policy_name(Policy p) {
    switch (p) {
        case Policy::LRU:
            return "lru";
        case Policy::FIFO:
            return "fifo";
        case Policy::Random:
            return "random";
        case Policy::PLRU:
            return "plru";
    }
    return "?";
}

void CacheConfig::validate() const {
    // Bounds keep every product below 2^63 and the model's memory sane (at most 2^28 lines).
    if (sets == 0) throw std::invalid_argument("cache: sets must be at least 1");
    if (ways == 0) throw std::invalid_argument("cache: ways must be at least 1");
    if (line_bytes == 0 || !std::has_single_bit(line_bytes))
        throw std::invalid_argument(fmt::format("cache: line size {} is not a power of two", line_bytes));
    if (line_bytes > (std::size_t{1} << 20))
        throw std::invalid_argument(fmt::format("cache: line size {} exceeds 1 MiB", line_bytes));
    if (sets > (std::size_t{1} << 28) || ways > (std::size_t{1} << 28) || sets * ways > (std::size_t{1} << 28))
        throw std::invalid_argument(fmt::format("cache: {} sets x {} ways exceeds 2^28 lines", sets, ways));
    if (policy == Policy::PLRU && (!std::has_single_bit(ways) || ways > 64))
        throw std::invalid_argument(
            fmt::format("cache: tree-PLRU needs a power-of-two way count up to 64, got {}", ways));
}

std::string CacheConfig::describe() const {
    return fmt::format("{} B, {} set{} x {} way{} x {} B lines, {}", capacity_bytes(), sets, sets == 1 ? "" : "s", ways,
                       ways == 1 ? "" : "s", line_bytes, policy_name(policy));
}

CacheConfig CacheConfig::fully_associative(std::size_t lines, std::size_t line_bytes) {
    return CacheConfig{1, lines, line_bytes};
}

CacheConfig CacheConfig::direct_mapped(std::size_t lines, std::size_t line_bytes) {
    return CacheConfig{lines, 1, line_bytes};
}

CacheConfig CacheConfig::from_capacity(std::size_t capacity_bytes, std::size_t ways, std::size_t line_bytes) {
    if (ways == 0 || line_bytes == 0) throw std::invalid_argument("cache: ways and line size must be at least 1");
    const std::size_t per_set = ways * line_bytes;
    if (capacity_bytes == 0 || capacity_bytes % per_set != 0)
        throw std::invalid_argument(
            fmt::format("cache: capacity {} B is not a whole number of {}-way sets of {} B lines", capacity_bytes, ways,
                        line_bytes));
    return CacheConfig{capacity_bytes / per_set, ways, line_bytes};
}
// [end: cache_config]

// [snippet: cache_construct]
Cache::Cache(const CacheConfig& config) : config_(config) {
    config_.validate();
    names_.emplace_back("all");
    per_stream_.emplace_back();
    reset();
}

void Cache::reset() {
    ways_.assign(config_.sets * config_.ways, Way{});
    tree_.assign(config_.policy == Policy::PLRU ? config_.sets * config_.ways : 0, false);
    clock_ = 0;
    random_state_ = config_.seed * 0x9E3779B97F4A7C15ull + 1;  // never 0, which the generator would keep
    total_ = {};
    for (Counts& c : per_stream_) c = {};
}

int Cache::add_stream(std::string name) {
    names_.push_back(std::move(name));
    per_stream_.emplace_back();
    return static_cast<int>(names_.size() - 1);
}

std::span<Cache::Way> Cache::ways_of(std::size_t set) {
    return std::span<Way>(ways_).subspan(set * config_.ways, config_.ways);
}

std::span<const Cache::Way> Cache::ways_of(std::size_t set) const {
    return std::span<const Way>(ways_).subspan(set * config_.ways, config_.ways);
}
// [end: cache_construct]

// [snippet: cache_access]
AccessResult Cache::access(std::uint64_t address, int stream, bool write) {
    Counts& stream_counts = per_stream_.at(static_cast<std::size_t>(stream));  // throws before any change
    const std::uint64_t line = address / config_.line_bytes;
    AccessResult r;
    r.set = static_cast<std::size_t>(line % config_.sets);
    const std::span<Way> ways = ways_of(r.set);
    for (std::size_t w = 0; w < ways.size(); ++w) {
        if (ways[w].valid && ways[w].line == line) {
            r.hit = true;
            r.way = w;
            break;
        }
    }
    if (r.hit) {
        if (config_.policy == Policy::LRU) ways[r.way].stamp = ++clock_;
    } else {
        r.way = victim(r.set);
        const Way old = ways[r.way];
        r.evicted = old.valid;
        r.dirty_evicted = old.valid && old.dirty;
        r.evicted_line = old.valid ? old.line : 0;
        ways[r.way] = Way{true, false, line, ++clock_};
    }
    if (write) ways[r.way].dirty = true;
    if (config_.policy == Policy::PLRU) plru_touch(r.set, r.way);

    Counts one;
    one.hits = r.hit ? 1 : 0;
    one.misses = r.hit ? 0 : 1;
    one.evictions = r.evicted ? 1 : 0;
    one.dirty_evictions = r.dirty_evicted ? 1 : 0;
    total_ += one;
    stream_counts += one;
    return r;
}
// [end: cache_access]

// [snippet: cache_victim]
std::size_t Cache::victim(std::size_t set) {
    const std::span<const Way> ways = ways_of(set);
    // An empty way is filled first, the lowest first, whatever the policy.
    for (std::size_t w = 0; w < ways.size(); ++w)
        if (!ways[w].valid) return w;
    switch (config_.policy) {
        case Policy::LRU:
        case Policy::FIFO: {
            // The smallest stamp: the least recent use (LRU) or the oldest fill (FIFO).
            std::size_t oldest = 0;
            for (std::size_t w = 1; w < ways.size(); ++w)
                if (ways[w].stamp < ways[oldest].stamp) oldest = w;
            return oldest;
        }
        case Policy::Random:
            return random_way();
        case Policy::PLRU:
            return plru_victim(set);
    }
    return 0;
}

// xorshift64*, a small generator whose sequence the seed fixes, so that a
// run under the Random policy repeats exactly.
std::size_t Cache::random_way() {
    random_state_ ^= random_state_ >> 12;
    random_state_ ^= random_state_ << 25;
    random_state_ ^= random_state_ >> 27;
    return static_cast<std::size_t>((random_state_ * 0x2545F4914F6CDD1Dull) % config_.ways);
}
// [end: cache_victim]

// [snippet: cache_plru]
// Tree-PLRU keeps one flag per inner node of a binary tree over the ways:
// node 1 is the root, node n has children 2n and 2n + 1, and a node's flag
// says in which half of its ways the next victim lies (true: the right half).
// A touch walks from the root to the way and turns every flag on the path
// away from it; the victim is found by following the flags down.
void Cache::plru_touch(std::size_t set, std::size_t way) {
    std::size_t node = 1, low = 0, high = config_.ways;  // the node covers ways [low, high)
    while (high - low > 1) {
        const std::size_t middle = (low + high) / 2;
        const bool right = way >= middle;
        tree_[set * config_.ways + node] = !right;
        node = 2 * node + (right ? 1 : 0);
        if (right)
            low = middle;
        else
            high = middle;
    }
}

std::size_t Cache::plru_victim(std::size_t set) const {
    std::size_t node = 1, low = 0, high = config_.ways;
    while (high - low > 1) {
        const std::size_t middle = (low + high) / 2;
        const bool right = tree_[set * config_.ways + node];
        node = 2 * node + (right ? 1 : 0);
        if (right)
            low = middle;
        else
            high = middle;
    }
    return low;
}
// [end: cache_plru]

// [snippet: cache_inspect]
bool Cache::contains(std::uint64_t address) const {
    const std::uint64_t line = address / config_.line_bytes;
    for (const Way& w : ways_of(static_cast<std::size_t>(line % config_.sets)))
        if (w.valid && w.line == line) return true;
    return false;
}

std::vector<std::uint64_t> Cache::resident_lines(std::size_t set) const {
    std::vector<std::uint64_t> lines;
    if (set >= config_.sets) return lines;
    for (const Way& w : ways_of(set))
        if (w.valid) lines.push_back(w.line);
    return lines;
}
// [end: cache_inspect]

}  // namespace cachebook
