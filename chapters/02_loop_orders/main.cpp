// ch02_loop_orders: prints what chapter 2 shows. Logic lives in loop_orders.cpp.
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "loop_orders.hpp"

namespace {

std::string first_columns(const std::vector<std::uint64_t>& misses, std::size_t count) {
    std::string s;
    for (std::size_t j = 0; j < misses.size() && j < count; ++j) s += fmt::format("{}{}", j ? " " : "", misses[j]);
    return s;
}

double per_access(const ch02::ColumnWalk& w) {
    return static_cast<double>(w.total) / static_cast<double>(w.rows * w.cols_walked);
}

// The trap's table; `machine` sends every number through measured().
void print_trap(const std::vector<ch02::ColumnWalk>& walks, bool machine) {
    auto m = [&](auto v, const char* f = "{}") {
        return machine ? cachebook::measured(fmt::runtime(f), v) : fmt::format(fmt::runtime(f), v);
    };
    cachebook::Table t({"leading dim", "row bytes", "column's sets", "room (lines)", "misses, columns 0-8", "total",
                        "per access"});
    for (const auto& w : walks)
        t.row({m(w.leading), m(w.leading * w.elem), m(w.column.sets), m(w.column.capacity),
               machine ? cachebook::measured("{}", first_columns(w.misses_per_column, 9))
                       : first_columns(w.misses_per_column, 9),
               m(w.total), m(per_access(w), "{:.3f}")});
    fmt::print("{}", t.render(2));
}

// The trap's table in the same shape when the machine gives no L1d geometry: the leading
// dimensions, and "unknown" for what the cache would decide.
void print_unknown_trap(const std::vector<ch02::ColumnWalk>& like) {
    cachebook::Table t({"leading dim", "row bytes", "column's sets", "room (lines)", "misses, columns 0-8", "total",
                        "per access"});
    const auto unknown = cachebook::measured("unknown");
    for (const auto& w : like)
        t.row({cachebook::measured("{}", w.leading), cachebook::measured("{}", w.leading * w.elem), unknown, unknown,
               unknown, unknown, unknown});
    fmt::print("{}", t.render(2));
}

// Section 4's last line: where a column of the summed array falls in this machine's L1d and L2.
// Its lines are counted with the machine's line size, or the seed's 64 bytes when it gives none.
void print_why(const cachebook::Machine& machine, const std::optional<cachebook::CacheConfig>& l1, std::size_t n,
               nlohmann::json& out) {
    const auto l2 = ch02::cache_geometry(machine.data_cache(2));
    const auto f1 = ch02::column_footprint(l1 ? *l1 : ch02::seed_l1(), n, n, sizeof(int));
    std::optional<ch02::ColumnFootprint> f2;
    if (l2) f2 = ch02::column_footprint(*l2, n, n, sizeof(int));
    auto m = [](bool known, std::size_t v) { return cachebook::measured("{}", known ? fmt::format("{}", v) : "unknown"); };
    fmt::print("  why: a column spans {} lines; in this machine's L1d they fall in {} of {} sets "
               "(room for {} lines), in its L2 in {} of {} sets (room for {})\n",
               f1.lines, m(l1.has_value(), f1.sets), m(l1.has_value(), l1 ? l1->sets : 0),
               m(l1.has_value(), f1.capacity), m(f2.has_value(), f2 ? f2->sets : 0), m(l2.has_value(), l2 ? l2->sets : 0),
               m(f2.has_value(), f2 ? f2->capacity : 0));
    fmt::print("  where the L2 comes from: {}\n",
               cachebook::measured("{}", l2 ? cachebook::source_name(machine.data_cache(2)->source)
                                            : machine.why_unknown("the L2's size, ways or line size")));
    out["column_lines"] = f1.lines;
    out["l1"] = nullptr;
    out["l2"] = nullptr;
    if (l1) out["l1"] = {{"sets", l1->sets}, {"column_sets", f1.sets}, {"room", f1.capacity}};
    if (l2 && f2) out["l2"] = {{"sets", l2->sets}, {"column_sets", f2->sets}, {"room", f2->capacity}};
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch02_loop_orders", [&] {
        cachebook::Cli cli("ch02_loop_orders", "Chapter 2: row or column; the miss arithmetic, R3, the power-of-two "
                                               "trap and the measured sum of an int array both ways");
        std::int64_t n = 2048;
        std::int64_t runs = 7;
        cli.add_int("--n", n, "Order of the n x n int array summed both ways", 64, 32768);
        cli.add_int("--runs", runs, "Timed runs of each sum (the minimum is reported)", 1, 1000);
        if (auto status = cli.parse(argc, argv)) return *status;
        if (cli.quick() && cli.app().count("--runs") == 0) runs = 3;
        const auto size = static_cast<std::size_t>(n);
        cachebook::require_memory(size * size * sizeof(int), "--n");
        nlohmann::json out;

        // 1. The miss arithmetic.
        fmt::print("Chapter 2 · Row or column\n\n");
        fmt::print("1. Misses per element, 64-byte lines, when the cache cannot keep a column's lines\n");
        cachebook::Table arith({"element", "bytes", "per line (B)", "row walk (ij): 1/B", "column walk (ji)"});
        out["arith"] = nlohmann::json::object();
        for (auto [name, bytes] : {std::pair{"double", 8}, std::pair{"int", 4}}) {
            const auto p = ch02::per_element(64, static_cast<std::size_t>(bytes));
            arith.row({name, fmt::format("{}", bytes), fmt::format("{}", p.per_line), fmt::format("{:g}", p.row),
                       fmt::format("{:g}", p.column)});
            out["arith"][name] = {{"per_line", p.per_line}, {"row", p.row}, {"column", p.column}};
        }
        fmt::print("{}\n", arith.render(2));

        // 2. R3.
        const auto cache = ch02::r3_cache();
        const auto r3 = ch02::r3_table(cache);
        fmt::print("2. Each cell of a double n x n matrix read once, row by row or column by column\n");
        fmt::print("  cache: {}\n", cache.describe());
        cachebook::Table t3({"n", "matrix bytes", "fits", "column's lines", "its sets", "room (lines)", "row misses",
                             "column misses", "column / row"});
        out["r3"] = nlohmann::json::array();
        for (const auto& r : r3) {
            t3.row({fmt::format("{}", r.n), fmt::format("{}", r.matrix_bytes), r.fits ? "yes" : "no",
                    fmt::format("{}", r.column.lines), fmt::format("{}", r.column.sets),
                    fmt::format("{}", r.column.capacity), fmt::format("{}", r.misses.row),
                    fmt::format("{}", r.misses.column), fmt::format("{:.2f}", r.misses.ratio())});
            out["r3"].push_back({{"n", r.n},
                                 {"matrix_bytes", r.matrix_bytes},
                                 {"fits", r.fits},
                                 {"column_lines", r.column.lines},
                                 {"column_sets", r.column.sets},
                                 {"column_capacity", r.column.capacity},
                                 {"row", r.misses.row},
                                 {"column", r.misses.column},
                                 {"ratio", r.misses.ratio()},
                                 {"ratio_1", fmt::format("{:.1f}", r.misses.ratio())}});
        }
        fmt::print("{}\n", t3.render(2));

        // 3. R9, the seed's L1, then this machine's.
        const auto l1 = ch02::seed_l1();
        const auto trap = ch02::power_of_two_trap(l1);
        fmt::print("3. The power-of-two trap: the first 64 columns of double a[256][256], column by column\n");
        fmt::print("  cache: {} (the seed's L1)\n", l1.describe());
        print_trap(trap, false);
        auto cache_json = [](const cachebook::CacheConfig& c) {
            return nlohmann::json{{"bytes", c.capacity_bytes()}, {"kib", c.capacity_bytes() / 1024}, {"sets", c.sets},
                                  {"ways", c.ways},          {"line_bytes", c.line_bytes},         {"lines", c.lines()}};
        };
        out["r3_cache"] = cache_json(cache);
        out["r9_cache"] = cache_json(l1);
        out["r9_accesses"] = trap.front().rows * trap.front().cols_walked;
        out["r9"] = nlohmann::json::array();
        for (const auto& w : trap) out["r9"].push_back(ch02::to_json(w));
        const auto& machine = cachebook::machine();
        const auto my_l1 = ch02::cache_geometry(machine.data_cache(1));
        fmt::print("\n  the same walk in this machine's L1d: {}\n",
                   cachebook::measured("{}", my_l1 ? my_l1->describe() : std::string("unknown")));
        fmt::print("  where it comes from: {}\n",
                   cachebook::measured("{}", my_l1 ? cachebook::source_name(machine.data_cache(1)->source)
                                                   : machine.why_unknown("the L1d's size, ways or line size")));
        out["r9_machine"] = {{"cache", nullptr}, {"walks", nullptr},
                             {"source", cachebook::source_name(my_l1 ? machine.data_cache(1)->source
                                                                     : cachebook::Source::unknown)}};
        if (my_l1) {
            const auto walks = ch02::power_of_two_trap(*my_l1);
            print_trap(walks, true);
            out["r9_machine"]["cache"] = my_l1->describe();
            out["r9_machine"]["walks"] = nlohmann::json::array();
            for (const auto& w : walks) out["r9_machine"]["walks"].push_back(ch02::to_json(w));
        } else {
            print_unknown_trap(trap);
        }
        fmt::print("\n");

        // 4. The measured sum.
        fmt::print("4. Measured: int a[{}][{}] ({} MiB) summed row by row and column by column\n", size, size,
                   size * size * sizeof(int) >> 20);
        const auto timing = ch02::time_sums(size, static_cast<int>(runs));
        fmt::print("  sums: row {}, column {} ({})\n", timing.row_sum, timing.column_sum,
                   timing.row_sum == timing.column_sum ? "equal" : "DIFFERENT");
        fmt::print("  row-wise:    {} ms (minimum of {} runs)\n", cachebook::measured("{:.1f}", timing.row.min() * 1e3),
                   runs);
        fmt::print("  column-wise: {} ms\n", cachebook::measured("{:.1f}", timing.column.min() * 1e3));
        fmt::print("  column / row = {}\n", cachebook::measured("{:.1f}", timing.ratio()));
        out["sum"] = {{"n", size},
                      {"mib", size * size * sizeof(int) >> 20},
                      {"runs", runs},
                      {"row_sum", timing.row_sum},
                      {"column_sum", timing.column_sum},
                      {"row_ms", timing.row.min() * 1e3},
                      {"column_ms", timing.column.min() * 1e3},
                      {"ratio", timing.ratio()},
                      {"ratio_1", fmt::format("{:.1f}", timing.ratio())}};
        print_why(machine, my_l1, size, out["sum"]);

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
