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

namespace {

// Another core holding a valid copy supplies the data (Illinois MESI: clean or dirty).
int find_supplier(const std::vector<Mesi>& st, int core) {
    int supplier = -1;
    for (int c = 0; c < static_cast<int>(st.size()); ++c) {
        if (c == core) continue;
        const Mesi s = st[static_cast<std::size_t>(c)];
        if (s == Mesi::Modified || s == Mesi::Exclusive) return c;  // the single owner
        if (s == Mesi::Shared && supplier < 0) supplier = c;
    }
    return supplier;
}

int invalidate_others(std::vector<Mesi>& st, int core) {
    int n = 0;
    for (int c = 0; c < static_cast<int>(st.size()); ++c)
        if (c != core && st[static_cast<std::size_t>(c)] != Mesi::Invalid) {
            st[static_cast<std::size_t>(c)] = Mesi::Invalid;
            ++n;
        }
    return n;
}

CoherenceEvent read_line(std::vector<Mesi>& st, int core) {
    CoherenceEvent ev;
    Mesi& mine = st[static_cast<std::size_t>(core)];
    if (mine != Mesi::Invalid) {
        ev.outcome = Outcome::Hit;
        return ev;
    }
    // Read miss: an owner in M or E drops to S (an M copy is written back on the way).
    ev.supplier = find_supplier(st, core);
    if (ev.supplier >= 0) {
        for (auto& s : st)
            if (s == Mesi::Modified || s == Mesi::Exclusive) s = Mesi::Shared;
        mine = Mesi::Shared;
        ev.outcome = Outcome::Transfer;
    } else {
        mine = Mesi::Exclusive;
        ev.outcome = Outcome::MemoryFill;
    }
    return ev;
}

CoherenceEvent write_line(std::vector<Mesi>& st, int core) {
    CoherenceEvent ev;
    Mesi& mine = st[static_cast<std::size_t>(core)];
    switch (mine) {
        case Mesi::Modified:
            ev.outcome = Outcome::Hit;
            break;
        case Mesi::Exclusive:  // silent: nobody else has it
            ev.outcome = Outcome::Hit;
            break;
        case Mesi::Shared:
            ev.invalidated = invalidate_others(st, core);
            ev.outcome = Outcome::Upgrade;
            break;
        case Mesi::Invalid:
            // Read-for-ownership: fetch the line and invalidate every other copy.
            ev.supplier = find_supplier(st, core);
            ev.outcome = ev.supplier >= 0 ? Outcome::Transfer : Outcome::MemoryFill;
            ev.invalidated = invalidate_others(st, core);
            break;
    }
    mine = Mesi::Modified;
    return ev;
}

void tally(CoherenceStats& s, const CoherenceEvent& ev) {
    switch (ev.outcome) {
        case Outcome::Hit:
            ++s.hits;
            break;
        case Outcome::Upgrade:
            ++s.upgrades;
            break;
        case Outcome::MemoryFill:
            ++s.memory_fills;
            break;
        case Outcome::Transfer:
            ++s.transfers;
            break;
    }
    s.invalidations += static_cast<std::uint64_t>(ev.invalidated);
}

}  // namespace

CoherenceEvent CoherenceModel::access(int core, std::uint64_t address, AccessKind kind) {
    if (core < 0 || core >= cores_)
        throw std::out_of_range(fmt::format("coherence model: core {} outside 0..{}", core, cores_ - 1));
    std::vector<Mesi>& states =
        lines_.try_emplace(address / line_bytes_, static_cast<std::size_t>(cores_), Mesi::Invalid).first->second;
    CoherenceStats& mine = per_core_[static_cast<std::size_t>(core)];
    const bool read = kind == AccessKind::Read;
    ++(read ? total_.reads : total_.writes);
    ++(read ? mine.reads : mine.writes);
    const CoherenceEvent ev = read ? read_line(states, core) : write_line(states, core);
    tally(total_, ev);
    tally(mine, ev);
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

// [snippet: shared_line_time]
// One line is in one place at a time: its transfers, every core's, come one after another, and
// each core's run lasts as long as all of them.
SharedLineTime shared_line_time(const CoherenceStats& all, std::uint64_t accesses_per_core, double transfer_ns,
                                double core_ns) {
    if (accesses_per_core == 0 || transfer_ns < 0 || core_ns < 0)
        throw std::invalid_argument("shared_line_time: one access or more a core, and prices of 0 or more");
    return {static_cast<double>(all.transfers) * transfer_ns / static_cast<double>(accesses_per_core), core_ns};
}

// The other core asked for the line when it lost it; the request takes about a move to arrive.
std::size_t writes_while_requested(double transfer_ns, double core_ns) {
    if (!(core_ns > 0) || transfer_ns < 0)
        throw std::invalid_argument("writes_while_requested: a core's write takes some time, a move none or more");
    return 1 + static_cast<std::size_t>(transfer_ns / core_ns);
}
// [end: shared_line_time]

}  // namespace cachebook
