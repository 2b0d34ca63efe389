// The lackey trace reader: every line shape valgrind writes, every way a line
// can be wrong (named with its line number), and streaming across its window.
#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
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
