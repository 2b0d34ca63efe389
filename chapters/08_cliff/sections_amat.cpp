// Chapter 8's output, section 12 (the page amat.md): the hierarchy priced, each walk's miss rates,
// AMAT and measured time, the predicted ratio against the measured one, and the claim about
// overlapping misses.
#include <fmt/format.h>

#include <optional>

#include "cachebook/claim.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/report.hpp"
#include "sections.hpp"

namespace ch08 {

namespace {

using cachebook::Report;
using cachebook::size_text;
using cachebook::Value;

// null when absent ("not found" in the JSON, never a made-up number).
template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

void priced_levels_table(Report& report, const PricedHierarchy& h) {
    auto table = report.table({"level", "the model's geometry", "from", "latency"});
    for (const auto& l : h.levels) {
        const std::string key = "amat.levels." + l.name + ".";
        const bool priced = l.cache.has_value();
        // The geometry's figures too, for the page's reading of where a column falls.
        report.record(key + "sets", priced ? nlohmann::json(l.cache->sets) : nlohmann::json());
        report.record(key + "ways", priced ? nlohmann::json(l.cache->ways) : nlohmann::json());
        table.row({Value::exact(key + "name", l.name),
                   Value::measured_as(key + "geometry", priced ? nlohmann::json(l.cache->describe()) : nlohmann::json(),
                                      priced ? l.cache->describe() : l.why_not),
                   Value::measured(key + "from", priced ? l.geometry_from : std::string("-")),
                   Value::measured_as(key + "latency_ns", priced ? opt_json(l.latency_ns) : nlohmann::json(),
                                      priced ? fmt::format("{:.2f} ns", *l.latency_ns) : "-")
                       .quoted()});
    }
    table.row({"beyond", "a load no priced level holds", "section 5",
               Value::measured_as("amat.memory_ns", opt_json(h.memory_ns),
                                  h.memory_ns ? fmt::format("{:.2f} ns", *h.memory_ns) : "-")
                   .quoted()});
    table.print();
}

// Which latency a miss of the last priced level costs, or why there is no AMAT.
std::string last_priced_text(const PricedHierarchy& h) {
    if (!h.usable()) return "no level priced (no step in the curve): no AMAT in this run";
    const auto configs = h.configs();
    return fmt::format("t1 .. t{} from the levels priced, t_beyond for a load that misses {}", configs.size(),
                       h.levels[configs.size() - 1].name);
}

std::vector<Value> priced_walk_row(const PricedWalk& w, const PricedHierarchy& h) {
    std::vector<Value> cells{Value::exact("walk", w.name)};
    static const char* const kKeys[] = {"l1d_miss_rate", "l2_miss_rate", "l3_miss_rate"};
    for (std::size_t k = 0; k < 3; ++k) {
        const bool priced = k < w.counts.size();
        const double rate = priced ? w.counts[k].miss_rate() : 0;
        cells.push_back(Value::measured_as(kKeys[k], priced ? nlohmann::json(rate) : nlohmann::json(),
                                           priced ? fmt::format("{:.2f} %", 100 * rate) : "-")
                            .quoted());
    }
    const bool usable = h.usable();
    cells.push_back(Value::measured_as("amat_ns", usable ? nlohmann::json(w.amat_ns) : nlohmann::json(),
                                       usable ? fmt::format("{:.2f}", w.amat_ns) : "-")
                        .quoted());
    cells.push_back(Value::measured("measured_ns", w.measured_ns, "{:.2f}").quoted());
    const double quotient = usable ? w.measured_ns / w.amat_ns : 0;
    cells.push_back(Value::measured_as("measured_over_amat", usable ? nlohmann::json(quotient) : nlohmann::json(),
                                       usable ? fmt::format("{:.2f}", quotient) : "-")
                        .quoted());
    return cells;
}

}  // namespace

void amat_section(Report& report, const AmatResult& r, std::size_t n) {
    report.section("The price of a miss: AMAT from the latencies of section 5 (the page amat.md)");
    priced_levels_table(report, r.hierarchy);
    report.line("  AMAT = t1 + m1 x (t2 - t1 + m2 x (t3 - t2 + m3 x (t_beyond - t3))), m: a level's local miss rate");
    report.line("  {}", Value::measured("amat.priced_text", last_priced_text(r.hierarchy)));
    report.line("  walks: int a[{}][{}] ({}) by rows and by columns, chapter 2's sums; chase and strided sum at {}",
                Value::exact("amat.n", n), n,
                Value::exact_as("amat.matrix_bytes", n * n * sizeof(int), size_text(n * n * sizeof(int))).quoted(),
                Value::measured_as("amat.curve_bytes", r.curve_bytes, size_text(r.curve_bytes)).quoted());
    auto table = report.table_of_rows(
        "amat.walks", {"walk", "L1d misses", "L2 misses", "L3 misses", "AMAT ns", "measured ns", "measured / AMAT"});
    for (const auto* w : {&r.row, &r.column, &r.chase, &r.strided}) table.row(priced_walk_row(*w, r.hierarchy));
    table.print();
    // More than one L2 miss a line: the model's L2 lost a column's lines before the next column reused them.
    const bool l2_priced = r.column.counts.size() > 1;
    report.record(
        "amat.column_l2_refetches",
        l2_priced ? nlohmann::json(r.column.counts[1].miss_rate() > r.row.counts[0].miss_rate()) : nlohmann::json());
    report.line("  sums: row {}, column {} ({})", Value::exact("amat.row_sum", r.sums.row_sum),
                Value::exact("amat.column_sum", r.sums.column_sum),
                r.sums.row_sum == r.sums.column_sum ? "equal" : "DIFFERENT");
    const auto& p = r.predicted_ratio;
    const auto& q = r.predicted_over_measured;
    report.line(
        "  column / row: AMAT predicts {}, measured {}; predicted / measured {}",
        Value::measured_as("amat.predicted_ratio", opt_json(p), p ? fmt::format("{:.2f}x", *p) : "-").quoted(),
        Value::measured("amat.measured_ratio", r.measured_ratio, "{:.2f}x").quoted(),
        Value::measured_as("amat.predicted_over_measured", opt_json(q), q ? fmt::format("{:.2f}", *q) : "-").quoted());
    report.line("  the time model (the appendix Priced), from this machine's profile, before the sums were timed:");
    report.line("    {}", Value::measured("amat.model_levels", cachebook::levels_text(r.model)));
    report.record("profile", cachebook::profile_json(r.profile));
    for (const auto& claim : r.priced)
        cachebook::report_priced(report, claim, claim.key == "amat_column_over_row" ? "{:.2f}x" : "{:.2f} ns");
    report.record("amat.overlap_max_noise_pct", 100 * kOverlapMaxNoise);
    cachebook::report_experiment(report, r.overlap);
}

}  // namespace ch08
