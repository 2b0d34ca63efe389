// Chapter 4's experiment: the clocks, the sweep, the model's transpose rates, the study's
// data and the stepper's groups and JSON. It calls the lesson (tiling.cpp); main.cpp prints.
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "cachebook/cpu_time.hpp"
#include "cachebook/matmul_orders.hpp"
#include "cachebook/trace.hpp"

namespace ch04 {

std::vector<std::size_t> visit_steps(std::size_t n, std::size_t tile) {
    const auto order = cachebook::visit_order(n, tile);
    std::vector<std::size_t> step(n * n);
    for (std::size_t s = 0; s < order.size(); ++s) step[order[s].first * n + order[s].second] = s;
    return step;
}

std::optional<TileChoice> machine_tile(const cachebook::Machine& machine, std::size_t n) {
    const auto l1 = machine.data_cache(1);
    if (!l1) return std::nullopt;
    return tile_from_cache(l1->size_bytes, n);
}

std::size_t blocked_tile(std::size_t requested, std::size_t n, const std::optional<TileChoice>& mine) {
    if (requested != 0) return requested;
    return mine ? mine->tile : tile_from_cache(32 * 1024, n).tile;
}

BlockedPrice price_blocked(std::size_t n, std::size_t tile) {
    BlockedPrice p;
    p.n = n;
    p.padded = n + 64 / sizeof(double);
    p.tile = tile;
    p.profile = cachebook::shared_profile();
    p.machine = cachebook::priced_machine(p.profile);
    if (!p.machine.usable()) return p;
    // Naive ijk's inner loop walks a column of B; the blocked one's walks rows of B's and C's tiles.
    p.naive = cachebook::predict_matmul(p.machine, cachebook::LoopOrder::ijk, n, 0, false);
    p.naive_padded = cachebook::predict_matmul(p.machine, cachebook::LoopOrder::ijk, p.padded, 0, false);
    p.blocked = cachebook::predict_matmul(p.machine, cachebook::LoopOrder::ikj, n, tile, true);
    p.blocked_padded = cachebook::predict_matmul(p.machine, cachebook::LoopOrder::ikj, p.padded, tile, true);
    return p;
}

PairRuns claim_runs(const ClaimDeclaration& claim, int runs, bool quick) {
    return {&claim, runs, quick, {}};
}

PairRuns table_runs(int runs, double seconds) {
    return {nullptr, runs, false, {std::min(2, runs), runs, seconds}};
}

PairTimes time_pair(std::size_t n, const std::function<void()>& slow, const std::function<void()>& fast,
                    const PairRuns& runs) {
    PairTimes t;
    if (runs.claim == nullptr) {  // a table's figure: the two in turn while the budget says
        const auto began = cachebook::Clock::now();
        for (int r = 0; runs.budget.another(r, cachebook::seconds_since(began)); ++r)
            for (auto [side, timing] : {std::pair{&slow, &t.slow}, std::pair{&fast, &t.fast}}) {
                const double start = cachebook::thread_cpu_seconds();
                (*side)();
                timing->runs.push_back(cachebook::thread_cpu_seconds() - start);
            }
        return t;
    }
    const ClaimDeclaration& claim = *runs.claim;
    const cachebook::Experiment declared{claim.key,
                                         claim.text,
                                         slow,
                                         fast,
                                         {.runs = runs.runs, .quick_runs = kQuickClaimRuns},
                                         {.threshold = claim.threshold}};
    t.claim = cachebook::run_experiment(declared, runs.quick, cachebook::thread_cpu_instruments());
    t.slow.runs = t.claim.slow_runs;
    t.fast.runs = t.claim.fast_runs;
    if (n != claim.n) {
        t.claim.result.verdict = cachebook::Verdict::inconclusive;
        t.claim.result.reason = fmt::format("the claim is made at N = {}, this run measured N = {}", claim.n, n);
    }
    return t;
}

PairTimes time_products(std::size_t n, const ProductWalk& slow, const ProductWalk& fast, const PairRuns& runs) {
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> slow_c(n * n), fast_c(n * n);
    auto t = time_pair(
        n,
        [&] {
            slow(n, m.a.data(), m.b.data(), slow_c.data());
            cachebook::clobber_memory();
        },
        [&] {
            fast(n, m.a.data(), m.b.data(), fast_c.data());
            cachebook::clobber_memory();
        },
        runs);
    t.identical = std::memcmp(slow_c.data(), fast_c.data(), n * n * sizeof(double)) == 0;
    return t;
}

namespace {
// The transposes' matrices, kept from one call to the next: at N = 2048 each is 32 MiB, and fresh
// memory costs a page fault every 4 KiB, for each of the four pairs the chapter times.
struct TransposeMemory {
    std::vector<double> src, dst, reference;
};
TransposeMemory& transpose_memory(std::size_t n) {
    static TransposeMemory memory;
    for (auto* matrix : {&memory.src, &memory.dst, &memory.reference}) matrix->resize(n * n);
    return memory;
}
}  // namespace

PairTimes time_transposes(std::size_t n, const TransposeWalk& slow, const TransposeWalk& fast, const PairRuns& runs) {
    auto& memory = transpose_memory(n);
    auto &src = memory.src, &dst = memory.dst, &reference = memory.reference;
    for (std::size_t k = 0; k < n * n; ++k) src[k] = static_cast<double>(k % 1000);
    slow(n, src.data(), dst.data());
    reference = dst;
    std::fill(dst.begin(), dst.end(), -1.0);
    fast(n, src.data(), dst.data());
    const bool identical = dst == reference;
    auto t = time_pair(
        n,
        [&] {
            slow(n, src.data(), dst.data());
            cachebook::clobber_memory();
        },
        [&] {
            fast(n, src.data(), dst.data());
            cachebook::clobber_memory();
        },
        runs);
    t.identical = identical;
    return t;
}

BlockedTiming time_blocked(std::size_t n, std::size_t tile, const PairRuns& runs) {
    const auto naive = [](std::size_t size, const double* a, const double* b, double* c) {
        cachebook::matmul_in_order(cachebook::LoopOrder::ijk, size, a, b, c);
    };
    const auto blocked = [tile](std::size_t size, const double* a, const double* b, double* c) {
        matmul_blocked(size, tile, a, b, c);
    };
    auto t = time_products(n, naive, blocked, runs);
    return {n, tile, std::move(t.slow), std::move(t.fast), t.identical, std::move(t.claim)};
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

Sweep tile_sweep(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::RunBudget& runs) {
    const auto m = cachebook::integer_valued_matrices(n);
    std::vector<double> first(n * n), c(n * n);
    Sweep s;
    s.identical = true;
    for (std::size_t tile : tiles) s.points.push_back({tile, {}});
    const auto began = cachebook::Clock::now();
    for (int r = 0; runs.another(r, cachebook::seconds_since(began)); ++r)
        for (auto& p : s.points) {
            const double start = cachebook::thread_cpu_seconds();
            matmul_blocked(n, p.tile, m.a.data(), m.b.data(), c.data());
            p.timing.runs.push_back(cachebook::thread_cpu_seconds() - start);
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

TileTable tile_table(std::size_t n, const std::vector<std::size_t>& tiles, const cachebook::CacheConfig& cache) {
    TileTable table{misses_by_tile(n, tiles, cache), best_tile(n, tiles, cache), 0.0};
    if (!table.misses.empty() && table.misses.back().second != 0)
        table.gain = static_cast<double>(table.misses.front().second) / static_cast<double>(table.misses.back().second);
    return table;
}

TransposeTiming time_transpose(std::size_t n, std::size_t tile, const PairRuns& runs) {
    const auto tiled = [tile](std::size_t size, const double* src, double* dst) {
        transpose_tiled(size, tile, src, dst);
    };
    auto t = time_transposes(n, transpose_naive, tiled, runs);
    return {n, tile, std::move(t.slow), std::move(t.fast), t.identical, std::move(t.claim)};
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

StudyData read_study_data(const std::string& path) {
    if (!path.empty()) return {read_csv_columns(path, kStudyColumns), path};
    if (!std::filesystem::exists(kStudyFile)) return {};
    return {read_csv_columns(kStudyFile, kStudyColumns),
            fmt::format("{} (package python-matplotlib-data)", kStudyFile)};
}

bool same_counts(const std::vector<Study>& studies) {
    for (const auto& study : studies)
        if (study.by_tile != studies.front().by_tile) return false;
    return true;
}

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
