#include "cachebook/prefetch.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace cachebook {

std::string_view prefetch_name(PrefetchKind kind) {
    switch (kind) {
        case PrefetchKind::none:
            return "none";
        case PrefetchKind::next_line:
            return "next-line";
        case PrefetchKind::stride:
            return "stride";
    }
    return "?";
}

void PrefetchConfig::validate() const {
    if (degree == 0 || degree > 64)
        throw std::invalid_argument(fmt::format("prefetch: degree {} is not between 1 and 64", degree));
    if (table_streams == 0 || table_streams > 1024)
        throw std::invalid_argument(
            fmt::format("prefetch: a stride table of {} streams is not between 1 and 1024", table_streams));
}

// [snippet: stride_observe]
StrideTable::StrideTable(std::size_t streams) {
    if (streams == 0) throw std::invalid_argument("prefetch: the stride table needs at least one entry");
    entries_.resize(streams);
}

StrideTable::Entry& StrideTable::entry_for(int stream, std::uint64_t address, bool& is_new) {
    Entry* oldest = &entries_.front();
    for (Entry& e : entries_) {
        if (e.last_use != 0 && e.stream == stream) {
            is_new = false;
            return e;
        }
        if (e.last_use < oldest->last_use) oldest = &e;  // a free entry (last_use 0) is the oldest of all
    }
    // A stream the table does not follow: it starts over in the least recently used entry.
    *oldest = Entry{stream, address, 0, 0, 0};
    is_new = true;
    return *oldest;
}

std::optional<std::int64_t> StrideTable::observe(int stream, std::uint64_t address) {
    bool is_new = false;
    Entry& e = entry_for(stream, address, is_new);
    e.last_use = ++clock_;
    if (is_new) return std::nullopt;  // one address is not a stride yet
    // The difference as a signed number: a walk may go down as well as up.
    const auto stride = static_cast<std::int64_t>(address - e.last_address);
    e.last_address = address;
    if (stride == e.stride) {
        ++e.repeats;
    } else {
        e.stride = stride;
        e.repeats = 1;
    }
    if (e.stride != 0 && e.repeats >= 2) return e.stride;  // the same stride twice in a row
    return std::nullopt;
}
// [end: stride_observe]

namespace {
const PrefetchConfig& validated(const PrefetchConfig& config) {
    config.validate();
    return config;
}
}  // namespace

// [snippet: prefetch_access]
PrefetchingCache::PrefetchingCache(Cache cache, const PrefetchConfig& prefetch)
    : cache_(std::move(cache)), config_(validated(prefetch)), strides_(config_.table_streams) {
    prefetch_stream_ = cache_.add_stream("prefetch");
}

AccessResult PrefetchingCache::access(std::uint64_t address, int stream, bool write) {
    const AccessResult r = cache_.access(address, stream, write);
    forget_evicted(r);
    const std::uint64_t line = address / cache_.config().line_bytes;
    ++counts_.demand_accesses;
    if (!r.hit) ++counts_.demand_misses;
    if (r.hit && unused_.erase(line) > 0) ++counts_.useful;  // the first demand hit on a prefetched line
    if (config_.kind == PrefetchKind::next_line && !r.hit) {
        for (std::size_t d = 1; d <= config_.degree; ++d) fetch_line(line + d);
    } else if (config_.kind == PrefetchKind::stride) {
        if (const auto stride = strides_.observe(stream, address)) {
            for (std::size_t d = 1; d <= config_.degree; ++d) {
                const std::int64_t ahead = static_cast<std::int64_t>(address) + static_cast<std::int64_t>(d) * *stride;
                if (ahead < 0) break;  // a walk downwards that would leave address 0
                // A target inside the line just read is cached already, and fetch_line drops it.
                fetch_line(static_cast<std::uint64_t>(ahead) / cache_.config().line_bytes);
            }
        }
    }
    return r;
}

void PrefetchingCache::fetch_line(std::uint64_t line) {
    const std::uint64_t address = line * cache_.config().line_bytes;
    if (cache_.contains(address)) return;  // already cached: the prefetch is dropped
    forget_evicted(cache_.access(address, prefetch_stream_));
    unused_.insert(line);
    ++counts_.issued;
}

// A prefetched line that leaves before any demand touched it was fetched in vain.
void PrefetchingCache::forget_evicted(const AccessResult& r) {
    if (r.evicted) unused_.erase(r.evicted_line);
}
// [end: prefetch_access]

}  // namespace cachebook
