// The report facility: each result written once is printed, recorded for --json, and masked in golden mode.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "cachebook/report.hpp"

using cachebook::Report;
using cachebook::Value;

TEST_CASE("a measured value prints as the placeholder in golden mode and as itself otherwise", "[report]") {
    const auto [golden, expected] = GENERATE(table<bool, std::string>({
        {true, "  best: <measured> ms of 12 runs\n"},
        {false, "  best: 3.14 ms of 12 runs\n"},
    }));
    std::ostringstream out;
    Report report("Title", golden, out);
    report.line("  best: {} ms of {} runs", Value::measured("best_ms", 3.14159, "{:.2f}"), Value::exact("runs", 12));
    CHECK(out.str() == "Title\n" + expected);
    CHECK(report.json() == nlohmann::json{{"best_ms", 3.14159}, {"runs", 12}});
}

TEST_CASE("sections are numbered in order, each after a blank line", "[report]") {
    std::ostringstream out;
    Report report("Chapter 0 · Test", true, out);
    report.section("First");
    report.line("  a line with {} and {:.1f}", "text", 2.26);
    report.section("Second, of {} lines", Value::exact("lines", 4));
    CHECK(report.section_number() == 2);
    CHECK(out.str() == "Chapter 0 · Test\n\n1. First\n  a line with text and 2.3\n\n2. Second, of 4 lines\n");
}

TEST_CASE("keys with dots nest, quoted values add the printed text beside the number", "[report]") {
    std::ostringstream out;
    Report report("T", false, out);
    report.line("{} {}", Value::measured("measured.ratio", 2.4567, "{:.2f}x").quoted("{:.1f}"),
                Value::measured("measured.share", 0.5, "{:.2f}").quoted());
    report.record("measured.runs", 7);
    const nlohmann::json expected = {
        {"measured", {{"ratio", 2.4567}, {"ratio_text", "2.5"}, {"share", 0.5}, {"share_text", "0.50"}, {"runs", 7}}}};
    CHECK(report.json() == expected);
    CHECK(out.str() == "T\n2.46x 0.50\n");
}

TEST_CASE("a value this machine cannot give keeps its key, as null", "[report]") {
    std::ostringstream out;
    Report report("T", false, out);
    report.line("hand-off: {} ns", Value::unknown("handoff_ns", "needs 2 cpus").quoted());
    CHECK(out.str() == "T\nhand-off: needs 2 cpus ns\n");
    REQUIRE(report.json().contains("handoff_ns"));
    CHECK(report.json()["handoff_ns"].is_null());
    CHECK(report.json()["handoff_ns_text"] == "needs 2 cpus");
}

TEST_CASE("a quoted value takes the prose's rounding whatever its type", "[report]") {
    const auto [value, format, text] = GENERATE(table<nlohmann::json, std::string, std::string>({
        {nlohmann::json(2.26), "{:.1f}", "2.3"},
        {nlohmann::json(-3), "{:+d}", "-3"},
        {nlohmann::json(4096u), "{:#x}", "0x1000"},
        {nlohmann::json("ikj"), "order {}", "order ikj"},
    }));
    auto quoted = Value::exact_as("key", value, "shown").quoted(format);
    CHECK(quoted.quoted_text() == text);
    CHECK(Value::unknown("key", "-").quoted("{:.1f}").quoted_text() == "-");
}

TEST_CASE("a key written twice is refused, so no value is recorded twice", "[report]") {
    std::ostringstream out;
    Report report("T", false, out);
    report.record("a.b", 1);
    CHECK_THROWS_AS(report.record("a.b", 2), std::logic_error);
    CHECK_THROWS_AS(report.line("{}", Value::exact("a.b", 3)), std::logic_error);
    CHECK_THROWS_AS(report.record("a..c", 1), std::logic_error);
    CHECK_THROWS_AS(report.record("", 1), std::logic_error);
}

TEST_CASE("a table pads its columns to the text shown, placeholder included", "[report]") {
    const auto [golden, expected] = GENERATE(table<bool, std::string>({
        {true,
         "  order          ms\n"
         "  -----------------\n"
         "  ijk    <measured>\n"
         "  ikj    <measured>\n"},
        {false,
         "  order    ms\n"
         "  -----------\n"
         "  ijk    12.5\n"
         "  ikj     1.0\n"},
    }));
    std::ostringstream out;
    Report report("T", golden, out);
    auto times = report.table({"order", "ms"});
    times.row({"ijk", Value::measured("ms.ijk", 12.5, "{:.1f}")});
    times.row({"ikj", Value::measured("ms.ikj", 1.0, "{:.1f}")});
    times.print();
    CHECK(out.str() == "T\n" + expected);
    CHECK(report.json() == nlohmann::json{{"ms", {{"ijk", 12.5}, {"ikj", 1.0}}}});
}

TEST_CASE("a table of rows is recorded as an array of objects, unprinted fields included", "[report]") {
    std::ostringstream out;
    Report report("T", true, out);
    auto sweep = report.table_of_rows("measured.sweep", {"threads", "ns"});
    sweep.row({Value::exact("threads", 2), Value::measured("ns", 1.5, "{:.2f}")}, {{"op", "atomic"}});
    sweep.row({Value::exact("threads", 4), Value::unknown("ns", "-")}, {{"op", "atomic"}});
    sweep.print(0);
    const nlohmann::json expected = {
        {"measured",
         {{"sweep",
           {{{"threads", 2}, {"ns", 1.5}, {"op", "atomic"}}, {{"threads", 4}, {"ns", nullptr}, {"op", "atomic"}}}}}}};
    CHECK(report.json() == expected);
    CHECK(out.str() == "T\nthreads          ns\n-------------------\n2        <measured>\n4        <measured>\n");
}

TEST_CASE("a table row with the wrong number of cells is refused", "[report]") {
    std::ostringstream out;
    Report report("T", false, out);
    auto two_columns = report.table({"a", "b"});
    CHECK_THROWS_AS(two_columns.row({"only one"}), std::invalid_argument);
    CHECK_THROWS_AS(report.table({"a", "b"}, {cachebook::Table::Align::Left}), std::invalid_argument);
}

TEST_CASE("a plain table aligns left or right as asked and measures width in characters, not bytes", "[report]") {
    cachebook::Table table({"name", "value"}, {cachebook::Table::Align::Right, cachebook::Table::Align::Left});
    table.row({"λ", "x"}).row({"ab", "long"});
    CHECK(table.render(1) ==
          " name  value\n"
          " -----------\n"
          "    λ  x\n"
          "   ab  long\n");
}

TEST_CASE("the saved JSON lists where every exact value is, measured and unknown ones left out", "[report]") {
    std::ostringstream out;
    Report report("T", false, out);
    report.line("{} {} {}", Value::exact("n", 64), Value::measured("ms", 1.5, "{}"), Value::unknown("l3", "unknown"));
    auto rows = report.table_of_rows("orders", {"order", "misses", "ms"});
    rows.row({Value::exact("order", std::string("ijk")), Value::exact("misses", 9), Value::measured("ms", 2.0, "{}")});
    rows.row({Value::exact("order", std::string("ikj")), Value::exact("misses", 3), Value::measured("ms", 1.0, "{}")});
    report.record("raw_series", nlohmann::json::array({1, 2, 3}));  // raw records are not claimed exact
    const std::string path = std::filesystem::temp_directory_path() / "cachebook-report-exact-keys.json";
    report.save(path);
    std::ifstream in(path);
    const nlohmann::json saved = nlohmann::json::parse(in);
    CHECK(saved.at("exact_keys") ==
          nlohmann::json::array({"n", "orders[0].order", "orders[0].misses", "orders[1].order", "orders[1].misses"}));
    CHECK(saved.at("conditions").is_array());
    CHECK(saved.at("n") == 64);
}

namespace {
// One chapter-like output: a section, a line with measured and exact values, a masked part, a table.
void write_sample(Report& report) {
    report.section("Measured at {}", Value::exact("n", 512));
    report.line("  {} took {} ms", Value::partly_measured("threads ", "2", ":"),
                Value::measured("ms", 12.345, "{:.1f}"));
    auto table = report.table({"order", "ms"});
    table.row({"ijk", Value::measured("ijk_ms", 1234.5, "{:.1f}")});
    table.row({Value::partly_measured("7 OpenBLAS, threads: ", "16", ""), Value::exact("rows", 2)});
    table.print();
}
}  // namespace

TEST_CASE("a measured run writes to CACHEBOOK_GOLDEN_COPY what golden mode prints, so one run serves both",
          "[report]") {
    const auto copy = std::filesystem::temp_directory_path() / "cachebook_test_golden_copy.txt";
    std::ostringstream golden_out, measured_out;
    {
        Report golden("T", true, golden_out);
        write_sample(golden);
    }
    ::setenv("CACHEBOOK_GOLDEN_COPY", copy.c_str(), 1);
    {
        Report measured("T", false, measured_out);
        CHECK(std::getenv("CACHEBOOK_GOLDEN_COPY") == nullptr);  // a child of the run writes no copy over it
        write_sample(measured);
    }
    std::ifstream in(copy);
    const std::string copied((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(copy);
    CHECK(copied == golden_out.str());
    CHECK(golden_out.str().find("threads <measured>:") != std::string::npos);
    CHECK(measured_out.str().find("threads 2: took 12.3 ms") != std::string::npos);
    CHECK(measured_out.str().find("7 OpenBLAS, threads: 16") != std::string::npos);
    CHECK(measured_out.str() != copied);
}
