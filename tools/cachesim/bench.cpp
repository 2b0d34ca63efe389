// bench_cachesim: how fast cachesim reads and simulates a lackey trace.
// Writes the trace of an n x n float transpose (2 n^2 lines) to a temporary
// file, then times, as the minimum of several runs:
//   end to end: the cachesim program itself, started as a reader would start it,
//     each run followed by one of a simulator written the way csim-ref works;
//   in process: reading + parsing + simulating, the program's work without start-up;
//   parse only (on one thread), and simulate only (references already in memory).
#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "cachesim.hpp"

extern char** environ;

namespace {

constexpr const char* kProgram = "bench_cachesim";

// A temporary trace file, removed when done.
struct TempTrace {
    std::string path;
    explicit TempTrace(std::size_t n) {
        const char* dir = std::getenv("TMPDIR");
        std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/cachesim-bench-XXXXXX";
        const int fd = ::mkstemp(pattern.data());
        if (fd < 0) throw std::runtime_error("cannot create a temporary trace file");
        path = pattern;
        std::FILE* f = ::fdopen(fd, "w");
        cachesim::write_transpose_trace(f, n);
        if (std::fclose(f) != 0) throw std::runtime_error("cannot write the temporary trace file");
    }
    ~TempTrace() { std::remove(path.c_str()); }
};

double process_cpu_seconds() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// CPU seconds (user + system) of the last child run_program() waited for.
double g_child_cpu = 0;

// Runs cachesim on the trace with stdout to a file; returns that output.
std::string run_program(const std::string& exe, const std::vector<std::string>& args, const std::string& out_path) {
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}", exe));
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    g_child_cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error(fmt::format("{} failed", exe));
    std::ifstream in(out_path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// A simulator in the manner of the cache lab's reference, for a same-run
// comparison: fscanf() reads each line, and each access scans the E lines of
// its set, LRU kept by time stamps. (csim-ref itself is not published; the
// lab's README quotes its time on this trace, which this one's should be near.)
std::string csim_style(const std::string& path, unsigned s, unsigned E, unsigned b) {
    struct Line {
        bool valid = false;
        std::uint64_t tag = 0, used = 0;
    };
    std::vector<Line> lines(std::size_t{E} << s);
    std::uint64_t hits = 0, misses = 0, evictions = 0, clock = 0;
    auto access = [&](std::uint64_t address) {
        Line* set = &lines[(address >> b & ((std::uint64_t{1} << s) - 1)) * E];
        const std::uint64_t tag = address >> (s + b);
        ++clock;
        for (unsigned i = 0; i < E; ++i)
            if (set[i].valid && set[i].tag == tag) {
                ++hits;
                set[i].used = clock;
                return;
            }
        ++misses;
        unsigned victim = 0;
        for (unsigned i = 0; i < E; ++i) {
            if (!set[i].valid) {
                victim = i;
                break;
            }
            if (set[i].used < set[victim].used) victim = i;
        }
        if (set[victim].valid) ++evictions;
        set[victim] = {true, tag, clock};
    };
    std::FILE* f = std::fopen(path.c_str(), "r");
    if (!f) throw std::runtime_error("cannot open the temporary trace file");
    char op = 0;
    unsigned long long address = 0;
    int size = 0;
    while (std::fscanf(f, " %c %llx,%d", &op, &address, &size) == 3) {
        if (op == 'L' || op == 'S') access(address);
        if (op == 'M') {
            access(address);
            access(address);
        }
    }
    std::fclose(f);
    return fmt::format("hits:{} misses:{} evictions:{}", hits, misses, evictions);
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main(kProgram, [&] {
        cachebook::Cli cli(kProgram, "Lines per second of cachesim on a transpose trace (-s 6 -E 8 -b 6)");
        std::int64_t n = 1024, runs = 9;
        cli.add_int("--n", n, "Order of the float matrix transposed; the trace has 2 n^2 lines", 16, 4096);
        cli.add_int("--runs", runs, "Timed runs of each measurement (the minimum is reported)", 1, 1000);
        if (auto status = cli.parse(argc, argv)) return *status;
        if (cli.quick()) {
            n = std::min<std::int64_t>(n, 256);
            runs = std::min<std::int64_t>(runs, 3);
        }
        const auto size = static_cast<std::size_t>(n);
        const int run_count = static_cast<int>(runs);
        const std::uint64_t lines = 2 * static_cast<std::uint64_t>(size) * size;
        TempTrace trace(size);
        cachesim::Options options;
        options.levels.push_back(cachesim::geometry(6, 8, 6));
        const unsigned threads = cachebook::usable_cpus() >= 2 ? 2 : 1;  // as cachesim runs

        // In process: read + parse + simulate.
        std::string in_process_summary;
        cachebook::Timing in_process_cpu;
        const auto in_process = cachebook::time_runs(run_count, [&] {
            const double cpu_start = process_cpu_seconds();
            cachesim::Simulator sim(options);
            sim.run(trace.path, false, threads);
            in_process_summary = cachesim::summary_line(sim.hierarchy().counts(0));
            in_process_cpu.runs.push_back(process_cpu_seconds() - cpu_start);
        });

        // Parse only (one thread, the references cachesim simulates), and simulate only.
        std::vector<std::uint64_t> refs;
        refs.reserve(lines);
        cachebook::Timing parse_only_cpu, simulate_only_cpu;
        const auto parse_only = cachebook::time_runs(run_count, [&] {
            const double cpu_start = process_cpu_seconds();
            refs.clear();
            cachesim::read_lackey_refs(trace.path, false, 1, false, [&](std::span<const std::uint64_t> r) {
                refs.insert(refs.end(), r.begin(), r.end());
            });
            cachebook::do_not_optimize(refs.data());
            parse_only_cpu.runs.push_back(process_cpu_seconds() - cpu_start);
        });
        const auto simulate_only = cachebook::time_runs(run_count, [&] {
            const double cpu_start = process_cpu_seconds();
            cachesim::Hierarchy h(options.levels, options.inclusion);
            h.access_batch(refs.data(), refs.size());
            cachebook::do_not_optimize(h.counts(0).misses);
            simulate_only_cpu.runs.push_back(process_cpu_seconds() - cpu_start);
        });

        // End to end: the program, as a reader runs it.
        const std::string exe = (std::filesystem::path(argv[0]).parent_path() / "cachesim").string();
        const std::string out_path = trace.path + ".out";
        std::string program_summary;
        cachebook::Timing end_to_end_cpu;
        // Each run of the program is followed by one of the csim-style
        // simulator, so both see the same moments of a shared machine.
        cachebook::Timing end_to_end, baseline;
        std::string baseline_summary;
        for (int r = 0; r < run_count; ++r) {
            end_to_end.runs.push_back(
                cachebook::time_runs(1, [&] {
                    program_summary = run_program(exe, {"-s", "6", "-E", "8", "-b", "6", "-t", trace.path}, out_path);
                }).min());
            end_to_end_cpu.runs.push_back(g_child_cpu);
            baseline.runs.push_back(
                cachebook::time_runs(1, [&] { baseline_summary = csim_style(trace.path, 6, 8, 6); }).min());
        }
        std::remove(out_path.c_str());
        if (program_summary != in_process_summary + "\n")
            throw std::runtime_error(
                fmt::format("cachesim printed '{}', the library computed '{}'", program_summary, in_process_summary));
        if (baseline_summary != in_process_summary)
            throw std::runtime_error(fmt::format("the csim-style simulator found '{}', cachesim '{}'", baseline_summary,
                                                 in_process_summary));

        // The cachelab README's anchor for csim-ref on this trace (quoted, not measured here).
        constexpr double reference_seconds = 0.58;
        auto rate = [&](double seconds) { return static_cast<double>(lines) / seconds; };
        fmt::print("cachesim -s 6 -E 8 -b 6 on a {0} x {0} float transpose trace ({1} lines): {2}\n", size, lines,
                   in_process_summary);
        // Wall time is what a reader waits; CPU time is what the work costs when
        // other programs share the cores (on an idle machine the two are close).
        auto row = [&](const char* what, const cachebook::Timing& wall, const cachebook::Timing* cpu,
                       const char* unit) {
            fmt::print("  {:<24} wall {} ms {} M {}/s", what, fmt::format("{:7.2f}", wall.min() * 1e3),
                       fmt::format("{:6.1f}", rate(wall.min()) / 1e6), unit);
            if (cpu)
                fmt::print("   cpu {} ms {} M {}/s", fmt::format("{:7.2f}", cpu->min() * 1e3),
                           fmt::format("{:6.1f}", rate(cpu->min()) / 1e6), unit);
            fmt::print("\n");
        };
        row("end to end (program)", end_to_end, &end_to_end_cpu, "lines");
        row("csim-style (fscanf)", baseline, nullptr, "lines");
        row("in process (read+sim)", in_process, &in_process_cpu, "lines");
        row("parse only (1 thread)", parse_only, &parse_only_cpu, "lines");
        row("simulate only", simulate_only, &simulate_only_cpu, "accesses");
        fmt::print("  the csim-style simulator, timed in this run: cachesim is {}x faster end to end (wall)\n",
                   fmt::format("{:.1f}", baseline.min() / end_to_end.min()));
        if (size == 1024)
            fmt::print(
                "  csim-ref takes about {:.2f} s here (cachelab README): {}x faster end to end (wall), {}x (cpu)\n",
                reference_seconds, fmt::format("{:.1f}", reference_seconds / end_to_end.min()),
                fmt::format("{:.1f}", reference_seconds / end_to_end_cpu.min()));
        fmt::print("  (minimum of {} runs each)\n", run_count);

        if (!cli.json_path().empty()) {
            auto timing = [&](const cachebook::Timing& t) {
                return nlohmann::json{{"min_seconds", t.min()},
                                      {"median_seconds", t.median()},
                                      {"lines_per_second", rate(t.min())},
                                      {"runs", t.runs}};
            };
            nlohmann::json out{{"n", size},
                               {"lines", lines},
                               {"config", "-s 6 -E 8 -b 6"},
                               {"summary", in_process_summary},
                               {"end_to_end", timing(end_to_end)},
                               {"end_to_end_cpu", timing(end_to_end_cpu)},
                               {"csim_style", timing(baseline)},
                               {"speedup_vs_csim_style", baseline.min() / end_to_end.min()},
                               {"threads", threads},
                               {"in_process", timing(in_process)},
                               {"in_process_cpu", timing(in_process_cpu)},
                               {"parse_only", timing(parse_only)},
                               {"parse_only_cpu", timing(parse_only_cpu)},
                               {"simulate_only", timing(simulate_only)},
                               {"simulate_only_cpu", timing(simulate_only_cpu)}};
            if (size == 1024) {
                out["reference_seconds_quoted"] = reference_seconds;
                out["speedup_vs_reference"] = reference_seconds / end_to_end.min();
                out["speedup_vs_reference_cpu"] = reference_seconds / end_to_end_cpu.min();
            }
            cachebook::write_json(cli.json_path(), out);
        }
        return 0;
    });
}
