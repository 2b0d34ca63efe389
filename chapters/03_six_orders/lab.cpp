#include "lab.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/matmul_orders.hpp"

namespace ch03 {

std::string three(double v) {
    return fmt::format("{:.3f}", v);
}

bool departs(double simulated, double analytic_value) {
    return std::abs(simulated - analytic_value) > 0.25 * analytic_value;
}

double MeasuredOrders::min_of(char inner) const {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& o : orders)
        if (inner_variable(o.order) == inner) best = std::min(best, o.timing.min());
    return best;
}

double MeasuredOrders::fastest() const {
    double best = std::numeric_limits<double>::infinity();
    for (const auto& o : orders) best = std::min(best, o.timing.min());
    return best;
}

namespace {
// Two products equal byte for byte (integer-valued data: every order computes the same doubles).
bool same_bytes(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}
}  // namespace

MeasuredOrders time_orders(std::size_t n, const cachebook::RunBudget& runs,
                           const std::vector<cachebook::LoopOrder>& orders) {
    const auto matrices = cachebook::integer_valued_matrices(n);
    MeasuredOrders out;
    out.n = n;
    std::vector<double> c(n * n);
    out.identical = true;
    const auto all =
        std::vector<cachebook::LoopOrder>(std::begin(cachebook::kAllOrders), std::end(cachebook::kAllOrders));
    for (cachebook::LoopOrder order : orders.empty() ? all : orders) out.orders.push_back({order, {}});
    // Round-robin over the orders, so that a noisy moment of the machine is shared among them.
    const auto began = cachebook::Clock::now();
    for (int round = 0; runs.another(round, cachebook::seconds_since(began)); ++round)
        for (auto& o : out.orders) {
            const double start = cachebook::thread_cpu_seconds();
            cachebook::matmul_in_order(o.order, n, matrices.a.data(), matrices.b.data(), c.data());
            o.timing.runs.push_back(cachebook::thread_cpu_seconds() - start);
            cachebook::do_not_optimize(c.data());
            cachebook::clobber_memory();
            if (out.c.empty())
                out.c = c;
            else if (!same_bytes(c, out.c))
                out.identical = false;
        }
    for (double v : out.c) out.checksum += v;
    return out;
}

namespace {

// The order of `timed` with this inner variable whose fastest run is the fastest.
cachebook::LoopOrder fastest_order(const MeasuredOrders& timed, char inner) {
    const OrderTiming* best = nullptr;
    for (const auto& o : timed.orders)
        if (inner_variable(o.order) == inner && (best == nullptr || o.timing.min() < best->timing.min())) best = &o;
    if (best == nullptr) throw std::invalid_argument(fmt::format("no inner-{} order was timed", inner));
    return best->order;
}

// Appends `runs` to `order`'s timing in `timed`.
void add_runs(MeasuredOrders& timed, cachebook::LoopOrder order, const std::vector<double>& runs) {
    for (auto& o : timed.orders)
        if (o.order == order) o.timing.runs.insert(o.timing.runs.end(), runs.begin(), runs.end());
}

}  // namespace

InnerClaim run_inner_claim(const MeasuredOrders& heats, int runs, bool quick) {
    const std::size_t n = heats.n;
    const auto matrices = cachebook::integer_valued_matrices(n);
    std::vector<double> c_i(n * n), c_j(n * n);
    InnerClaim claim{fastest_order(heats, 'i'), fastest_order(heats, 'j'), {}, false};
    const auto multiply = [&](cachebook::LoopOrder order, std::vector<double>& c) {
        cachebook::matmul_in_order(order, n, matrices.a.data(), matrices.b.data(), c.data());
        cachebook::do_not_optimize(c.data());
        cachebook::clobber_memory();
    };
    const cachebook::Experiment declared{"inner_i",
                                         "fastest inner-i / fastest inner-j",
                                         [&] { multiply(claim.inner_i, c_i); },
                                         [&] { multiply(claim.inner_j, c_j); },
                                         {.runs = runs, .quick_runs = cachebook::kMinRunsPerSide},
                                         {.threshold = kInnerThreshold}};
    claim.outcome = cachebook::run_experiment(declared, quick, cachebook::thread_cpu_instruments());
    claim.identical = same_bytes(c_i, heats.c) && same_bytes(c_j, heats.c);
    auto& result = claim.outcome.result;
    if (n != kInnerN) {
        result.verdict = cachebook::Verdict::inconclusive;
        result.reason = fmt::format("the claim is made at N = {}, this run measured N = {}", kInnerN, n);
    }
    return claim;
}

SixOrders measure_six_orders(std::size_t n, int runs, bool quick, double seconds) {
    SixOrders out{time_orders(n, cachebook::RunBudget{1, runs, seconds}), {}};
    out.claim = run_inner_claim(out.timed, runs, quick);
    add_runs(out.timed, out.claim.inner_i, out.claim.outcome.slow_runs);
    add_runs(out.timed, out.claim.inner_j, out.claim.outcome.fast_runs);
    out.timed.identical = out.timed.identical && out.claim.identical;
    return out;
}

PaddedPrice price_padded(std::size_t n) {
    using cachebook::LoopOrder;
    PaddedPrice p;
    p.n = n;
    p.padded = n + 64 / sizeof(double);
    p.profile = cachebook::shared_profile();
    p.machine = cachebook::priced_machine(p.profile);
    if (!p.machine.usable()) return p;
    // ikj's inner loop walks rows of B and C, which the prefetcher follows; jki's walks columns.
    p.ikj = cachebook::predict_matmul(p.machine, LoopOrder::ikj, n, 0, true);
    p.ikj_padded = cachebook::predict_matmul(p.machine, LoopOrder::ikj, p.padded, 0, true);
    p.jki = cachebook::predict_matmul(p.machine, LoopOrder::jki, n, 0, false);
    p.jki_padded = cachebook::predict_matmul(p.machine, LoopOrder::jki, p.padded, 0, false);
    return p;
}

double madd_ns(const MeasuredOrders& timed, cachebook::LoopOrder order) {
    for (const auto& o : timed.orders)
        if (o.order == order) return o.timing.min() * 1e9 / cachebook::multiply_adds(timed.n);
    return 0;
}

std::vector<cachebook::PricedClaim> padded_priced(const PaddedPrice& price, const MeasuredOrders& timed,
                                                  const MeasuredOrders& again) {
    using cachebook::LoopOrder;
    const char* const left_out = "the core's own work (the multiply-adds), C's stores, and the TLB";
    std::vector<cachebook::PricedClaim> out;
    for (const auto& [order, power, padded] : {std::tuple{LoopOrder::ikj, &price.ikj, &price.ikj_padded},
                                               std::tuple{LoopOrder::jki, &price.jki, &price.jki_padded}}) {
        const std::string name(cachebook::order_name(order));
        const auto claims = cachebook::padded_claims(
            {name, name, fmt::format("N = {}", price.n), fmt::format("N = {}", price.padded), "a multiply-add", *power,
             *padded, cachebook::multiply_adds(price.n), cachebook::multiply_adds(price.padded), madd_ns(timed, order),
             madd_ns(again, order), left_out, price.machine.why_not});
        out.insert(out.end(), claims.begin(), claims.end());
    }
    return out;
}

cachebook::CacheConfig chosen_cache(std::int64_t lines, std::int64_t ways, std::int64_t line_bytes) {
    if (!std::has_single_bit(static_cast<std::uint64_t>(line_bytes)))
        throw cachebook::UsageError(fmt::format("--line-bytes {} is not a power of two", line_bytes));
    const std::int64_t set_ways = ways == 0 ? lines : ways;
    if (set_ways > lines) throw cachebook::UsageError(fmt::format("--ways {} exceeds --lines {}", ways, lines));
    if (lines % set_ways != 0)
        throw cachebook::UsageError(fmt::format("--lines {} is not a whole number of {}-way sets", lines, set_ways));
    return {static_cast<std::size_t>(lines / set_ways), static_cast<std::size_t>(set_ways),
            static_cast<std::size_t>(line_bytes)};
}

void check_simulation(std::int64_t n, std::int64_t ways, std::int64_t tile) {
    if (tile > n) throw cachebook::UsageError(fmt::format("--tile {} exceeds --n {}", tile, n));
    // Six orders (and the tiled product) of 3 n^3 accesses, each scanning every way of its set.
    const double work = 3.0 * static_cast<double>(n * n * n) * static_cast<double>(ways) * (tile > 0 ? 7 : 6);
    if (work > 4e10)
        throw cachebook::UsageError(
            fmt::format("--n {} with {} ways would take too long to simulate "
                        "(n^3 x ways is limited to about 2e9)",
                        n, ways));
}

}  // namespace ch03
