// ch06_false_sharing: prints what chapter 6 shows, one function per numbered section.
// The lesson is false_sharing.cpp, the experiment lab.cpp and lab_cases.cpp; each result is written once, through
// cachebook::Report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>

#include "cachebook/claim.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/coherence.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace {

using cachebook::Report;
using cachebook::Table;
using cachebook::Value;
using ch06::Op;

constexpr Op kOps[] = {Op::VolatileIncrement, Op::AtomicFetchAdd};

// The run's settings and the cpus it races on.
struct Run {
    std::int64_t max_threads = 8;  // fixed, so the golden file holds everywhere
    std::int64_t runs = 5;
    bool quick = false;
    int usable = 0, first_cpu = 0, second_cpu = -1;  // second_cpu: -1 on a machine with one usable cpu
    [[nodiscard]] bool two_cpus() const { return second_cpu >= 0; }
    [[nodiscard]] int chunks() const { return quick ? 10 : 40; }
    [[nodiscard]] int rounds() const { return static_cast<int>(runs); }
    [[nodiscard]] int case_runs() const { return 4 * rounds(); }  // the queue and lock runs are short
};

std::optional<int> parse(cachebook::Cli& cli, Run& run, int argc, char** argv) {
    cli.add_int("--threads", run.max_threads,
                "Largest thread count of the sweep (2, 4, 8, ... up to it; raise it to your core count)", 2, 256);
    cli.add_int("--runs", run.runs, "Alternations of packed and padded per measurement (minimum taken)", 1, 50);
    if (auto status = cli.parse(argc, argv)) return status;
    run.quick = cli.quick();
    if (run.quick && run.runs > 2) run.runs = 2;
    run.usable = cachebook::usable_cpus();
    run.first_cpu = cachebook::nth_usable_cpu(0);
    if (run.usable >= 2) run.second_cpu = cachebook::nth_usable_cpu(1);
    return std::nullopt;
}

void layouts_section(Report& report, const ch06::LayoutFacts& layout) {
    report.section("Layouts, as the compiler lays them out (sizeof, alignof, offsetof)");
    auto table = report.table({"struct", "sizeof", "alignof", "field offsets"},
                              {Table::Align::Left, Table::Align::Right, Table::Align::Right, Table::Align::Left});
    for (const auto* facts : {&layout.counters, &layout.counters_char_pad, &layout.counters_aligned,
                              &layout.worker_state, &layout.worker_state_aligned, &layout.stats, &layout.stats_aligned})
        table.row(ch06::layout_cells(*facts, false));
    table.row(ch06::layout_cells(layout.counters_portable, true));  // its alignment is the compiler's choice
    table.print();
    report.line("  std::hardware_destructive_interference_size = {}, constructive = {} (this compiler)",
                Value::measured("layout.destructive", layout.destructive),
                Value::measured("layout.constructive", layout.constructive));
    report.line("  {}-byte lines hold {} WorkerStates; workers[i].items_processed lies in line:",
                Value::exact("layout.line_bytes", layout.line_bytes),
                Value::exact("layout.worker_states_per_line", layout.worker_states_per_line, "{:.2f}").quoted());
    report.line("    WorkerState        {}", Value::exact_as("layout.worker_line", layout.worker_line,
                                                             fmt::format("{}", fmt::join(layout.worker_line, " "))));
    report.line("    WorkerStateAligned {}",
                Value::exact_as("layout.worker_line_aligned", layout.worker_line_aligned,
                                fmt::format("{}", fmt::join(layout.worker_line_aligned, " "))));
    report.line("  so {} workers share lines {} ways", layout.workers,
                Value::exact_as("layout.workers_per_line", layout.workers_per_line,
                                fmt::format("{}", fmt::join(layout.workers_per_line, "-"))));
    report.record("layout.straddling", layout.straddling);
}

void ping_pong_trace(Report& report, std::size_t offset) {
    report.line("  the first writes, strict alternation, counters {} bytes apart (one line):", offset);
    auto table = report.table_of_rows(
        "model.trace", {"step", "core", "writes", "served by", "invalidated", "state core 0", "state core 1"});
    const auto steps = ch06::trace_two_counters(offset, 6);
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const auto& step = steps[i];
        const std::string outcome(cachebook::outcome_name(step.event.outcome));
        const std::string served_by = step.event.outcome == cachebook::Outcome::Transfer
                                          ? fmt::format("core {}'s cache", step.event.supplier)
                                          : outcome;
        table.row({fmt::format("{}", i + 1), Value::exact("core", step.core),
                   step.core == 0 ? "thread0_count" : "thread1_count", Value::exact_as("outcome", outcome, served_by),
                   Value::exact("invalidated", step.event.invalidated), std::string(1, step.states[0]),
                   std::string(1, step.states[2])},
                  {{"states", step.states}});
    }
    table.print();
}

void two_counters_section(Report& report, const ch06::LayoutFacts& layout) {
    const std::size_t packed = layout.counters.offsets.at(1).second;
    const std::size_t padded = layout.counters_aligned.offsets.at(1).second;
    report.section("The MESI model: two cores, each incrementing its own counter");
    ping_pong_trace(report, packed);
    report.blank_line();
    const std::uint64_t writes = 1000;
    const std::vector<std::size_t> bursts{1, 4, 16, 64};
    report.line("  {} increments per core; a burst of k = k writes by one core before the other's turn",
                Value::exact("model.pair_writes_per_core", writes));
    report.record("model.bursts", bursts);
    auto table = ch06::counts_table(report);
    for (auto [name, offset] : {std::pair{"packed", packed}, std::pair{"padded", padded}})
        for (std::size_t burst : bursts)
            ch06::counts_row(report, table, fmt::format("{} ({} B apart), burst {}", name, offset, burst),
                             fmt::format("model.pair.{}.burst_{}", name, burst),
                             ch06::model_two_counters(offset, writes, burst));
    table.print();
}

void workers_section(Report& report, const ch06::LayoutFacts& layout) {
    const std::uint64_t writes = 100;
    report.section("The model: {} workers, each incrementing workers[i].items_processed {} times", layout.workers,
                   Value::exact("model.workers_writes_each", writes));
    auto table = ch06::counts_table(report);
    for (const auto* facts : {&layout.worker_state, &layout.worker_state_aligned}) {
        const std::size_t items_offset = facts->offsets.at(1).second;
        for (std::size_t burst : {1u, 10u})
            ch06::counts_row(report, table, fmt::format("{} ({} B), burst {}", facts->name, facts->size, burst),
                             fmt::format("model.workers.{}.burst_{}", facts->name, burst),
                             ch06::model_workers(facts->size, items_offset, layout.workers, writes, burst));
    }
    table.print();
}

void monitor_section(Report& report) {
    const std::uint64_t rounds = 100, pass_every = 10;
    report.section("The model: {} request handlers (cores 0-{}) and a monitor (core {})",
                   Value::exact("model.monitor_handlers", ch06::kHandlers), ch06::kHandlers - 1, ch06::kHandlers);
    report.line("  {} rounds of one request per handler (2 writes); every {} rounds the monitor reads",
                Value::exact("model.monitor_rounds", rounds), Value::exact("model.monitor_pass_every", pass_every));
    report.line("  all 3 fields of each handler and adds them into its total (1 write per handler)");
    auto table = report.table(
        {"layout", "total at", "handler transfers", "handler upgrades", "monitor transfers", "invalidations"});
    ch06::monitor_row(report, table, ch06::Dashboard::Packed, "packed", rounds, pass_every);
    ch06::monitor_row(report, table, ch06::Dashboard::TotalApart, "total_apart", rounds, pass_every);
    ch06::monitor_row(report, table, ch06::Dashboard::Padded, "padded", rounds, pass_every);
    table.print();
}

// Section 6; returns the races on two cores (volatile, then atomic; nothing counted on one cpu).
std::vector<ch06::LayoutComparison> races_section(Report& report, const Run& run, cachebook::Progress& progress) {
    report.section("Measured on this machine: {} usable cpus ({})", Value::measured("measured.usable_cpus", run.usable),
                   Value::measured("measured.cpu", cachebook::cpu_model()));
    const auto& line = ch06::this_machine_line();
    report.line("  each thread adds 1 to its own counter; counters 8 bytes apart (packed) or {} (padded: one line)",
                Value::measured("measured.padded_stride", line.bytes));
    report.line("  timed in chunks ({} or {} increments per thread) while every cpu ran the race;",
                Value::exact("measured.ops_per_chunk.volatile", ch06::ops_per_chunk(Op::VolatileIncrement)),
                Value::exact("measured.ops_per_chunk.atomic", ch06::ops_per_chunk(Op::AtomicFetchAdd)));
    report.line("  ns per increment, the minimum over {} chunks per layout",
                Value::exact("measured.chunks", run.chunks() * run.rounds()));
    auto table = report.table({"operation, cpus", "packed ns", "padded ns", "packed/padded", "chunks counted"});
    const std::vector<int> two_cores =
        run.two_cpus() ? std::vector<int>{run.first_cpu, run.second_cpu} : std::vector<int>{};
    std::vector<ch06::LayoutComparison> two, one;
    for (Op op : kOps) {
        two.push_back(ch06::race_row(report, table, op, two_cores, "distinct", run.chunks(), run.rounds()));
        if (run.two_cpus()) progress.step(op_name(op));
    }
    for (Op op : kOps) {
        one.push_back(
            ch06::race_row(report, table, op, {run.first_cpu, run.first_cpu}, "same_core", run.chunks(), run.rounds()));
        progress.step("one core");
    }
    table.print();
    ch06::race_claims(report, two, one, run.two_cpus());
    return two;
}

void handoff_section(Report& report, const Run& run, const std::vector<ch06::LayoutComparison>& two,
                     cachebook::Progress& progress) {
    report.section("What one move of the line costs: a flag bounced between two cores");
    const int handoff_runs = run.quick ? 20 : 50;
    const double handoff = run.two_cpus() ? ch06::handoff_ns(run.first_cpu, run.second_cpu, 2000, handoff_runs) : 0.0;
    progress.step("hand-off");
    report.line("  one-way hand-off: {} ns (minimum of {} runs of 2000 round trips)",
                run.two_cpus() ? Value::measured("measured.handoff_ns", handoff, "{:.0f}").quoted()
                               : Value::unknown("measured.handoff_ns", "needs 2 cpus").quoted(),
                handoff_runs);
    const double ghz = ch06::clock_now_ghz(run.quick);
    const auto cycles = run.two_cpus() ? ch06::cycles_at(handoff, ghz) : std::nullopt;
    report.line("  in cycles of the clock measured now ({} GHz): {}",
                ghz > 0 ? Value::measured("measured.clock_ghz", ghz, "{:.2f}").quoted()
                        : Value::unknown("measured.clock_ghz", "unknown").quoted(),
                cycles
                    ? Value::measured("measured.handoff_cycles", *cycles, "{:.0f}").quoted()
                    : Value::unknown("measured.handoff_cycles", run.two_cpus() ? "no clock measured" : "needs 2 cpus")
                          .quoted());
    report.record("measured.handoff_against_notes",
                  cycles ? nlohmann::json(ch06::against_transfer_range(*cycles)) : nlohmann::json(nullptr));
    for (std::size_t i = 0; i < std::size(kOps); ++i) {
        const double extra_ns = two[i].packed.min_ns - two[i].padded.min_ns;
        const auto every = run.two_cpus() ? ch06::increments_per_move(handoff, extra_ns) : std::nullopt;
        const std::string key = "measured.implied_burst." + ch06::op_key(kOps[i]);
        report.line(
            "  {}: packed costs {} ns more per increment: if each move stalls a core for\n"
            "    one hand-off, the line moved about once every {} increments",
            ch06::op_name(kOps[i]), Value::measured("", extra_ns, "{:.2f}"),
            every ? Value::measured(key, *every, "{:.0f}").quoted() : Value::unknown(key, "-").quoted());
    }
}

void stopwatch_section(Report& report, const Run& run, cachebook::Progress& progress) {
    report.section("A stopwatch around whole runs instead (threads started, joined; minimum of {} runs)", run.runs);
    auto table = report.table({"operation", "increments each", "packed ms", "padded ms", "packed/padded"});
    for (Op op : kOps) {
        const std::string key = "measured.stopwatch." + ch06::op_key(op);
        const std::uint64_t iterations = ch06::stopwatch_iterations(op, run.quick);
        const Value label = ch06::op_name(op), count = Value::exact(key + ".iterations", iterations);
        if (!run.two_cpus()) {
            table.row({label, count, Value::unknown(key + ".packed_ms", "-"), Value::unknown(key + ".padded_ms", "-"),
                       Value::unknown(key + ".ratio", "needs 2 cpus").quoted()});
            continue;
        }
        const auto pair = ch06::time_pair(op, 2, {run.first_cpu, run.second_cpu}, iterations, run.rounds());
        progress.step("stopwatch");
        table.row({label, count, Value::measured(key + ".packed_ms", pair.packed.min() * 1e3, "{:.1f}"),
                   Value::measured(key + ".padded_ms", pair.padded.min() * 1e3, "{:.1f}"),
                   Value::measured(key + ".ratio", pair.ratio(), "{:.2f}x").quoted("{:.1f}")});
    }
    table.print();
}

// Two threads on two cpus are section 6's race: its measurement is reused, not taken again.
void sweep_section(Report& report, const Run& run, const std::vector<int>& thread_counts,
                   const std::vector<ch06::LayoutComparison>& two, cachebook::Progress& progress) {
    report.section("N threads, N counters: packed (one line per 8 counters) vs padded, chunked as in 6");
    auto table = report.table_of_rows(
        "measured.sweep", {"threads", "cpus", "operation", "packed ns", "padded ns", "packed/padded", "note"});
    for (int threads : thread_counts) {
        const int cores = std::min(threads, run.usable);
        const bool over = threads > run.usable, shared = threads == 2 && cores == 2;
        for (std::size_t i = 0; i < std::size(kOps); ++i) {
            const Op op = kOps[i];
            const auto comparison =
                shared ? two.at(i) : ch06::sweep_race(op, threads, cores, run.chunks(), run.rounds());
            progress.step(fmt::format("{} threads", threads));
            auto cells = ch06::comparison_cells("", comparison);
            const char* note = over ? "oversubscribed" : (shared ? "as in 6" : "");
            cells.back() = Value::measured_as("oversubscribed", over, note);
            cells.insert(cells.begin(), {Value::exact("threads", threads), Value::measured("cpus", cores),
                                         Value::exact_as("op", op_key(op), ch06::op_name(op))});
            table.row(std::move(cells), ch06::chunk_counts(comparison));
        }
    }
    table.print();
    report.line("  ns per increment per cpu; threads beyond the cpus share them (oversubscribed)");
}

// Section 3: the padding of the races, sized from the line the machine reports.
void runtime_padding_section(Report& report) {
    const auto& line = ch06::this_machine_line();
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
                Value::measured("padding.model_line", line.bytes), writes);
    report.line(
        "    counters 64 bytes apart (alignas(64)):   {} transfers",
        Value::measured("padding.alignas64_transfers", ch06::model_two_counters(64, writes, 1, line.bytes).transfers));
    report.line("    counters one line apart (run time):      {} transfers",
                Value::exact("padding.runtime_transfers",
                             ch06::model_two_counters(line.bytes, writes, 1, line.bytes).transfers));
    report.line(
        "  and on 128-byte lines (several ARM cores), counters 64 bytes apart: {} transfers",
        Value::exact("padding.alignas64_on_128_transfers", ch06::model_two_counters(64, writes, 1, 128).transfers));
}

// The model rows of section 10: each case packed and padded, on 64-byte lines.
void queue_lock_model(Report& report) {
    const ch06::CaseModelSettings m;
    report.line("  the model, 2 cores, 64-byte lines: a queue of {} items through a ring of {} slots, the consumer",
                Value::exact("queue_lock.model.queue_items", m.items), Value::exact("queue_lock.model.ring", m.ring));
    report.line("  {} behind, each side rereading the other's index every {} items; a lock taken {} times",
                Value::exact("queue_lock.model.lag", m.lag), Value::exact("queue_lock.model.refresh", m.refresh),
                Value::exact("queue_lock.model.sections", m.sections));
    report.line("  in turn, {} guarded writes per hold, the waiter reading the lock before each",
                Value::exact("queue_lock.model.writes", ch06::kLockWrites));
    auto table = ch06::counts_table(report, "case, layout");
    for (const auto& run : ch06::case_models(m)) ch06::counts_row(report, table, run.label, run.key, run.stats);
    table.print();
}

// Section 10: a queue's head and tail, and a lock beside its data, modelled and measured.
void queue_lock_section(Report& report, const Run& run, cachebook::Progress& progress) {
    report.section("A queue's head and tail, and a lock beside its data: packed against padded");
    queue_lock_model(report);
    report.blank_line();
    report.line("  measured on 2 cpus, padded one line ({} bytes) apart; whole runs, the minimum of those in which",
                Value::measured("queue_lock.padded_stride", ch06::this_machine_line().bytes));
    report.line("  both threads ran throughout (up to {} per layout):",
                Value::exact("queue_lock.runs", run.case_runs()));
    auto table = report.table({"case", "operations", "packed ms", "padded ms", "packed/padded", "runs counted"});
    for (auto c : {ch06::Case::Queue, ch06::Case::Lock}) {
        const std::string key = "queue_lock.measured." + ch06::case_key(c);
        const std::uint64_t ops = ch06::case_operations(c, run.quick);
        const Value label = c == ch06::Case::Queue ? "queue: items passed" : "lock: holds per thread";
        const Value count = Value::exact(key + ".operations", ops);
        if (!run.two_cpus()) {
            table.row({label, count, Value::unknown(key + ".packed_ms", "-"), Value::unknown(key + ".padded_ms", "-"),
                       Value::unknown(key + ".ratio", "needs 2 cpus").quoted(), Value::unknown(key + ".counted", "-")});
            continue;
        }
        const auto timing = ch06::time_case(c, {run.first_cpu, run.second_cpu}, ops, run.case_runs());
        progress.step(ch06::case_key(c));
        const Value counted = Value::measured_as(key + ".counted", timing.counted(),
                                                 fmt::format("{}/{}", timing.counted(), timing.attempts));
        if (!timing.valid()) {
            table.row({label, count, Value::unknown(key + ".packed_ms", "-"), Value::unknown(key + ".padded_ms", "-"),
                       Value::unknown(key + ".ratio", "no run counted").quoted(), counted});
            continue;
        }
        table.row({label, count, Value::measured(key + ".packed_ms", timing.packed.min() * 1e3, "{:.2f}"),
                   Value::measured(key + ".padded_ms", timing.padded.min() * 1e3, "{:.2f}"),
                   Value::measured(key + ".ratio", timing.ratio(), "{:.2f}x").quoted("{:.1f}"), counted});
    }
    table.print();
    // Not a claim: which side of the queue waits for the other decides its time, not the layout.
    report.line("  no claim on either ratio: a run's waits, not the layout alone, set them (the text says why)");
}

// Section 11: the notes' perf stat events, packed against padded, or why there are none.
void counters_section(Report& report, const Run& run) {
    report.section("Hardware counters: perf stat -e cache-misses,LLC-load-misses, packed against padded");
    const std::uint64_t increments = ch06::stopwatch_iterations(Op::AtomicFetchAdd, run.quick);
    report.line("  2 threads, {} atomic increments each, counted with perf_event_open:",
                Value::exact("counters.increments", increments));
    const auto readings = ch06::count_race_misses(
        run.two_cpus() ? std::vector<int>{run.first_cpu, run.second_cpu} : std::vector<int>{}, increments);
    const ch06::CounterReading &packed = readings.first, &padded = readings.second;
    report.line("  counters: {}", Value::measured_as("counters.available", packed.available,
                                                     packed.available ? "available" : "unavailable"));
    report.line("    {}", Value::measured("", packed.available ? "both events opened" : packed.why_not));
    report.record("counters.why_not", packed.available ? nlohmann::json(nullptr) : nlohmann::json(packed.why_not));
    auto table = report.table({"event", "packed", "padded", "packed/padded"});
    auto count_row = [&](const std::string& event, const std::string& key, std::uint64_t a, std::uint64_t b) {
        const std::string at = "counters." + key;
        if (!packed.available || !padded.available) {
            table.row({event, Value::unknown(at + ".packed", "-"), Value::unknown(at + ".padded", "-"),
                       Value::unknown(at + ".ratio", "unavailable").quoted()});
            return;
        }
        table.row({event, Value::measured(at + ".packed", a), Value::measured(at + ".padded", b),
                   b > 0 ? Value::measured(at + ".ratio", static_cast<double>(a) / static_cast<double>(b), "{:.1f}x")
                               .quoted("{:.1f}")
                         : Value::unknown(at + ".ratio", "padded counted 0").quoted()});
    };
    count_row("cache-misses", "cache_misses", packed.cache_misses, padded.cache_misses);
    count_row("LLC-load-misses", "llc_load_misses", packed.llc_load_misses, padded.llc_load_misses);
    table.print();
    report.line("  the MESI model's stand-in, 2 cores x 1000 increments: packed {} transfers (strict alternation)",
                Value::exact("counters.stand_in.packed_strict", ch06::model_two_counters(8, 1000, 1).transfers));
    report.line("  to {} (bursts of 64); padded {}",
                Value::exact("counters.stand_in.packed_burst_64", ch06::model_two_counters(8, 1000, 64).transfers),
                Value::exact("counters.stand_in.padded", ch06::model_two_counters(64, 1000, 1).transfers));
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch06_false_sharing", [&] {
        cachebook::Cli cli("ch06_false_sharing",
                           "Chapter 6: false sharing, modelled with MESI and measured with pinned threads");
        Run run;
        if (auto status = parse(cli, run, argc, argv)) return *status;
        Report report("Chapter 6 · False sharing");
        const auto layout = ch06::layout_facts();
        layouts_section(report, layout);
        two_counters_section(report, layout);
        runtime_padding_section(report);
        workers_section(report, layout);
        monitor_section(report);
        const auto thread_counts = ch06::sweep_counts(static_cast<int>(run.max_threads));
        cachebook::Progress progress("ch06: measuring", 7 + 2 * thread_counts.size());
        const auto two = races_section(report, run, progress);
        handoff_section(report, run, two, progress);
        stopwatch_section(report, run, progress);
        sweep_section(report, run, thread_counts, two, progress);
        queue_lock_section(report, run, progress);
        counters_section(report, run);
        report.save(cli.json_path());
        return 0;
    });
}
