#include "lab.hpp"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
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

OrderSizing order_sizing(int runs, double seconds) {
    return {{runs, runs, seconds}, {std::min(2, runs), runs, seconds}};
}

namespace {
// The budget `o` is timed by now (OrderSizing).
const cachebook::RunBudget& budget_of(const MeasuredOrders& out, const OrderTiming& o, const OrderSizing& sizing) {
    const char inner = inner_variable(o.order);
    const auto done = static_cast<int>(o.timing.runs.size());
    const bool out_of_race = done >= sizing.table.floor && o.timing.min() > kOutOfRace * out.min_of(inner);
    return inner == 'k' || out_of_race ? sizing.table : sizing.claim;
}
}  // namespace

MeasuredOrders time_orders(std::size_t n, const OrderSizing& sizing, const std::vector<cachebook::LoopOrder>& orders) {
    const auto matrices = cachebook::integer_valued_matrices(n);
    MeasuredOrders out;
    out.n = n;
    std::vector<double> first(n * n), c(n * n);
    bool have_first = false;
    out.identical = true;
    if (orders.empty())
        for (cachebook::LoopOrder order : cachebook::kAllOrders) out.orders.push_back({order, {}});
    else
        for (cachebook::LoopOrder order : orders) out.orders.push_back({order, {}});
    // Round-robin over the orders, so that a noisy moment of the machine is shared among them; an
    // order leaves the rounds when its budget says so, and does not come back.
    const auto began = cachebook::Clock::now();
    for (bool any = true; any;) {
        any = false;
        const double elapsed = cachebook::seconds_since(began);
        for (auto& o : out.orders) {
            if (!budget_of(out, o, sizing).another(static_cast<int>(o.timing.runs.size()), elapsed)) continue;
            any = true;
            const double start = cachebook::thread_cpu_seconds();
            cachebook::matmul_in_order(o.order, n, matrices.a.data(), matrices.b.data(), c.data());
            o.timing.runs.push_back(cachebook::thread_cpu_seconds() - start);
            cachebook::do_not_optimize(c.data());
            cachebook::clobber_memory();
            if (!have_first) {
                first = c;
                have_first = true;
            } else if (std::memcmp(first.data(), c.data(), n * n * sizeof(double)) != 0) {
                out.identical = false;
            }
        }
    }
    for (double v : first) out.checksum += v;
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

namespace {
// The fastest run of round r among the orders with this inner variable; 0 when none was timed.
double round_min(const MeasuredOrders& timed, char inner, std::size_t r) {
    double best = 0;
    for (const auto& o : timed.orders)
        if (inner_variable(o.order) == inner && r < o.timing.runs.size())
            best = best == 0 ? o.timing.runs[r] : std::min(best, o.timing.runs[r]);
    return best;
}

}  // namespace

std::size_t claim_rounds(const MeasuredOrders& timed) {
    std::size_t i = 0, j = 0;
    for (const auto& o : timed.orders) {
        auto& group = inner_variable(o.order) == 'i' ? i : j;
        if (inner_variable(o.order) != 'k') group = std::max(group, o.timing.runs.size());
    }
    return std::min(i, j);
}

cachebook::ClaimResult inner_claim(const MeasuredOrders& timed, double max_noise) {
    const std::size_t rounds = claim_rounds(timed);
    std::vector<double> inner_i, inner_j;
    for (std::size_t r = 0; r < rounds; ++r) {
        inner_i.push_back(round_min(timed, 'i', r));
        inner_j.push_back(round_min(timed, 'j', r));
    }
    const bool both = rounds > 0 && inner_i.front() > 0 && inner_j.front() > 0;
    cachebook::ClaimResult none{both ? timed.min_of('i') / timed.min_of('j') : 0, 0, kInnerThreshold,
                                cachebook::Verdict::inconclusive, ""};
    if (!both)
        none.reason = "an inner-i and an inner-j order must both be timed";
    else if (timed.n != kInnerN)
        none.reason = fmt::format("the claim is made at N = {}, this run measured N = {}", kInnerN, timed.n);
    else if (rounds < 2)
        none.reason = "one round of runs gives no control: run at least two";
    if (!none.reason.empty()) return none;
    return cachebook::decide(inner_i, inner_j, {kInnerThreshold, static_cast<int>(rounds), max_noise});
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
