// ch07_measurement: prints what chapter 7 shows. Logic lives in measurement.cpp.
#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "measurement.hpp"

namespace {

using cachebook::measured;
constexpr double kMiB = 1024.0 * 1024.0;

std::string ms(double seconds) { return measured("{:.2f}", seconds * 1e3); }
std::string times(double ratio) { return measured("{:.2f}", ratio); }
std::string f2(double v) { return fmt::format("{:.2f}", v); }

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch07_measurement", [&] {
        cachebook::Cli cli("ch07_measurement", "Chapter 7: measuring right -- each mistake next to the right way");
        std::int64_t n = 2048;
        std::int64_t runs = 7;
        std::int64_t threads = 2;
        std::int64_t walk_n = 512;
        std::int64_t counters = 1;
        cli.add_int("--n", n, "Order of the n x n int array the rules time", 64, 16384);
        cli.add_int("--runs", runs, "Timed runs per measurement", 2, 100);
        cli.add_int("--threads", threads, "Threads for the clock rule", 2, 64);
        cli.add_int("--walk-n", walk_n, "Order of the array the counters count (cachegrind or perf)", 16, 4096);
        cli.add_int("--counters", counters, "1: run cachegrind or perf; 0: skip them", 0, 1);
        if (auto status = cli.parse(argc, argv)) return *status;
        if (cli.quick()) {
            n = std::min<std::int64_t>(n, 1024);
            runs = std::min<std::int64_t>(runs, 3);
            walk_n = std::min<std::int64_t>(walk_n, 128);
        }
        if (threads > 4 * cachebook::usable_cpus())
            throw cachebook::UsageError(fmt::format("--threads {}: this machine lets this process use {} CPUs; "
                                                    "at most 4 threads per CPU are allowed",
                                                    threads, cachebook::usable_cpus()));
        const auto size = static_cast<std::size_t>(n);
        const int n_runs = static_cast<int>(runs);
        cachebook::require_memory(2ull * size * size * sizeof(int), "--n");
        nlohmann::json out;

        fmt::print("Chapter 7 · Measuring right\n\n");
        fmt::print("  array for sections 2, 4, 5: {} x {} int = {:.0f} MiB; {} runs per measurement\n", size, size,
                   static_cast<double>(size * size * sizeof(int)) / kMiB, n_runs);
        const double share = cachebook::cpu_share();
        fmt::print("  share of a CPU this program gets right now: {} (1.00 on an idle machine)\n\n",
                   measured("{:.2f}", share));
        out["cpu_share"] = fmt::format("{:.2f}", share);
        out["runs_per_measurement"] = n_runs;

        // Rule 1.
        const std::uint64_t work = cli.quick() ? 20'000'000 : 100'000'000;
        const auto c = ch07::clock_rule(static_cast<int>(threads), work, n_runs);
        fmt::print("1. The clock: time on the wall, not the process's CPU time\n");
        fmt::print("  the same {} multiply-adds on 1 thread, then split over {}\n", work, threads);
        cachebook::Table t1({"threads", "std::clock() ms (CPU)", "steady_clock ms (wall)"});
        t1.row({"1", ms(c.one.cpu_s), ms(c.one.wall_s)});
        t1.row({fmt::format("{}", threads), ms(c.many.cpu_s), ms(c.many.wall_s)});
        fmt::print("{}", t1.render());
        fmt::print("  mistake: std::clock() says the threads gave a speed-up of {}\n", times(c.one.cpu_s / c.many.cpu_s));
        fmt::print("  right:   steady_clock says {}\n", times(c.one.wall_s / c.many.wall_s));
        fmt::print("  CPU time / wall time: {} on 1 thread, {} on {} (a share of a CPU below 1 means others ran too)\n\n",
                   times(c.one.cpu_s / c.one.wall_s), times(c.many.cpu_s / c.many.wall_s), threads);
        out["clock"] = {{"threads", threads},
                        {"work", work},
                        {"one_cpu_s", c.one.cpu_s},
                        {"one_wall_s", c.one.wall_s},
                        {"many_cpu_s", c.many.cpu_s},
                        {"many_wall_s", c.many.wall_s},
                        {"speedup_cpu", f2(c.one.cpu_s / c.many.cpu_s)},
                        {"speedup_wall", f2(c.one.wall_s / c.many.wall_s)},
                        {"cpu_over_wall", f2(c.many.cpu_s / c.many.wall_s)}};

        // Rule 2.
        const int many_runs = cli.quick() ? 5 : 20;
        const auto r2 = ch07::runs_rule(size, many_runs);
        fmt::print("2. One run, or the minimum of several\n");
        fmt::print("  the row sum, {} runs, then {} more\n", many_runs, many_runs);
        cachebook::Table t2({"batch", "first ms", "min ms", "median ms", "max ms", "max / min"});
        for (const auto* b : {&r2.batch_a, &r2.batch_b})
            t2.row({b == &r2.batch_a ? "A" : "B", ms(b->runs.front()), ms(b->min()), ms(b->median()), ms(b->max()),
                    times(b->max() / b->min())});
        fmt::print("{}", t2.render());
        const double min_gap = std::abs(r2.batch_a.min() / r2.batch_b.min() - 1.0);
        const double single_gap = r2.batch_a.max() / r2.batch_a.min() - 1.0;
        fmt::print("  mistake: one run can land anywhere in a spread of {} %\n", measured("{:.0f}", 100 * single_gap));
        fmt::print("  right:   the two minima differ by {} %\n\n", measured("{:.1f}", 100 * min_gap));
        out["runs"] = {{"count", many_runs},
                       {"a", r2.batch_a.runs},
                       {"b", r2.batch_b.runs},
                       {"spread_percent", fmt::format("{:.0f}", 100 * single_gap)},
                       {"min_gap_percent", fmt::format("{:.1f}", 100 * min_gap)}};

        // Rule 3.
        const std::size_t touch_bytes = (cli.quick() ? 32 : 256) << 20;
        const auto t = ch07::touch_rule(touch_bytes, n_runs);
        fmt::print("3. First touch outside the timed region\n");
        fmt::print("  filling {:.0f} MiB of freshly mapped memory, then filling it again\n",
                   static_cast<double>(touch_bytes) / kMiB);
        cachebook::Table t3({"fill", "ms", "minor page faults"});
        t3.row({"first (pages faulted in)", ms(t.first_fill_s), measured("{}", t.faults_first)});
        t3.row({"second (pages present)", ms(t.second_fill_s), measured("{}", t.faults_second)});
        fmt::print("{}", t3.render());
        fmt::print("  mistake: timing the first touch costs {}x\n\n", times(t.first_fill_s / t.second_fill_s));
        out["touch"] = {{"mib", touch_bytes >> 20},
                        {"first_s", t.first_fill_s},
                        {"second_s", t.second_fill_s},
                        {"faults_first", t.faults_first},
                        {"faults_second", t.faults_second},
                        {"ratio", f2(t.first_fill_s / t.second_fill_s)}};

        // Rule 4.
        const auto d = ch07::dead_code_rule(size, n_runs);
        fmt::print("4. Use the result\n");
        cachebook::Table t4({fmt::format("sum of {} ints", size * size), "ms", "ns/element"});
        t4.row({"result thrown away", ms(d.unused_s),
                measured("{:.3f}", d.unused_s * 1e9 / static_cast<double>(size * size))});
        t4.row({"result kept", ms(d.used_s), measured("{:.3f}", d.used_s * 1e9 / static_cast<double>(size * size))});
        fmt::print("{}", t4.render());
        fmt::print("  mistake: the loop whose result is unused was deleted: {}x \"faster\"; the sum is {}\n\n",
                   measured("{:.0f}", d.used_s / std::max(d.unused_s, 1e-9)), d.sum);
        out["dead_code"] = {{"unused_s", d.unused_s},
                            {"used_s", d.used_s},
                            {"sum", d.sum},
                            {"ratio", fmt::format("{:.0f}", d.used_s / std::max(d.unused_s, 1e-9))}};

        // Rule 5.
        const auto o = ch07::opt_rule(size, n_runs);
        fmt::print("5. Judge at -O2, not -O0: one kernel file, built twice\n");
        cachebook::Table t5({"build", "rows ms", "columns ms", "columns / rows"});
        t5.row({"-O0", ms(o.rows_o0), ms(o.columns_o0), times(o.columns_o0 / o.rows_o0)});
        t5.row({"-O2", ms(o.rows_o2), ms(o.columns_o2), times(o.columns_o2 / o.rows_o2)});
        fmt::print("{}", t5.render());
        fmt::print("  same sums: {}; -O0 makes the row sum {}x slower and hides the cache effect behind loop overhead\n\n",
                   o.same_sums ? "yes" : "NO", times(o.rows_o0 / o.rows_o2));
        out["opt"] = {{"rows_o0_s", o.rows_o0},
                      {"columns_o0_s", o.columns_o0},
                      {"rows_o2_s", o.rows_o2},
                      {"columns_o2_s", o.columns_o2},
                      {"ratio_o0", f2(o.columns_o0 / o.rows_o0)},
                      {"ratio_o2", f2(o.columns_o2 / o.rows_o2)},
                      {"o0_over_o2_rows", f2(o.rows_o0 / o.rows_o2)},
                      {"same_sums", o.same_sums}};

        // Rule 6.
        const auto l1 = cachebook::data_cache(1);
        const std::size_t l1_bytes = l1 ? l1->size_bytes : 32768;
        std::size_t small = 16;
        while (2 * small * 2 * small * sizeof(int) <= l1_bytes / 2) small *= 2;
        const std::vector<std::size_t> sizes{small, size};
        const auto sr = ch07::size_rule(sizes, size * size, n_runs);
        fmt::print("6. Data large enough to leave the caches (L1d here: {})\n",
                   measured("{}", l1 ? fmt::format("{} KiB, from {}", l1_bytes / 1024, cachebook::source_name(l1->source))
                                     : std::string("unknown, 32 KiB assumed")));
        cachebook::Table t6({"array", "KiB", "rows ns/el", "columns ns/el", "columns / rows"});
        nlohmann::json sr_json = nlohmann::json::array();
        for (const auto& row : sr) {
            t6.row({row.n == small ? measured("{0} x {0}", row.n) : fmt::format("{0} x {0}", row.n),
                    row.n == small ? measured("{}", row.bytes / 1024) : fmt::format("{}", row.bytes / 1024),
                    measured("{:.3f}", row.rows_ns), measured("{:.3f}", row.columns_ns),
                    times(row.columns_ns / row.rows_ns)});
            sr_json.push_back({{"n", row.n},
                               {"kib", row.bytes / 1024},
                               {"rows_ns", row.rows_ns},
                               {"columns_ns", row.columns_ns},
                               {"ratio", f2(row.columns_ns / row.rows_ns)}});
        }
        fmt::print("{}", t6.render());
        fmt::print("  mistake: an array that fits in L1 shows almost no difference between the loop orders\n\n");
        out["size"] = sr_json;

        // Seed 003.
        const std::size_t hops = cli.quick() ? 1 << 16 : 1 << 18;
        const std::size_t big = (cli.quick() ? 16 : 128) << 20;
        fmt::print("7. Strided sum against pointer chase: one int per line, {} accesses per run\n", hops);
        cachebook::Table t7({"working set", "strided sum ns", "random, addresses known ns", "pointer chase ns"});
        nlohmann::json lat = nlohmann::json::array();
        for (std::size_t bytes : {std::size_t{16} << 10, big}) {
            const auto row = ch07::latency_row(bytes, hops, n_runs);
            t7.row({bytes < (1 << 20) ? fmt::format("{} KiB", bytes >> 10) : fmt::format("{} MiB", bytes >> 20),
                    measured("{:.2f}", row.strided_ns), measured("{:.2f}", row.gather_ns),
                    measured("{:.2f}", row.chase_ns)});
            lat.push_back({{"bytes", row.bytes},
                           {"strided_ns", row.strided_ns},
                           {"gather_ns", row.gather_ns},
                           {"chase_ns", row.chase_ns},
                           {"chase_over_strided", f2(row.chase_ns / row.strided_ns)},
                           {"chase_over_gather", f2(row.chase_ns / row.gather_ns)}});
        }
        fmt::print("{}", t7.render());
        fmt::print("  mistake: the strided sum reports {}x less than the latency the chase shows\n\n",
                   measured("{:.0f}", lat[1]["chase_ns"].get<double>() / lat[1]["strided_ns"].get<double>()));
        out["latency"] = lat;

        // Hardware counters.
        fmt::print("8. Hardware counters\n");
        const auto probe = ch07::probe_perf("cache-misses");
        fmt::print("  perf stat -e cache-misses: {}\n", measured("{}", ch07::perf_state_name(probe.state)));
        out["perf"] = {{"state", std::string(ch07::perf_state_name(probe.state))}, {"detail", probe.detail}};
        const auto walk = static_cast<std::size_t>(walk_n);
        cachebook::CacheConfig geometry = cachebook::CacheConfig::from_capacity(32768, 8, 64);
        if (l1 && l1->sets > 0 && l1->ways > 0 && l1->line_bytes > 0) geometry = {l1->sets, l1->ways, l1->line_bytes};
        const auto sim = ch07::simulate_walks(geometry, walk);
        if (counters == 0) {
            fmt::print("  --counters 0: not run\n\n");
        } else {
            ch07::ToolCounts tc;
            if (probe.state == ch07::PerfState::Works) tc = ch07::perf_walks("L1-dcache-load-misses", walk);
            if (tc.tool.empty()) {
                const auto cg = ch07::cachegrind_walks(geometry, walk);
                if (!cg.tool.empty() || tc.why_not.empty()) tc = cg;
            }
            const bool counted = !tc.tool.empty();
            fmt::print("  counting the chapter 2 walks of a {0} x {0} int array ({1} KiB) with {2}, L1d {3}\n", walk,
                       walk * walk * sizeof(int) / 1024,
                       measured("{}", counted ? tc.tool : "nothing (" + tc.why_not + ")"),
                       measured("{}", geometry.describe()));
            auto tool_cell = [&](std::int64_t v) { return counted ? measured("{}", v) : measured("{}", "n/a"); };
            cachebook::Table t8({"walk", "accesses", "model misses", "tool misses (minus fill-only run)"});
            t8.row({"rows", fmt::format("{}", sim.accesses), measured("{}", sim.row_misses), tool_cell(tc.row_walk())});
            t8.row({"columns", fmt::format("{}", sim.accesses), measured("{}", sim.column_misses),
                    tool_cell(tc.column_walk())});
            fmt::print("{}", t8.render());
            fmt::print("  the fill-only run itself: {} misses\n\n", tool_cell(static_cast<std::int64_t>(tc.baseline)));
            out["counters"] = {{"tool", tc.tool},
                               {"why_not", tc.why_not},
                               {"n", walk},
                               {"geometry", geometry.describe()},
                               {"d1_flag", ch07::cachegrind_d1_flag(geometry)},
                               {"model_rows", sim.row_misses},
                               {"model_columns", sim.column_misses},
                               {"tool_rows", tc.row_walk()},
                               {"tool_columns", tc.column_walk()},
                               {"baseline", tc.baseline}};
        }

        // When not to bother.
        fmt::print("9. When not to bother (Amdahl)\n");
        cachebook::Table t9({"share of the time", "made faster by", "whole program faster by"});
        nlohmann::json am = nlohmann::json::array();
        for (auto [share, speedup] : {std::pair{0.02, 10.0}, {0.02, 1e9}, {0.5, 2.0}, {0.9, 10.0}}) {
            const double whole = ch07::amdahl(share, speedup);
            t9.row({fmt::format("{:.0f} %", 100 * share), speedup > 1e6 ? "infinitely" : fmt::format("{:.0f}x", speedup),
                    fmt::format("{:.3f}x", whole)});
            am.push_back({{"share", share}, {"speedup", speedup}, {"whole", fmt::format("{:.3f}", whole)},
                          {"percent", fmt::format("{:.1f}", 100 * (whole - 1))}});
        }
        fmt::print("{}", t9.render());
        out["amdahl"] = am;

        fmt::print("\n10. Checklist for an optimisation someone hands you\n");
        for (const char* item : {
                 "row-major or column-major? work out the inner loop's stride yourself",
                 "check the claimed misses per iteration by hand or with a small LRU model; write down N, line, cache",
                 "check a tile size against 3 T^2 S <= cache, and test the edges when T does not divide N",
                 "compare the new result with the old one",
                 "time at -O2, with the result used, the minimum of several runs; state the machine and the size",
                 "measure prefetch or padding on its own; if it gains nothing, take it out"})
            fmt::print("  [ ] {}\n", item);

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
