#include "cachebook/measure.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace cachebook {

double Timing::median() const {
    if (runs.empty()) return 0.0;
    std::vector<double> s = runs;
    std::sort(s.begin(), s.end());
    const std::size_t m = s.size() / 2;
    return s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
}

// [snippet: clock]
namespace {
// 64 adds to one register: each waits for the one before, one cycle apiece. The 1 comes from a
// register, not an immediate: recent Intel cores fold chains of immediate adds while renaming,
// and `add $1` would seem to run several to a cycle.
[[maybe_unused]] double seconds_of_dependent_adds(std::uint64_t rounds) {
    std::uint64_t x = 0;
    [[maybe_unused]] const std::uint64_t one = 1;
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < rounds; ++i) {
        asm volatile(
            ".rept 64\n\t"
#if defined(__x86_64__)
            "add %1, %0\n\t"  // x += one
#elif defined(__aarch64__)
            "add %0, %0, %1\n\t"  // x = x + one
#endif
            ".endr"
            : "+r"(x)
            : "r"(one));
    }
    const double seconds = seconds_since(start);
    do_not_optimize(x);
    return seconds;
}
}  // namespace

std::optional<double> estimate_clock_ghz(double seconds) {
#if defined(__x86_64__) || defined(__aarch64__)
    std::uint64_t rounds = 1 << 8;
    while (seconds_of_dependent_adds(rounds) < 0.0002 && rounds < (std::uint64_t{1} << 30)) rounds *= 2;
    // Many short attempts, keeping the fastest: on a shared machine some attempt runs undisturbed.
    double best = 0;
    const auto begin = Clock::now();
    for (int attempt = 0; attempt < 10 || seconds_since(begin) < seconds; ++attempt)
        best = std::max(best, 64.0 * static_cast<double>(rounds) / seconds_of_dependent_adds(rounds) / 1e9);
    return best;
#else
    (void)seconds;
    return std::nullopt;
#endif
}
// [end: clock]

namespace {
// How many threads of this process, other than the caller, the kernel shows running (state R
// in /proc/self/task/<tid>/stat); -1 where there is no such directory.
int other_running_threads() {
    std::error_code ec;
    std::filesystem::directory_iterator tasks("/proc/self/task", ec);
    if (ec) return -1;
    const std::string self = std::to_string(::gettid());
    int running = 0;
    for (const auto& task : tasks) {
        if (task.path().filename() == self) continue;
        std::ifstream in(task.path() / "stat");
        std::string line;
        if (!std::getline(in, line)) continue;  // the thread has just ended
        const auto close = line.rfind(')');     // the name may hold spaces and brackets
        if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++running;
    }
    return running;
}
}  // namespace

bool wait_for_idle_threads(double limit_seconds) {
    const auto start = Clock::now();
    int quiet_looks = 0;  // in a row: one look can fall between two spins
    while (seconds_since(start) < limit_seconds) {
        const int running = other_running_threads();
        if (running < 0) break;
        quiet_looks = running == 0 ? quiet_looks + 1 : 0;
        if (quiet_looks == 3) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    const double left = limit_seconds - seconds_since(start);
    if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
    return false;
}

CommandResult run_command(const std::string& command) {
    CommandResult result;
    std::FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return result;
    char buffer[4096];
    std::size_t got = 0;
    while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, got);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return result;
}

bool golden_mode() {
    const char* v = std::getenv("CACHEBOOK_GOLDEN");
    return v != nullptr && std::strcmp(v, "1") == 0;
}

Progress::Progress(std::string task, std::size_t steps) : task_(std::move(task)), steps_(steps) {
    const char* forced = std::getenv("CACHEBOOK_PROGRESS");
    enabled_ = (forced != nullptr && std::strcmp(forced, "1") == 0) || isatty(STDERR_FILENO) == 1;
}

Progress::~Progress() {
    if (enabled_ && done_ > 0) std::fputs("\r\033[K", stderr);
}

void Progress::step(std::string_view note) {
    ++done_;
    if (!enabled_) return;
    fmt::print(stderr, "\r\033[K{} [{}/{}] {}", task_, done_, steps_, note);
    std::fflush(stderr);
}

}  // namespace cachebook
