// bench_cachesim: how fast cachesim reads and simulates a lackey trace.
// Writes the trace of an n x n float transpose (2 n^2 lines) to a temporary
// file, then times, as the minimum of several runs:
//   end to end: the cachesim program itself, started as a reader would start it;
//   in process: reading + parsing + simulating, the program's work without start-up;
//   parse only, and simulate only (records already in memory).
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

        // Parse only, and simulate only.
        std::vector<cachebook::LackeyRecord> records;
        records.reserve(lines);
        cachebook::Timing parse_only_cpu, simulate_only_cpu;
        const auto parse_only = cachebook::time_runs(run_count, [&] {
            const double cpu_start = process_cpu_seconds();
            records.clear();
            cachebook::LackeyReader reader(trace.path);
            std::array<cachebook::LackeyRecord, 4096> batch;
            for (std::size_t got; (got = reader.read(batch)) > 0;)
                records.insert(records.end(), batch.begin(), batch.begin() + static_cast<std::ptrdiff_t>(got));
            cachebook::do_not_optimize(records.data());
            parse_only_cpu.runs.push_back(process_cpu_seconds() - cpu_start);
        });
        const auto simulate_only = cachebook::time_runs(run_count, [&] {
            const double cpu_start = process_cpu_seconds();
            cachesim::Simulator sim(options);
            sim.feed(records);
            cachebook::do_not_optimize(sim.hierarchy().counts(0).misses);
            simulate_only_cpu.runs.push_back(process_cpu_seconds() - cpu_start);
        });

        // End to end: the program, as a reader runs it.
        const std::string exe = (std::filesystem::path(argv[0]).parent_path() / "cachesim").string();
        const std::string out_path = trace.path + ".out";
        std::string program_summary;
        cachebook::Timing end_to_end_cpu;
        const auto end_to_end = cachebook::time_runs(run_count, [&] {
            program_summary = run_program(exe, {"-s", "6", "-E", "8", "-b", "6", "-t", trace.path}, out_path);
            end_to_end_cpu.runs.push_back(g_child_cpu);
        });
        std::remove(out_path.c_str());
        if (program_summary != in_process_summary + "\n")
            throw std::runtime_error(
                fmt::format("cachesim printed '{}', the library computed '{}'", program_summary, in_process_summary));

        // The cachelab README's anchor for csim-ref on this trace (quoted, not measured here).
        constexpr double reference_seconds = 0.58;
        auto rate = [&](double seconds) { return static_cast<double>(lines) / seconds; };
        fmt::print("cachesim -s 6 -E 8 -b 6 on a {0} x {0} float transpose trace ({1} lines): {2}\n", size, lines,
                   in_process_summary);
        // Wall time is what a reader waits; CPU time is what the work costs when
        // other programs share the cores (on an idle machine the two are close).
        auto row = [&](const char* what, const cachebook::Timing& wall, const cachebook::Timing* cpu,
                       const char* unit) {
            fmt::print("  {:<24} wall {} ms {} M {}/s", what, cachebook::measured("{:7.2f}", wall.min() * 1e3),
                       cachebook::measured("{:6.1f}", rate(wall.min()) / 1e6), unit);
            if (cpu)
                fmt::print("   cpu {} ms {} M {}/s", cachebook::measured("{:7.2f}", cpu->min() * 1e3),
                           cachebook::measured("{:6.1f}", rate(cpu->min()) / 1e6), unit);
            fmt::print("\n");
        };
        row("end to end (program)", end_to_end, &end_to_end_cpu, "lines");
        row("in process (read+sim)", in_process, &in_process_cpu, "lines");
        row("parse only", parse_only, &parse_only_cpu, "lines");
        row("simulate only", simulate_only, &simulate_only_cpu, "accesses");
        if (size == 1024)
            fmt::print(
                "  csim-ref takes about {:.2f} s here (cachelab README): {}x faster end to end (wall), {}x (cpu)\n",
                reference_seconds, cachebook::measured("{:.1f}", reference_seconds / end_to_end.min()),
                cachebook::measured("{:.1f}", reference_seconds / end_to_end_cpu.min()));
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
