#include "hierarchy.hpp"

#include <fmt/format.h>

#include <bit>
#include <stdexcept>

namespace cachesim {

Hierarchy::Hierarchy(std::vector<CacheConfig> levels, Inclusion inclusion) : inclusion_(inclusion) {
    if (levels.empty() || levels.size() > 3)
        throw std::invalid_argument(fmt::format("hierarchy: 1 to 3 levels, got {}", levels.size()));
    for (std::size_t k = 0; k < levels.size(); ++k) {
        levels[k].validate();
        if (inclusion == Inclusion::Inclusive && k > 0 && levels[k].line_bytes < levels[k - 1].line_bytes)
            throw std::invalid_argument(
                fmt::format("hierarchy: an inclusive L{} needs lines at least as long as L{}'s", k + 1, k));
    }
    for (const CacheConfig& c : levels) {
        caches_.emplace_back(c);
        shifts_.push_back(static_cast<unsigned>(std::countr_zero(c.line_bytes)));
        counts_.emplace_back(1);
        back_invalidations_.push_back(0);
    }
    refresh_fast_path();
}

void Hierarchy::refresh_fast_path() {
    single_level_ = caches_.size() == 1;
    l1_ = &caches_[0];
    l1_counts_ = counts_[0].data();
    l1_line_bytes_ = caches_[0].config().line_bytes;
    l1_offset_mask_ = l1_line_bytes_ - 1;
}

void Hierarchy::access_batch(const std::uint64_t* refs, std::size_t n) {
    if (!batch_ready())
        throw std::logic_error("Hierarchy::access_batch: more than one level, or a cache not batch_ready()");
    const Counts c = l1_->access_batch(refs, n);
    l1_counts_[0] += c;
    memory_writebacks_ += c.dirty_evictions;  // one level: a dirty line leaves for memory
}

int Hierarchy::add_stream(const std::string& name) {
    int id = 0;
    for (std::size_t k = 0; k < caches_.size(); ++k) {
        id = caches_[k].add_stream(name);
        counts_[k].emplace_back();
    }
    refresh_fast_path();
    return id;
}

HierarchyResult Hierarchy::access_levels(std::uint64_t address, std::uint32_t size, bool write, int stream) {
    HierarchyResult r;
    const int n = static_cast<int>(caches_.size());
    for (int k = 0; k < n; ++k) {
        if (reference(k, address, size, write && k == 0, stream, r)) {
            r.level = k;
            return r;
        }
    }
    r.level = n;
    return r;
}

void Hierarchy::write_back(int from_level, std::uint64_t address) {
    for (std::size_t j = static_cast<std::size_t>(from_level) + 1; j < caches_.size(); ++j)
        if (caches_[j].mark_dirty(address)) return;
    ++memory_writebacks_;
}

void Hierarchy::evicted(int k, std::uint64_t line_address, bool dirty) {
    if (dirty) write_back(k, line_address);
    if (inclusion_ != Inclusion::Inclusive || k == 0) return;
    // Keep the levels above a subset: drop every one of their lines within this one.
    const std::uint64_t bytes = caches_[static_cast<std::size_t>(k)].config().line_bytes;
    for (int j = 0; j < k; ++j) {
        FastCache& upper = caches_[static_cast<std::size_t>(j)];
        const std::uint64_t step = upper.config().line_bytes;
        for (std::uint64_t a = line_address; a < line_address + bytes; a += step) {
            const FastCache::Invalidated gone = upper.invalidate(a);
            if (!gone.present) continue;
            ++back_invalidations_[static_cast<std::size_t>(k)];
            if (gone.dirty) write_back(k, a);  // the newest data leaves with it
        }
    }
}

}  // namespace cachesim
