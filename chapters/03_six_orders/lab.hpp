#pragma once
// Chapter 3's lab: the six orders run for real and timed, how the tables compare the
// simulation with the analysis, and the checks of the reader's own cache.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/claim.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/trace.hpp"
#include "six_orders.hpp"

namespace ch03 {

/// "0.125": three decimals, as the reference tables print them.
std::string three(double v);

/// Where the simulation departs from the textbook by more than a quarter of the analytic value.
bool departs(double simulated, double analytic);

/// The six orders run for real on n x n doubles of integer value.
struct OrderTiming {
    cachebook::LoopOrder order{};
    cachebook::Timing timing;
};
struct MeasuredOrders {
    std::size_t n = 0;
    std::vector<OrderTiming> orders;                ///< in the book's order
    bool identical = false;                         ///< every C equal, byte for byte, to the first
    double checksum = 0;                            ///< sum of C's entries
    [[nodiscard]] double min_of(char inner) const;  ///< fastest order with this inner variable
    [[nodiscard]] double fastest() const;           ///< fastest of all the orders
};
/// How time_orders sizes the runs of each order: an order of the claim (inner i, inner j) takes
/// `claim`'s; an inner-k order, shown in the table only, takes `table`'s, and so does an order of
/// the claim whose fastest run, from `table.floor` runs on, is over kOutOfRace times its group's
/// fastest: it cannot be the group's fastest within the claim's noise.
struct OrderSizing {
    cachebook::RunBudget claim, table;
};
inline constexpr double kOutOfRace = 1.25;
/// The sizing of the chapter's run: the claim's orders `runs` runs (--runs, 6 by default:
/// kMinRunsPerSide), the table's two, then up to `runs` while `seconds` of the wall clock last.
inline constexpr double kOrdersSeconds = 4.0, kPaddedSeconds = 0.5;
OrderSizing order_sizing(int runs, double seconds);
/// Times the given orders (all six by default), round-robin, each as `sizing` says, by the calling
/// thread's CPU clock (cachebook/cpu_time.hpp); C is compared byte for byte.
MeasuredOrders time_orders(std::size_t n, const OrderSizing& sizing,
                           const std::vector<cachebook::LoopOrder>& orders = {});
/// Every order `runs` times.
inline MeasuredOrders time_orders(std::size_t n, int runs, const std::vector<cachebook::LoopOrder>& orders = {}) {
    return time_orders(n, OrderSizing{{runs, runs, 0}, {runs, runs, 0}}, orders);
}

/// ns a multiply-add of `order`'s fastest run in `timed`; 0 when it was not timed.
double madd_ns(const MeasuredOrders& timed, cachebook::LoopOrder order);

/// The time model's price of ikj (inner j) and jki (inner i) at N and at N plus one line of
/// doubles (cachebook/priced.hpp), made before either is timed; nullopt where it cannot price.
struct PaddedPrice {
    cachebook::Profile profile;
    cachebook::PricedMachine machine;
    std::size_t n = 0, padded = 0;
    std::optional<cachebook::WalkPrediction> ikj, ikj_padded, jki, jki_padded;
};
PaddedPrice price_padded(std::size_t n);
/// The priced claims of the two orders at both sizes: `timed` at N, `again` at the padded size.
std::vector<cachebook::PricedClaim> padded_priced(const PaddedPrice& price, const MeasuredOrders& timed,
                                                  const MeasuredOrders& again);

/// The rounds in which both groups of the claim had an order timed (the inner-i group's and the
/// inner-j group's longest-running order, the fewer of the two).
std::size_t claim_rounds(const MeasuredOrders& timed);

/// The chapter's claim: the fastest inner-i order takes at least this many times as long as the
/// fastest inner-j one (at N = 512).
inline constexpr double kInnerThreshold = 5.0;
inline constexpr std::size_t kInnerN = 512;
/// The claim decided by the book's rule (cachebook/claim.hpp): in each of the claim_rounds, the
/// fastest inner-i run against the fastest inner-j run, the rounds as time_orders ran them; the control is each
/// side's odd rounds against its even rounds. Inconclusive, with the reason, when the run's N is
/// not the claim's (--quick, --measure-n), a group was not timed or one round gives no control.
cachebook::ClaimResult inner_claim(const MeasuredOrders& timed, double max_noise = 0.2);

/// The cache of the reader's choice: `lines` lines of `line_bytes` bytes in sets of
/// `ways` (0: fully associative). Throws cachebook::UsageError naming the option that
/// does not fit.
cachebook::CacheConfig chosen_cache(std::int64_t lines, std::int64_t ways, std::int64_t line_bytes);
/// Throws cachebook::UsageError when a tile exceeds n, or when simulating n x n matrices
/// in a cache of `ways` ways would take more than seconds (the model scans every way).
void check_simulation(std::int64_t n, std::int64_t ways, std::int64_t tile);

}  // namespace ch03
