// The lackey trace reader: every line shape valgrind writes, every way a line
// can be wrong (named with its line number), and streaming across its window.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "cachebook/lackey.hpp"

using namespace cachebook;

namespace {

// A temporary file holding `text`, removed at the end of the test.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& text) {
        static int counter = 0;
        path = (std::filesystem::temp_directory_path() /
                fmt::format("cachebook-lackey-{}-{}.trace", ::getpid(), counter++))
                   .string();
        std::ofstream(path, std::ios::binary) << text;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

std::vector<LackeyRecord> read_all(LackeyReader& reader, std::size_t batch = 7) {
    std::vector<LackeyRecord> all(batch), out;
    for (std::size_t n; (n = reader.read(std::span(all.data(), batch))) > 0;)
        out.insert(out.end(), all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
    return out;
}

LackeyLine parse(std::string_view line, LackeyRecord& r, std::string& problem) {
    problem.clear();
    return parse_lackey_line(line, r, &problem);
}

}  // namespace

TEST_CASE("lackey: the four operations, as valgrind writes them", "[lackey]") {
    LackeyRecord r;
    std::string problem;
    CHECK(parse("I  0040051e,5", r, problem) == LackeyLine::Record);
    CHECK(r == LackeyRecord{'I', 5, 0x40051e});
    CHECK(parse(" L 7ff000384,4", r, problem) == LackeyLine::Record);
    CHECK(r == LackeyRecord{'L', 4, 0x7ff000384});
    CHECK(parse(" S 00600aa0,1", r, problem) == LackeyLine::Record);
    CHECK(r == LackeyRecord{'S', 1, 0x600aa0});
    CHECK(parse(" M 20,1", r, problem) == LackeyLine::Record);
    CHECK(r == LackeyRecord{'M', 1, 0x20});
    // Trailing blanks (dave.trace has one), CRLF, upper-case hex, 16 digits, leading zeros beyond 16.
    CHECK(parse(" L 10,4 ", r, problem) == LackeyLine::Record);
    CHECK(parse(" L 10,4\r", r, problem) == LackeyLine::Record);
    CHECK(parse(" S 7FF0AB,8", r, problem) == LackeyLine::Record);
    CHECK(r.address == 0x7ff0ab);
    CHECK(parse(" L ffffffffffffffff,8", r, problem) == LackeyLine::Record);
    CHECK(r.address == ~std::uint64_t{0});
    CHECK(parse(" L 000000000000000000000010,0008", r, problem) == LackeyLine::Record);
    CHECK(r == LackeyRecord{'L', 8, 0x10});
    CHECK(parse(" L 10,8192", r, problem) == LackeyLine::Record);
}

TEST_CASE("lackey: blank lines and valgrind's own log lines are skipped", "[lackey]") {
    LackeyRecord r;
    std::string problem;
    for (const char* line : {"", "   ", "\r", "==12345== Lackey, an example Valgrind tool", "--12345-- warning: x",
                             "  ==1== indented log"}) {
        INFO("line: '" << line << "'");
        CHECK(parse(line, r, problem) == LackeyLine::Skip);
    }
}

TEST_CASE("lackey: every malformed line is rejected with its problem", "[lackey]") {
    struct Bad {
        std::string line, problem;
    };
    const std::vector<Bad> cases{
        {" X 10,1", "unknown operation 'X'"},
        {"hello", "unknown operation 'h'"},
        {std::string("\x01\x02\x03", 3), "unknown operation byte 0x01 (binary data?)"},
        {std::string(" L \0,4", 6), "expected a hex address, found byte 0x00"},
        {"L10,4", "expected a space after 'L', found '1'"},
        {" L ,4", "expected a hex address, found ','"},
        {" L 1g,4", "bad hex digit 'g' in the address"},
        {" L 10 4", "missing ',' between address and size"},
        {" L 10", "missing ','"},
        {" L 10,", "expected a decimal size after ',', found the end of the line"},
        {" L 10,x", "expected a decimal size after ',', found 'x'"},
        {" L 10,0", "size 0"},
        {" L 10,8193", "size exceeds 8192 bytes"},
        {" L 10,123456789012345678901234567890", "size exceeds 8192 bytes"},
        {" L 10000000000000000,4", "address does not fit in 64 bits"},
        {" L 10,4 x", "unexpected 'x' after the size"},
        {" L 10,4,4", "unexpected ',' after the size"},
        {" L 0x10,4", "bad hex digit 'x' in the address"},
        {" L " + std::string(300, '0') + "1,4", "line longer than 256 bytes"},
        {std::string(300, ' '), "line longer than 256 bytes"},
    };
    for (const Bad& b : cases) {
        INFO("line: '" << b.line << "'");
        LackeyRecord r;
        std::string problem;
        CHECK(parse(b.line, r, problem) == LackeyLine::Bad);
        CHECK_THAT(problem, Catch::StartsWith(b.problem));
    }
}

TEST_CASE("lackey: the reader names the file and line of the first bad line", "[lackey]") {
    TempFile f(" L 10,4\n S 20,4\n\n==1== log\n M 30,x\n L 40,4\n");
    LackeyReader reader(f.path);
    try {
        read_all(reader);
        FAIL("no error thrown");
    } catch (const LackeyError& e) {
        CHECK(e.line() == 5);
        CHECK(e.problem() == "expected a decimal size after ',', found 'x'");
        CHECK(std::string(e.what()) == f.path + ":5: expected a decimal size after ',', found 'x'");
    }
}

TEST_CASE("lackey: --skip-bad counts bad lines and keeps the good ones", "[lackey]") {
    TempFile f(" L 10,4\n junk\n S 20,4\n L 1q,4\n M 30,2");  // no newline at the end
    LackeyReader reader(f.path, true);
    const auto records = read_all(reader);
    REQUIRE(records.size() == 3);
    CHECK(records[2] == LackeyRecord{'M', 2, 0x30});
    CHECK(reader.skipped() == 2);
    CHECK(reader.first_skipped() == "line 2: unknown operation 'j' (expected I, L, S or M)");
    CHECK(reader.lines() == 5);
}

TEST_CASE("lackey: an input with no access line is an error", "[lackey]") {
    for (const char* text : {"", "\n\n", "==1== only a log\n"}) {
        TempFile f(text);
        LackeyReader reader(f.path);
        CHECK_THROWS_WITH(read_all(reader), Catch::Contains("empty trace"));
    }
    TempFile junk("junk\nmore junk\n");
    LackeyReader reader(junk.path, true);
    CHECK_THROWS_WITH(read_all(reader), Catch::Contains("no valid access line (2 malformed lines skipped"));
}

TEST_CASE("lackey: a missing file is a clear error", "[lackey]") {
    CHECK_THROWS_WITH(LackeyReader("/nonexistent/x.trace"), Catch::Contains("cannot open trace /nonexistent/x.trace"));
}

TEST_CASE("lackey: lines are read across the reader's window, in order", "[lackey]") {
    // About 3 window-fulls of lines of varied length, so lines straddle every refill.
    std::string text;
    std::vector<LackeyRecord> expected;
    std::uint64_t x = 12345;
    while (text.size() < 3 * kLackeyWindow + 77) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const LackeyRecord r{"ILSM"[x >> 62], static_cast<std::uint32_t>(1 + (x >> 20) % 64), x >> (x % 40)};
        text += r.op == 'I' ? fmt::format("I  {:x},{}\n", r.address, r.size)
                            : fmt::format(" {} {:x},{}\n", r.op, r.address, r.size);
        expected.push_back(r);
    }
    TempFile f(text);
    LackeyReader reader(f.path);
    CHECK(read_all(reader, 4096) == expected);
    CHECK(reader.lines() == expected.size());
    CHECK(reader.records() == expected.size());
}

TEST_CASE("lackey: a line longer than the window is reported without being held", "[lackey]") {
    const std::string huge(2 * kLackeyWindow + 5, 'x');
    TempFile f(" L 10,4\n" + huge + "\n S 20,4\n");
    {
        LackeyReader reader(f.path);
        try {
            read_all(reader);
            FAIL("no error thrown");
        } catch (const LackeyError& e) {
            CHECK(e.line() == 2);
            CHECK(e.problem() == "line longer than 256 bytes");
        }
    }
    LackeyReader skipping(f.path, true);
    const auto records = read_all(skipping);
    REQUIRE(records.size() == 2);
    CHECK(records[1] == LackeyRecord{'S', 4, 0x20});
    CHECK(skipping.lines() == 3);
    CHECK(skipping.skipped() == 1);
}

TEST_CASE("lackey: a long valgrind log line is skipped, not an error", "[lackey]") {
    TempFile f("==1== " + std::string(kLackeyWindow + 10, 'c') + "\n L 10,4\n");
    LackeyReader reader(f.path);
    CHECK(read_all(reader).size() == 1);
    CHECK(reader.lines() == 2);
}

TEST_CASE("lackey: the reader agrees with the line-by-line parser on random traces of odd shapes", "[lackey][differential]") {
    // Lines near every edge of the reader's fast path (1 to 18 address digits,
    // 1 to 5 size digits with leading zeros, upper-case hex, the line's
    // length around 16 bytes) and every other shape (CRLF, tabs, extra or
    // trailing blanks, log lines, blank lines, junk, lines over 256 bytes),
    // across window refills. The reader must give the records, skips and
    // errors (with their line numbers) that parse_lackey_line() gives line by line.
    std::mt19937_64 rng(20261201);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    auto digits = [&](const char* alphabet, std::size_t count) {
        std::string s;
        for (std::size_t i = 0; i < count; ++i) s += alphabet[pick(0, std::strlen(alphabet) - 1)];
        return s;
    };
    auto random_line = [&]() -> std::string {
        const auto kind = pick(0, 99);
        if (kind < 60) {  // lackey's own shape, now and then off by a little
            const char op = "ILSM"[pick(0, 3)];
            std::string head = op == 'I' ? "I  " : std::string(" ") + op + " ";
            std::string address = digits(pick(0, 4) == 0 ? "0123456789abcdefABCDEF" : "0123456789abcdef",
                                         pick(0, 5) == 0 ? pick(1, 18) : pick(7, 12));
            std::string size = pick(0, 9) == 0 ? digits("0123456789", pick(1, 5)) : std::to_string(1u << pick(0, 6));
            std::string line = head + address + "," + size;
            switch (pick(0, 19)) {
                case 0: line += "\r"; break;
                case 1: line += " "; break;
                case 2: {  // any byte but a newline, which would make two lines of one
                    const auto c = static_cast<char>(pick(0, 254));
                    line[pick(0, line.size() - 1)] = c == '\n' ? '\xff' : c;
                    break;
                }
                case 3: line.insert(pick(0, line.size()), 1, "\t ,x"[pick(0, 3)]); break;
                case 4: line.erase(pick(0, line.size() - 1), 1); break;
                default: break;
            }
            return line;
        }
        if (kind < 68) return "==" + std::to_string(pick(1, 99999)) + "== " + digits("abc ", pick(0, 40));
        if (kind < 72) return "";
        if (kind < 76) return std::string(pick(1, 3), ' ') + "\r";
        if (kind < 80) return digits(" \tLSMI0123456789abcdefxyz,=-\r", pick(1, 30));
        if (kind < 82) return " L 10,4" + std::string(pick(250, 300), ' ');
        if (kind < 84) return "--" + std::to_string(pick(1, 9)) + std::string(pick(250, 300), '-');
        return (kind % 2 ? "I  " : " S ") + digits("0123456789abcdef", pick(1, 16)) + "," + std::to_string(pick(1, 8192));
    };
    for (int t = 0; t < 40; ++t) {
        std::vector<std::string> lines(pick(1, 9000));
        for (auto& l : lines) l = random_line();
        std::string text;
        for (const auto& l : lines) text += l + "\n";
        if (pick(0, 1) == 0) text.pop_back();  // no newline at the end
        std::vector<LackeyRecord> want;
        std::uint64_t bad = 0, first_bad = 0;
        std::string first_problem;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            LackeyRecord r;
            std::string problem;
            const LackeyLine verdict = parse_lackey_line(lines[i], r, &problem);
            if (verdict == LackeyLine::Record) want.push_back(r);
            if (verdict == LackeyLine::Bad && bad++ == 0) {
                first_bad = i + 1;
                first_problem = problem;
            }
        }
        INFO(fmt::format("trace {}: {} lines, {} records, {} bad, first at line {}", t, lines.size(), want.size(), bad,
                         first_bad));
        TempFile f(text);
        const std::size_t batch = pick(1, 5000);
        if (want.empty()) continue;  // an input without a record is an error of its own (tested above)
        LackeyReader skipping(f.path, true);
        const std::vector<LackeyRecord> got = read_all(skipping, batch);
        for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
            INFO(fmt::format("record {}: read {} {:x},{}; line by line {} {:x},{}", i, got[i].op, got[i].address,
                             got[i].size, want[i].op, want[i].address, want[i].size));
            REQUIRE(got[i] == want[i]);
        }
        REQUIRE(got.size() == want.size());
        REQUIRE(skipping.lines() == lines.size());
        REQUIRE(skipping.skipped() == bad);
        if (bad == 0) continue;
        // The first bad line: its number, and its problem (a line over 256 bytes is
        // named by its length by one and by its first wrong byte by the other).
        CHECK_THAT(skipping.first_skipped(), Catch::StartsWith(fmt::format("line {}: ", first_bad)));
        if (lines[first_bad - 1].size() <= kLackeyMaxLine)
            CHECK(skipping.first_skipped() == fmt::format("line {}: {}", first_bad, first_problem));
        LackeyReader strict(f.path);
        try {
            read_all(strict, batch);
            FAIL("no error thrown");
        } catch (const LackeyError& e) {
            REQUIRE(e.line() == first_bad);
            if (lines[first_bad - 1].size() <= kLackeyMaxLine) CHECK(e.problem() == first_problem);
        }
    }
}
