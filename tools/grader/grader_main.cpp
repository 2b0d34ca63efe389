// The main of every exercise grader: runs the chapter's Catch2 grader and
// prints one line per exercise (a test case) and a score.
//   --require-full   exit 1 unless every exercise passes (CI grades the solutions so); exit 77
//                    (ctest: skipped) when every exercise that ran passed but one could not run here
// An exercise that cannot run on this machine says so with WARN("SKIPPED: reason") and returns;
// it is listed as skipped with its reason, never counted as passed.
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
    std::string skipped;  // the reason, when the exercise could not run here
};
std::vector<Result>& results() {
    static std::vector<Result> r;
    return r;
}

class ScoreListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    bool assertionEnded(const Catch::AssertionStats& stats) override {
        const auto& r = stats.assertionResult;
        if (r.getResultType() == Catch::ResultWas::Warning && r.getMessage().rfind("SKIPPED:", 0) == 0)
            skip_ = r.getMessage().substr(8);
        return true;
    }
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        const bool failed = stats.totals.assertions.failed > 0;
        const bool ok = !failed && skip_.empty() && stats.totals.assertions.passed > 0;
        results().push_back({stats.testInfo.name, ok, failed ? "" : skip_});
        skip_.clear();
    }

private:
    std::string skip_;
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
    std::size_t passed = 0, skipped = 0;
    std::cout << "\n";
    for (const auto& r : results()) {
        if (!r.skipped.empty()) {
            std::cout << "  skip  " << r.name << ": cannot run here," << r.skipped << "\n";
            ++skipped;
            continue;
        }
        std::cout << (r.passed ? "  pass  " : "  FAIL  ") << r.name << "\n";
        passed += r.passed ? 1 : 0;
    }
    std::cout << "score: " << passed << " / " << results().size() - skipped;
    if (skipped > 0) std::cout << " (" << skipped << " skipped, not scored)";
    std::cout << "\n";
    if (results().empty()) return 1;
    if (results().size() == skipped) return require_full ? 77 : 1;
    if (require_full && passed != results().size() - skipped) return 1;
    return require_full && skipped > 0 ? 77 : 0;
}
