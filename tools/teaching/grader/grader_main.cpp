// The main of every exercise grader: runs the chapter's Catch2 grader and
// prints one line per case and a score in points.
//   --require-full     exit 1 unless every case passes (CI grades the solutions so); exit 77
//                      (ctest: skipped) when every case that ran passed but one could not run here
//   --results FILE     also write the results as Gradescope's autograder reads them (results.json):
//                      one test per case with its score, max_score, status and output
//   --list             print the cases (points, public or held back, name) without running them
//   --judge LIB --output FILE
//                      the judge (judge.hpp, built with judge_proxy.cpp instead of a starter): each
//                      call of an exercise function runs the submission LIB in a child process whose
//                      output goes to FILE; the score lines go to stderr and the results, as --results
//                      writes them, to stdout, which no child holds
// A case is worth the points of its tag "[N points]" (1 without one); a case tagged "[held back]"
// is one the instructor's copy runs and the student's handout does not ship.
// An exercise that cannot run on this machine says so with WARN("SKIPPED: reason") and returns;
// it is listed as skipped with its reason, never counted as passed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "judge.hpp"

namespace {

struct Result {
    std::string name;
    int points = 1;
    bool held_back = false;
    bool passed = false;
    std::string skipped;  // the reason, when the exercise could not run here
    std::string output;   // the first failed checks, with their INFO context
};
std::vector<Result>& results() {
    static std::vector<Result> r;
    return r;
}

int points_of(const Catch::TestCaseInfo& info) {
    for (const auto& tag : info.tags) {
        const auto space = tag.find(' ');
        if (space != std::string::npos && tag.substr(space) == " points") return std::stoi(tag.substr(0, space));
        if (tag == "1 point") return 1;
    }
    return 1;
}
bool held_back(const Catch::TestCaseInfo& info) {
    for (const auto& tag : info.tags)
        if (tag == "held back") return true;
    return false;
}

std::string failure_text(const Catch::AssertionResult& r) {
    if (r.getResultType() == Catch::ResultWas::ThrewException)
        return "threw \"" + r.getMessage() + "\" in " + r.getExpressionInMacro();
    if (r.hasExpression()) return "failed: " + r.getExpressionInMacro() + " with " + r.getExpandedExpression();
    return "failed: " + r.getMessage();
}
// A failed check on two long vectors expands to every element: keep the start.
std::string shortened(const std::string& text) {
    constexpr std::size_t kMost = 400;
    return text.size() <= kMost ? text : text.substr(0, kMost) + " ...";
}

class ScoreListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;
    bool assertionEnded(const Catch::AssertionStats& stats) override {
        const auto& r = stats.assertionResult;
        if (r.getResultType() == Catch::ResultWas::Warning && r.getMessage().rfind("SKIPPED:", 0) == 0)
            skip_ = r.getMessage().substr(8);
        if (!r.isOk() && ++failures_ <= 3) {
            for (const auto& info : stats.infoMessages)
                if (info.type == Catch::ResultWas::Info) output_ += info.message + "\n";
            output_ += shortened(failure_text(r)) + "\n";
        }
        return true;
    }
    void testCaseEnded(const Catch::TestCaseStats& stats) override {
        const bool failed = stats.totals.assertions.failed > 0;
        const bool ok = !failed && skip_.empty() && stats.totals.assertions.passed > 0;
        results().push_back({stats.testInfo.name, points_of(stats.testInfo), held_back(stats.testInfo), ok,
                             failed ? "" : skip_, output_});
        skip_.clear();
        output_.clear();
        failures_ = 0;
    }

private:
    std::string skip_, output_;
    int failures_ = 0;
};

// What results.json says of a case. A held-back case that failed says only that: its checks name
// what it was given and the submission's answer, which may be anything the submission chose to
// return or throw, the held-back inputs too.
std::string shown_output(const Result& r) {
    if (!r.skipped.empty()) return "cannot run here:" + r.skipped;
    if (r.held_back && !r.passed) return "failed (a held-back case: what it gave and what it got back are not shown)";
    return r.output;
}

// Gradescope's results.json: a test per case; held-back cases are shown once grades are published.
nlohmann::json results_json(int score) {
    nlohmann::json tests = nlohmann::json::array();
    for (const auto& r : results()) {
        const bool skip = !r.skipped.empty();
        tests.push_back({{"name", r.name},
                         {"score", r.passed ? r.points : 0},
                         {"max_score", skip ? 0 : r.points},
                         {"status", r.passed ? "passed" : "failed"},
                         {"output", shown_output(r)},
                         {"visibility", r.held_back ? "after_published" : "visible"}});
    }
    // The total is the sum of the tests' max_score (Gradescope's format has no field for it).
    return nlohmann::json{{"score", score}, {"tests", tests}};
}
void write_results(const std::string& path, int score) {
    std::ofstream out(path);
    out << results_json(score).dump(2) << "\n";
    if (!out) std::cerr << "grader: cannot write " << path << "\n";
}

int list_cases(Catch::Session& session) {
    for (const auto& test : Catch::filterTests(Catch::getAllTestCasesSorted(session.config()),
                                               session.config().testSpec(), session.config()))
        std::cout << points_of(test) << "\t" << (held_back(test) ? "held back" : "public") << "\t" << test.name << "\n";
    return 0;
}

}  // namespace

CATCH_REGISTER_LISTENER(ScoreListener)

int main(int argc, char** argv) {
    bool require_full = false, list = false;
    std::string results_path, judge_library, judge_output;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--require-full") == 0)
            require_full = true;
        else if (std::strcmp(argv[i], "--list") == 0)
            list = true;
        else if (std::strcmp(argv[i], "--results") == 0 && i + 1 < argc)
            results_path = argv[++i];
        else if (std::strcmp(argv[i], "--judge") == 0 && i + 1 < argc)
            judge_library = argv[++i];
        else if (std::strcmp(argv[i], "--output") == 0 && i + 1 < argc)
            judge_output = argv[++i];
        else
            args.push_back(argv[i]);
    }
    Catch::Session session;
    // Quiet Catch's own report unless asked: the score lines below are the report.
    session.configData().reporterName = "compact";
    if (const int rc = session.applyCommandLine(static_cast<int>(args.size()), args.data()); rc != 0) return 2;
    if (list) return list_cases(session);
    const bool judging = !judge_library.empty();
    if (judging) {
        try {
            judge::start(judge_library, judge_output.empty() ? "/dev/null" : judge_output);
        } catch (const std::exception& e) {
            std::cerr << "grader: " << e.what() << "\n";
            return 2;
        }
    }
    session.run();
    int score = 0, max_score = 0;
    std::size_t skipped = 0;
    std::cout << "\n";
    for (const auto& r : results()) {
        const std::string tail = " (" + std::to_string(r.points) + (r.points == 1 ? " point)" : " points)");
        if (!r.skipped.empty()) {
            std::cout << "  skip  " << r.name << tail << ": cannot run here," << r.skipped << "\n";
            ++skipped;
            continue;
        }
        std::cout << (r.passed ? "  pass  " : "  FAIL  ") << r.name << tail << "\n";
        score += r.passed ? r.points : 0;
        max_score += r.points;
    }
    std::cout << "score: " << score << " / " << max_score;
    if (skipped > 0) std::cout << " (" << skipped << " skipped, not scored)";
    std::cout << "\n";
    if (!results_path.empty()) write_results(results_path, score);
    if (judging) judge::send_results(results_json(score).dump() + "\n");
    if (results().empty()) return 1;
    if (results().size() == skipped) return require_full ? 77 : 1;
    if (require_full && score != max_score) return 1;
    return require_full && skipped > 0 ? 77 : 0;
}
