// The test runner: Catch2's, except that under an emulator the [timing] cases are skipped,
// each with the reason (they measure the CPU's speed; an emulated CPU's time is the emulator's).
// Runs that list (tests, tags, reporters) or print help run no case, so they skip nothing.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cachebook/measure.hpp"
#include "support.hpp"

namespace {

bool is_timing(const Catch::TestCase& test) {
    for (const auto& tag : test.tags)
        if (tag == "timing") return true;
    return false;
}

// Whether this command line runs test cases, rather than only listing or describing them.
bool runs_cases(const Catch::ConfigData& data) {
    return !(data.showHelp || data.libIdentify || data.listTests || data.listTestNamesOnly || data.listTags ||
             data.listReporters);
}

// The same test spec with the [timing] cases taken out of each of its comma-separated parts.
std::vector<std::string> without_timing(std::vector<std::string> spec) {
    if (spec.empty()) return {"~[timing]"};
    for (auto& part : spec) {
        std::string out;
        bool escaped = false, quoted = false;
        for (char ch : part) {
            if (!escaped && !quoted && ch == ',') out += " ~[timing]";
            if (!escaped && ch == '"') quoted = !quoted;
            escaped = !escaped && ch == '\\';
            out += ch;
        }
        part = out;
    }
    spec.back() += " ~[timing]";
    return spec;
}

}  // namespace

int main(int argc, char* argv[]) {
    Catch::Session session;
    if (const int rc = session.applyCommandLine(argc, argv); rc != 0) return rc;
    if (!runs_cases(session.configData())) return session.run();
    std::vector<std::string> timing;  // the [timing] cases this run selects
    std::size_t others = 0;
    for (const auto& test : Catch::filterTests(Catch::getAllTestCasesSorted(session.config()),
                                               session.config().testSpec(), session.config())) {
        if (is_timing(test))
            timing.push_back(test.name);
        else
            ++others;
    }
    const std::string why = cachebook_test::emulation_reason();
    if (why.empty()) {
        // OpenBLAS, linked in, starts its worker threads as the program loads, and they spin for
        // 2^28 cycles before they sleep: a case timed in that time would share a CPU with them.
        if (!timing.empty()) cachebook::wait_for_idle_threads(1.0);
        return session.run();
    }
    for (const auto& name : timing)
        Catch::cout() << "SKIPPED: \"" << name << "\" measures this CPU's speed, and " << why
                      << ", so the time measured would be the emulator's\n";
    if (timing.empty()) return session.run();
    if (others == 0) return 0;
    auto data = session.configData();
    data.testsOrTags = without_timing(data.testsOrTags);
    session.useConfigData(data);
    return session.run();
}
