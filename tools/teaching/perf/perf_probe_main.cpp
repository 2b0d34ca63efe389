// The main of a performance probe (tools/teaching/perf.py runs it):
//   probe spec                 the exercise and the model's cache, as JSON
//   probe check                exit 0 when the submission is correct, else 1 and why
//   probe trace WHICH          prepares the small data, then runs WHICH (reference, baseline or
//                              submission) once between two stores to `marker`, whose address it
//                              prints: under valgrind's lackey the accesses between them are the run's
//   probe simulate S E B       reads a lackey trace on stdin and prints the misses of an LRU cache
//                              of 2^S sets x E lines x 2^B bytes, from the book's cache model
//   probe time ROUNDS          prepares the large data; ROUNDS times, in turn: the reference, the
//                              submission, the reference again (on its own data), each timed by the thread's CPU clock;
//                              prints every run as JSON (perf.py takes the minima)
#include <charconv>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/cpu_time.hpp"
#include "perf_probe.hpp"

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

int time_rounds(int rounds) {
    using perf_probe::Which;
    perf_probe::prepare(false);
    for (Which w : {Which::Reference, Which::Submission, Which::ReferenceAgain}) perf_probe::run(w);  // warm up
    std::vector<double> reference, submission, reference_again;
    for (int r = 0; r < rounds; ++r) {
        for (auto [w, into] : {std::pair{Which::Reference, &reference}, std::pair{Which::Submission, &submission},
                               std::pair{Which::ReferenceAgain, &reference_again}}) {
            const double start = cachebook::thread_cpu_seconds();
            perf_probe::run(w);
            into->push_back(cachebook::thread_cpu_seconds() - start);
        }
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
        perf_probe::prepare(true);
        std::printf("%p\n", static_cast<void*>(const_cast<char*>(marker)));
        std::fflush(stdout);
        marker[0] = 1;
        perf_probe::run(which);
        marker[0] = 2;
        return 0;
    }
    if (mode == "simulate" && args.size() == 4)
        return simulate(std::stoi(args[1]), std::stoi(args[2]), std::stoi(args[3]));
    if (mode == "time" && args.size() == 2) return time_rounds(std::stoi(args[1]));
    std::cerr << "usage: probe spec | check | trace WHICH | simulate S E B | time ROUNDS\n";
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
