// bench_ch09: chapter 9's goal. Step 6 (the default micro-kernel, the rule's blocks) against
// OpenBLAS at N = 2048, on one thread and on every usable core, the two timed in turn in one
// process; minimum of the runs. OpenBLAS chooses its kernel when it is loaded, so each kernel
// this CPU can run (OPENBLAS_CORETYPE) is tried in a child run of this program, and the fastest
// is then timed in full beside step 6, in another child. On one thread the calling thread's CPU time is kept as
// well: it leaves out the time other programs held the core.
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

constexpr double kGoal = 0.95;  // step 6 / OpenBLAS's best kernel, on one thread and on all cores

/// What one child measured: seconds, minimum of the runs; [0] one thread, [1] all threads.
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

Side side_by_side(std::size_t n, int threads, int runs) {
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
        step6(), blas();  // warm-up: first touch of the buffers, the library's own start-up
        out.c_huge_bytes = cachebook::huge_page_bytes(c.get(), n * n * sizeof(float));
        out.step6[slot] = out.blas[slot] = HUGE_VAL;
        for (int r = 0; r < runs; ++r) {  // in turn, so a noisy moment falls on one run of each
            const auto [w6, c6] = time_once(step6);
            const auto [wb, cb] = time_once(blas);
            out.step6[slot] = std::min(out.step6[slot], w6);
            out.blas[slot] = std::min(out.blas[slot], wb);
            if (slot == 0) out.step6_cpu = std::min(out.step6_cpu, c6), out.blas_cpu = std::min(out.blas_cpu, cb);
        }
    }
    return out;
}

std::optional<Side> child(const std::string& core, std::size_t n, int threads, int runs) {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    const std::string cmd =
        fmt::format("{}'{}' --child --n {} --threads {} --runs {}",
                    core.empty() ? "" : "OPENBLAS_CORETYPE=" + core + " ", self.string(), n, threads, runs);
    const cachebook::CommandResult run = cachebook::run_command(cmd);
    if (run.status != 0) return std::nullopt;
    const auto j = nlohmann::json::parse(run.output, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return Side{j.at("core"), j.at("step6"), j.at("blas"), j.at("step6_cpu"), j.at("blas_cpu"), j.at("c_huge_bytes")};
}

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

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("bench_ch09", [&] {
        cachebook::Cli cli("bench_ch09",
                           "Chapter 9's goal: step 6 against OpenBLAS's fastest kernel, one thread and all cores");
        std::int64_t n_opt = 2048, runs = 15, threads_opt = cachebook::usable_cpus();
        bool is_child = false;
        auto* n_flag = cli.add_int("--n", n_opt, "Order N of the matrices (--quick: 512)", 16, 8192);
        auto* runs_flag =
            cli.add_int("--runs", runs, "Timed runs of each, in turn (the minimum is reported; --quick: 3)", 1, 1000);
        cli.add_int("--threads", threads_opt, "Threads of the second comparison (default: every usable CPU)", 1, 256);
        cli.app().add_flag("--child", is_child, "Internal: time both with this process's OpenBLAS kernel, print JSON");
        if (auto status = cli.parse(argc, argv)) return *status;
        if (!ch09::blas_available()) {  // a benchmark run of the whole book goes on without it
            fmt::print("bench_ch09: skipped, this build has no OpenBLAS to compare step 6 with\n");
            if (!cli.json_path().empty())
                cachebook::write_json(cli.json_path(), {{"skipped", "this build has no OpenBLAS"}});
            return 0;
        }
        const auto n = static_cast<std::size_t>(cli.quick() && n_flag->count() == 0 ? 512 : n_opt);
        const int r = static_cast<int>(cli.quick() && runs_flag->count() == 0 ? 3 : runs);
        const int threads = static_cast<int>(threads_opt);
        cachebook::require_memory(3 * n * n * sizeof(float), fmt::format("--n {}", n));
        if (is_child) {
            fmt::print("{}\n", to_json(side_by_side(n, threads, r)).dump());
            return 0;
        }
        const auto f = cachebook::cpu_features();
        std::vector<std::string> cores = {""};  // "": OpenBLAS's own choice
        if (f.avx2 && f.fma) cores.push_back("Haswell");
        if (f.avx512f) cores.push_back("SkylakeX");
        // A first run of one call on one thread finds OpenBLAS's fastest kernel here (they differ
        // by whole factors); only that one is then timed in full beside step 6.
        std::vector<Side> probes;
        for (const auto& core : cores)
            if (auto side = child(core, n, 1, 1)) probes.push_back(*side);
        if (probes.empty()) throw std::runtime_error("no child run finished");
        const auto fastest = std::min_element(probes.begin(), probes.end(),
                                              [](const Side& x, const Side& y) { return x.blas[0] < y.blas[0]; });
        const auto full = child(cores[std::size_t(fastest - probes.begin())], n, threads, r);
        if (!full) throw std::runtime_error("the child run with OpenBLAS's fastest kernel did not finish");
        const Side& best = *full;
        const double gflop = 2.0 * double(n) * double(n) * double(n) / 1e9;
        const auto kernel = ch09::default_micro_kernel(ch09::best_isa());
        const auto blocks = ch09::machine_blocking(kernel);
        nlohmann::json out = {{"n", n},
                              {"runs", r},
                              {"threads", threads},
                              {"goal_pct", 100 * kGoal},
                              {"kernel", kernel.name},
                              {"mc", blocks.mc},
                              {"kc", blocks.kc},
                              {"nc", blocks.nc},
                              {"blas_core", best.core},
                              {"c_bytes", n * n * sizeof(float)},
                              {"c_huge_page_bytes", best.c_huge_bytes},
                              {"cores", nlohmann::json::array()}};
        for (const auto& s : probes)  // one call each
            out["cores"].push_back({{"core", s.core}, {"blas1_gflops", round1(gflop / s.blas[0])}});
        fmt::print(
            "Chapter 9's goal: step 6 ({}, MC {} KC {} NC {}) against OpenBLAS ({}), N = {}, "
            "minimum of {} runs each, in turn\n",
            kernel.name, blocks.mc, blocks.kc, blocks.nc, fmt::format("{}", best.core), n, r);
        cachebook::Table table({"threads", "step 6 GFLOPS", "OpenBLAS GFLOPS", "step 6 / OpenBLAS", "goal met"});
        for (std::size_t slot = 0; slot < (threads > 1 ? 2u : 1u); ++slot) {
            const double pct = 100 * best.blas[slot] / best.step6[slot];
            const std::string key = slot == 0 ? "1" : "T";
            table.row({fmt::format("{}", slot == 0 ? 1 : threads), fmt::format("{:.1f}", gflop / best.step6[slot]),
                       fmt::format("{:.1f}", gflop / best.blas[slot]), fmt::format("{:.1f} %", pct),
                       fmt::format("{}", pct >= 100 * kGoal ? "yes" : "no")});
            out["step6_" + key + "_gflops"] = round1(gflop / best.step6[slot]);
            out["blas_" + key + "_gflops"] = round1(gflop / best.blas[slot]);
            out["pct_" + key] = round1(pct);
            out["met_" + key] = pct >= 100 * kGoal;
        }
        const double pct_cpu = 100 * best.blas_cpu / best.step6_cpu;
        out["pct_1_cpu"] = round1(pct_cpu);
        fmt::print("{}", table.render());
        fmt::print("one thread by the thread's CPU time: step 6 {} GFLOPS, OpenBLAS {}, {} %\n",
                   fmt::format("{:.1f}", gflop / best.step6_cpu), fmt::format("{:.1f}", gflop / best.blas_cpu),
                   fmt::format("{:.1f}", pct_cpu));
        fmt::print("C on 2 MiB pages: {} of {}\n", cachebook::size_text(best.c_huge_bytes),
                   cachebook::size_text(n * n * sizeof(float)));
        const double load = load_average();
        out["load_average"] = round1(load);
        out["usable_cpus"] = cachebook::usable_cpus();
        if (load >= 0)
            fmt::print("load average at the end: {} on {} usable CPUs\n", fmt::format("{:.1f}", load),
                       cachebook::usable_cpus());
        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
