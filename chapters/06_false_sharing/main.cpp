// ch06_false_sharing: prints what chapter 6 shows. Logic lives in false_sharing.cpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstddef>

#include "cachebook/cli.hpp"
#include "cachebook/coherence.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "false_sharing.hpp"

namespace {

using cachebook::measured;
using cachebook::Table;

std::string offsets_text(const ch06::StructFacts& s) {
    std::string out;
    for (const auto& [name, off] : s.offsets) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, off);
    return out;
}

std::string per_write(std::uint64_t n, std::uint64_t writes) {
    return fmt::format("{:.3f}", static_cast<double>(n) / static_cast<double>(writes));
}

void stats_row(Table& t, const std::string& label, const cachebook::CoherenceStats& s) {
    t.row({label, fmt::format("{}", s.accesses()), fmt::format("{}", s.hits), fmt::format("{}", s.memory_fills),
           fmt::format("{}", s.transfers), fmt::format("{}", s.upgrades), fmt::format("{}", s.invalidations),
           per_write(s.transfers, s.writes)});
}

Table stats_table(const std::string& first) {
    return Table(
        {first, "accesses", "hits", "from memory", "transfers", "upgrades", "invalidations", "transfers/write"});
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch06_false_sharing", [&] {
        cachebook::Cli cli("ch06_false_sharing",
                           "Chapter 6: false sharing, modelled with MESI and measured with pinned threads");
        const int usable = cachebook::usable_cpus();
        std::int64_t max_threads = 8;  // fixed, so the golden file holds everywhere
        std::int64_t runs = 5;
        cli.add_int("--threads", max_threads,
                    "Largest thread count of the sweep (2, 4, 8, ... up to it; raise it to your core count)", 2, 256);
        cli.add_int("--runs", runs, "Alternations of packed and padded per measurement (minimum taken)", 1, 50);
        if (auto status = cli.parse(argc, argv)) return *status;
        const bool quick = cli.quick();
        if (quick && runs > 2) runs = 2;
        nlohmann::json out;

        fmt::print("Chapter 6 · False sharing\n\n");

        // 1. Layouts (R8).
        const ch06::LayoutFacts lf = ch06::layout_facts();
        fmt::print("1. Layouts, as the compiler lays them out (sizeof, alignof, offsetof)\n");
        Table layouts({"struct", "sizeof", "alignof", "field offsets"},
                      {Table::Align::Left, Table::Align::Right, Table::Align::Right, Table::Align::Left});
        for (const auto* s : {&lf.counters, &lf.counters_char_pad, &lf.counters_aligned, &lf.worker_state,
                              &lf.worker_state_aligned, &lf.stats, &lf.stats_aligned})
            layouts.row({s->name, fmt::format("{}", s->size), fmt::format("{}", s->align), offsets_text(*s)});
        layouts.row({lf.counters_portable.name, measured("{}", lf.counters_portable.size),
                     measured("{}", lf.counters_portable.align), measured("{}", offsets_text(lf.counters_portable))});
        fmt::print("{}", layouts.render());
        fmt::print("  std::hardware_destructive_interference_size = {}, constructive = {} (this compiler)\n",
                   measured("{}", lf.destructive), measured("{}", lf.constructive));
        fmt::print("  {}-byte lines hold {:.2f} WorkerStates; workers[i].items_processed lies in line:\n",
                   lf.line_bytes, lf.worker_states_per_line);
        fmt::print("    WorkerState        {}\n", fmt::join(lf.worker_line, " "));
        fmt::print("    WorkerStateAligned {}\n", fmt::join(lf.worker_line_aligned, " "));
        fmt::print("  so {} workers share lines {}-{}-{} ways\n\n", lf.workers, lf.workers_per_line.at(0),
                   lf.workers_per_line.at(1), lf.workers_per_line.at(2));
        nlohmann::json jl;
        for (const auto* s : {&lf.counters, &lf.counters_char_pad, &lf.counters_aligned, &lf.counters_portable,
                              &lf.worker_state, &lf.worker_state_aligned, &lf.stats, &lf.stats_aligned})
            jl[s->name] = ch06::to_json(*s);
        jl["line_bytes"] = lf.line_bytes;
        jl["worker_states_per_line"] = lf.worker_states_per_line;
        jl["worker_states_per_line_text"] = fmt::format("{:.2f}", lf.worker_states_per_line);
        jl["destructive"] = lf.destructive;
        jl["constructive"] = lf.constructive;
        jl["worker_line"] = lf.worker_line;
        jl["worker_line_aligned"] = lf.worker_line_aligned;
        jl["workers_per_line"] = lf.workers_per_line;
        out["layout"] = jl;

        // 2. The MESI model, two counters.
        const std::size_t offset_packed = lf.counters.offsets.at(1).second;
        const std::size_t offset_padded = lf.counters_aligned.offsets.at(1).second;
        fmt::print("2. The MESI model: two cores, each incrementing its own counter\n");
        fmt::print("  the first writes, strict alternation, counters {} bytes apart (one line):\n", offset_packed);
        Table trace({"step", "core", "writes", "served by", "invalidated", "state core 0", "state core 1"});
        const auto steps = ch06::trace_two_counters(offset_packed, 6);
        nlohmann::json jtrace = nlohmann::json::array();
        for (std::size_t i = 0; i < steps.size(); ++i) {
            const auto& st = steps[i];
            const std::string by = st.event.outcome == cachebook::Outcome::Transfer
                                       ? fmt::format("core {}'s cache", st.event.supplier)
                                       : std::string(cachebook::outcome_name(st.event.outcome));
            trace.row({fmt::format("{}", i + 1), fmt::format("{}", st.core),
                       st.core == 0 ? "thread0_count" : "thread1_count", by, fmt::format("{}", st.event.invalidated),
                       std::string(1, st.states[0]), std::string(1, st.states[2])});
            jtrace.push_back({{"core", st.core},
                              {"outcome", cachebook::outcome_name(st.event.outcome)},
                              {"invalidated", st.event.invalidated},
                              {"states", st.states}});
        }
        fmt::print("{}\n", trace.render());

        const std::uint64_t writes = 1000;
        fmt::print("  {} increments per core; a burst of k = k writes by one core before the other's turn\n", writes);
        const std::vector<std::size_t> bursts{1, 4, 16, 64};
        Table pair = stats_table("layout, interleaving");
        nlohmann::json jpair;
        for (auto [name, offset] : {std::pair<const char*, std::size_t>{"packed", offset_packed},
                                    std::pair<const char*, std::size_t>{"padded", offset_padded}}) {
            for (std::size_t burst : bursts) {
                const auto s = ch06::model_two_counters(offset, writes, burst);
                stats_row(pair, fmt::format("{} ({} B apart), burst {}", name, offset, burst), s);
                jpair[name][fmt::format("burst_{}", burst)] = ch06::to_json(s);
            }
        }
        fmt::print("{}\n", pair.render());
        out["model"]["trace"] = jtrace;
        out["model"]["pair"] = jpair;
        out["model"]["pair_writes_per_core"] = writes;
        out["model"]["bursts"] = bursts;

        // 3. The model, worker_state.
        const std::uint64_t worker_writes = 100;
        fmt::print("3. The model: {} workers, each incrementing workers[i].items_processed {} times\n", lf.workers,
                   worker_writes);
        Table workers = stats_table("layout, interleaving");
        nlohmann::json jworkers;
        const auto items = lf.worker_state.offsets.at(1).second;
        const auto items_aligned = lf.worker_state_aligned.offsets.at(1).second;
        for (auto [name, elem, offset] :
             {std::tuple<const char*, std::size_t, std::size_t>{"WorkerState", lf.worker_state.size, items},
              std::tuple<const char*, std::size_t, std::size_t>{"WorkerStateAligned", lf.worker_state_aligned.size,
                                                                items_aligned}}) {
            for (std::size_t burst : {1u, 10u}) {
                const auto s = ch06::model_workers(elem, offset, lf.workers, worker_writes, burst);
                stats_row(workers, fmt::format("{} ({} B), burst {}", name, elem, burst), s);
                jworkers[name][fmt::format("burst_{}", burst)] = ch06::to_json(s);
            }
        }
        fmt::print("{}\n", workers.render());
        out["model"]["workers"] = jworkers;
        out["model"]["workers_writes_each"] = worker_writes;

        // 4. The model, per-thread stats with a monitor.
        const std::uint64_t rounds = 100, pass_every = 10;
        fmt::print("4. The model: {} request handlers (cores 0-{}) and a monitor (core {})\n", ch06::kHandlers,
                   ch06::kHandlers - 1, ch06::kHandlers);
        fmt::print("  {} rounds of one request per handler (2 writes); every {} rounds the monitor reads\n", rounds,
                   pass_every);
        fmt::print("  all 3 fields of each handler and adds them into its total (1 write per handler)\n");
        Table mon({"layout", "total at", "handler transfers", "handler upgrades", "monitor transfers",
                   "monitor upgrades", "invalidations"});
        nlohmann::json jmon;
        for (auto d : {ch06::Dashboard::Packed, ch06::Dashboard::TotalApart, ch06::Dashboard::Padded}) {
            const auto m = ch06::model_stats_monitor(d, rounds, pass_every);
            mon.row({ch06::dashboard_name(d), fmt::format("byte {}", m.total_offset),
                     fmt::format("{}", m.handlers.transfers), fmt::format("{}", m.handlers.upgrades),
                     fmt::format("{}", m.monitor.transfers), fmt::format("{}", m.monitor.upgrades),
                     fmt::format("{}", m.all.invalidations)});
            const char* key = d == ch06::Dashboard::Packed       ? "packed"
                              : d == ch06::Dashboard::TotalApart ? "total_apart"
                                                                 : "padded";
            jmon[key] = {{"total_offset", m.total_offset},
                         {"passes", m.passes},
                         {"all", ch06::to_json(m.all)},
                         {"handlers", ch06::to_json(m.handlers)},
                         {"monitor", ch06::to_json(m.monitor)}};
        }
        fmt::print("{}\n", mon.render());
        out["model"]["monitor"] = jmon;
        out["model"]["monitor_rounds"] = rounds;
        out["model"]["monitor_handlers"] = ch06::kHandlers;
        out["model"]["monitor_pass_every"] = pass_every;

        // 5-8. Measured.
        const int chunks = quick ? 10 : 40;
        const std::uint64_t ops_volatile = 400000, ops_atomic = 100000;
        auto ops_of = [&](ch06::Op op) { return op == ch06::Op::VolatileIncrement ? ops_volatile : ops_atomic; };
        const int cpu0 = cachebook::nth_usable_cpu(0);
        const int cpu1 = usable >= 2 ? cachebook::nth_usable_cpu(1) : -1;
        const auto sweep = ch06::sweep_counts(static_cast<int>(max_threads));
        cachebook::Progress progress("ch06: measuring", 5 + 2 * sweep.size());
        nlohmann::json jm;
        jm["usable_cpus"] = usable;
        jm["cpu"] = cachebook::cpu_model();
        jm["chunks"] = chunks * runs;
        jm["ops_per_chunk"] = {{"volatile", ops_volatile}, {"atomic", ops_atomic}};
        auto key_of = [](ch06::Op op) { return op == ch06::Op::VolatileIncrement ? "volatile" : "atomic"; };
        auto comparison_json = [](const ch06::LayoutComparison& c) {
            return nlohmann::json{{"packed_ns", c.packed.min_ns},
                                  {"padded_ns", c.padded.min_ns},
                                  {"ratio", c.ratio()},
                                  {"packed_counted", c.packed.counted},
                                  {"padded_counted", c.padded.counted},
                                  {"chunks", c.packed.chunks},
                                  {"ratio_text", fmt::format("{:.1f}", c.ratio())},
                                  {"packed_ns_text", fmt::format("{:.1f}", c.packed.min_ns)},
                                  {"padded_ns_text", fmt::format("{:.1f}", c.padded.min_ns)}};
        };
        auto comparison_row = [](Table& t, const std::string& label, const ch06::LayoutComparison& c) {
            t.row({label, measured("{:.2f}", c.packed.min_ns), measured("{:.2f}", c.padded.min_ns),
                   c.valid() ? measured("{:.2f}x", c.ratio()) : measured("{}", "no chunk counted"),
                   measured("{}+{}/{}", c.packed.counted, c.padded.counted, 2 * c.packed.chunks)});
        };

        fmt::print("5. Measured on this machine: {} usable cpus ({})\n", measured("{}", usable),
                   measured("{}", cachebook::cpu_model()));
        fmt::print("  each thread adds 1 to its own counter; counters 8 bytes apart (packed) or 64 (padded)\n");
        fmt::print("  timed in chunks ({} or {} increments per thread) while every cpu ran the race;\n", ops_volatile,
                   ops_atomic);
        fmt::print("  ns per increment, the minimum over {} chunks per layout\n", chunks * runs);
        Table distinct({"operation, cpus", "packed ns", "padded ns", "packed/padded", "chunks counted"});
        double extra_ns[2] = {0, 0};
        if (cpu1 >= 0) {
            for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd}) {
                const auto c = ch06::compare_layouts(op, {cpu0, cpu1}, ops_of(op), chunks, static_cast<int>(runs));
                progress.step(op_name(op));
                comparison_row(distinct, fmt::format("{}, 2 threads on 2 cores", ch06::op_name(op)), c);
                jm["distinct"][key_of(op)] = comparison_json(c);
                extra_ns[op == ch06::Op::AtomicFetchAdd] = c.packed.min_ns - c.padded.min_ns;
            }
        } else {
            for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd})
                distinct.row({fmt::format("{}, 2 threads on 2 cores", ch06::op_name(op)), measured("-"), measured("-"),
                              measured("needs 2 cpus"), measured("-")});
        }
        for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd}) {
            const auto c = ch06::compare_layouts(op, {cpu0, cpu0}, ops_of(op), chunks, static_cast<int>(runs));
            progress.step("one core");
            comparison_row(distinct, fmt::format("{}, 2 threads on 1 core", ch06::op_name(op)), c);
            jm["same_core"][key_of(op)] = comparison_json(c);
        }
        fmt::print("{}\n", distinct.render());

        // 6. The hand-off probe.
        fmt::print("6. What one move of the line costs: a flag bounced between two cores\n");
        const int handoff_runs = quick ? 20 : 50;
        const double handoff = cpu1 >= 0 ? ch06::handoff_ns(cpu0, cpu1, 2000, handoff_runs) : 0.0;
        progress.step("hand-off");
        fmt::print("  one-way hand-off: {} ns (minimum of {} runs of 2000 round trips)\n",
                   cpu1 >= 0 ? measured("{:.0f}", handoff) : measured("{}", "needs 2 cpus"), handoff_runs);
        if (cpu1 >= 0) {
            jm["handoff_ns"] = handoff;
            jm["handoff_ns_text"] = fmt::format("{:.0f}", handoff);
        }
        for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd}) {
            // If each move of the line stalls a core for one hand-off, the extra
            // cost per increment says how many increments one move served.
            const double extra = extra_ns[op == ch06::Op::AtomicFetchAdd];
            const bool known = cpu1 >= 0 && extra > 0;
            const double every = known ? handoff / extra : 0.0;
            fmt::print(
                "  {}: packed costs {} ns more per increment: if each move stalls a core for\n"
                "    one hand-off, the line moved about once every {} increments\n",
                ch06::op_name(op), measured("{:.2f}", extra), known ? measured("{:.0f}", every) : measured("-"));
            // Always present, so the book's sentence resolves: "-" when this run gives no estimate.
            jm["implied_burst"][key_of(op)] = known ? nlohmann::json(every) : nlohmann::json(nullptr);
            jm["implied_burst_text"][key_of(op)] = known ? fmt::format("{:.0f}", every) : std::string("-");
        }
        fmt::print("\n");

        // 7. The naive stopwatch.
        fmt::print("7. A stopwatch around whole runs instead (threads started, joined; minimum of {} runs)\n", runs);
        Table whole({"operation", "increments each", "packed ms", "padded ms", "packed/padded"});
        for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd}) {
            const std::uint64_t iters =
                (op == ch06::Op::VolatileIncrement ? 20'000'000u : 5'000'000u) / (quick ? 4u : 1u);
            if (cpu1 < 0) {
                whole.row({ch06::op_name(op), fmt::format("{}", iters), measured("-"), measured("-"),
                           measured("needs 2 cpus")});
                continue;
            }
            const auto p = ch06::time_pair(op, 2, {cpu0, cpu1}, iters, static_cast<int>(runs));
            progress.step("stopwatch");
            whole.row({ch06::op_name(op), fmt::format("{}", iters), measured("{:.1f}", p.packed.min() * 1e3),
                       measured("{:.1f}", p.padded.min() * 1e3), measured("{:.2f}x", p.ratio())});
            jm["stopwatch"][key_of(op)] = {{"iterations", iters},
                                           {"packed_s", p.packed.min()},
                                           {"padded_s", p.padded.min()},
                                           {"ratio", p.ratio()},
                                           {"ratio_text", fmt::format("{:.1f}", p.ratio())}};
        }
        fmt::print("{}\n", whole.render());

        // 8. The sweep.
        fmt::print("8. N threads, N counters: packed (one line per 8 counters) vs padded, chunked as in 5\n");
        Table sw({"threads", "cpus", "operation", "packed ns", "padded ns", "packed/padded", "note"});
        nlohmann::json jsweep = nlohmann::json::array();
        for (int n : sweep) {
            const int cores = std::min(n, usable);
            const bool over = n > usable;
            for (auto op : {ch06::Op::VolatileIncrement, ch06::Op::AtomicFetchAdd}) {
                // The same increments per cpu per chunk at every N.
                const std::uint64_t ops = std::max<std::uint64_t>(
                    1000, ops_of(op) * static_cast<std::uint64_t>(cores) / static_cast<std::uint64_t>(n));
                const auto c = ch06::compare_layouts(op, ch06::spread(n, cores), ops, chunks, static_cast<int>(runs));
                progress.step(fmt::format("{} threads", n));
                sw.row({fmt::format("{}", n), measured("{}", cores), ch06::op_name(op),
                        measured("{:.2f}", c.packed.min_ns), measured("{:.2f}", c.padded.min_ns),
                        c.valid() ? measured("{:.2f}x", c.ratio()) : measured("{}", "no chunk counted"),
                        over ? measured("{}", "oversubscribed") : measured("{}", "")});
                auto j = comparison_json(c);
                j["threads"] = n;
                j["cpus"] = cores;
                j["op"] = key_of(op);
                j["oversubscribed"] = over;
                jsweep.push_back(j);
            }
        }
        fmt::print("{}", sw.render());
        fmt::print("  ns per increment per cpu; threads beyond the cpus share them (oversubscribed)\n");
        jm["sweep"] = jsweep;
        out["measured"] = jm;

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
