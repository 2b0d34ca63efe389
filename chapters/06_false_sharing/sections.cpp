// Chapter 6's output, sections 1 to 5 (the layouts and the model): each figure a Value made once,
// with its JSON key. Sections 6 to 10, measured, follow in sections_measured.cpp.
#include "sections.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include "cachebook/claim.hpp"
#include "cachebook/machine.hpp"

namespace ch06 {
namespace {

using cachebook::Report;
using cachebook::ResultTable;
using cachebook::Table;
using cachebook::Value;

// One struct's row: its size, alignment and field offsets, measured when the compiler chooses them.
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

nlohmann::json to_json(const cachebook::CoherenceStats& s) {
    return {{"reads", s.reads},
            {"writes", s.writes},
            {"hits", s.hits},
            {"upgrades", s.upgrades},
            {"memory_fills", s.memory_fills},
            {"transfers", s.transfers},
            {"invalidations", s.invalidations}};
}

// Records the counts a table row does not show, so the JSON holds every count of a model run.
void record_unshown(Report& report, const std::string& key, const cachebook::CoherenceStats& stats,
                    std::initializer_list<std::string_view> shown) {
    const nlohmann::json counts = to_json(stats);
    for (const auto& field : counts.items())
        if (std::find(shown.begin(), shown.end(), field.key()) == shown.end())
            report.record(key + "." + field.key(), field.value());
}

void monitor_row(Report& report, ResultTable& table, Dashboard layout, const std::string& key) {
    const auto run = model_stats_monitor(layout, 100, 10);
    const std::string at = "model.monitor." + key;
    table.row({Value::exact(at + ".label", dashboard_name(layout)),
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

std::string joined(const auto& values, std::string_view separator) {
    return fmt::format("{}", fmt::join(values, separator));
}

}  // namespace

ResultTable counts_table(Report& report, const std::string& first) {
    return report.table({first, "hits", "from memory", "transfers", "upgrades", "invalidations", "transfers/write"});
}

// One model run's row of counts_table, recorded under `key`.
void counts_row(Report& report, ResultTable& table, const std::string& label, const std::string& key,
                const cachebook::CoherenceStats& stats) {
    const double per_write = static_cast<double>(stats.transfers) / static_cast<double>(stats.writes);
    table.row({Value::exact(key + ".label", label), Value::exact(key + ".hits", stats.hits),
               Value::exact(key + ".memory_fills", stats.memory_fills),
               Value::exact(key + ".transfers", stats.transfers), Value::exact(key + ".upgrades", stats.upgrades),
               Value::exact(key + ".invalidations", stats.invalidations),
               Value::exact(key + ".transfers_per_write", per_write, "{:.3f}")});
    record_unshown(report, key, stats, {"hits", "memory_fills", "transfers", "upgrades", "invalidations"});
}

void layouts_section(Report& report, const LayoutFacts& layout) {
    report.section("Layouts, as the compiler lays them out (sizeof, alignof, offsetof)");
    auto table = report.table({"struct", "sizeof", "alignof", "field offsets"},
                              {Table::Align::Left, Table::Align::Right, Table::Align::Right, Table::Align::Left});
    for (const auto* facts : {&layout.counters, &layout.counters_char_pad, &layout.counters_aligned,
                              &layout.worker_state, &layout.worker_state_aligned, &layout.stats, &layout.stats_aligned})
        table.row(layout_cells(*facts, false));
    table.row(layout_cells(layout.counters_portable, true));  // its alignment is the compiler's choice
    table.print();
    report.line("  std::hardware_destructive_interference_size = {}, constructive = {} (this compiler)",
                Value::measured("layout.destructive", layout.destructive),
                Value::measured("layout.constructive", layout.constructive));
    report.line("  {}-byte lines hold {} WorkerStates; workers[i].items_processed lies in line:",
                Value::exact("layout.line_bytes", layout.line_bytes),
                Value::exact("layout.worker_states_per_line", layout.worker_states_per_line, "{:.2f}").quoted());
    report.line("    WorkerState        {}",
                Value::exact_as("layout.worker_line", layout.worker_line, joined(layout.worker_line, " ")));
    report.line("    WorkerStateAligned {}", Value::exact_as("layout.worker_line_aligned", layout.worker_line_aligned,
                                                             joined(layout.worker_line_aligned, " ")));
    report.line(
        "  so {} workers share lines {} ways", Value::exact("layout.workers", layout.workers),
        Value::exact_as("layout.workers_per_line", layout.workers_per_line, joined(layout.workers_per_line, "-")));
    report.record("layout.straddling", layout.straddling);
}

void two_counters_section(Report& report, const LayoutFacts& layout) {
    const std::size_t packed = layout.counters.offsets.at(1).second;
    const std::size_t padded = layout.counters_aligned.offsets.at(1).second;
    report.section("The MESI model: two cores, each incrementing its own counter");
    report.line("  the first writes, strict alternation, counters {} bytes apart (one line):",
                Value::exact("model.trace_offset", packed));
    auto trace = report.table_of_rows(
        "model.trace", {"step", "core", "writes", "served by", "invalidated", "state core 0", "state core 1"});
    const auto steps = trace_two_counters(packed, 6);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto& step = steps[i];
        const std::string outcome(cachebook::outcome_name(step.event.outcome));
        const std::string served_by = step.event.outcome == cachebook::Outcome::Transfer
                                          ? fmt::format("core {}'s cache", step.event.supplier)
                                          : outcome;
        trace.row({Value::exact("step", i + 1), Value::exact("core", step.core),
                   Value::exact("counter", step.core == 0 ? "thread0_count" : "thread1_count"),
                   Value::exact_as("outcome", outcome, served_by), Value::exact("invalidated", step.event.invalidated),
                   Value::exact("state_core_0", step.states.substr(0, 1)),
                   Value::exact("state_core_1", step.states.substr(2, 1))},
                  {{"states", step.states}});
    }
    trace.print();
    report.blank_line();
    const std::uint64_t writes = 1000;
    const std::vector<std::size_t> bursts{1, 4, 16, 64};
    report.line("  {} increments per core; a burst of k = k writes by one core before the other's turn",
                Value::exact("model.pair_writes_per_core", writes));
    report.record("model.bursts", bursts);
    auto table = counts_table(report);
    for (auto [name, offset] : {std::pair{"packed", packed}, std::pair{"padded", padded}})
        for (std::size_t burst : bursts)
            counts_row(report, table, fmt::format("{} ({} B apart), burst {}", name, offset, burst),
                       fmt::format("model.pair.{}.burst_{}", name, burst), model_two_counters(offset, writes, burst));
    table.print();
}

// Section 3: the padding of the races, sized from the line the machine reports.
void runtime_padding_section(Report& report) {
    const auto& line = this_machine_line();
    report.section("Padding sized at run time, from the line size the machine reports");
    report.line("  line size: {} bytes, {}", Value::measured("padding.line_bytes", line.bytes),
                Value::measured_as("padding.source", line.source,
                                   line.why_default.empty() ? "from " + line.source : line.why_default));
    report.record("padding.why_default",
                  line.why_default.empty() ? nlohmann::json(nullptr) : nlohmann::json(line.why_default));
    report.line("  CounterSlots stride: packed {} bytes, padded {} bytes",
                Value::exact("padding.packed_stride", sizeof(long)),
                Value::measured("padding.padded_stride", line.bytes));
    const std::uint64_t writes = 1000;
    report.line("  the model on lines of {} bytes, 2 cores x {} increments, strict alternation:",
                Value::measured("padding.model_line", line.bytes), Value::exact("padding.model_writes", writes));
    report.line(
        "    counters 64 bytes apart (alignas(64)):   {} transfers",
        Value::measured("padding.alignas64_transfers", model_two_counters(64, writes, 1, line.bytes).transfers));
    report.line(
        "    counters one line apart (run time):      {} transfers",
        Value::exact("padding.runtime_transfers", model_two_counters(line.bytes, writes, 1, line.bytes).transfers));
    report.line("  and on 128-byte lines (several ARM cores), counters 64 bytes apart: {} transfers",
                Value::exact("padding.alignas64_on_128_transfers", model_two_counters(64, writes, 1, 128).transfers));
}

void workers_section(Report& report, const LayoutFacts& layout) {
    const std::uint64_t writes = 100;
    report.section("The model: {} workers, each incrementing workers[i].items_processed {} times",
                   Value::exact("model.worker_count", layout.workers),
                   Value::exact("model.workers_writes_each", writes));
    auto table = counts_table(report);
    for (const auto* facts : {&layout.worker_state, &layout.worker_state_aligned}) {
        const std::size_t items_offset = facts->offsets.at(1).second;
        for (std::size_t burst : {1u, 10u})
            counts_row(report, table, fmt::format("{} ({} B), burst {}", facts->name, facts->size, burst),
                       fmt::format("model.workers.{}.burst_{}", facts->name, burst),
                       model_workers(facts->size, items_offset, layout.workers, writes, burst));
    }
    table.print();
}

void monitor_section(Report& report) {
    report.section("The model: {} request handlers (cores 0-{}) and a monitor (core {})",
                   Value::exact("model.monitor_handlers", kHandlers),
                   Value::exact("model.monitor_last_handler", kHandlers - 1),
                   Value::exact("model.monitor_core", kHandlers));
    report.line("  {} rounds of one request per handler (2 writes); every {} rounds the monitor reads",
                Value::exact("model.monitor_rounds", 100), Value::exact("model.monitor_pass_every", 10));
    report.line("  all 3 fields of each handler and adds them into its total (1 write per handler)");
    auto table = report.table(
        {"layout", "total at", "handler transfers", "handler upgrades", "monitor transfers", "invalidations"});
    monitor_row(report, table, Dashboard::Packed, "packed");
    monitor_row(report, table, Dashboard::TotalApart, "total_apart");
    monitor_row(report, table, Dashboard::Padded, "padded");
    table.print();
}

}  // namespace ch06
