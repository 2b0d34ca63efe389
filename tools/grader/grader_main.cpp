// The main of every exercise grader: runs the chapter's Catch2 grader and
// prints one line per exercise (a test case) and a score.
//   --require-full   exit 1 unless every exercise passes (CI grades the solutions so)
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

namespace {

struct Result {
    std::string name;
    bool passed;
};
std::vector<Result>& results() {
    static std::vector<Result> r;
    return r;
}

class ScoreListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        const bool ok = stats.totals.assertions.failed == 0 && stats.totals.assertions.passed > 0;
        results().push_back({stats.testInfo.name, ok});
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(ScoreListener)

int main(int argc, char** argv) {
    bool require_full = false;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--require-full") == 0) require_full = true;
        else args.push_back(argv[i]);
    }
    Catch::Session session;
    // Quiet Catch's own report unless asked: the score lines below are the report.
    session.configData().reporterName = "compact";
    if (const int rc = session.applyCommandLine(static_cast<int>(args.size()), args.data()); rc != 0) return 2;
    session.run();
    std::size_t passed = 0;
    std::cout << "\n";
    for (const auto& r : results()) {
        std::cout << (r.passed ? "  pass  " : "  FAIL  ") << r.name << "\n";
        passed += r.passed ? 1 : 0;
    }
    std::cout << "score: " << passed << " / " << results().size() << "\n";
    if (results().empty()) return 1;
    return require_full && passed != results().size() ? 1 : 0;
}
