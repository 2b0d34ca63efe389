#pragma once
// Chapter 3's lab: the six orders run for real and timed, how the tables compare the
// simulation with the analysis, and the checks of the reader's own cache.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/experiment.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/priced.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/trace.hpp"
#include "six_orders.hpp"

namespace ch03 {

/// The order of the course notes' matrices, simulated in their 4-line and 32-line caches.
inline constexpr std::size_t kNotesN = 64;

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
    std::vector<double> c;                          ///< the first order's C
    [[nodiscard]] double min_of(char inner) const;  ///< fastest order with this inner variable
    [[nodiscard]] double fastest() const;           ///< fastest of all the orders
};
/// Times the given orders (all six by default), round-robin, each as `runs` says (its floor, then
/// more while its seconds of the wall clock last), by the calling thread's CPU clock
/// (cachebook/cpu_time.hpp); C is compared byte for byte.
MeasuredOrders time_orders(std::size_t n, const cachebook::RunBudget& runs,
                           const std::vector<cachebook::LoopOrder>& orders = {});
/// Every order `runs` times.
inline MeasuredOrders time_orders(std::size_t n, int runs, const std::vector<cachebook::LoopOrder>& orders = {}) {
    return time_orders(n, cachebook::RunBudget{runs, runs, 0}, orders);
}

/// The chapter's claim: the fastest inner-i order takes at least this many times as long as the
/// fastest inner-j one (at N = 512).
inline constexpr double kInnerThreshold = 5.0;
inline constexpr std::size_t kInnerN = 512;
/// The claim run: its two sides, the fastest inner-i and the fastest inner-j order of the heats
/// (one run of each order at least), and what the kit gave.
struct InnerClaim {
    cachebook::LoopOrder inner_i{}, inner_j{};
    cachebook::ExperimentResult outcome;
    bool identical = false;  ///< both sides' C equal the heats' C, byte for byte
};
/// The claim, declared once (cachebook/experiment.hpp) and run by the kit at the heats' N: the
/// two sides A B B A, one untimed call of each first, `runs` runs a side (kMinRunsPerSide with
/// `quick`, the tests' size), by the calling thread's CPU clock; the control is each side's odd
/// runs against its even runs. Inconclusive, with the reason, at an N other than kInnerN
/// (--quick, --measure-n).
InnerClaim run_inner_claim(const MeasuredOrders& heats, int runs, bool quick);

/// Section 5's measurement: the heats, every order once and more rounds only while `seconds` of
/// the wall clock last (at most `runs`), then the claim on the heats' fastest of each group
/// (run_inner_claim). The claim's runs join its two orders' runs, so the table's minima are of
/// every run; the four other orders, which only the table shows, keep the heats' runs.
struct SixOrders {
    MeasuredOrders timed;
    InnerClaim claim;
};
inline constexpr double kOrdersSeconds = 0.5, kPaddedSeconds = 0.5;
SixOrders measure_six_orders(std::size_t n, int runs, bool quick, double seconds = kOrdersSeconds);

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

/// The cache of the reader's choice: `lines` lines of `line_bytes` bytes in sets of
/// `ways` (0: fully associative). Throws cachebook::UsageError naming the option that
/// does not fit.
cachebook::CacheConfig chosen_cache(std::int64_t lines, std::int64_t ways, std::int64_t line_bytes);
/// Throws cachebook::UsageError when a tile exceeds n, or when simulating n x n matrices
/// in a cache of `ways` ways would take more than seconds (the model scans every way).
void check_simulation(std::int64_t n, std::int64_t ways, std::int64_t tile);

}  // namespace ch03
