#include "cachebook/miss_kinds.hpp"

#include <cstddef>
#include <limits>
#include <list>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace cachebook {

namespace {

// [snippet: miss_kinds_helpers]
/// The misses of a cache of `config` on the whole trace.
std::uint64_t misses_of(const CacheConfig& config, std::span<const std::uint64_t> addresses) {
    Cache cache(config);
    for (const std::uint64_t a : addresses) cache.access(a);
    return cache.total().misses;
}

/// The misses of a fully associative LRU cache of `capacity` lines. One set of
/// many ways is slow to scan way by way, so this keeps the lines in a list,
/// most recent first, with an index from line to its place in the list.
std::uint64_t fully_associative_misses(std::size_t capacity, std::size_t line_bytes,
                                       std::span<const std::uint64_t> addresses) {
    std::list<std::uint64_t> recent;  // most recently used first
    std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> where;
    std::uint64_t misses = 0;
    for (const std::uint64_t a : addresses) {
        const std::uint64_t line = a / line_bytes;
        const auto found = where.find(line);
        if (found != where.end()) {
            recent.splice(recent.begin(), recent, found->second);  // a hit: now the most recent
            continue;
        }
        ++misses;
        if (recent.size() == capacity) {  // full: the least recently used line leaves
            where.erase(recent.back());
            recent.pop_back();
        }
        recent.push_front(line);
        where[line] = recent.begin();
    }
    return misses;
}

/// How many different lines the trace touches: its compulsory misses.
std::uint64_t distinct_lines(std::size_t line_bytes, std::span<const std::uint64_t> addresses) {
    std::unordered_set<std::uint64_t> seen;
    for (const std::uint64_t a : addresses) seen.insert(a / line_bytes);
    return seen.size();
}

constexpr std::size_t never = std::numeric_limits<std::size_t>::max();  // "not used again"

/// For each access, the position of the next access to the same line, or
/// `never`: one pass from the end, remembering where each line was last seen.
std::vector<std::size_t> next_uses(const std::vector<std::uint64_t>& lines) {
    std::vector<std::size_t> next(lines.size(), never);
    std::unordered_map<std::uint64_t, std::size_t> seen_at;
    for (std::size_t i = lines.size(); i-- > 0;) {
        const auto found = seen_at.find(lines[i]);
        if (found != seen_at.end()) next[i] = found->second;
        seen_at[lines[i]] = i;
    }
    return next;
}

/// One line held by a set under OPT, and when it is wanted next.
struct Held {
    std::uint64_t line = 0;
    std::size_t next_use = never;
    bool dirty = false;
};

/// The way of a full set whose line is wanted last.
std::size_t farthest(const std::vector<Held>& set) {
    std::size_t victim = 0;
    for (std::size_t w = 1; w < set.size(); ++w)
        if (set[w].next_use > set[victim].next_use) victim = w;
    return victim;
}
// [end: miss_kinds_helpers]

}  // namespace

// [snippet: miss_kinds_classify]
MissKinds split_misses(std::uint64_t misses, const CacheConfig& config, std::span<const std::uint64_t> addresses) {
    config.validate();
    const auto fully_misses =
        static_cast<std::int64_t>(fully_associative_misses(config.lines(), config.line_bytes, addresses));
    MissKinds k;
    k.misses = misses;
    k.compulsory = distinct_lines(config.line_bytes, addresses);
    k.capacity = fully_misses - static_cast<std::int64_t>(k.compulsory);
    k.conflict = static_cast<std::int64_t>(misses) - fully_misses;
    return k;
}

MissKinds classify_misses(const CacheConfig& config, std::span<const std::uint64_t> addresses) {
    return split_misses(misses_of(config, addresses), config, addresses);
}
// [end: miss_kinds_classify]

// [snippet: miss_kinds_opt]
Counts optimal_counts(const CacheConfig& config, std::span<const std::uint64_t> addresses,
                      const std::vector<bool>& writes) {
    config.validate();
    if (!writes.empty() && writes.size() != addresses.size())
        throw std::invalid_argument("optimal_counts: one write flag per address, or none");
    std::vector<std::uint64_t> lines;
    lines.reserve(addresses.size());
    for (const std::uint64_t a : addresses) lines.push_back(a / config.line_bytes);
    const std::vector<std::size_t> next = next_uses(lines);

    std::vector<std::vector<Held>> sets(config.sets);
    Counts counts;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::vector<Held>& set = sets[lines[i] % config.sets];
        std::size_t way = 0;
        while (way < set.size() && set[way].line != lines[i]) ++way;
        if (way < set.size()) {
            ++counts.hits;
        } else {
            ++counts.misses;
            if (set.size() < config.ways) {
                set.emplace_back();  // an empty way is filled first
            } else {
                way = farthest(set);
                ++counts.evictions;
                if (set[way].dirty) ++counts.dirty_evictions;
                set[way] = Held{};
            }
        }
        set[way].line = lines[i];
        set[way].next_use = next[i];  // the line is now wanted at its next use
        if (!writes.empty() && writes[i]) set[way].dirty = true;
    }
    return counts;
}

std::uint64_t optimal_misses(const CacheConfig& config, std::span<const std::uint64_t> addresses) {
    return optimal_counts(config, addresses).misses;
}
// [end: miss_kinds_opt]

}  // namespace cachebook
