// ch01_row_major: prints what chapter 1 shows, one function per numbered section.
// The lesson is row_major.cpp, the lab lab.cpp; each result is written once, through cachebook::Report.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <optional>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/report.hpp"
#include "lab.hpp"

namespace {

using cachebook::Report;
using cachebook::Value;

struct Options {
    std::int64_t n = 4;
    std::int64_t lines = 0;  // stepper cache size; 0: show 2 and 4
};

// Parses the options; an exit status when the program should stop now.
std::optional<int> parse(cachebook::Cli& cli, Options& options, int argc, char** argv) {
    cli.add_int("--n", options.n, "Order of the n x n double matrix whose traces are printed", 1, 4096);
    cli.add_int("--lines", options.lines, "Stepper cache size in lines (0: show 2 and 4)", 0, 32);
    return cli.parse(argc, argv);
}

void address_section(Report& report) {
    const ch01::AddressExample ex = ch01::address_example(64);
    const auto exact = [](const std::string& key, const auto& value) { return Value::exact("address." + key, value); };
    report.section("Where a[i][j] lives");
    report.line("  double a[{}][{}] at base 0x{}; {}-byte elements, {}-byte lines", exact("rows", ex.shape.rows),
                exact("cols", ex.shape.cols), Value::exact("address.base", ex.shape.base, "{:x}"),
                exact("elem", ex.shape.elem), exact("line_bytes", ex.line_bytes));
    report.line("  &a[2][5] = 0x{:x} + (2 * {} + 5) * {} = {} = {}", ex.shape.base, ex.shape.cols, ex.shape.elem,
                exact("a_2_5_hex", fmt::format("0x{:X}", ex.at_2_5.address)),
                exact("a_2_5.address", ex.at_2_5.address));
    report.line("           line {} = {} / {}, byte {} of that line", exact("a_2_5.line", ex.at_2_5.line),
                ex.at_2_5.address, ex.line_bytes, exact("a_2_5.offset", ex.at_2_5.offset));
    report.line("  &a[2][6] = 0x{}: line {}, byte {} (the same line)",
                Value::exact("address.a_2_6.address", ex.at_2_6.address, "{:X}"), exact("a_2_6.line", ex.at_2_6.line),
                exact("a_2_6.offset", ex.at_2_6.offset));
    report.line("  &a[3][5] = 0x{}: {} bytes on, {} lines later (line {})",
                Value::exact("address.a_3_5.address", ex.at_3_5.address, "{:X}"),
                exact("row_stride_bytes", ex.row_stride_bytes),
                Value::exact("address.lines_between_rows", ex.lines_between_rows, "{:.1f}"),
                exact("a_3_5.line", ex.at_3_5.line));
    report.record("address.a_3_5.offset", ex.at_3_5.offset);
    const auto& column_major = ex.at_2_5_column_major;
    report.line("  column-major (Fortran, MATLAB, Julia): &a[2][5] = 0x{:x} + (5 * {} + 2) * {} = {}", ex.shape.base,
                ex.shape.rows, ex.shape.elem,
                exact("a_2_5_column_major_hex", fmt::format("0x{:X}", column_major.address)));
    report.record("address.a_2_5_column_major", ch01::to_json(column_major));
}

void walks_section(Report& report, const Options& options) {
    const auto size = static_cast<std::size_t>(options.n);
    const auto row = ch01::first_addresses(cachebook::row_major_trace(size), 6);
    const auto col = ch01::first_addresses(cachebook::col_major_trace(size), 6);
    const auto plain = cachebook::visit_order(size);
    const auto tiled = cachebook::visit_order(size, 2);
    report.section("The addresses two walks touch (double, {0} x {0}, base 0)", Value::exact("walks.n", size));
    report.line("  row order, first six:    {}", Value::exact("walks.row_first6", row, "{}"));
    report.line("  column order, first six: {}", Value::exact("walks.col_first6", col, "{}"));
    report.line("  visit order, plain:  {}",
                Value::exact_as("walks.visit_plain_first8", ch01::cells_json(plain, 8), ch01::cells_text(plain, 8)));
    report.line("  visit order, tile 2: {}",
                Value::exact_as("walks.visit_tile2_first8", ch01::cells_json(tiled, 8), ch01::cells_text(tiled, 8)));
}

void print_grid(Report& report, const ch01::StepperRun& run) {
    report.line("  {} walk, cache of {} lines: {} misses, {} hits", run.walk, run.cache_lines, run.misses, run.hits);
    std::string header = "          j";
    for (std::size_t j = 0; j < run.cols; ++j) header += fmt::format(" {}", j);
    report.line("{}", header);
    const auto grid = ch01::stepper_grid(run);
    for (std::size_t i = 0; i < run.rows; ++i) {
        std::string marks;
        for (char mark : grid[i]) marks += fmt::format(" {}", mark);
        report.line("    i = {}  {}   lines L{}-L{}", i, marks, i * run.cols * run.elem / run.line_bytes,
                    ((i + 1) * run.cols * run.elem - 1) / run.line_bytes);
    }
}

void stepper_section(Report& report, const Options& options) {
    report.section("The stepper: int a[4][8], 16-byte lines (4 ints), fully associative LRU cache");
    report.line("   M = miss, H = hit; each row of the array fills two lines");
    const std::vector<std::size_t> capacities = options.lines == 0
                                                    ? std::vector<std::size_t>{2, 4}
                                                    : std::vector<std::size_t>{static_cast<std::size_t>(options.lines)};
    nlohmann::json runs = nlohmann::json::array();
    for (std::size_t capacity : capacities) {
        for (bool by_rows : {true, false}) {
            const auto run = ch01::run_stepper(by_rows, capacity);
            report.blank_line();
            print_grid(report, run);
            runs.push_back(ch01::to_json(run));
        }
    }
    report.record("stepper", runs);
}

// The reader's own machine: the same three lines whatever it reports.
void machine_section(Report& report) {
    const auto& machine = cachebook::machine();
    const auto line = machine.line_bytes();
    const std::string source = cachebook::source_name(machine.line_source());
    report.section("On this machine");
    report.line("  L1d line size: {}",
                line ? Value::measured_as("machine.line_bytes", *line, fmt::format("{} bytes", *line))
                     : Value::unknown("machine.line_bytes", "unknown"));
    const auto mine = line ? std::optional(ch01::address_example(*line)) : std::nullopt;
    report.line("  &a[2][5] with this line size: {}",
                mine ? Value::measured_as("machine.a_2_5", ch01::to_json(mine->at_2_5),
                                          fmt::format("line {}, byte {}", mine->at_2_5.line, mine->at_2_5.offset))
                     : Value::unknown("machine.a_2_5", "unknown"));
    report.line("  where the line size comes from: {}",
                Value::measured_as("machine.source", source, line ? source : machine.why_unknown("the line size")));
    report.record("machine.detected", cachebook::machine_json(machine));
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch01_row_major", [&] {
        cachebook::Cli cli("ch01_row_major", "Chapter 1: row-major addresses, lines and the traces of two walks");
        Options options;
        if (auto status = parse(cli, options, argc, argv)) return *status;
        Report report("Chapter 1 · Row-major addresses");
        address_section(report);
        walks_section(report, options);
        stepper_section(report, options);
        machine_section(report);
        report.save(cli.json_path());
        return 0;
    });
}
