// bench_ch09: chapter 9's goal. Step 6 (the default micro-kernel, the rule's blocks) against
// OpenBLAS at N = 2048, on one thread and on every usable core. OpenBLAS is timed two ways: in
// the same process as step 6, the two in turn, and in a process of its own that runs nothing
// else, as a reader's own program would call it. The two kinds of child alternate for several
// rounds (A B, B A, ...), so a slow spell of the machine falls on both; step 6 is held against
// the faster of the two OpenBLAS figures, best against best, and the spread of the rounds is
// printed beside them. OpenBLAS chooses its kernel when it is loaded, so each kernel this CPU can
// run (OPENBLAS_CORETYPE) is first tried once, and only the fastest is timed in the rounds. On one
// thread the calling thread's CPU time is kept as well: it leaves out the time other programs held
// the core.
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cachebook/chase.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"
#include "matmul.hpp"

namespace {

constexpr double kGoal = 1.00;  // step 6 / the faster OpenBLAS, on one thread and on all cores

/// What one child measured: seconds, minimum of its runs; [0] one thread, [1] all threads.
/// A child of OpenBLAS alone leaves step6 at 0.
struct Side {
    std::string core;
    std::array<double, 2> step6{}, blas{};
    double step6_cpu = 0, blas_cpu = 0;  // one thread, the thread's CPU time
    std::size_t c_huge_bytes = 0;        // of C on 2 MiB pages, as the kernel reports
};

nlohmann::json to_json(const Side& s) {
    return {{"core", s.core},           {"step6", s.step6},       {"blas", s.blas},
            {"step6_cpu", s.step6_cpu}, {"blas_cpu", s.blas_cpu}, {"c_huge_bytes", s.c_huge_bytes}};
}

// One call, once the libraries' worker threads have stopped spinning (they do for a while after
// a call, and would take half a core from the next one).
template <class F>
std::pair<double, double> time_once(F&& f) {
    cachebook::wait_for_idle_threads(1.0);
    const double cpu = cachebook::thread_cpu_seconds();
    const auto start = cachebook::Clock::now();
    f();
    return {cachebook::seconds_since(start), cachebook::thread_cpu_seconds() - cpu};
}

// Step 6 and OpenBLAS in turn in this process, or OpenBLAS alone (`alone`: step 6 never runs).
Side time_in_this_process(std::size_t n, int threads, int runs, bool alone) {
    const ch09::Shape s{n, n, n};
    // C on 2 MiB pages where the system grants them, as the chapter's program has it (section 7).
    auto a = ch09::make_buffer(n * n), b = ch09::make_buffer(n * n);
    auto c = ch09::make_page_buffer(n * n, cachebook::PageSize::Huge);
    ch09::fill_random(a.get(), n * n, 1);
    ch09::fill_random(b.get(), n * n, 2);
    const auto kernel = ch09::default_micro_kernel(ch09::best_isa());
    const auto blocks = ch09::machine_blocking(kernel);
    Side out;
    out.core = ch09::blas_corename();
    const std::array<int, 2> counts = {1, threads};
    out.step6_cpu = out.blas_cpu = HUGE_VAL;  // kept on one thread only
    for (std::size_t slot = 0; slot < (threads > 1 ? 2u : 1u); ++slot) {
        const int t = counts[slot];
        auto step6 = [&] { ch09::matmul_blis(a.get(), b.get(), c.get(), s, kernel, blocks, t); };
        auto blas = [&] { ch09::matmul_blas(a.get(), b.get(), c.get(), s, t); };
        if (!alone) step6();
        blas();  // warm-up: first touch of the buffers, the library's own start-up
        out.c_huge_bytes = cachebook::huge_page_bytes(c.get(), n * n * sizeof(float));
        out.step6[slot] = alone ? 0 : HUGE_VAL;
        out.blas[slot] = HUGE_VAL;
        for (int r = 0; r < runs; ++r) {  // in turn, so a noisy moment falls on one run of each
            if (!alone) {
                const auto [w6, c6] = time_once(step6);
                out.step6[slot] = std::min(out.step6[slot], w6);
                if (slot == 0) out.step6_cpu = std::min(out.step6_cpu, c6);
            }
            const auto [wb, cb] = time_once(blas);
            out.blas[slot] = std::min(out.blas[slot], wb);
            if (slot == 0) out.blas_cpu = std::min(out.blas_cpu, cb);
        }
    }
    if (alone) out.step6_cpu = 0;
    return out;
}

std::optional<Side> child(const std::string& core, std::size_t n, int threads, int runs, bool alone) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    const std::string cmd = fmt::format("{}'{}' --child{} --n {} --threads {} --runs {}",
                                        core.empty() ? "" : "OPENBLAS_CORETYPE=" + core + " ", self.string(),
                                        alone ? " --alone" : "", n, threads, runs);
    const cachebook::CommandResult run = cachebook::run_command(cmd);
    if (run.status != 0) return std::nullopt;
    const auto j = nlohmann::json::parse(run.output, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return Side{j.at("core"), j.at("step6"), j.at("blas"), j.at("step6_cpu"), j.at("blas_cpu"), j.at("c_huge_bytes")};
}

/// One contender's round minima (seconds) at one thread count: its best and its worst round.
struct Rounds {
    std::vector<double> seconds;
    [[nodiscard]] double best() const { return *std::min_element(seconds.begin(), seconds.end()); }
    [[nodiscard]] double worst() const { return *std::max_element(seconds.begin(), seconds.end()); }
};

// The 1-minute load average (/proc/loadavg), or -1 where there is none: with more runnable
// programs than CPUs the wall-clock ratios say more about the others than about step 6.
double load_average() {
    std::ifstream in("/proc/loadavg");
    double load = -1;
    return in >> load ? load : -1;
}

double round1(double x) {
    return std::round(10 * x) / 10;
}

// OpenBLAS's fastest kernel here, chosen as the chapter chooses it: each one this CPU can run, alone,
// on one thread, by the thread's CPU time. "" is OpenBLAS's own choice.
std::string fastest_core(std::size_t n) {
    const auto fastest =
        ch09::fastest_openblas_core(ch09::openblas_coretypes(cachebook::cpu_features(), ch09::blas_corename()),
                                    [&](const std::string& core) -> std::optional<double> {
                                        const auto side = child(core, n, 1, 1, true);
                                        return side ? std::optional<double>(side->blas_cpu) : std::nullopt;
                                    });
    if (!fastest) throw std::runtime_error("no child run finished");
    return *fastest;
}

struct Summary {
    Side last;                                             // the last side-by-side child (core, pages)
    std::array<Rounds, 2> step6, blas_beside, blas_alone;  // per thread slot
    double step6_cpu = HUGE_VAL, blas_cpu = HUGE_VAL;      // one thread, best of every round
};

// The rounds: a side-by-side child and an OpenBLAS-alone child, their order swapped each round.
Summary run_rounds(const std::string& core, std::size_t n, int threads, int runs, int rounds) {
    Summary sum;
    for (int r = 0; r < rounds; ++r)
        for (const bool alone : {r % 2 == 1, r % 2 == 0}) {
            const auto side = child(core, n, threads, runs, alone);
            if (!side) throw std::runtime_error("a child run with OpenBLAS's fastest kernel did not finish");
            for (std::size_t slot = 0; slot < (threads > 1 ? 2u : 1u); ++slot) {
                (alone ? sum.blas_alone : sum.blas_beside)[slot].seconds.push_back(side->blas[slot]);
                if (!alone) sum.step6[slot].seconds.push_back(side->step6[slot]);
            }
            sum.blas_cpu = std::min(sum.blas_cpu, side->blas_cpu);
            if (!alone) sum.step6_cpu = std::min(sum.step6_cpu, side->step6_cpu), sum.last = *side;
        }
    return sum;
}

// Prints the table and the lines under it; returns the same figures for --json.
nlohmann::json print_summary(const Summary& sum, std::size_t n, int threads, int r, int rounds) {
    const double gflop = 2.0 * double(n) * double(n) * double(n) / 1e9;
    const auto kernel = ch09::default_micro_kernel(ch09::best_isa());
    const auto blocks = ch09::machine_blocking(kernel);
    nlohmann::json out = {{"n", n},
                          {"runs", r},
                          {"rounds", rounds},
                          {"threads", threads},
                          {"goal_pct", 100 * kGoal},
                          {"kernel", kernel.name},
                          {"mc", blocks.mc},
                          {"kc", blocks.kc},
                          {"nc", blocks.nc},
                          {"blas_core", sum.last.core},
                          {"c_bytes", n * n * sizeof(float)},
                          {"c_huge_page_bytes", sum.last.c_huge_bytes}};
    fmt::print(
        "Chapter 9's goal: step 6 ({}, MC {} KC {} NC {}) against OpenBLAS ({}), N = {}, {} rounds of two "
        "processes in turn (step 6 and OpenBLAS in turn, OpenBLAS alone), minimum of {} runs in each\n",
        kernel.name, blocks.mc, blocks.kc, blocks.nc, sum.last.core, n, rounds, r);
    cachebook::Table table(
        {"threads", "step 6", "OpenBLAS beside it", "OpenBLAS alone", "step 6 / faster", "goal met"});
    auto cell = [&](const Rounds& x) {
        return fmt::format("{:.1f} ({:.1f}-{:.1f})", gflop / x.best(), gflop / x.worst(), gflop / x.best());
    };
    for (std::size_t slot = 0; slot < (threads > 1 ? 2u : 1u); ++slot) {
        const double baseline = std::min(sum.blas_beside[slot].best(), sum.blas_alone[slot].best());
        const double pct = 100 * baseline / sum.step6[slot].best();
        const std::string key = slot == 0 ? "1" : "T";
        table.row({fmt::format("{}", slot == 0 ? 1 : threads), cell(sum.step6[slot]), cell(sum.blas_beside[slot]),
                   cell(sum.blas_alone[slot]), fmt::format("{:.1f} %", pct),
                   fmt::format("{}", pct >= 100 * kGoal ? "yes" : "no")});
        auto spread = [&](const Rounds& x) {
            return nlohmann::json{{"best", round1(gflop / x.best())}, {"worst", round1(gflop / x.worst())}};
        };
        out["step6_" + key + "_gflops"] = round1(gflop / sum.step6[slot].best());
        out["blas_" + key + "_gflops"] = round1(gflop / baseline);  // the faster of the two
        out["blas_beside_" + key] = spread(sum.blas_beside[slot]);
        out["blas_alone_" + key] = spread(sum.blas_alone[slot]);
        out["step6_" + key] = spread(sum.step6[slot]);
        out["pct_" + key] = round1(pct);
        out["met_" + key] = pct >= 100 * kGoal;
    }
    const double pct_cpu = 100 * sum.blas_cpu / sum.step6_cpu;
    out["pct_1_cpu"] = round1(pct_cpu);
    fmt::print("{}", table.render());
    fmt::print(
        "GFLOPS: best round (worst round - best round); step 6 against the faster OpenBLAS, best against "
        "best\n");
    fmt::print("one thread by the thread's CPU time, best of every round: step 6 {} GFLOPS, OpenBLAS {}, {} %\n",
               fmt::format("{:.1f}", gflop / sum.step6_cpu), fmt::format("{:.1f}", gflop / sum.blas_cpu),
               fmt::format("{:.1f}", pct_cpu));
    fmt::print("C on 2 MiB pages: {} of {}\n", cachebook::size_text(sum.last.c_huge_bytes),
               cachebook::size_text(n * n * sizeof(float)));
    const double load = load_average();
    out["load_average"] = round1(load);
    out["usable_cpus"] = cachebook::usable_cpus();
    if (load >= 0)
        fmt::print("load average at the end: {} on {} usable CPUs\n", fmt::format("{:.1f}", load),
                   cachebook::usable_cpus());
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("bench_ch09", [&] {
        cachebook::Cli cli("bench_ch09",
                           "Chapter 9's goal: step 6 against OpenBLAS's fastest kernel, one thread and all cores, "
                           "OpenBLAS timed beside step 6 and in a process of its own");
        std::int64_t n_opt = 2048, runs = 5, rounds_opt = 4, threads_opt = cachebook::usable_cpus();
        bool is_child = false, alone = false;
        auto* n_flag = cli.add_int("--n", n_opt, "Order N of the matrices (--quick: 512)", 16, 8192);
        auto* runs_flag =
            cli.add_int("--runs", runs, "Timed runs of each in a child (the minimum is kept; --quick: 2)", 1, 1000);
        auto* rounds_flag =
            cli.add_int("--rounds", rounds_opt,
                        "Rounds of the two children, in turn (best and worst are reported; --quick: 2)", 1, 100);
        cli.add_int("--threads", threads_opt, "Threads of the second comparison (default: every usable CPU)", 1, 256);
        cli.app().add_flag("--child", is_child, "Internal: time with this process's OpenBLAS kernel, print JSON");
        cli.app().add_flag("--alone", alone, "Internal, with --child: OpenBLAS only, step 6 never runs");
        if (auto status = cli.parse(argc, argv)) return *status;
        if (alone && !is_child) throw cachebook::UsageError("--alone goes with --child");
        if (!ch09::blas_available()) {  // a benchmark run of the whole book goes on without it
            fmt::print("bench_ch09: skipped, this build has no OpenBLAS to compare step 6 with\n");
            if (!cli.json_path().empty())
                cachebook::write_json(cli.json_path(), {{"skipped", "this build has no OpenBLAS"}});
            return 0;
        }
        const auto n = static_cast<std::size_t>(cli.quick() && n_flag->count() == 0 ? 512 : n_opt);
        const int r = static_cast<int>(cli.quick() && runs_flag->count() == 0 ? 2 : runs);
        const int rounds = static_cast<int>(cli.quick() && rounds_flag->count() == 0 ? 2 : rounds_opt);
        const int threads = static_cast<int>(threads_opt);
        cachebook::require_memory(3 * n * n * sizeof(float), fmt::format("--n {}", n));
        if (is_child) {
            fmt::print("{}\n", to_json(time_in_this_process(n, threads, r, alone)).dump());
            return 0;
        }
        const Summary sum = run_rounds(fastest_core(n), n, threads, r, rounds);
        const nlohmann::json out = print_summary(sum, n, threads, r, rounds);
        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
