// A claim priced by the time model (priced.hpp).
#include "cachebook/priced.hpp"

#include <fmt/format.h>

#include <algorithm>

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

PricedMachine priced_machine(const Profile& profile) {
    PricedMachine m;
    std::vector<std::string> names;
    for (int level = 1; level <= 3; ++level) {
        const auto config = model_cache(machine().data_cache(level));
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
    m.prices = *prices;
    return m;
}

std::string levels_text(const PricedMachine& m) {
    if (!m.usable()) return "no model: " + m.why_not;
    std::string text;
    for (const auto& l : m.prices)
        text += fmt::format("{}{} {:.1f} ns, {:.0f} GB/s, {:.1f} in flight", text.empty() ? "the levels: " : "; ",
                            l.name, l.latency_ns, l.gbs, l.in_flight);
    return text;
}

WalkPrediction predict_walk(const PricedMachine& m, const WalkShape& shape, int placements) {
    const auto counts = placed_counts(m.caches, shape.walk, placements);
    const auto line = static_cast<double>(m.caches.front().line_bytes);
    const Work work{traffic_of(counts, shape.bytes_per_load, line), shape.dependent, shape.prefetched, 0};
    return {counts.front().accesses, predict(m.prices, work, Combine::overlapped),
            predict(m.prices, work, Combine::added)};
}

void report_priced(Report& report, const PricedClaim& c, const std::string& format) {
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
                           priced ? c.bottleneck : std::string("not priced")),
        Value::measured_as(key + "measured", c.measured, fmt::format(fmt::runtime(format), c.measured)).quoted(),
        cell("q", predicted / c.measured, "{:.2f}"));
    report.line("    with the levels added, not overlapped: {}, predicted / measured {}",
                cell("predicted_added", added, format), cell("q_added", added / c.measured, "{:.2f}"));
}

}  // namespace cachebook
