// Chapter 4's output, sections 9 to 12, the page "Real data, prefetching and recursion"
// (beyond.md): the study, the prefetcher, and cache-oblivious blocking in the model and timed.
#include <fmt/format.h>

#include "sections.hpp"

namespace ch04 {

using cachebook::Report;
using cachebook::Value;

void study_section(Report& report, const Options& options) {
    const auto n = static_cast<std::size_t>(options.study_n);
    const auto cache = ch04::lab_cache();
    report.section("The study: a {0} x {0} lag matrix A[i][j] = s[i + j] of a series, transposed for real",
                   Value::exact("study.n", n));
    report.line("   while the cache model ({}) sees every address it touches", cache.describe());
    if (options.study.series.empty())
        report.line("  {} is not installed: only generated series below (make deps installs it)", ch04::kStudyFile);
    else
        report.line("  data: {}", options.study.note);
    report.record("study.data", options.study.note);
    auto series_list = options.study.series;
    series_list.push_back(ch04::random_walk(2 * n - 1, 7));
    auto table = report.table_of_rows("study.series", {"series", "s[0]", "s[2n-2]", "row", "column", "untiled", "4",
                                                       "8", "16", "32", "best", "correct"});
    std::vector<ch04::Study> results;
    for (const auto& series : series_list) {
        const auto& result = results.emplace_back(ch04::study(series, n, ch04::kModelTiles, cache));
        std::vector<Value> cells = {Value::exact("name", result.name), Value::exact("first", result.first, 2),
                                    Value::exact("last", result.last, 2), Value::exact("row", result.orders.row),
                                    Value::exact("column", result.orders.column)};
        for (const auto& [tile, count] : result.by_tile)
            cells.push_back(Value::exact("by_tile." + tile_key(tile), count));
        cells.push_back(Value::exact("best", result.best));
        cells.push_back(Value::exact_as("transposed", result.transposed, result.transposed ? "yes" : "NO"));
        table.row(cells, {{"values", 2 * n - 1}});
    }
    table.print();
    const bool same = ch04::same_counts(results);
    report.line("  the same counts for every series: {}",
                Value::exact_as("study.same_counts", same, same ? "yes" : "NO"));
}

namespace {
std::string kind_key(cachebook::PrefetchKind kind) {
    return kind == cachebook::PrefetchKind::next_line ? "next_line" : std::string(cachebook::prefetch_name(kind));
}
}  // namespace

// The lab's last step: four walks through the lab's cache with no prefetcher, next-line and stride.
void prefetch_section(Report& report) {
    const std::size_t n = 73, tile = 8;
    const std::uint64_t cycle = 7;  // which random cycle the chase follows
    const auto cache = lab_cache();
    report.section("The lab's last step: a prefetcher in front of the cache, {0} x {0} doubles",
                   Value::exact("prefetch.n", n));
    const cachebook::PrefetchConfig settings;
    report.line("  cache: {}", cache.describe());
    report.line("  next-line: a miss on line L also fetches line L + 1");
    report.line("  stride: once a stream (A or B) has moved by the same stride twice in a row, each of its");
    report.line("    accesses fetches the line one stride ahead; the table follows {} streams",
                Value::exact("prefetch.table_streams", settings.table_streams));
    report.line("  none, next-line, stride: the walk's misses with no prefetcher, with next-line, with stride");
    report.line("  useful: prefetched lines that a later access hit; issued: prefetches that brought a line in");
    report.record("prefetch.tile", tile);
    auto table =
        report.table({"walk", "accesses", "none", "next-line", "useful", "issued", "stride", "useful", "issued"});
    for (const auto& walk : prefetch_walks(n, tile, cycle)) {
        const std::string at = "prefetch." + walk.key + ".";
        std::vector<Value> cells = {walk.name, Value::exact(at + "accesses", walk.accesses.size())};
        for (const auto kind : kPrefetchKinds) {
            const auto counts = run_with_prefetcher(walk, cache, kind);
            const std::string key = at + kind_key(kind) + ".";
            cells.push_back(Value::exact(key + "misses", counts.demand_misses));
            if (kind == cachebook::PrefetchKind::none) continue;
            cells.push_back(Value::exact(key + "useful", counts.useful));
            cells.push_back(Value::exact(key + "issued", counts.issued));
        }
        table.row(cells);
    }
    table.print();
}

namespace {
std::string tile_column(std::size_t tile, const char* untiled) {
    return tile == 0 ? untiled : fmt::format("{}", tile);
}
// One table: a row per cache, the misses of each tile, the best tile and the recursive walk.
// `rule`: the product's rows also show the tile the rule gives for that cache.
void caches_table(Report& report, const std::string& key, const std::vector<CacheMisses>& caches,
                  const std::vector<std::size_t>& tiles, const char* untiled, std::size_t n, bool rule) {
    std::vector<std::string> headers = {"cache"};
    for (std::size_t tile : tiles) headers.push_back(tile_column(tile, untiled));
    headers.emplace_back("best");
    if (rule) headers.emplace_back("rule's T");
    headers.emplace_back("recursive");
    auto table = report.table_of_rows(key, headers);
    for (const auto& c : caches) {
        std::vector<Value> cells = {
            Value::exact_as("kib", c.capacity / 1024, fmt::format("{} KiB", c.capacity / 1024))};
        for (const auto& [tile, misses] : c.by_tile) cells.push_back(Value::exact("by_tile." + tile_key(tile), misses));
        cells.push_back(Value::exact("best", c.best));
        if (rule) cells.push_back(Value::exact("rule_tile", tile_from_cache(c.capacity, n).tile));
        cells.push_back(Value::exact("recursive", c.recursive));
        table.row(cells, {{"cache", c.cache}});
    }
    table.print();
}
}  // namespace

void oblivious_model_section(Report& report) {
    const std::vector<cachebook::CacheConfig> caches = {lab_cache(), large_cache()};
    const std::size_t transpose_n = 520, product_n = 96;
    report.section("Cache-oblivious blocking in the model: the same walks in a {} KiB and a {} KiB cache",
                   Value::exact("oblivious.small_kib", caches[0].capacity_bytes() / 1024),
                   Value::exact("oblivious.large_kib", caches[1].capacity_bytes() / 1024));
    for (const auto& cache : caches) report.line("  cache: {}", cache.describe());
    report.line("  misses of the transpose of {0} x {0} doubles, dst right after src, tiled and recursive:",
                Value::exact("oblivious.transpose.n", transpose_n));
    caches_table(report, "oblivious.transpose.caches", transpose_in_caches(transpose_n, caches), kTransposeTiles,
                 "none", transpose_n, false);
    report.line("  misses of C = A x B on {0} x {0} doubles, A, B, C one after another, tiled and recursive:",
                Value::exact("oblivious.product.n", product_n));
    caches_table(report, "oblivious.product.caches", product_in_caches(product_n, caches), kProductTiles, "ikj",
                 product_n, true);
    report.line("  recursive: halve the longest side until every side is at most {}, cutting on multiples of {}",
                Value::exact("oblivious.leaf", kLeaf), kLeaf);
}

namespace {
// `tile_measured`: the tile came from this machine's L1.
std::vector<Value> timing_row(const std::string& key, const std::string& walk, const RecursiveTiming& t,
                              bool tile_measured) {
    auto ratio = Value::measured(key + "ratio", t.ratio(), "{:.2f}");
    return {walk,
            Value::exact(key + "n", t.n),
            tile_measured ? Value::measured(key + "tile", t.tile) : Value::exact(key + "tile", t.tile),
            Value::measured(key + "tiled_ms", t.tiled.min() * 1e3, "{:.1f}"),
            Value::measured(key + "recursive_ms", t.recursive.min() * 1e3, "{:.1f}"),
            ratio.quoted("{:.1f}"),
            Value::exact_as(key + "identical", t.identical, t.identical ? "yes" : "NO")};
}
}  // namespace

void oblivious_timing_section(Report& report, const Options& options, std::size_t tile) {
    const auto n = static_cast<std::size_t>(options.n), transpose_n = static_cast<std::size_t>(options.transpose_n);
    const auto runs = static_cast<int>(options.runs);
    const auto product = time_recursive_product(n, tile, claim_runs(kRecursiveProductClaim, runs, options.quick));
    const auto transpose = time_recursive_transpose(transpose_n, kRecursiveTransposeTile,
                                                    claim_runs(kRecursiveTransposeClaim, runs, options.quick));
    report.section("Measured: the recursive walks against the tiled ones (minimum of {} runs)",
                   Value::exact("recursive.runs", product.tiled.runs.size()));
    auto table = report.table({"walk", "N", "tile", "tiled ms", "recursive ms", "recursive / tiled", "identical"});
    table.row(timing_row("recursive.product.", "product", product, true));
    table.row(timing_row("recursive.transpose.", "transpose", transpose, false));
    table.print();
    cachebook::report_experiment(report, product.claim);
    cachebook::report_experiment(report, transpose.claim);
}

}  // namespace ch04
