#include "tiling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "cachebook/chase.hpp"
#include "cachebook/matmul_orders.hpp"
#include "cachebook/trace.hpp"

namespace ch04 {

// [snippet: blocked]
void matmul_blocked(std::size_t n, std::size_t tile, const double* __restrict a, const double* __restrict b,
                    double* __restrict c) {
    std::fill(c, c + n * n, 0.0);
    for (std::size_t ii = 0; ii < n; ii += tile)
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t kk = 0; kk < n; kk += tile) {
                // One T x T tile of C gets the product of a tile of A and a tile of B.
                const std::size_t i_end = std::min(ii + tile, n), j_end = std::min(jj + tile, n),
                                  k_end = std::min(kk + tile, n);
                for (std::size_t i = ii; i < i_end; ++i)
                    for (std::size_t k = kk; k < k_end; ++k) {
                        const double r = a[i * n + k];
                        for (std::size_t j = jj; j < j_end; ++j) c[i * n + j] += r * b[k * n + j];
                    }
            }
}
// [end: blocked]

// [snippet: tile-formula]
TileChoice tile_from_cache(std::size_t cache_bytes, std::size_t n, std::size_t elem) {
    TileChoice t{cache_bytes, elem, n};
    t.bound = std::sqrt(static_cast<double>(cache_bytes) / (3.0 * static_cast<double>(elem)));  // 3 T^2 S <= L1
    t.tile = 1;
    for (std::size_t p = 1; static_cast<double>(p) <= t.bound; p *= 2)
        if (n % p == 0) t.tile = p;
    t.three_tiles = 3 * t.tile * t.tile * elem;
    t.estimate = 2.0 / (static_cast<double>(64 / elem) * static_cast<double>(t.tile));
    return t;
}
// [end: tile-formula]

BlockedTiming time_blocked(std::size_t n, std::size_t tile, int runs) {
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> c1(n * n), c2(n * n);
    BlockedTiming t{n, tile, {}, {}, false};
    for (int r = 0; r < runs; ++r) {
        auto start = cachebook::Clock::now();
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, n, m.a.data(), m.b.data(), c1.data());
        t.naive.runs.push_back(cachebook::seconds_since(start));
        cachebook::clobber_memory();
        start = cachebook::Clock::now();
        matmul_blocked(n, tile, m.a.data(), m.b.data(), c2.data());
        t.blocked.runs.push_back(cachebook::seconds_since(start));
        cachebook::clobber_memory();
    }
    t.identical = std::memcmp(c1.data(), c2.data(), n * n * sizeof(double)) == 0;
    return t;
}

bool same_counts(const std::vector<Study>& studies) {
    for (const auto& study : studies)
        if (study.by_tile != studies.front().by_tile) return false;
    return true;
}

double Sweep::over_best(std::size_t tile) const {
    double at_tile = 0, at_best = 0;
    for (const auto& p : points) {
        if (p.tile == tile) at_tile = p.timing.min();
        if (p.tile == best()) at_best = p.timing.min();
    }
    return at_tile > 0 ? at_tile / at_best : 0.0;
}

std::size_t Sweep::best() const {
    std::size_t tile = 0;
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& p : points)
        if (p.timing.min() < fastest) {
            fastest = p.timing.min();
            tile = p.tile;
        }
    return tile;
}

Sweep tile_sweep(std::size_t n, const std::vector<std::size_t>& tiles, int runs) {
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> first(n * n), c(n * n);
    Sweep s;
    s.identical = true;
    for (std::size_t tile : tiles) s.points.push_back({tile, {}});
    for (int r = 0; r < runs; ++r)
        for (auto& p : s.points) {
            const auto start = cachebook::Clock::now();
            matmul_blocked(n, p.tile, m.a.data(), m.b.data(), c.data());
            p.timing.runs.push_back(cachebook::seconds_since(start));
            cachebook::clobber_memory();
            if (r == 0 && &p == &s.points.front())
                first = c;
            else if (std::memcmp(first.data(), c.data(), n * n * sizeof(double)) != 0)
                s.identical = false;
        }
    return s;
}

TransposeRate transpose_rate(std::size_t n, std::size_t tile, const cachebook::CacheConfig& config) {
    cachebook::Cache cache = cachebook::abc_cache(config);
    cachebook::for_each_transpose_access(
        n, tile, 8, [&](const cachebook::Access& x) { cache.access(x.address, x.stream, x.write); });
    const double cells = static_cast<double>(n) * static_cast<double>(n);
    return {static_cast<double>(cache.stream(1).misses) / cells, static_cast<double>(cache.stream(2).misses) / cells};
}

// [snippet: lab]
std::uint64_t transpose_misses(std::size_t n, std::size_t tile, const cachebook::CacheConfig& config) {
    cachebook::Cache cache(config);
    cachebook::for_each_transpose_access(n, tile, 8,
                                         [&](const cachebook::Access& x) { cache.access(x.address, 0, x.write); });
    return cache.total().misses;
}

std::vector<std::pair<std::size_t, std::uint64_t>> misses_by_tile(std::size_t n, const std::vector<std::size_t>& tiles,
                                                                  const cachebook::CacheConfig& cache) {
    std::vector<std::pair<std::size_t, std::uint64_t>> out;
    for (std::size_t tile : tiles) out.emplace_back(tile, transpose_misses(n, tile, cache));
    return out;
}

std::size_t best_tile(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache) {
    const auto counts = misses_by_tile(n, tiles, cache);
    const auto best = std::min_element(counts.begin(), counts.end(),
                                       [](const auto& x, const auto& y) { return x.second < y.second; });
    return best == counts.end() ? 0 : best->first;
}
// [end: lab]

// [snippet: transpose]
void transpose_naive(std::size_t n, const double* __restrict src, double* __restrict dst) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) dst[j * n + i] = src[i * n + j];
}

void transpose_tiled(std::size_t n, std::size_t tile, const double* __restrict src, double* __restrict dst) {
    for (std::size_t ii = 0; ii < n; ii += tile)
        for (std::size_t jj = 0; jj < n; jj += tile)
            for (std::size_t i = ii; i < std::min(ii + tile, n); ++i)      // T rows of src, along each
                for (std::size_t j = jj; j < std::min(jj + tile, n); ++j)  // T rows of dst, one cell of each
                    dst[j * n + i] = src[i * n + j];
}
// [end: transpose]

TransposeTiming time_transpose(std::size_t n, std::size_t tile, int runs) {
    // Both write the same dst, so that both see the same pages (and page sizes).
    std::vector<double> src(n * n), dst(n * n), naive(n * n);
    for (std::size_t k = 0; k < n * n; ++k) src[k] = static_cast<double>(k % 1000);
    TransposeTiming t{n, tile, {}, {}, true};
    transpose_naive(n, src.data(), dst.data());  // first touch of every page, untimed
    naive = dst;
    for (int r = 0; r < runs; ++r) {
        auto start = cachebook::Clock::now();
        transpose_naive(n, src.data(), dst.data());
        t.naive.runs.push_back(cachebook::seconds_since(start));
        cachebook::clobber_memory();
        std::fill(dst.begin(), dst.end(), -1.0);
        start = cachebook::Clock::now();
        transpose_tiled(n, tile, src.data(), dst.data());
        t.tiled.runs.push_back(cachebook::seconds_since(start));
        cachebook::clobber_memory();
        t.identical = t.identical && dst == naive;
    }
    return t;
}

namespace {
std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream in(line);
    std::string cell;
    while (std::getline(in, cell, ',')) {
        while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
        cells.push_back(cell);
    }
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    return cells;
}
}  // namespace

std::vector<Series> read_csv_columns(const std::string& path, const std::vector<std::string>& columns) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error(fmt::format("cannot read '{}'", path));
    std::string line;
    std::vector<std::string> header;
    while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') {
            header = split(line);
            break;
        }
    if (header.empty()) throw std::runtime_error(fmt::format("'{}' has no header line", path));
    std::vector<std::size_t> index;
    std::vector<Series> out;
    for (const auto& name : columns) {
        const auto at = std::find(header.begin(), header.end(), name);
        if (at == header.end()) throw std::runtime_error(fmt::format("'{}' has no column '{}'", path, name));
        index.push_back(static_cast<std::size_t>(at - header.begin()));
        out.push_back({name, {}});
    }
    std::size_t line_no = 1;
    while (std::getline(in, line)) {
        ++line_no;
        if (line.empty() || line[0] == '#') continue;
        const auto cells = split(line);
        for (std::size_t c = 0; c < index.size(); ++c) {
            if (index[c] >= cells.size() || cells[index[c]].empty()) continue;
            const std::string& text = cells[index[c]];
            std::size_t used = 0;
            double v = 0;
            try {
                v = std::stod(text, &used);
            } catch (...) {
                used = 0;
            }
            if (used != text.size() || !std::isfinite(v))
                throw std::runtime_error(
                    fmt::format("'{}' line {}: '{}' in column '{}' is not a number", path, line_no, text, columns[c]));
            out[c].values.push_back(v);
        }
    }
    return out;
}

Series random_walk(std::size_t count, std::uint64_t seed) {
    Series s{fmt::format("random walk (seed {})", seed), {}};
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    double v = 100.0;
    for (std::size_t k = 0; k < count; ++k) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v += static_cast<double>((x * 0x2545F4914F6CDD1Dull) >> 40) / static_cast<double>(1ull << 24) - 0.5;
        s.values.push_back(v);
    }
    return s;
}

// [snippet: study]
Study study(const Series& s, std::size_t n, const std::vector<std::size_t>& tiles,
            const cachebook::CacheConfig& config) {
    if (tiles.empty()) throw std::invalid_argument("study: no tiles to try");
    if (s.values.size() < 2 * n - 1)
        throw std::invalid_argument(fmt::format("series '{}' has {} values; a {} x {} lag matrix needs {}", s.name,
                                                s.values.size(), n, n, 2 * n - 1));
    Study out{s.name, n, s.values.front(), s.values[2 * n - 2], {}, {}, 0, true};
    // One buffer: src (the lag matrix) then dst, as in the transpose trace.
    std::vector<double> buffer(2 * n * n);
    double* src = buffer.data();
    double* dst = src + n * n;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) src[i * n + j] = s.values[i + j];
    // The address the model sees is the byte offset into the buffer: the real
    // code's accesses, and nothing of the values.
    auto offset = [&](const double* p) { return static_cast<std::uint64_t>(p - src) * sizeof(double); };
    for (std::size_t tile : tiles) {
        std::fill(dst, dst + n * n, 0.0);
        cachebook::Cache cache(config);
        const std::size_t step = tile == 0 ? n : tile;
        for (std::size_t ii = 0; ii < n; ii += step)
            for (std::size_t jj = 0; jj < n; jj += step)
                for (std::size_t i = ii; i < std::min(ii + step, n); ++i)
                    for (std::size_t j = jj; j < std::min(jj + step, n); ++j) {
                        cache.access(offset(&src[i * n + j]));
                        cache.access(offset(&dst[j * n + i]), 0, true);
                        dst[j * n + i] = src[i * n + j];
                    }
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) out.transposed = out.transposed && dst[j * n + i] == src[i * n + j];
        out.by_tile.emplace_back(tile, cache.total().misses);
    }
    out.best = std::min_element(out.by_tile.begin(), out.by_tile.end(), [](const auto& x, const auto& y) {
                   return x.second < y.second;
               })->first;
    out.orders = cachebook::compare_orders(n, config, sizeof(double));
    return out;
}
// [end: study]

// [snippet: prefetch_walks]
std::vector<Walk> prefetch_walks(std::size_t n, std::size_t tile, std::uint64_t seed) {
    std::vector<Walk> walks = {{"row", "row walk", {}},
                               {"column", "column walk", {}},
                               {"tiled", fmt::format("tiled transpose, T = {}", tile), {}},
                               {"chase", "pointer chase (random order)", {}}};
    for (std::uint64_t address : cachebook::row_major_trace(n)) walks[0].accesses.push_back({address, 1, false});
    for (std::uint64_t address : cachebook::col_major_trace(n)) walks[1].accesses.push_back({address, 1, false});
    cachebook::for_each_transpose_access(n, tile, 8,
                                         [&](const cachebook::Access& x) { walks[2].accesses.push_back(x); });
    // A chase reads a cell to learn which cell comes next: the cycle fixes the order of the addresses.
    const auto next = cachebook::single_cycle(n * n, seed);
    std::uint32_t cell = 0;
    for (std::size_t step = 0; step < n * n; ++step, cell = next[cell])
        walks[3].accesses.push_back({static_cast<std::uint64_t>(cell) * 8, 1, false});
    return walks;
}

cachebook::PrefetchCounts run_with_prefetcher(const Walk& walk, const cachebook::CacheConfig& config,
                                              cachebook::PrefetchKind kind) {
    // Streams 1 and 2 are A and B, as the walks number them; the stride table follows each.
    cachebook::PrefetchingCache cache(cachebook::abc_cache(config), cachebook::PrefetchConfig{kind});
    for (const cachebook::Access& x : walk.accesses) cache.access(x.address, x.stream, x.write);
    return cache.counts();
}
// [end: prefetch_walks]

StepperCache stepper_cache(std::size_t tile, std::size_t elem) {
    StepperCache c{tile, elem};
    c.line_bytes = tile * elem;
    c.three_tiles_lines = 3 * tile * tile * elem / c.line_bytes;
    c.cache_lines = c.three_tiles_lines * 4 / 3;
    return c;
}

namespace {
// Each iteration is three steps, A[i][k], B[k][j], C[i][j]: they name its row of C and its tiles.
void mark_tile_steps(MatmulStepper& run) {
    const std::size_t t = run.tile == 0 ? run.n : run.tile;
    for (std::size_t s = 0; s + 2 < run.steps.size(); s += 3) {
        const std::size_t i = run.steps[s].i, k = run.steps[s].j, j = run.steps[s + 1].j;
        for (std::size_t q = s; q < s + 3; ++q) {
            MatmulStep& st = run.steps[q];
            st.row = i;
            if (run.tile != 0) {
                st.ii = i / t * t;
                st.jj = j / t * t;
                st.kk = k / t * t;
            }
        }
    }
}
}  // namespace

// [snippet: stepper]
MatmulStepper run_matmul_stepper(std::size_t n, std::size_t tile, std::size_t elem, std::size_t line_bytes,
                                 std::size_t cache_lines) {
    MatmulStepper run;
    run.n = n;
    run.tile = tile;
    run.elem = elem;
    run.line_bytes = line_bytes;
    run.cache_lines = cache_lines;
    run.at = cachebook::MatmulLayout::packed(n, elem, line_bytes);  // no two matrices share a line
    auto cache = cachebook::abc_cache(cachebook::CacheConfig::fully_associative(cache_lines, line_bytes));
    const std::uint64_t base[3] = {run.at.a, run.at.b, run.at.c};
    cachebook::for_each_tiled_matmul_access(n, tile, elem, run.at, [&](const cachebook::Access& x) {
        MatmulStep step;
        step.matrix = x.stream - 1;  // streams 1, 2, 3 are A, B, C
        const std::uint64_t cell = (x.address - base[step.matrix]) / elem;
        step.i = static_cast<std::size_t>(cell / n);
        step.j = static_cast<std::size_t>(cell % n);
        step.line = x.address / line_bytes;
        step.hit = cache.access(x.address, x.stream, x.write).hit;
        step.cache_after = cache.resident_lines();
        run.steps.push_back(step);
        ++(step.hit ? run.hits : run.misses);
    });
    for (int m = 0; m < 3; ++m) run.misses_of[m] = cache.stream(m + 1).misses;
    mark_tile_steps(run);  // the row of C and the tiles of each step, for the widget
    return run;
}
// [end: stepper]

std::string stepper_marks(const MatmulStepper& run, std::size_t first, std::size_t last) {
    std::string out;
    for (std::size_t s = first; s < last && s < run.steps.size(); ++s) {
        if (s > first && (s - first) % 3 == 0) out += ' ';
        out += run.steps[s].hit ? 'H' : 'M';
    }
    return out;
}

std::vector<StepperGroup> stepper_groups(const MatmulStepper& run) {
    std::vector<StepperGroup> groups;
    for (std::size_t s = 0; s < run.steps.size(); ++s) {
        const MatmulStep& st = run.steps[s];
        const bool same = !groups.empty() && groups.back().ii == st.ii && groups.back().jj == st.jj &&
                          groups.back().kk == st.kk && (run.tile != 0 || groups.back().row == st.row);
        if (!same) groups.push_back(StepperGroup{s, 0, st.ii, st.jj, st.kk, st.row, 0, 0});
        ++groups.back().count;
        ++(st.hit ? groups.back().hits : groups.back().misses);
    }
    return groups;
}

namespace {
std::string group_label(const MatmulStepper& run, const MatmulStep& st) {
    return run.tile == 0 ? fmt::format("i = {}", st.row)
                         : fmt::format("ii = {}, jj = {}, kk = {}", st.ii, st.jj, st.kk);
}
}  // namespace

nlohmann::json to_json(const MatmulStepper& run, const std::string& walk) {
    const char* names[3] = {"A", "B", "C"};
    const std::uint64_t base[3] = {run.at.a, run.at.b, run.at.c};
    const char* index[3][2] = {{"i", "k"}, {"k", "j"}, {"i", "j"}};
    nlohmann::json arrays = nlohmann::json::array();
    for (int m = 0; m < 3; ++m)
        arrays.push_back({{"name", names[m]},
                          {"rows", run.n},
                          {"cols", run.n},
                          {"first_line", base[m] / run.line_bytes},
                          {"index", {index[m][0], index[m][1]}},
                          {"access", m == 2 ? "update" : "read"}});
    nlohmann::json steps = nlohmann::json::array();
    for (const MatmulStep& st : run.steps) {
        nlohmann::json j = {{"array", st.matrix},
                            {"i", st.i},
                            {"j", st.j},
                            {"line", st.line},
                            {"hit", st.hit},
                            {"cache_after", st.cache_after},
                            {"group", group_label(run, st)}};
        if (run.tile != 0) j["tile_at"] = {{st.ii, st.kk}, {st.kk, st.jj}, {st.ii, st.jj}};
        steps.push_back(j);
    }
    nlohmann::json groups = nlohmann::json::array();
    for (const StepperGroup& g : stepper_groups(run))
        groups.push_back({{"label", group_label(run, run.steps[g.first])},
                          {"first", g.first},
                          {"misses", g.misses},
                          {"hits", g.hits},
                          {"marks", stepper_marks(run, g.first, g.first + g.count)}});
    return {{"walk", walk},
            {"n", run.n},
            {"rows", run.n},
            {"cols", run.n},
            {"tile", run.tile},
            {"elem", run.elem},
            {"line_bytes", run.line_bytes},
            {"cache_lines", run.cache_lines},
            {"hits", run.hits},
            {"misses", run.misses},
            {"misses_by_matrix", {{"A", run.misses_of[0]}, {"B", run.misses_of[1]}, {"C", run.misses_of[2]}}},
            {"arrays", arrays},
            {"group_name", run.tile == 0 ? "row of C" : "tile step"},
            {"groups", groups},
            {"steps", steps}};
}

}  // namespace ch04
