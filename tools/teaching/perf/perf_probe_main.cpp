// The main of a performance probe (tools/teaching/perf.py runs it):
//   probe spec                 the exercise and the model's cache, as JSON
//   probe check                exit 0 when the submission is correct, else 1 and why
//   probe trace WHICH          prepares the small data, then runs WHICH (reference, baseline or
//                              submission) once between two stores to `marker`, whose address it
//                              prints: under valgrind's lackey the accesses between them are the run's
//   probe simulate S E B       reads a lackey trace on stdin and prints the misses of an LRU cache
//                              of 2^S sets x E lines x 2^B bytes, from the book's cache model
//   probe time ROUNDS PROBE    the timing process (run from the kit's own probe, whose starter is the
//                              unwritten one): starts `PROBE serve`, the submission's probe, and
//                              ROUNDS times, in turn, on inputs from a seed it draws: times the
//                              reference by its own thread's CPU clock while the submission's
//                              process is stopped, lets the submission run and reads that process's
//                              CPU clock from outside, checks the submission's result, and times the
//                              reference again (on data of its own); prints every run as JSON
//                              (perf.py takes the minima), or {"problem": why} when the submission
//                              failed or answered wrong
//   probe serve                the submission's side of `time`: prepares its data, then for each
//                              seed and count of runs read on stdin runs it and writes its result
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/cpu_time.hpp"
#include "perf_probe.hpp"
#include "whole_io.hpp"

namespace {

volatile char marker[64];

perf_probe::Which which_of(const std::string& name) {
    if (name == "reference") return perf_probe::Which::Reference;
    if (name == "baseline") return perf_probe::Which::Baseline;
    if (name == "submission") return perf_probe::Which::Submission;
    throw std::invalid_argument("no version " + name);
}

int simulate(int s, int E, int b) {
    cachebook::Cache cache(
        cachebook::CacheConfig{std::size_t{1} << s, static_cast<std::size_t>(E), std::size_t{1} << b});
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.size() < 4 || line[0] != ' ') continue;  // instruction fetches and valgrind's own lines
        std::uint64_t address = 0;
        const char* end = line.data() + line.size();
        if (std::from_chars(line.data() + 3, end, address, 16).ec != std::errc{}) continue;
        cache.access(address, 0, line[1] != 'L');
        if (line[1] == 'M') cache.access(address, 0, true);  // a modify is a load and a store, as csim counts it
    }
    std::cout << nlohmann::json{{"hits", cache.total().hits}, {"misses", cache.total().misses}}.dump() << "\n";
    return 0;
}

using whole_io::read_all;
using whole_io::write_all;

// The submission's side: what it is asked arrives on stdin, its answers leave on stdout.
int serve() {
    perf_probe::prepare(false, perf_probe::Which::Submission);
    if (!write_all(1, "r", 1)) return 1;
    std::uint32_t order[2];  // the seed, the runs
    while (read_all(0, order, sizeof order)) {
        perf_probe::vary(perf_probe::Which::Submission, order[0]);
        for (std::uint32_t k = 0; k < order[1]; ++k) perf_probe::run(perf_probe::Which::Submission);
        const std::string bytes = perf_probe::result(perf_probe::Which::Submission);
        const std::uint64_t size = bytes.size();
        if (!write_all(1, &size, sizeof size) || !write_all(1, bytes.data(), bytes.size())) return 1;
    }
    return 0;
}

// The submission's process, seen from the timing process: its pipes and its CPU clock.
class Served {
public:
    explicit Served(const std::string& probe) {
        int in[2], out[2];
        if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("no pipe");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("cannot start the submission's probe");
        if (pid_ == 0) become(probe, in[0], out[1]);
        ::close(in[0]);
        ::close(out[1]);
        to_ = in[1];
        from_ = out[0];
        if (::clock_getcpuclockid(pid_, &clock_) != 0)
            throw std::runtime_error("cannot read the submission's CPU clock");
    }
    ~Served() {
        ::close(to_);
        ::close(from_);
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
    }
    Served(const Served&) = delete;
    Served& operator=(const Served&) = delete;

    bool started() {
        char ready = 0;
        return read_all(from_, &ready, 1) && ready == 'r';
    }
    /// The process's CPU time so far (all its threads), read by this process.
    double cpu_seconds() const {
        timespec ts{};
        if (::clock_gettime(clock_, &ts) != 0) throw std::runtime_error("the submission's probe ended");
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    }
    /// Sends a seed and a count of runs; the result, or nullopt when the process answers nothing.
    std::optional<std::string> ask(std::uint32_t seed, std::uint32_t runs) {
        const std::uint32_t order[2] = {seed, runs};
        std::uint64_t size = 0;
        if (!write_all(to_, order, sizeof order) || !read_all(from_, &size, sizeof size) || size > (1u << 30))
            return std::nullopt;
        std::string bytes(size, '\0');
        if (!read_all(from_, bytes.data(), size)) return std::nullopt;
        return bytes;
    }
    /// Stopped, it can do nothing while this process times the reference.
    void stop() {
        ::kill(pid_, SIGSTOP);
        int status = 0;
        ::waitpid(pid_, &status, WUNTRACED);
    }
    void resume() { ::kill(pid_, SIGCONT); }

private:
    // The child: stdin and stdout are the pipes, stderr is discarded, and it may start no
    // process or thread (all of its work is on the CPU clock this process reads).
    [[noreturn]] static void become(const std::string& probe, int in, int out) {
        ::dup2(in, 0);
        ::dup2(out, 1);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 2);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        const rlimit none{0, 0};
        ::setrlimit(RLIMIT_NPROC, &none);
        ::execl(probe.c_str(), probe.c_str(), "serve", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    pid_t pid_ = -1;
    int to_ = -1, from_ = -1;
    clockid_t clock_{};
};

// One run of the reference in this process, with what the submission's run also does.
double timed_reference(perf_probe::Which which, std::uint32_t seed) {
    const double start = cachebook::thread_cpu_seconds();
    perf_probe::vary(which, seed);
    perf_probe::run(which);
    cachebook::do_not_optimize(perf_probe::result(which));
    return cachebook::thread_cpu_seconds() - start;
}

int problem(const std::string& why) {
    std::cout << nlohmann::json{{"problem", why}}.dump() << "\n";
    return 0;
}

int time_rounds(int rounds, const std::string& submission_probe) {
    using perf_probe::Which;
    ::prctl(PR_SET_DUMPABLE, 0);  // the submission's process may not trace this one or read its memory
    ::signal(SIGPIPE, SIG_IGN);   // a submission that ends early fails its round; it does not end this process
    perf_probe::prepare(false, Which::Reference);
    perf_probe::prepare(false, Which::ReferenceAgain);
    Served served(submission_probe);
    if (!served.started()) return problem("the submission's probe did not start");
    std::mt19937 seeds(std::random_device{}());
    std::vector<double> reference, submission, reference_again;
    double last = served.cpu_seconds();
    for (int r = 0; r <= rounds; ++r) {  // round 0 warms up
        const std::uint32_t seed = seeds(), other_seed = seeds();
        served.stop();
        const double ref = timed_reference(Which::Reference, seed);
        served.resume();
        const auto answer = served.ask(seed, 1);
        if (!answer) return problem("the submission's probe stopped answering (it ended or wrote something else)");
        const double now = served.cpu_seconds();  // everything it did since its last answer
        served.stop();
        const double again = timed_reference(Which::ReferenceAgain, other_seed);
        served.resume();
        if (const std::string why = perf_probe::result_problem(*answer); !why.empty()) return problem(why);
        if (r > 0) {
            reference.push_back(ref);
            submission.push_back(now - last);
            reference_again.push_back(again);
        }
        last = now;
    }
    std::cout << nlohmann::json{{"reference", reference},
                                {"submission", submission},
                                {"reference_again", reference_again}}
                     .dump()
              << "\n";
    return 0;
}
int probe(const std::vector<std::string>& args) {
    const std::string mode = args.empty() ? "" : args[0];
    if (mode == "spec") {
        const auto s = perf_probe::spec();
        std::cout << nlohmann::json{{"exercise", s.exercise}, {"s", s.cache.s}, {"E", s.cache.E}, {"b", s.cache.b}}
                  << "\n";
        return 0;
    }
    if (mode == "check") {
        const std::string why = perf_probe::check();
        std::cout << (why.empty() ? "correct" : why) << "\n";
        return why.empty() ? 0 : 1;
    }
    if (mode == "trace" && args.size() == 2) {
        const auto which = which_of(args[1]);
        perf_probe::prepare(true, which);
        std::printf("%p\n", static_cast<void*>(const_cast<char*>(marker)));
        std::fflush(stdout);
        marker[0] = 1;
        perf_probe::run(which);
        marker[0] = 2;
        return 0;
    }
    if (mode == "simulate" && args.size() == 4)
        return simulate(std::stoi(args[1]), std::stoi(args[2]), std::stoi(args[3]));
    if (mode == "time" && args.size() == 3) return time_rounds(std::stoi(args[1]), args[2]);
    if (mode == "serve" && args.size() == 1) return serve();
    std::cerr << "usage: probe spec | check | trace WHICH | simulate S E B | time ROUNDS PROBE | serve\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return probe(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
        std::cerr << "probe: " << e.what() << "\n";
        return 1;
    }
}
