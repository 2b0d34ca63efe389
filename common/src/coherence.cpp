#include "cachebook/coherence.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace cachebook {

char mesi_letter(Mesi s) {
    switch (s) {
        case Mesi::Modified:
            return 'M';
        case Mesi::Exclusive:
            return 'E';
        case Mesi::Shared:
            return 'S';
        case Mesi::Invalid:
            return 'I';
    }
    return '?';
}

std::string_view outcome_name(Outcome o) {
    switch (o) {
        case Outcome::Hit:
            return "hit";
        case Outcome::Upgrade:
            return "upgrade";
        case Outcome::MemoryFill:
            return "memory";
        case Outcome::Transfer:
            return "transfer";
    }
    return "?";
}

CoherenceModel::CoherenceModel(int cores, std::size_t line_bytes)
    : cores_(cores), line_bytes_(line_bytes), per_core_(cores > 0 ? static_cast<std::size_t>(cores) : 0) {
    if (cores < 1) throw std::invalid_argument(fmt::format("coherence model: cores must be at least 1, got {}", cores));
    if (line_bytes == 0 || (line_bytes & (line_bytes - 1)) != 0)
        throw std::invalid_argument(
            fmt::format("coherence model: line size must be a power of two, got {}", line_bytes));
}

CoherenceEvent CoherenceModel::access(int core, std::uint64_t address, AccessKind kind) {
    if (core < 0 || core >= cores_)
        throw std::out_of_range(fmt::format("coherence model: core {} outside 0..{}", core, cores_ - 1));
    auto [it, fresh] = lines_.try_emplace(address / line_bytes_, static_cast<std::size_t>(cores_), Mesi::Invalid);
    std::vector<Mesi>& st = it->second;
    const auto me = static_cast<std::size_t>(core);
    CoherenceStats& mine = per_core_[me];
    CoherenceEvent ev;

    // Another core holding a valid copy supplies the data (Illinois MESI: clean or dirty).
    auto find_supplier = [&]() -> int {
        int supplier = -1;
        for (int c = 0; c < cores_; ++c) {
            if (c == core) continue;
            const Mesi s = st[static_cast<std::size_t>(c)];
            if (s == Mesi::Modified || s == Mesi::Exclusive) return c;  // the single owner
            if (s == Mesi::Shared && supplier < 0) supplier = c;
        }
        return supplier;
    };
    auto invalidate_others = [&]() {
        int n = 0;
        for (int c = 0; c < cores_; ++c)
            if (c != core && st[static_cast<std::size_t>(c)] != Mesi::Invalid) {
                st[static_cast<std::size_t>(c)] = Mesi::Invalid;
                ++n;
            }
        return n;
    };

    if (kind == AccessKind::Read) {
        ++total_.reads;
        ++mine.reads;
        if (st[me] != Mesi::Invalid) {
            ev.outcome = Outcome::Hit;
        } else {
            // Read miss: an owner in M or E drops to S (an M copy is written back on the way).
            ev.supplier = find_supplier();
            if (ev.supplier >= 0) {
                for (auto& s : st)
                    if (s == Mesi::Modified || s == Mesi::Exclusive) s = Mesi::Shared;
                st[me] = Mesi::Shared;
                ev.outcome = Outcome::Transfer;
            } else {
                st[me] = Mesi::Exclusive;
                ev.outcome = Outcome::MemoryFill;
            }
        }
    } else {
        ++total_.writes;
        ++mine.writes;
        switch (st[me]) {
            case Mesi::Modified:
                ev.outcome = Outcome::Hit;
                break;
            case Mesi::Exclusive:
                st[me] = Mesi::Modified;  // silent: nobody else has it
                ev.outcome = Outcome::Hit;
                break;
            case Mesi::Shared:
                ev.invalidated = invalidate_others();
                st[me] = Mesi::Modified;
                ev.outcome = Outcome::Upgrade;
                break;
            case Mesi::Invalid:
                // Read-for-ownership: fetch the line and invalidate every other copy.
                ev.supplier = find_supplier();
                ev.outcome = ev.supplier >= 0 ? Outcome::Transfer : Outcome::MemoryFill;
                ev.invalidated = invalidate_others();
                st[me] = Mesi::Modified;
                break;
        }
    }

    for (CoherenceStats* s : {&total_, &mine}) {
        switch (ev.outcome) {
            case Outcome::Hit:
                ++s->hits;
                break;
            case Outcome::Upgrade:
                ++s->upgrades;
                break;
            case Outcome::MemoryFill:
                ++s->memory_fills;
                break;
            case Outcome::Transfer:
                ++s->transfers;
                break;
        }
        s->invalidations += static_cast<std::uint64_t>(ev.invalidated);
    }
    return ev;
}

void CoherenceModel::run(const std::vector<CoherenceAccess>& stream) {
    for (const auto& a : stream) access(a);
}

Mesi CoherenceModel::state(int core, std::uint64_t address) const {
    if (core < 0 || core >= cores_)
        throw std::out_of_range(fmt::format("coherence model: core {} outside 0..{}", core, cores_ - 1));
    const auto it = lines_.find(address / line_bytes_);
    return it == lines_.end() ? Mesi::Invalid : it->second[static_cast<std::size_t>(core)];
}

const CoherenceStats& CoherenceModel::of_core(int core) const {
    if (core < 0 || core >= cores_)
        throw std::out_of_range(fmt::format("coherence model: core {} outside 0..{}", core, cores_ - 1));
    return per_core_[static_cast<std::size_t>(core)];
}

std::vector<CoherenceAccess> interleave(const std::vector<std::vector<CoreAccess>>& per_core, std::size_t burst) {
    if (burst == 0) throw std::invalid_argument("interleave: burst must be at least 1");
    std::vector<CoherenceAccess> out;
    std::size_t total = 0;
    for (const auto& s : per_core) total += s.size();
    out.reserve(total);
    std::vector<std::size_t> next(per_core.size(), 0);
    while (out.size() < total) {
        for (std::size_t c = 0; c < per_core.size(); ++c) {
            for (std::size_t k = 0; k < burst && next[c] < per_core[c].size(); ++k, ++next[c]) {
                const CoreAccess& a = per_core[c][next[c]];
                out.push_back(CoherenceAccess{static_cast<int>(c), a.address, a.kind});
            }
        }
    }
    return out;
}

}  // namespace cachebook
