// A claim priced by the time model (priced.hpp).
#include "cachebook/priced.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "cachebook/machine.hpp"

namespace cachebook {

namespace {

const char* const kCacheNames[] = {"L1", "L2", "L3"};

// A cache the machine describes whole, as the model runs it; nullopt without size, ways or line.
std::optional<CacheConfig> model_cache(const std::optional<CacheInfo>& c) {
    if (!c || c->size_bytes == 0 || c->ways == 0 || c->line_bytes == 0) return std::nullopt;
    CacheConfig config;
    config.ways = c->ways;
    config.line_bytes = c->line_bytes;
    config.sets = std::max<std::size_t>(1, c->size_bytes / (c->ways * c->line_bytes));
    return config;
}

}  // namespace

// The L3 as the model runs it: the ways the machine gives, or the L2's where it gives none (a
// virtual machine's CPUID may not); its size the smaller of what the machine reports and what
// the profile found it serve (a guest may be told of a whole socket's L3 and hold a share).
std::optional<CacheConfig> modelled_l3(const std::optional<CacheInfo>& l3, const CacheConfig& l2,
                                       const Profile& profile, std::string& note) {
    if (!l3 || l3->size_bytes == 0 || (l3->line_bytes != 0 && l3->line_bytes != l2.line_bytes)) return std::nullopt;
    const bool ways_known = l3->ways != 0;
    std::size_t bytes = l3->size_bytes;
    if (profile.l3_reach.value) bytes = std::min(bytes, static_cast<std::size_t>(*profile.l3_reach.value));
    CacheConfig config;
    config.ways = ways_known ? l3->ways : l2.ways;
    config.line_bytes = l2.line_bytes;
    config.sets = std::max<std::size_t>(1, bytes / (config.ways * config.line_bytes));
    if (!ways_known) note = fmt::format("the L3's ways unknown: run with the L2's {}", l2.ways);
    if (bytes < l3->size_bytes)
        note += fmt::format("{}the L3 run at {}, the reach the profile measured, of {} reported",
                            note.empty() ? "" : "; ", size_text(config.capacity_bytes()), size_text(l3->size_bytes));
    return config;
}

PricedMachine priced_machine(const Profile& profile) {
    PricedMachine m;
    std::vector<std::string> names;
    for (int level = 1; level <= 3; ++level) {
        const auto config = level < 3              ? model_cache(machine().data_cache(level))
                            : m.caches.size() == 2 ? modelled_l3(machine().data_cache(3), m.caches[1], profile, m.note)
                                                   : std::nullopt;
        if (!config) break;
        m.caches.push_back(*config);
        names.push_back(kCacheNames[level - 1]);
    }
    if (m.caches.empty()) {
        m.why_not = machine().why_unknown("the L1d's size, ways or line size");
        return m;
    }
    names.push_back("memory");
    const auto prices = profile.prices(names);
    if (!prices) {
        m.why_not = "the profile lacks a figure of a level the model needs";
        return m;
    }
    const auto core = profile.core_price();
    if (!core) {
        m.why_not = "the profile lacks the core's add latencies";
        return m;
    }
    m.prices = *prices;
    m.core = *core;
    return m;
}

std::string levels_text(const PricedMachine& m) {
    if (!m.usable()) return "no model: " + m.why_not;
    std::string text;
    for (const auto& l : m.prices)
        text += fmt::format("{}{} {:.1f} ns, {:.0f} GB/s, {:.1f} in flight", text.empty() ? "the levels: " : "; ",
                            l.name, l.latency_ns, l.gbs, l.in_flight);
    text += fmt::format("; the core: an integer add {:.3f} ns, a double add {:.3f} ns", m.core.int_add_ns,
                        m.core.fp_add_ns);
    return m.note.empty() ? text : text + " (" + m.note + ")";
}

WalkPrediction predict_walk(const PricedMachine& m, const WalkShape& shape, int placements) {
    const auto counts = shape.warm ? placed_counts(m.caches, shape.warm, shape.walk, placements)
                                   : placed_counts(m.caches, shape.walk, placements);
    const auto line = static_cast<double>(m.caches.front().line_bytes);
    const double loads = static_cast<double>(counts.front().accesses) * shape.scale;
    Work work{traffic_of(counts, shape.bytes_per_load, line), shape.dependent, shape.prefetched,
              core_ns(m.core, shape.in_core, loads)};
    for (auto& level : work.levels)
        level = {level.loads * shape.scale, level.bytes * shape.scale, level.same_set_misses * shape.scale};
    return {static_cast<std::uint64_t>(loads), predict(m.prices, work, Combine::overlapped),
            predict(m.prices, work, Combine::added)};
}

std::optional<WalkPrediction> predict_matmul(const PricedMachine& m, LoopOrder order, std::size_t n, std::size_t tile,
                                             bool prefetched) {
    constexpr std::size_t kWarm = 2, kCounted = 2;
    const std::size_t units = matmul_units(n, tile);
    const std::size_t tiles_a_row = tile == 0 ? n : n / tile;  // whole tiles in the first row of tiles
    if (units < kWarm + kCounted || tiles_a_row < kWarm + kCounted) return std::nullopt;
    const Walk touch = matmul_touch(n), warm_units = matmul_walk(order, n, tile, 0, kWarm);
    // The whole over the part, in multiply-adds: a unit is n^2 of them, or a T x T tile of C's n T^2
    // (the units counted are whole tiles; those at the edges of a size T does not divide are smaller).
    const auto size = static_cast<double>(n), unit = tile == 0 ? size * size : static_cast<double>(tile * tile) * size;
    // An inner loop over k loads A and B each multiply-add, and C once before it: n multiply-adds,
    // n addsd in one chain, for 2n + 1 loads. The other orders' inner loops chain nothing.
    const bool inner_k = tile == 0 && order_name(order)[2] == 'k';
    const InCore in_core{0, inner_k ? size / (2 * size + 1) : 0};
    WalkShape shape{matmul_walk(order, n, tile, kWarm, kCounted), sizeof(double), false, prefetched, {},
                    size * size * size / (unit * kCounted),       in_core};
    shape.warm = [touch, warm_units](Hierarchy& h) {
        touch(h);
        warm_units(h);
    };
    return predict_walk(m, shape);
}

std::vector<PricedClaim> padded_claims(const PaddedPair& p) {
    std::vector<PricedClaim> claims = {{p.key + "_ns",
                                        fmt::format("{}, {}, ns {}", p.what, p.power_label, p.unit),
                                        {},
                                        {},
                                        "",
                                        p.measured_power_ns,
                                        p.left_out,
                                        p.why_not},
                                       {p.key + "_padded_ns",
                                        fmt::format("{}, {}, ns {}", p.what, p.padded_label, p.unit),
                                        {},
                                        {},
                                        "",
                                        p.measured_padded_ns,
                                        p.left_out,
                                        p.why_not},
                                       {p.key + "_power_over_padded",
                                        fmt::format("{}, {} / {}", p.what, p.power_label, p.padded_label),
                                        {},
                                        {},
                                        "",
                                        p.measured_power_ns / p.measured_padded_ns,
                                        p.left_out,
                                        p.why_not}};
    if (!p.power || !p.padded) {
        if (p.why_not.empty())
            for (auto& c : claims)
                c.why_not = "too small to price from a sample (fewer than four outer steps or tiles a row)";
        return claims;
    }
    const double power = p.power->overlapped.ns / p.power_units, padded = p.padded->overlapped.ns / p.padded_units;
    const double power_added = p.power->added.ns / p.power_units, padded_added = p.padded->added.ns / p.padded_units;
    claims[0].predicted = power;
    claims[0].predicted_added = power_added;
    claims[0].bottleneck = p.power->overlapped.bottleneck;
    claims[1].predicted = padded;
    claims[1].predicted_added = padded_added;
    claims[1].bottleneck = p.padded->overlapped.bottleneck;
    claims[2].predicted = power / padded;
    claims[2].predicted_added = power_added / padded_added;
    claims[2].bottleneck =
        fmt::format("{} {}, {} {}", p.power_label, claims[0].bottleneck, p.padded_label, claims[1].bottleneck);
    for (auto& c : claims) c.why_not.clear();
    return claims;
}

void report_priced(Report& report, const PricedClaim& c, const std::string& format, const std::string& added_what) {
    const std::string key = "priced." + c.key + ".";
    const bool priced = c.predicted.has_value();
    const double predicted = c.predicted.value_or(0), added = c.predicted_added.value_or(predicted);
    // A figure recorded, and printed with `shown`; null and "unknown" where the model cannot price.
    const auto cell = [&](const std::string& name, double x, const std::string& shown) {
        return Value::measured_as(key + name, priced ? nlohmann::json(x) : nlohmann::json(),
                                  priced ? fmt::format(fmt::runtime(shown), x) : "unknown")
            .quoted();
    };
    report.record(key + "what", c.what);
    report.record(key + "left_out", c.left_out);
    report.record(key + "why_not", priced ? nlohmann::json() : nlohmann::json(c.why_not));
    // The same two lines on every machine: "unknown" and the reason where the model cannot price.
    report.line(
        "  {}: the model predicts {} ({}), measured {}, predicted / measured {}", c.what,
        cell("predicted", predicted, format),
        Value::measured_as(key + "bottleneck", priced ? nlohmann::json(c.bottleneck) : nlohmann::json(),
                           priced              ? c.bottleneck
                           : c.why_not.empty() ? std::string("not priced")
                                               : "not priced: " + c.why_not),
        Value::measured_as(key + "measured", c.measured, fmt::format(fmt::runtime(format), c.measured)).quoted(),
        cell("q", predicted / c.measured, "{:.2f}"));
    report.line("    with {} added, not overlapped: {}, predicted / measured {}", added_what,
                cell("predicted_added", added, format), cell("q_added", added / c.measured, "{:.2f}"));
}

}  // namespace cachebook
