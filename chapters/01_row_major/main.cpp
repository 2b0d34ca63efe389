// ch01_row_major: prints what chapter 1 shows. Logic lives in row_major.cpp.
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "row_major.hpp"

namespace {

std::string cells(const std::vector<cachebook::Cell>& order, std::size_t count) {
    std::string s;
    for (std::size_t k = 0; k < order.size() && k < count; ++k)
        s += fmt::format("{}({},{})", k ? " " : "", order[k].first, order[k].second);
    return s;
}

template <class T>
std::vector<T> head(const std::vector<T>& v, std::size_t count) {
    return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(count, v.size()))};
}

void print_grid(const ch01::StepperRun& run) {
    fmt::print("  {} walk, cache of {} lines: {} misses, {} hits\n", run.walk, run.cache_lines, run.misses, run.hits);
    std::string header = "          j";
    for (std::size_t j = 0; j < run.cols; ++j) header += fmt::format(" {}", j);
    fmt::print("{}\n", header);
    const auto grid = ch01::stepper_grid(run);
    for (std::size_t i = 0; i < run.rows; ++i) {
        std::string row;
        for (char c : grid[i]) row += fmt::format(" {}", c);
        fmt::print("    i = {}  {}   lines L{}-L{}\n", i, row, i * run.cols * run.elem / run.line_bytes,
                   ((i + 1) * run.cols * run.elem - 1) / run.line_bytes);
    }
    fmt::print("\n");
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch01_row_major", [&] {
        cachebook::Cli cli("ch01_row_major", "Chapter 1: row-major addresses, lines and the traces of two walks");
        std::int64_t n = 4;
        std::int64_t lines = 0;
        cli.add_int("--n", n, "Order of the n x n float64 matrix whose traces are printed", 1, 4096);
        cli.add_int("--lines", lines, "Stepper cache size in lines (0: show 2 and 4)", 0, 32);
        if (auto status = cli.parse(argc, argv)) return *status;
        nlohmann::json out;

        // 1. R1
        const ch01::AddressExample ex = ch01::address_example(64);
        fmt::print("Chapter 1 · Row-major addresses\n\n");
        fmt::print("1. Where a[i][j] lives\n");
        fmt::print("  double a[{}][{}] at base 0x{:x}; {}-byte elements, {}-byte lines\n", ex.shape.rows, ex.shape.cols,
                   ex.shape.base, ex.shape.elem, ex.line_bytes);
        fmt::print("  &a[2][5] = 0x{:x} + (2 * {} + 5) * {} = 0x{:X} = {}\n", ex.shape.base, ex.shape.cols,
                   ex.shape.elem, ex.at_2_5.address, ex.at_2_5.address);
        fmt::print("           line {} = {} / {}, byte {} of that line\n", ex.at_2_5.line, ex.at_2_5.address,
                   ex.line_bytes, ex.at_2_5.offset);
        fmt::print("  &a[2][6] = 0x{:X}: line {}, byte {} (the same line)\n", ex.at_2_6.address, ex.at_2_6.line,
                   ex.at_2_6.offset);
        fmt::print("  &a[3][5] = 0x{:X}: {} bytes on, {:.1f} lines later (line {})\n", ex.at_3_5.address,
                   ex.row_stride_bytes, ex.lines_between_rows, ex.at_3_5.line);
        fmt::print("  column-major (Fortran, MATLAB, Julia): &a[2][5] = 0x{:x} + (5 * {} + 2) * {} = 0x{:X}\n\n",
                   ex.shape.base, ex.shape.rows, ex.shape.elem, ex.at_2_5_column_major.address);
        out["r1"] = {{"base", ex.shape.base},
                     {"rows", ex.shape.rows},
                     {"cols", ex.shape.cols},
                     {"elem", ex.shape.elem},
                     {"line_bytes", ex.line_bytes},
                     {"a_2_5", ch01::to_json(ex.at_2_5)},
                     {"a_2_5_hex", fmt::format("0x{:X}", ex.at_2_5.address)},
                     {"a_2_6", ch01::to_json(ex.at_2_6)},
                     {"a_3_5", ch01::to_json(ex.at_3_5)},
                     {"row_stride_bytes", ex.row_stride_bytes},
                     {"lines_between_rows", ex.lines_between_rows},
                     {"a_2_5_column_major", ch01::to_json(ex.at_2_5_column_major)},
                     {"a_2_5_column_major_hex", fmt::format("0x{:X}", ex.at_2_5_column_major.address)}};

        // 2. R2
        const auto size = static_cast<std::size_t>(n);
        const auto row = cachebook::row_major_trace(size);
        const auto col = cachebook::col_major_trace(size);
        const auto plain = cachebook::visit_order(size);
        const auto tiled = cachebook::visit_order(size, 2);
        fmt::print("2. The addresses two walks touch (float64, {} x {}, base 0)\n", size, size);
        fmt::print("  row order, first six:    [{}]\n", fmt::join(head(row, 6), ", "));
        fmt::print("  column order, first six: [{}]\n", fmt::join(head(col, 6), ", "));
        fmt::print("  visit order, plain:  {}\n", cells(plain, 8));
        fmt::print("  visit order, tile 2: {}\n\n", cells(tiled, 8));
        nlohmann::json visit_plain = nlohmann::json::array(), visit_tiled = nlohmann::json::array();
        for (const auto& c : head(plain, 8)) visit_plain.push_back({c.first, c.second});
        for (const auto& c : head(tiled, 8)) visit_tiled.push_back({c.first, c.second});
        out["r2"] = {{"n", size},
                     {"row_first6", head(row, 6)},
                     {"col_first6", head(col, 6)},
                     {"visit_plain_first8", visit_plain},
                     {"visit_tile2_first8", visit_tiled}};

        // 3. The stepper.
        fmt::print("3. The stepper: int a[4][8], 16-byte lines (4 ints), fully associative LRU cache\n");
        fmt::print("   M = miss, H = hit; each row of the array fills two lines\n\n");
        std::vector<std::size_t> capacities = lines == 0 ? std::vector<std::size_t>{2, 4}
                                                         : std::vector<std::size_t>{static_cast<std::size_t>(lines)};
        nlohmann::json stepper = nlohmann::json::array();
        for (std::size_t cap : capacities) {
            for (bool by_rows : {true, false}) {
                const auto run = ch01::run_stepper(by_rows, cap);
                print_grid(run);
                stepper.push_back(ch01::to_json(run));
            }
        }
        out["stepper"] = stepper;

        // 4. The reader's own machine: the same three lines whatever it reports.
        const auto& machine = cachebook::machine();
        const auto line = machine.line_bytes();
        const std::string source = cachebook::source_name(machine.line_source());
        fmt::print("4. On this machine\n");
        fmt::print("  L1d line size: {}\n", cachebook::measured("{}", line ? fmt::format("{} bytes", *line) : "unknown"));
        std::optional<ch01::AddressExample> mine;
        if (line) mine = ch01::address_example(*line);
        fmt::print("  &a[2][5] with this line size: {}\n",
                   cachebook::measured("{}", mine ? fmt::format("line {}, byte {}", mine->at_2_5.line, mine->at_2_5.offset)
                                                  : "unknown"));
        fmt::print("  where the line size comes from: {}\n",
                   cachebook::measured("{}", line ? source : machine.why_unknown("the line size")));
        out["machine"] = {{"line_bytes", line ? nlohmann::json(*line) : nlohmann::json()},
                          {"a_2_5", mine ? ch01::to_json(mine->at_2_5) : nlohmann::json()},
                          {"source", source},
                          {"detected", cachebook::machine_json(machine)}};

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
