#include "cachebook/measure.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace cachebook {

double Timing::median() const {
    if (runs.empty()) return 0.0;
    std::vector<double> s = runs;
    std::sort(s.begin(), s.end());
    const std::size_t m = s.size() / 2;
    return s.size() % 2 ? s[m] : 0.5 * (s[m - 1] + s[m]);
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
