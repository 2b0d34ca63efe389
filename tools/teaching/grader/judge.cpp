// The judge's child processes (judge.hpp): one per call of an exercise function.
#include "judge.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "whole_io.hpp"

namespace judge {
namespace {

struct Setup {
    std::string library;
    int output_fd = -1;
    int results_fd = -1;
};
Setup& setup() {
    static Setup s;
    return s;
}

constexpr std::uint64_t kMostBytes = std::uint64_t{1} << 30;  // an answer larger than this is refused

using whole_io::read_all;
using whole_io::write_all;

void send(int fd, char tag, const std::string& body) {
    const std::uint64_t n = body.size() + 1;
    if (write_all(fd, &n, sizeof n) && write_all(fd, &tag, 1)) write_all(fd, body.data(), body.size());
}

// Every descriptor but the answer's pipe is closed; output goes to the submission's file.
void keep_only(int answer_fd) {
    ::dup2(setup().output_fd, 1);
    ::dup2(setup().output_fd, 2);
    ::close(0);
    for (int fd = 3; fd < 1024; ++fd)
        if (fd != answer_fd) ::close(fd);
}

[[noreturn]] void be_child(int answer_fd, std::size_t index, void (*call)(const void*, Writer&, void*), void* context) {
    ::setpgid(0, 0);
    keep_only(answer_fd);
    void* lib = ::dlopen(setup().library.c_str(), RTLD_NOW | RTLD_LOCAL);
    const auto* table = lib ? static_cast<const void* const*>(::dlsym(lib, "judge_exercise_functions")) : nullptr;
    if (table == nullptr) {
        send(answer_fd, 'x', std::string("the submission cannot be loaded: ") + ::dlerror());
        ::_exit(0);
    }
    Writer w;
    try {
        call(table[index], w, context);
        send(answer_fd, 'v', w.bytes);
    } catch (const std::exception& e) {
        send(answer_fd, 'x', e.what());
    } catch (...) {
        send(answer_fd, 'x', "threw something that is not a std::exception");
    }
    std::fflush(nullptr);
    ::_exit(0);
}

std::string answer_from(int fd) {
    std::uint64_t n = 0;
    if (!read_all(fd, &n, sizeof n) || n == 0 || n > kMostBytes) return {};
    std::string bytes(n, '\0');
    return read_all(fd, bytes.data(), n) ? bytes : std::string{};
}

std::string how_it_ended(int status) {
    if (WIFSIGNALED(status)) return "crashed (signal " + std::to_string(WTERMSIG(status)) + ")";
    return "ended the program (exit status " + std::to_string(WEXITSTATUS(status)) + ") before it returned";
}

}  // namespace

void start(const std::string& library, const std::string& output) {
    setup().library = library;
    setup().output_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (setup().output_fd < 0) throw std::runtime_error("cannot write " + output);
    ::prctl(PR_SET_DUMPABLE, 0);  // no process of the same user may trace this one or open its /proc files
    std::cout.flush();
    setup().results_fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    ::dup2(2, 1);
}

void send_results(const std::string& text) {
    if (!write_all(setup().results_fd, text.data(), text.size())) std::cerr << "grader: cannot send the results\n";
}

std::string in_child(const char* name, std::size_t index, void (*call)(const void*, Writer&, void*), void* context) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("judge: no pipe for the call");
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw std::runtime_error("judge: cannot start a process for the call");
    }
    if (pid == 0) {
        ::close(fds[0]);
        be_child(fds[1], index, call, context);
    }
    ::close(fds[1]);
    const std::string bytes = answer_from(fds[0]);
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::kill(-pid, SIGKILL);  // whatever the call left running
    const std::string who = std::string("the submission's ") + name;
    if (bytes.empty()) throw std::runtime_error(who + " " + how_it_ended(status));
    if (bytes[0] == 'x') throw std::runtime_error(bytes.substr(1));
    return bytes.substr(1);
}

}  // namespace judge
