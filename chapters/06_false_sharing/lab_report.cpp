// Chapter 6's results as the Report's rows: each figure a Value made once, with its JSON key.
#include <fmt/format.h>

#include <algorithm>

#include "lab.hpp"

namespace ch06 {

using cachebook::Report;
using cachebook::Value;

// One struct's row: its size, alignment and field offsets, masked when they depend on the compiler.
std::vector<Value> layout_cells(const StructFacts& facts, bool from_compiler) {
    const std::string key = "layout." + facts.name;
    nlohmann::json offsets = nlohmann::json::object();
    for (const auto& [name, offset] : facts.offsets) offsets[name] = offset;
    auto cell = [&](const std::string& field, const nlohmann::json& value, const std::string& text) {
        return from_compiler ? Value::measured_as(key + field, value, text) : Value::exact_as(key + field, value, text);
    };
    return {Value::exact(key + ".name", facts.name), cell(".size", facts.size, fmt::format("{}", facts.size)),
            cell(".align", facts.align, fmt::format("{}", facts.align)),
            cell(".offsets", offsets, offsets_text(facts))};
}

// Records the counts a table row does not show, so the JSON holds every count of a model run.
void record_unshown(Report& report, const std::string& key, const cachebook::CoherenceStats& stats,
                    std::initializer_list<std::string_view> shown) {
    const nlohmann::json counts = to_json(stats);
    for (const auto& field : counts.items())
        if (std::find(shown.begin(), shown.end(), field.key()) == shown.end())
            report.record(key + "." + field.key(), field.value());
}

cachebook::ResultTable counts_table(Report& report, const std::string& first) {
    return report.table({first, "hits", "from memory", "transfers", "upgrades", "invalidations", "transfers/write"});
}

// One model run's row of counts_table, recorded under `key`.
void counts_row(Report& report, cachebook::ResultTable& table, const std::string& label, const std::string& key,
                const cachebook::CoherenceStats& stats) {
    const double per_write = static_cast<double>(stats.transfers) / static_cast<double>(stats.writes);
    table.row({label, Value::exact(key + ".hits", stats.hits), Value::exact(key + ".memory_fills", stats.memory_fills),
               Value::exact(key + ".transfers", stats.transfers), Value::exact(key + ".upgrades", stats.upgrades),
               Value::exact(key + ".invalidations", stats.invalidations), fmt::format("{:.3f}", per_write)});
    record_unshown(report, key, stats, {"hits", "memory_fills", "transfers", "upgrades", "invalidations"});
}

void monitor_row(Report& report, cachebook::ResultTable& table, Dashboard layout, const std::string& key,
                 std::uint64_t rounds, std::uint64_t pass_every) {
    const auto run = model_stats_monitor(layout, rounds, pass_every);
    const std::string at = "model.monitor." + key;
    table.row({dashboard_name(layout),
               Value::exact_as(at + ".total_offset", run.total_offset, fmt::format("byte {}", run.total_offset)),
               Value::exact(at + ".handlers.transfers", run.handlers.transfers),
               Value::exact(at + ".handlers.upgrades", run.handlers.upgrades),
               Value::exact(at + ".monitor.transfers", run.monitor.transfers),
               Value::exact(at + ".all.invalidations", run.all.invalidations)});
    report.record(at + ".passes", run.passes);
    record_unshown(report, at + ".handlers", run.handlers, {"transfers", "upgrades"});
    record_unshown(report, at + ".monitor", run.monitor, {"transfers"});  // its upgrades: recorded, not shown
    record_unshown(report, at + ".all", run.all, {"invalidations"});
}

// A measured ratio of packed over padded, or null when no chunk counted.
Value ratio_of(const std::string& key, const LayoutComparison& comparison) {
    if (!comparison.valid()) return Value::unknown(key, "no chunk counted").quoted();
    return Value::measured(key, comparison.ratio(), "{:.2f}x").quoted("{:.1f}");
}

// A comparison's cells from "packed ns" on, recorded under `key` (a field name in a table of rows).
std::vector<Value> comparison_cells(const std::string& key, const LayoutComparison& comparison) {
    const auto& packed = comparison.packed;
    const auto& padded = comparison.padded;
    // A side that counted no chunk has no time: "-", not a minimum of nothing.
    auto time_of = [&](const std::string& field, const auto& side) {
        if (side.counted == 0) return Value::unknown(key + field, "-").quoted();
        return Value::measured(key + field, side.min_ns, "{:.2f}").quoted("{:.1f}");
    };
    return {time_of("packed_ns", packed), time_of("padded_ns", padded), ratio_of(key + "ratio", comparison),
            Value::measured("", fmt::format("{}+{}/{}", packed.counted, padded.counted, 2 * packed.chunks))};
}

// A row of section 6's table: the race on `cpus` (recorded under measured.`group`), or unknown
// cells when it cannot run here (no cpus). Returns the comparison (nothing counted without cpus).
LayoutComparison race_row(Report& report, cachebook::ResultTable& table, Op op, const std::vector<int>& cpus,
                          const std::string& group, int chunks, int rounds) {
    const std::string key = fmt::format("measured.{}.{}.", group, op_key(op));
    const std::string label =
        fmt::format("{}, 2 threads on {}", op_name(op), group == "distinct" ? "2 cores" : "1 core");
    if (cpus.empty()) {
        table.row({label, Value::unknown(key + "packed_ns", "-").quoted(),
                   Value::unknown(key + "padded_ns", "-").quoted(),
                   Value::unknown(key + "ratio", "needs 2 cpus").quoted(), Value::unknown("", "-")});
        for (const char* field : {"packed_counted", "padded_counted", "chunks"}) report.record(key + field, nullptr);
        return {};
    }
    const auto comparison = compare_layouts(op, cpus, ops_per_chunk(op), chunks, rounds);
    auto cells = comparison_cells(key, comparison);
    cells.insert(cells.begin(), label);
    table.row(std::move(cells));
    const nlohmann::json counts = chunk_counts(comparison);
    for (const auto& field : counts.items()) report.record(key + field.key(), field.value());
    return comparison;
}

// Padded on two cpus against padded on one, per cpu: near 1 when the two cpus are separate cores.
// Two hardware threads of one core share its execution units, and each runs slower beside the other.
Value padded_two_over_one(const std::string& key, const LayoutComparison& two, const LayoutComparison& one) {
    if (two.padded.counted == 0 || one.padded.counted == 0) return Value::unknown(key, "-").quoted();
    return Value::measured(key, two.padded.min_ns / one.padded.min_ns, "{:.2f}x").quoted("{:.2f}");
}

void race_claims(Report& report, const std::vector<LayoutComparison>& two, const std::vector<LayoutComparison>& one,
                 bool two_cpus) {
    report.line("  padded, 2 cores over 1 core: volatile {}, atomic {} (near 1x: two separate cores)",
                padded_two_over_one("measured.padded_two_over_one.volatile", two.at(0), one.at(0)),
                padded_two_over_one("measured.padded_two_over_one.atomic", two.at(1), one.at(1)));
    cachebook::report_claim(report, "two_cores_atomic", "atomic fetch_add, 2 cores, packed / padded",
                            two_cpus ? claim_at_least(two.at(1), kTwoCoreThreshold)
                                     : unmeasured_claim(kTwoCoreThreshold, "needs 2 cpus; this process may use one"),
                            2);
    report.line("  on 1 core, packed / padded within {}x to {}x: the rule against each bound",
                Value::exact("claims.one_core_band.low", kOneCoreBand[0], "{:.1f}"),
                Value::exact("claims.one_core_band.high", kOneCoreBand[1], "{:.1f}"));
    for (const auto& comparison : one) {
        const auto [low, high] = one_core_bounds(comparison);
        const std::string name = "one_core_" + op_key(comparison.packed.op), op = op_name(comparison.packed.op);
        cachebook::report_claim(report, name + "_low", op + ", 1 core, packed / padded", low);
        cachebook::report_claim(report, name + "_high", op + ", 1 core, padded / packed", high);
    }
}

}  // namespace ch06
