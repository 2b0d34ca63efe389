// Chapter 9's lab, step 7: step 6 timed in turn with OpenBLAS and BLIS, each OpenBLAS kernel
// in a child process of its own (OpenBLAS reads OPENBLAS_CORETYPE only when it loads).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/measure.hpp"
#include "lab.hpp"

namespace ch09 {

// ---- Step 6 beside the libraries -------------------------------------------------------

nlohmann::json to_json(const LibraryRun& r) {
    return {{"core", r.openblas_core},
            {"blis_lib", r.blis_name},
            {"step6", r.step6},
            {"openblas", r.openblas},
            {"blis", r.blis},
            {"step6_plain", r.step6_plain},
            {"openblas_cpu", r.openblas_cpu},
            {"openblas_matches", r.openblas_matches},
            {"blis_matches", r.blis_matches}};
}

LibraryRun library_run_from_json(const nlohmann::json& j) {
    return LibraryRun{j.at("core"),        j.at("blis_lib"),    j.at("step6"),        j.at("openblas"),
                      j.at("blis"),        j.at("step6_plain"), j.at("openblas_cpu"), j.at("openblas_matches"),
                      j.at("blis_matches")};
}

std::vector<int> thread_counts(int threads) {
    return threads > 1 ? std::vector<int>{1, threads} : std::vector<int>{1};
}

namespace {

// One timed call, once the libraries' worker threads have stopped spinning: OpenBLAS's spin for
// 2^28 cycles after each call, longer than a two-thread product at N = 2048 takes, and a
// spinning thread takes half a core from whatever runs next.
double time_once(const std::function<void()>& f, double* cpu_seconds = nullptr) {
    cachebook::wait_for_idle_threads(1.0);
    const double cpu_start = cachebook::thread_cpu_seconds();
    const auto start = cachebook::Clock::now();
    f();
    const double wall = cachebook::seconds_since(start);
    if (cpu_seconds != nullptr) *cpu_seconds = cachebook::thread_cpu_seconds() - cpu_start;
    return wall;
}

// One contender of the side-by-side runs: where its times go, and how to run it on t threads.
struct Contender {
    std::array<double, 2>* seconds;
    std::function<void(int)> run;
    bool called_on_one = false;  // already called on one thread (its check): warm there
    bool side_figure = false;    // no goal or claim reads it: kBesideMinRuns runs are enough
};

// The runs at one thread count stop at `runs`, or once each contender has run kBesideMinRuns times
// and kBesideBudgetSeconds have gone by: a busy machine makes every call slower, and the section
// should not grow with it (the minimum of two runs still sets aside one slow call). BLIS, a side
// figure (a BLIS without kernels for this CPU takes several times step 6's time a call), stops at
// kBesideMinRuns.
constexpr int kBesideMinRuns = 2;
constexpr double kBesideBudgetSeconds = 3.0;

// The probe checks nothing (`ref` null): its one call on one thread only warms OpenBLAS up.
std::vector<Contender> contenders(Problem& p, const Reference* ref, const MicroKernel& kernel, Blocking blocks,
                                  bool probe, LibraryRun& out) {
    const float *a = p.a.get(), *b = p.b.get();
    float* c = p.c.get();
    std::vector<Contender> all;
    if (!probe) all.push_back({&out.step6, [=, &p](int t) { matmul_blis(a, b, c, p.shape, kernel, blocks, t); }});
    if (blas_available()) {
        all.push_back({&out.openblas, [=, &p](int t) { matmul_blas(a, b, c, p.shape, t); }, true});
        all.back().run(1);
        out.openblas_matches = ref != nullptr && ref->check(p, true).matches;
    }
    if (blis_lib_available() && !probe) {
        all.push_back({&out.blis, [=, &p](int t) { matmul_blis_lib(a, b, c, p.shape, t); }, true, true});
        all.back().run(1);
        out.blis_matches = ref != nullptr && ref->check(p, true).matches;
    }
    return all;
}

}  // namespace

LibraryRun time_beside_libraries(std::size_t n, int threads, int runs, const MicroKernel& kernel, Blocking blocks,
                                 bool probe) {
    Problem p({n, n, n});
    std::optional<Reference> ref;  // the probe checks nothing
    if (!probe) ref.emplace(p);
    LibraryRun out;
    out.openblas_core = blas_available() ? blas_corename() : "";
    out.blis_name = probe ? "" : blis_lib_name();
    auto all = contenders(p, ref ? &*ref : nullptr, kernel, blocks, probe, out);  // each called once: a warm-up
    const auto plain = probe ? std::nullopt : without_c_prefetch(kernel);
    const std::vector<int> counts = thread_counts(threads);
    for (std::size_t slot = 0; slot < counts.size(); ++slot) {
        const int t = counts[slot];
        for (auto& c : all) {
            if (!probe && !(t == 1 && c.called_on_one)) c.run(t);  // warm-up at this thread count
            (*c.seconds)[slot] = HUGE_VAL;
        }
        const auto start = cachebook::Clock::now();
        for (int r = 0; r < runs && (r < kBesideMinRuns || cachebook::seconds_since(start) < kBesideBudgetSeconds);
             ++r) {
            for (auto& c : all) {
                if (c.side_figure && r >= kBesideMinRuns) continue;
                double cpu = 0;
                const bool picks_kernel = c.seconds == &out.openblas && t == 1;  // its CPU time picks the kernel
                (*c.seconds)[slot] =
                    std::min((*c.seconds)[slot], time_once([&] { c.run(t); }, picks_kernel ? &cpu : nullptr));
                if (picks_kernel) out.openblas_cpu = out.openblas_cpu > 0 ? std::min(out.openblas_cpu, cpu) : cpu;
            }
            if (t != 1 || !plain) continue;
            const double sec =
                time_once([&] { matmul_blis(p.a.get(), p.b.get(), p.c.get(), p.shape, *plain, blocks, 1); });
            out.step6_plain = out.step6_plain > 0 ? std::min(out.step6_plain, sec) : sec;
        }
    }
    cachebook::wait_for_idle_threads(1.0);  // leave the next section a quiet machine
    return out;
}

namespace {

/// What a child process is asked to time: this program, run again with `--blas-child`.
struct ChildRequest {
    std::string program;   // the path of this program
    std::string coretype;  // OPENBLAS_CORETYPE for the child ("": the environment as it is)
    std::size_t n = 0;
    int threads = 1, runs = 1;
    std::string kernel;
    Blocking blocks;
    bool probe = false;  // OpenBLAS alone, to find its fastest kernel
};

// The path of the running program ("" when /proc does not say).
std::string self_path() {
    std::error_code ec;
    const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string{} : p.string();
}

// Runs the child (OpenBLAS reads OPENBLAS_CORETYPE only when it loads); what it measured, or
// nullopt when it failed.
std::optional<LibraryRun> run_child(const ChildRequest& q) {
    if (q.program.empty()) return std::nullopt;
    std::string cmd;
    if (!q.coretype.empty()) cmd += "OPENBLAS_CORETYPE=" + q.coretype + " ";
    cmd += fmt::format(
        "'{}' --blas-child{} --n {} --threads {} --runs {} --kernel '{}' --mc {} --kc {} --nc {} 2>/dev/null",
        q.program, q.probe ? " --blas-probe" : "", q.n, q.threads, q.runs, q.kernel, q.blocks.mc, q.blocks.kc,
        q.blocks.nc);
    const cachebook::CommandResult child = cachebook::run_command(cmd);
    if (child.status != 0) return std::nullopt;
    try {
        return library_run_from_json(nlohmann::json::parse(child.output));
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

}  // namespace

std::vector<std::string> openblas_coretypes(const cachebook::CpuFeatures& f, const std::string& default_core) {
    std::vector<std::string> coretypes = {""};
    for (const auto& [coretype, runs_here] : {std::pair{"Haswell", f.avx2 && f.fma}, {"SkylakeX", f.avx512f}})
        if (runs_here && coretype != default_core) coretypes.push_back(coretype);
    return coretypes;
}

std::optional<std::string> fastest_openblas_core(const std::vector<std::string>& coretypes,
                                                 const CpuSecondsOf& cpu_seconds) {
    std::optional<std::pair<double, std::string>> best;
    for (const auto& coretype : coretypes)
        if (const auto cpu = cpu_seconds(coretype); cpu && (!best || *cpu < best->first)) best = {*cpu, coretype};
    if (!best) return std::nullopt;
    return best->second;
}

Libraries run_libraries(const Settings& o, const MachineFacts& m, Blocking blocks, cachebook::Progress& progress) {
    Libraries libs;
    const bool blas = blas_available() && !o.no_blas;
    libs.default_core = blas ? blas_corename() : "";
    if (o.no_blas || !(blas || blis_lib_available())) return libs;
    const ChildRequest request{self_path(),   "",    o.n, o.threads, std::max(o.runs, o.quick ? 2 : 4),
                               o.kernel.name, blocks};
    if (!blas) {  // BLIS alone: one child times it beside step 6
        progress.step("libraries");
        if (auto run = run_child(request)) libs.cores.push_back({"", *run}), libs.fastest = 0;
        return libs;
    }
    // Each OpenBLAS kernel alone, one call per thread count, to find the fastest; then step 6 and
    // the libraries side by side with that one only (a slow kernel's full runs took most of the time).
    const auto fastest = fastest_openblas_core(
        openblas_coretypes(m.features, libs.default_core), [&](const std::string& coretype) -> std::optional<double> {
            progress.step("libraries " + (coretype.empty() ? libs.default_core : coretype));
            auto probe = request;
            probe.coretype = coretype, probe.runs = 1, probe.probe = true;
            const auto run = run_child(probe);
            if (!run) return std::nullopt;
            libs.cores.push_back({coretype, *run});
            return run->openblas_cpu;
        });
    if (!fastest) return libs;
    for (std::size_t i = 0; i < libs.cores.size(); ++i)
        if (libs.cores[i].coretype == *fastest) libs.fastest = i;
    libs.alone = libs.cores[*libs.fastest].run;  // its probe: OpenBLAS alone in its process
    progress.step("libraries side by side");
    auto full = request;
    full.coretype = libs.cores[*libs.fastest].coretype;
    if (auto run = run_child(full))
        libs.cores[*libs.fastest].run = *run;
    else
        libs.fastest.reset();
    return libs;
}

int child_main(const Settings& o) {
    if (!blas_available() && !blis_lib_available())
        throw cachebook::UsageError("--blas-child: this program has neither OpenBLAS nor BLIS");
    const MachineFacts m = machine_caches();
    const Blocking rule =
        derive_blocking(m.cache_bytes()[0], m.cache_bytes()[1], m.cache_bytes()[2], o.kernel.mr, o.kernel.nr);
    // One line of JSON on stdout, which run_child reads in the parent.
    fmt::print("{}\n",
               to_json(time_beside_libraries(o.n, o.threads, o.runs, o.kernel, o.with_given(rule), o.probe)).dump());
    return 0;
}

std::string openblas_note(const Settings& o, const Libraries& libs) {
    if (o.no_blas) return "OpenBLAS skipped (--no-blas)";
    if (!blas_available()) return "OpenBLAS skipped, this build has no OpenBLAS";
    if (!libs.best()) return "OpenBLAS skipped, its process failed";
    return "OpenBLAS at its fastest kernel here, " + libs.best()->openblas_core;
}

std::string blis_note(const Settings& o, const Libraries& libs) {
    if (o.no_blas) return "BLIS skipped (--no-blas)";
    if (!blis_lib_available()) return "BLIS skipped, " + blis_lib_unavailable_reason();
    if (!libs.best()) return "BLIS skipped, its process failed";
    return libs.best()->blis_name;
}

std::string cores_tried(const Libraries& libs, double flops) {
    auto g = [&](double sec) { return sec > 0 ? fmt::format("{:.1f}", flops / sec / 1e9) : std::string("-"); };
    std::string tried;
    for (const auto& c : libs.cores)
        if (!c.run.openblas_core.empty())
            tried += fmt::format("{}{} ({}, {})", tried.empty() ? "" : ", ", c.run.openblas_core, g(c.run.openblas[0]),
                                 g(c.run.openblas[1]));
    return tried.empty() ? "none" : tried;
}

double ratio(double sec_lib, double sec_6) {
    return sec_lib > 0 && sec_6 > 0 ? sec_lib / sec_6 : 0.0;
}

}  // namespace ch09
