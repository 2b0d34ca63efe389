// Chapter 2's output, one function per numbered section, in the order printed: each figure a Value
// made once, with its JSON key. main.cpp calls them; the lesson is loop_orders.cpp, the lab lab.cpp.
#include "sections.hpp"

#include <fmt/format.h>

#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch02 {
namespace {

using cachebook::Report;
using cachebook::Value;

const std::vector<std::string> kTrapHeaders = {"leading dim",  "row bytes",           "column's sets",
                                               "room (lines)", "misses, columns 0-8", "total"};

// The trap's table, one JSON row object per walk under `array_key`; `measured` for this machine's cache.
void trap_table(Report& report, const std::vector<ColumnWalk>& walks, const std::string& array_key, bool measured) {
    const auto cell = [measured](const char* key, const auto& value,
                                 fmt::format_string<const decltype(value)&> format) {
        return measured ? Value::measured(key, value, format) : Value::exact(key, value, format);
    };
    auto table = report.table_of_rows(array_key, kTrapHeaders);
    for (const auto& walk : walks) {
        const auto misses = first_columns(walk.misses_per_column, 9);
        table.row({cell("leading", walk.leading, "{}"), cell("row_bytes", walk.leading * walk.elem, "{}"),
                   cell("column_sets", walk.column.sets, "{}"), cell("column_capacity", walk.column.capacity, "{}"),
                   measured ? Value::measured_as("misses_per_column", walk.misses_per_column, misses)
                            : Value::exact_as("misses_per_column", walk.misses_per_column, misses),
                   cell("total", walk.total, "{}")},
                  {{"rows", walk.rows}, {"cols_walked", walk.cols_walked}, {"column_lines", walk.column.lines}});
    }
    table.print();
}

// The trap's table in the same shape when the machine gives no L1d geometry: the leading
// dimensions, and "unknown" for what the cache would decide.
void unknown_trap_table(Report& report, const std::vector<ColumnWalk>& like) {
    auto table = report.table(kTrapHeaders);
    const auto unknown = Value::unknown("", "unknown");
    for (const auto& walk : like)
        table.row({Value::measured("", walk.leading), Value::measured("", walk.leading * walk.elem), unknown, unknown,
                   unknown, unknown});
    table.print();
    report.record("trap_machine.walks", nullptr);
}

// Whether two sums of the same numbers agree, as the line prints it.
Value equal_sums(std::string key, bool equal) {
    return Value::exact_as(std::move(key), equal, equal ? "equal" : "DIFFERENT");
}

}  // namespace

void arithmetic_section(Report& report) {
    report.section("Misses per element, 64-byte lines, when the cache cannot keep a column's lines");
    auto table = report.table({"element", "bytes", "per line (B)", "row walk (ij): 1/B", "column walk (ji)"});
    for (auto [name, bytes] : {std::pair{"double", 8}, std::pair{"int", 4}}) {
        const auto misses = per_element(64, static_cast<std::size_t>(bytes));
        const std::string key = fmt::format("arith.{}.", name);
        table.row({name, Value::exact(key + "bytes", bytes), Value::exact(key + "per_line", misses.per_line),
                   Value::exact(key + "row", misses.row, "{:g}"), Value::exact(key + "column", misses.column, "{:g}")});
    }
    table.print();
}

namespace {

// The same reads in every 4 KiB LRU cache from direct-mapped to fully associative: the notes
// give only the size, and this shows which geometry reproduces their counts.
void geometry_section(Report& report) {
    report.blank_line();
    report.line("  the same reads in every 4 KiB LRU cache of 64-byte lines (the course notes give only the size);");
    report.line("  row/column misses for each n x n matrix:");
    std::vector<std::string> headers = {"ways", "sets"};
    for (const auto& row : notes_matrix_reads()) headers.push_back(fmt::format("{0} x {0}", row.n));
    headers.push_back("as in the notes");
    auto table = report.table_of_rows("geometries", headers);
    for (const auto& trial : geometry_trials()) {
        std::vector<Value> cells = {Value::exact("ways", trial.cache.ways), Value::exact("sets", trial.cache.sets)};
        const auto notes = notes_matrix_reads();
        for (std::size_t k = 0; k < trial.misses.size(); ++k) {
            const auto& m = trial.misses[k];
            cells.push_back(Value::exact_as(fmt::format("n{}", notes[k].n), {{"row", m.row}, {"column", m.column}},
                                            fmt::format("{}/{}", m.row, m.column)));
        }
        cells.push_back(Value::exact_as("matches_notes", trial.matches_notes, trial.matches_notes ? "yes" : "no"));
        table.row(cells);
    }
    table.print();
}

// Why each of the notes' walks misses in their cache: the three kinds, and OPT beside LRU.
void kinds_section(Report& report, const cachebook::CacheConfig& cache) {
    report.blank_line();
    report.line("  why each walk misses in the notes' cache: compulsory, capacity and conflict misses, and the");
    report.line("  fewest misses any replacement could take (Belady's OPT), beside LRU's:");
    auto table = report.table_of_rows(
        "miss_kinds", {"n", "walk", "LRU misses", "compulsory", "fully assoc. LRU", "capacity", "conflict", "OPT"});
    for (const auto& w : walk_kinds(cache))
        table.row({Value::exact("n", w.n), Value::exact("walk", std::string(w.by_columns ? "column" : "row")),
                   Value::exact("misses", w.kinds.misses), Value::exact("compulsory", w.kinds.compulsory),
                   Value::exact("fully_associative", w.fully_associative), Value::exact("capacity", w.kinds.capacity),
                   Value::exact("conflict", w.kinds.conflict), Value::exact("optimal", w.optimal)});
    table.print();
}

}  // namespace

void matrix_read_section(Report& report) {
    const auto cache = matrix_read_cache();
    report.section("Each cell of a double n x n matrix read once, row by row or column by column");
    report.line("  cache: {}", cache.describe());
    report.record("matrix_reads_cache", cache_json(cache));
    auto table = report.table_of_rows("matrix_reads", {"n", "bytes", "fits", "column's lines", "its sets",
                                                       "room (lines)", "row misses", "column misses", "column / row"});
    for (const auto& row : matrix_read_table(cache))
        table.row({Value::exact("n", row.n), Value::exact("matrix_bytes", row.matrix_bytes),
                   Value::exact_as("fits", row.fits, row.fits ? "yes" : "no"),
                   Value::exact("column_lines", row.column.lines), Value::exact("column_sets", row.column.sets),
                   Value::exact("column_capacity", row.column.capacity), Value::exact("row", row.misses.row),
                   Value::exact("column", row.misses.column),
                   Value::exact("ratio", row.misses.ratio(), "{:.2f}").quoted("{:.1f}")});
    table.print();
    geometry_section(report);
    kinds_section(report, cache);
}

namespace {

// The trap in this machine's L1d, or a table of unknowns in the same shape.
void machine_trap(Report& report, const std::vector<ColumnWalk>& like) {
    const auto& machine = cachebook::machine();
    const auto my_l1 = cache_geometry(machine.data_cache(1));
    report.blank_line();
    report.line("  the same walk in this machine's L1d: {}",
                my_l1 ? Value::measured("trap_machine.cache", my_l1->describe())
                      : Value::unknown("trap_machine.cache", "unknown"));
    const auto source = my_l1 ? machine.data_cache(1)->source : cachebook::Source::unknown;
    report.line("  where it comes from: {}",
                Value::measured_as(
                    "trap_machine.source", cachebook::source_name(source),
                    my_l1 ? cachebook::source_name(source) : machine.why_unknown("the L1d's size, ways or line size")));
    if (my_l1)
        trap_table(report, power_of_two_trap(*my_l1), "trap_machine.walks", true);
    else
        unknown_trap_table(report, like);
}

}  // namespace

void trap_section(Report& report) {
    const auto l1 = l1_32kib();
    const auto trap = power_of_two_trap(l1);
    report.section("The power-of-two trap: the first 64 columns of double a[256][256], column by column");
    report.line("  cache: {} (the course notes' L1)", l1.describe());
    report.record("trap_cache", cache_json(l1));
    report.record("trap_accesses", trap.front().rows * trap.front().cols_walked);
    trap_table(report, trap, "trap", false);
    machine_trap(report, trap);
}

namespace {

// The section's last lines: where a column of the summed array falls in this machine's L1d and L2.
// Its lines are counted with the machine's line size, or the course notes' 64 bytes when it gives none.
void footprint_lines(Report& report, std::size_t n) {
    const auto& machine = cachebook::machine();
    const auto l1 = cache_geometry(machine.data_cache(1));
    const auto l2 = cache_geometry(machine.data_cache(2));
    const auto in_l1 = column_footprint(l1 ? *l1 : l1_32kib(), n, n, sizeof(int));
    // Without an L2 the footprint stays empty and its cells print unknown.
    const auto in_l2 = l2 ? column_footprint(*l2, n, n, sizeof(int)) : ColumnFootprint{};
    // A cache the machine does not describe is recorded as null as a whole (the prose tests for it).
    if (!l1) report.record("sum.l1", nullptr);
    if (!l2) report.record("sum.l2", nullptr);
    const auto count = [](const char* key, bool known, std::size_t value) {
        return known ? Value::measured(key, value) : Value::unknown("", "unknown");
    };
    report.line("  why: a column spans {} lines;", Value::exact("sum.column_lines", in_l1.lines));
    report.line("    in this machine's L1d they fall in {} of {} sets (room for {} lines),",
                count("sum.l1.column_sets", l1.has_value(), in_l1.sets),
                count("sum.l1.sets", l1.has_value(), l1 ? l1->sets : 0),
                count("sum.l1.room", l1.has_value(), in_l1.capacity));
    report.line("    in its L2 by virtual address in {} of {} sets (room for {}),",
                count("sum.l2.column_sets", l2.has_value(), in_l2.sets),
                count("sum.l2.sets", l2.has_value(), l2 ? l2->sets : 0),
                count("sum.l2.room", l2.has_value(), in_l2.capacity));
    // A physically indexed L2 takes the bits above the page from where the pages lie.
    const std::size_t physical = l2 ? physical_sets_bound(*l2, n, n, sizeof(int)) : 0;
    report.line("    by physical address, on pages of {} B, in at most {} sets (room for {})",
                Value::exact("sum.page_bytes", kPageBytes), count("sum.l2.physical_sets", l2.has_value(), physical),
                count("sum.l2.physical_room", l2.has_value(), l2 ? physical * l2->ways : 0));
    const auto l2_source = l2 ? machine.data_cache(2)->source : cachebook::Source::unknown;
    report.line("  where the L2 comes from: {}",
                Value::measured_as(
                    "sum.l2_source", cachebook::source_name(l2_source),
                    l2 ? cachebook::source_name(l2_source) : machine.why_unknown("the L2's size, ways or line size")));
}

}  // namespace

void sum_section(Report& report, const Options& options) {
    const auto size = static_cast<std::size_t>(options.n);
    report.section("Measured: int a[{0}][{0}] ({1} MiB) summed row by row and column by column",
                   Value::exact("sum.n", size), Value::exact("sum.mib", size * size * sizeof(int) >> 20));
    // The prediction comes first: the profile and the model, before either sum is timed.
    const auto price = price_sums(size);
    report.record("profile", cachebook::profile_json(price.profile));
    const auto timing = time_sums(size, static_cast<int>(options.runs));
    report.line("  sums: row {}, column {} ({})", Value::exact("sum.row_sum", timing.row_sum),
                Value::exact("sum.column_sum", timing.column_sum),
                equal_sums("sum.sums_equal", timing.row_sum == timing.column_sum));
    report.line("  row-wise:    {} ms (minimum of {} runs)",
                Value::measured("sum.row_ms", timing.row.min() * 1e3, "{:.2f}"),
                Value::exact("sum.row_runs", timing.row.runs.size()));
    report.line("  column-wise: {} ms (minimum of {} runs)",
                Value::measured("sum.column_ms", timing.column.min() * 1e3, "{:.2f}"),
                Value::exact("sum.runs", options.runs));
    // The ratio of the unrounded minima: the two times above, rounded, may give a slightly different one.
    report.line("  column / row = {} (of the unrounded times)",
                Value::measured("sum.ratio", timing.ratio(), "{:.1f}").quoted());
    footprint_lines(report, size);
    report.line("  priced from this machine's profile before the timing (the appendix Priced):");
    report.line("    {}", Value::measured("sum.priced_levels", cachebook::levels_text(price.machine)));
    for (const auto& claim : sum_priced(price, timing))
        cachebook::report_priced(report, claim, claim.key == "column_over_row" ? "{:.1f}x" : "{:.2f} ns");
    cachebook::report_claim(report, "column_sum", "column / row",
                            sum_claim(timing, cache_geometry(cachebook::machine().data_cache(2))));
}

namespace {

// Where a column of the conflict's array falls in this machine's L1d, at one stride.
void conflict_sets_line(Report& report, const std::optional<cachebook::CacheConfig>& l1, std::size_t stride,
                        const std::string& key, const char* label) {
    const auto row_bytes = Value::exact(key + "_stride", stride);
    if (!l1) {
        report.record(key, nullptr);
        const auto unknown = Value::unknown("", "unknown");
        report.line("  rows {} B apart ({}): L1d sets {} ({} of {} sets, room for {} lines)", row_bytes, label, unknown,
                    unknown, unknown, unknown);
        return;
    }
    const auto column = cachebook::block_sets(*l1, 0, kConflictRows, sizeof(int), stride);
    report.line("  rows {} B apart ({}): L1d sets {} ({} of {} sets, room for {} lines)", row_bytes, label,
                Value::measured(key + ".set_list", cachebook::set_list(column.sets)),
                Value::measured(key + ".sets", column.sets.size()), Value::measured(key + ".l1_sets", l1->sets),
                Value::measured(key + ".room", column.room));
}

}  // namespace

void conflict_section(Report& report, const Options& options) {
    const auto& machine = cachebook::machine();
    const auto l1 = cache_geometry(machine.data_cache(1));
    report.section(
        "Measured: one conflict, {} rows of int summed column by column, rows a page apart or a page and a "
        "line",
        Value::exact("conflict.rows", kConflictRows));
    report.record("conflict.l1_cache", l1 ? cache_json(*l1) : nlohmann::json(nullptr));
    report.line("  this machine's L1d: {}; a column spans {} lines",
                l1 ? Value::measured("conflict.l1", l1->describe()) : Value::unknown("conflict.l1", "unknown"),
                Value::exact("conflict.column_lines", kConflictRows));
    if (l1)
        report.line("  sets x line size = {} B (the page is {} B)",
                    Value::measured("conflict.l1_way_bytes", l1->sets * l1->line_bytes),
                    Value::exact("conflict.stride", kConflictStride));
    else
        report.line("  sets x line size = {} B (the page is {} B)", Value::unknown("conflict.l1_way_bytes", "unknown"),
                    Value::exact("conflict.stride", kConflictStride));
    conflict_sets_line(report, l1, kConflictStride, "conflict.power", "a power of two");
    conflict_sets_line(report, l1, kConflictStride + kConflictPad, "conflict.padded", "one line more");
    const int passes = 40;
    const auto price = price_conflict();  // priced first, with the profile the sums were priced with
    const auto run = time_conflict(static_cast<int>(options.conflict_runs), passes);
    report.line("  the first {} columns, {} passes a run: sums {}", Value::exact("conflict.cols", kConflictCols),
                Value::exact("conflict.passes", passes),
                equal_sums("conflict.sums_equal", run.power_sum == run.padded_sum));
    report.line("  a page apart:        {} ms (minimum of {} runs)",
                Value::measured("conflict.power_ms", run.power_min() * 1e3, "{:.2f}"),
                Value::exact("conflict.runs", options.conflict_runs));
    report.line("  a page and a line:   {} ms",
                Value::measured("conflict.padded_ms", run.padded_min() * 1e3, "{:.2f}"));
    report.line("  priced from this machine's profile before the timing (the appendix Priced):");
    for (const auto& claim : conflict_priced(price, run, passes))
        cachebook::report_priced(report, claim, claim.key.ends_with("over_padded") ? "{:.2f}x" : "{:.2f} ns");
    cachebook::report_claim(report, "conflict", "page stride / padded stride", conflict_claim(run, l1));
}

}  // namespace ch02
