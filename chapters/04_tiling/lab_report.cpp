// Chapter 4's sections on cache-oblivious blocking, as the Report's lines and tables: the
// recursive walks in the model at two cache sizes, and timed against the tiled walks; and the
// lines on where a tile falls in the L1's sets, and the products at a padded size.
#include <fmt/format.h>

#include <tuple>

#include "cachebook/machine.hpp"
#include "cachebook/walks.hpp"
#include "lab.hpp"

namespace ch04 {

using cachebook::Report;
using cachebook::Value;

namespace {
std::string tile_column(std::size_t tile, const char* untiled) {
    return tile == 0 ? untiled : fmt::format("{}", tile);
}
std::string tile_field(std::size_t tile) {
    return tile == 0 ? "none" : fmt::format("t{}", tile);
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
        for (const auto& [tile, misses] : c.by_tile)
            cells.push_back(Value::exact("by_tile." + tile_field(tile), misses));
        cells.push_back(Value::exact("best", c.best));
        if (rule) cells.push_back(Value::exact("rule_tile", tile_from_cache(c.capacity, n).tile));
        cells.push_back(Value::exact("recursive", c.recursive));
        table.row(cells, {{"cache", c.cache}});
    }
    table.print();
}
}  // namespace

void kinds_table(Report& report, std::size_t n, const cachebook::CacheConfig& cache) {
    report.line("  why each walk misses: compulsory, capacity and conflict misses, and the fewest misses any");
    report.line("  replacement could take (Belady's OPT), beside LRU's:");
    auto table = report.table_of_rows(
        "miss_kinds", {"tile", "LRU misses", "compulsory", "fully assoc. LRU", "capacity", "conflict", "OPT"});
    for (const auto& w : transpose_kinds(n, kModelTiles, cache))
        table.row({Value::exact("walk", w.walk), Value::exact("misses", w.kinds.misses),
                   Value::exact("compulsory", w.kinds.compulsory),
                   Value::exact("fully_associative", w.fully_associative), Value::exact("capacity", w.kinds.capacity),
                   Value::exact("conflict", w.kinds.conflict), Value::exact("optimal", w.optimal)});
    table.print();
}

void oblivious_model_section(Report& report) {
    const std::vector<cachebook::CacheConfig> caches = {lab_cache(), large_cache()};
    const std::size_t transpose_n = 520, product_n = 96;
    report.section("Cache-oblivious blocking in the model: the same walks in a {} KiB and a {} KiB cache",
                   caches[0].capacity_bytes() / 1024, caches[1].capacity_bytes() / 1024);
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

void oblivious_timing_section(Report& report, const ObliviousRun& run) {
    report.section("Measured: the recursive walks against the tiled ones (minimum of {} runs)",
                   Value::exact("recursive.runs", run.runs));
    const auto product = time_recursive_product(run.n, run.tile, run.runs);
    const auto transpose = time_recursive_transpose(run.transpose_n, kRecursiveTransposeTile, run.runs);
    auto table = report.table({"walk", "N", "tile", "tiled ms", "recursive ms", "recursive / tiled", "identical"});
    table.row(timing_row("recursive.product.", "product", product, true));
    table.row(timing_row("recursive.transpose.", "transpose", transpose, false));
    table.print();
    cachebook::report_claim(report, "recursive_product", "tiled / recursive product",
                            recursive_claim(product, kBlockedN));
    cachebook::report_claim(report, "recursive_transpose", "tiled / recursive transpose",
                            recursive_claim(transpose, kTransposeN));
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

// Where one T x T tile's rows fall in this machine's L1d, at the leading dimension N and at N plus
// one line: the tile rule assumes they spread over the sets. Counted from the matrix's first byte
// as the start of a page.
void tile_sets_lines(Report& report, std::size_t n, std::size_t tile) {
    const auto& machine = cachebook::machine();
    const auto info = machine.data_cache(1);
    const bool known = info && info->ways > 0 && info->line_bytes >= sizeof(double) &&
                       info->size_bytes % (info->ways * info->line_bytes) == 0;
    const std::size_t padded_n = n + 64 / sizeof(double);  // one line of 64 bytes, as padded_lines times
    report.record("tile_sets.n", n);
    report.record("tile_sets.tile", tile);
    report.record("tile_sets.padded_n", padded_n);
    if (!known) {  // the same two lines, every figure unknown
        for (const char* key : {"tile_sets.l1", "tile_sets.power", "tile_sets.padded"}) report.record(key, nullptr);
        const auto unknown = Value::unknown("", "unknown");
        for (const auto& [label, leading] : {std::pair{"rows of N", n}, std::pair{"rows of N + one line", padded_n}})
            report.line("  one tile's {} lines, {} = {} doubles: L1d sets {} ({} of {} sets, room for {} lines)",
                        unknown, label, Value::exact("", leading), unknown, unknown, unknown, unknown);
        return;
    }
    const auto l1 = cachebook::CacheConfig::from_capacity(info->size_bytes, info->ways, info->line_bytes);
    report.record("tile_sets.l1", {{"sets", l1.sets}, {"ways", l1.ways}, {"line_bytes", l1.line_bytes}});
    for (const auto& [label, leading, key] : {std::tuple{"rows of N", n, "tile_sets.power"},
                                              std::tuple{"rows of N + one line", padded_n, "tile_sets.padded"}}) {
        const auto sets = cachebook::block_sets(l1, 0, tile, tile * sizeof(double), leading * sizeof(double));
        report.line("  one tile's {} lines, {} = {} doubles: L1d sets {} ({} of {} sets, room for {} lines)",
                    Value::measured(std::string(key) + ".lines", sets.lines), label, Value::exact("", leading),
                    Value::measured(std::string(key) + ".set_list", cachebook::set_list(sets.sets)),
                    Value::measured(std::string(key) + ".sets", sets.sets.size()), Value::measured("", l1.sets),
                    Value::measured(std::string(key) + ".room", sets.room));
    }
}

// The two products again at N plus one line of doubles, whose tiles spread over the L1's sets:
// time per multiply-add beside the power-of-two size's.
void padded_lines(Report& report, const BlockedTiming& timing, const BlockedPrice& price, int runs) {
    const std::size_t n = timing.n, padded = price.padded;
    const auto again = time_blocked(padded, timing.tile, runs);
    const auto per_madd = [](double seconds, std::size_t size) {
        return seconds * 1e9 / (static_cast<double>(size) * static_cast<double>(size) * static_cast<double>(size));
    };
    report.line("  ns per multiply-add, N = {} against N = {} (rows one line longer), same tile:", n,
                Value::exact("blocked.padded.n", padded));
    report.line("    naive ijk: {} against {}",
                Value::measured("blocked.padded.naive_power_ns", per_madd(timing.naive.min(), n), "{:.2f}"),
                Value::measured("blocked.padded.naive_ns", per_madd(again.naive.min(), padded), "{:.2f}"));
    report.line("    blocked:   {} against {}",
                Value::measured("blocked.padded.blocked_power_ns", per_madd(timing.blocked.min(), n), "{:.2f}"),
                Value::measured("blocked.padded.blocked_ns", per_madd(again.blocked.min(), padded), "{:.2f}"));
    report.line("  priced from this machine's profile before the timing (the appendix Priced):");
    report.line("    {}", Value::measured("", cachebook::levels_text(price.machine)));
    const char* const left_out = "the core's own work (the multiply-adds), C's stores, and the TLB";
    for (const auto& [key, what, power, padded_p, timed_power, timed_padded] :
         {std::tuple{"naive", "naive ijk", &price.naive, &price.naive_padded, &timing.naive, &again.naive},
          std::tuple{"blocked", "blocked", &price.blocked, &price.blocked_padded, &timing.blocked, &again.blocked}})
        for (const auto& claim :
             cachebook::padded_claims({key, what, fmt::format("N = {}", n), fmt::format("N = {}", padded),
                                       "a multiply-add", *power, *padded_p, cachebook::multiply_adds(n),
                                       cachebook::multiply_adds(padded), per_madd(timed_power->min(), n),
                                       per_madd(timed_padded->min(), padded), left_out, price.machine.why_not}))
            cachebook::report_priced(report, claim, claim.key.ends_with("over_padded") ? "{:.2f}x" : "{:.2f} ns");
}

}  // namespace ch04
