// Chapter 6's output, sections 6 to 10 (measured on this machine), after sections.cpp: each figure
// a Value made once, with its JSON key.
#include <fmt/format.h>

#include <algorithm>

#include "cachebook/claim.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/priced.hpp"
#include "sections.hpp"

namespace ch06 {
namespace {

using cachebook::Report;
using cachebook::Value;

constexpr Op kOps[] = {Op::VolatileIncrement, Op::AtomicFetchAdd};

double least(const std::vector<double>& values) {
    return values.empty() ? 0.0 : *std::min_element(values.begin(), values.end());
}

// The fastest packed and padded runs, in the table's `unit`, their ratio and the least share of a
// core a thread got, recorded under `key` + "packed_UNIT", ...; "-" and null where nothing ran.
std::vector<Value> pair_cells(const std::string& key, const std::string& unit, double packed, double padded,
                              const std::vector<double>& shares, const std::string& why) {
    if (packed <= 0 || padded <= 0)
        return {Value::unknown(key + "packed_" + unit, "-").quoted(),
                Value::unknown(key + "padded_" + unit, "-").quoted(), Value::unknown(key + "ratio", why).quoted(),
                Value::unknown(key + "least_share", "-")};
    return {Value::measured(key + "packed_" + unit, packed, "{:.2f}").quoted("{:.1f}"),
            Value::measured(key + "padded_" + unit, padded, "{:.2f}").quoted("{:.1f}"),
            Value::measured(key + "ratio", packed / padded, "{:.2f}x").quoted("{:.1f}"),
            Value::measured(key + "least_share", least(shares), 2)};
}

std::vector<Value> race_cells(const std::string& key, const RaceResult& race, const std::string& why) {
    return pair_cells(key, "ns", race.packed_ns(), race.padded_ns(), race.shares, why);
}

// Padded on two cpus against padded on one, per cpu: near 1 when the two cpus are separate cores.
Value padded_two_over_one(const std::string& key, const RaceResult& two, const RaceResult& one) {
    if (two.kit.fast_runs.empty()) return Value::unknown(key, "-").quoted();
    return Value::measured(key, two.padded_ns() / one.padded_ns(), "{:.2f}x").quoted("{:.2f}");
}

// Section 6's claims: the atomic add on two cores, then each bound of the band on one core.
void race_claims(Report& report, const std::vector<RaceResult>& two, const std::vector<RaceResult>& one) {
    report.line("  padded, 2 cores over 1 core: volatile {}, atomic {} (near 1x: two separate cores)",
                padded_two_over_one("measured.padded_two_over_one.volatile", two.at(0), one.at(0)),
                padded_two_over_one("measured.padded_two_over_one.atomic", two.at(1), one.at(1)));
    cachebook::report_experiment(report, two.at(1).kit);
    report.line("  on 1 core, packed / padded within {}x to {}x: the rule against each bound",
                Value::exact("claims.one_core_band.low", kOneCoreBand[0], "{:.1f}"),
                Value::exact("claims.one_core_band.high", kOneCoreBand[1], "{:.1f}"));
    for (const auto& race : one) {
        cachebook::report_experiment(report, race.kit);
        cachebook::report_claim(report, "one_core_" + op_key(race.op) + "_high",
                                op_name(race.op) + ", 1 core, padded / packed", one_core_upper(race));
    }
}

// A figure of the profile's in ns ("30.2 ns"), or "unavailable" where it has none.
Value profile_ns(const std::string& key, const cachebook::Figure& f, int decimals) {
    if (!f.value) return Value::unknown(key, "unavailable");
    return Value::measured_as(key, *f.value, fmt::format("{:.{}f} ns", *f.value, decimals));
}

// The races' prices, made before they ran, against what they measured.
void priced_lines(Report& report, const RacePrices& prices, const std::vector<RaceResult>& two,
                  const std::vector<RaceResult>& one) {
    const auto& sharing = prices.profile.sharing;
    report.line("  priced from this machine's profile before the races (the appendix Priced): a line moved between");
    report.line("  two cores {} (ping-pong); on a line one core has alone, an atomic add {}, a volatile increment {}",
                profile_ns("priced_from.ping_pong_ns", sharing.ping_pong_ns, 1),
                profile_ns("priced_from.atomic_add_ns", sharing.atomic_add_ns, 2),
                profile_ns("priced_from.volatile_increment_ns", sharing.volatile_increment_ns, 2));
    const std::string added = "the transfers and the core's own increment";
    for (std::size_t i = 0; i < two.size(); ++i)
        for (const auto& claim : race_priced(prices.races.at(i), two[i]))
            cachebook::report_priced(report, claim, claim.key.ends_with("over_padded") ? "{:.2f}x" : "{:.2f} ns",
                                     added);
    for (const auto& race : one) cachebook::report_priced(report, one_core_priced(race), "{:.2f}x", added);
}

}  // namespace

std::vector<RaceResult> races_section(Report& report, const Run& run, cachebook::Progress& progress) {
    report.section("Measured on this machine: {} usable cpus ({})", Value::measured("measured.usable_cpus", run.usable),
                   Value::measured("measured.cpu", cachebook::cpu_model()));
    report.line("  each thread adds 1 to its own counter; counters 8 bytes apart (packed) or {} (padded: one line)",
                Value::measured("measured.padded_stride", this_machine_line().bytes));
    report.line("  a run is one race of pinned threads ({} or {} increments each), timed from their release;",
                Value::exact("measured.iterations.volatile", race_iterations(Op::VolatileIncrement)),
                Value::exact("measured.iterations.atomic", race_iterations(Op::AtomicFetchAdd)));
    report.line("  ns per increment per cpu, the fastest of {} runs per layout; least share: of the threads,",
                Value::exact("measured.runs", run.quick ? cachebook::kMinRunsPerSide : run.runs));
    report.line("  the least share of a core one got (CPU time over time in the races; a claim on 2 cores needs {})",
                Value::exact("measured.own_core_share", cachebook::kOwnCoreShare, "{:.2f}"));
    // The prediction comes first: the profile and the model, before any race is timed.
    const auto prices = price_races(!run.two_cpus.empty());
    report.record("profile", cachebook::profile_json(prices.profile));
    auto table = report.table({"operation, cpus", "packed ns", "padded ns", "packed/padded", "least share"});
    std::vector<RaceResult> two, one;
    for (const auto& [cpus, group, into] :
         {std::tuple{run.two_cpus, "distinct", &two},
          std::tuple{std::vector<int>{run.first_cpu, run.first_cpu}, "same_core", &one}})
        for (Op op : kOps) {
            into->push_back(run_race(op, cpus, static_cast<int>(run.runs), run.quick));
            progress.step(op_name(op));
            auto cells = race_cells(fmt::format("measured.{}.{}.", group, op_key(op)), into->back(), "needs 2 cpus");
            cells.insert(cells.begin(),
                         fmt::format("{}, 2 threads on {}", op_name(op), into == &two ? "2 cores" : "1 core"));
            table.row(std::move(cells));
        }
    table.print();
    priced_lines(report, prices, two, one);
    race_claims(report, two, one);
    return two;
}

void handoff_section(Report& report, const Run& run, const std::vector<RaceResult>& two) {
    report.section("What one move of the line costs: a flag bounced between two cores");
    const int handoff_runs = run.quick ? 20 : 50;
    const std::uint64_t trips = 2000;
    const bool can = !run.two_cpus.empty();
    const double handoff = can ? handoff_ns(run.two_cpus[0], run.two_cpus[1], trips, handoff_runs) : 0.0;
    report.line("  one-way hand-off: {} ns (minimum of {} runs of {} round trips)",
                can ? Value::measured("measured.handoff_ns", handoff, "{:.0f}").quoted()
                    : Value::unknown("measured.handoff_ns", "needs 2 cpus").quoted(),
                Value::exact("measured.handoff_runs", handoff_runs),
                Value::exact("measured.handoff_round_trips", trips));
    const double ghz = clock_now_ghz(run.quick);
    const auto cycles = can ? cycles_at(handoff, ghz) : std::nullopt;
    report.line("  in cycles of the clock measured now ({} GHz): {}",
                ghz > 0 ? Value::measured("measured.clock_ghz", ghz, "{:.2f}").quoted()
                        : Value::unknown("measured.clock_ghz", "unknown").quoted(),
                cycles
                    ? Value::measured("measured.handoff_cycles", *cycles, "{:.0f}").quoted()
                    : Value::unknown("measured.handoff_cycles", can ? "no clock measured" : "needs 2 cpus").quoted());
    report.record("measured.handoff_against_notes",
                  cycles ? nlohmann::json(against_transfer_range(*cycles)) : nlohmann::json(nullptr));
    for (const auto& race : two) {
        const bool timed = !race.kit.slow_runs.empty();
        const double extra_ns = timed ? race.packed_ns() - race.padded_ns() : 0.0;
        const auto every = can && timed ? increments_per_move(handoff, extra_ns) : std::nullopt;
        const std::string key = "measured.implied_burst." + op_key(race.op);
        report.line(
            "  {}: packed costs {} ns more per increment: if each move stalls a core for\n"
            "    one hand-off, the line moved about once every {} increments",
            op_name(race.op),
            timed ? Value::measured("measured.extra_ns." + op_key(race.op), extra_ns, "{:.2f}")
                  : Value::unknown("measured.extra_ns." + op_key(race.op), "-"),
            every ? Value::measured(key, *every, "{:.0f}").quoted() : Value::unknown(key, "-").quoted());
    }
}

// Two threads on two cpus are section 6's race: its measurement is reused, not taken again.
void sweep_section(Report& report, const Run& run, const std::vector<RaceResult>& two, cachebook::Progress& progress) {
    report.section("N threads, N counters: packed (one line per 8 counters) vs padded, raced as in 6");
    auto table = report.table_of_rows(
        "measured.sweep", {"threads", "cpus", "operation", "packed ns", "padded ns", "packed/padded", "note"});
    for (int threads : sweep_counts(static_cast<int>(run.max_threads))) {
        const int cores = std::min(threads, run.usable);
        const bool over = threads > run.usable, shared = threads == 2 && cores == 2;
        for (std::size_t i = 0; i < std::size(kOps); ++i) {
            const auto race = shared ? two.at(i) : sweep_race(kOps[i], threads, cores, static_cast<int>(run.runs));
            progress.step(fmt::format("{} threads", threads));
            auto cells = race_cells("", race, "-");
            cells.back() = Value::measured_as("oversubscribed", over,
                                              over     ? "oversubscribed"
                                              : shared ? "as in 6"
                                                       : "");
            cells.insert(cells.begin(), {Value::exact("threads", threads), Value::measured("cpus", cores),
                                         Value::exact_as("op", op_key(kOps[i]), op_name(kOps[i]))});
            table.row(std::move(cells), {{"least_share", least(race.shares)}, {"iterations", race.iterations}});
        }
    }
    table.print();
    report.line("  ns per increment per cpu; threads beyond the cpus share them (oversubscribed)");
}

void queue_lock_section(Report& report, const Run& run, cachebook::Progress& progress) {
    report.section("A queue's head and tail, and a lock beside its data: packed against padded");
    const CaseModelSettings m;
    report.line("  the model, 2 cores, 64-byte lines: a queue of {} items through a ring of {} slots, the consumer",
                Value::exact("queue_lock.model.queue_items", m.items), Value::exact("queue_lock.model.ring", m.ring));
    report.line("  {} behind, each side rereading the other's index every {} items; a lock taken {} times",
                Value::exact("queue_lock.model.lag", m.lag), Value::exact("queue_lock.model.refresh", m.refresh),
                Value::exact("queue_lock.model.sections", m.sections));
    report.line("  in turn, {} guarded writes per hold, the waiter reading the lock before each",
                Value::exact("queue_lock.model.writes", kLockWrites));
    auto model = counts_table(report, "case, layout");
    for (const auto& c : case_models(m)) counts_row(report, model, c.label, c.key, c.stats);
    model.print();
    report.blank_line();
    const int runs = 2 * static_cast<int>(run.runs);  // the queue and lock runs are short
    report.line("  measured on 2 cpus, padded one line ({} bytes) apart; whole runs timed as the races in 6,",
                Value::measured("queue_lock.padded_stride", this_machine_line().bytes));
    report.line("  the fastest of {} per layout:",
                Value::exact("queue_lock.runs", run.quick ? cachebook::kMinRunsPerSide : runs));
    auto table = report.table({"case", "operations", "packed ms", "padded ms", "packed/padded", "least share"});
    for (auto c : {Case::Queue, Case::Lock}) {
        const std::string key = "queue_lock.measured." + case_key(c) + ".";
        const auto o = run.two_cpus.empty()
                           ? cachebook::ExperimentResult{}
                           : time_case(c, run.two_cpus, run.quick, run.quick ? cachebook::kMinRunsPerSide : runs);
        if (!run.two_cpus.empty()) progress.step(case_key(c));
        auto cells =
            pair_cells(key, "ms", least(o.slow_runs) * 1e3, least(o.fast_runs) * 1e3, o.shares, "needs 2 cpus");
        cells.insert(cells.begin(), {c == Case::Queue ? "queue: items passed" : "lock: holds per thread",
                                     Value::exact(key + "operations", case_operations(c, run.quick))});
        table.row(std::move(cells));
    }
    table.print();
    // Not a claim: which side of the queue waits for the other decides its time, not the layout.
    report.line("  no claim on either ratio: a run's waits, not the layout alone, set them (the text says why)");
}

// Section 10: the notes' perf stat events, packed against padded, or why there are none.
void counters_section(Report& report, const Run& run) {
    report.section("Hardware counters: perf stat -e cache-misses,LLC-load-misses, packed against padded");
    const std::uint64_t increments = kCounterIncrements / (run.quick ? 4 : 1);
    report.line("  2 threads, {} atomic increments each, counted with perf_event_open:",
                Value::exact("counters.increments", increments));
    const auto [packed, padded] = count_race_misses(run.two_cpus, increments);
    report.line("  counters: {}", Value::measured_as("counters.available", packed.available,
                                                     packed.available ? "available" : "unavailable"));
    report.line("    {}",
                Value::measured_as("counters.why_not",
                                   packed.available ? nlohmann::json(nullptr) : nlohmann::json(packed.why_not),
                                   packed.available ? "both events opened" : packed.why_not));
    auto table = report.table({"event", "packed", "padded", "packed/padded"});
    const bool both = packed.available && padded.available;
    for (const auto& [event, key, a, b] :
         {std::tuple{"cache-misses", "cache_misses", packed.cache_misses, padded.cache_misses},
          std::tuple{"LLC-load-misses", "llc_load_misses", packed.llc_load_misses, padded.llc_load_misses}}) {
        const std::string at = std::string("counters.") + key;
        if (!both) {
            table.row({event, Value::unknown(at + ".packed", "-"), Value::unknown(at + ".padded", "-"),
                       Value::unknown(at + ".ratio", "unavailable").quoted()});
            continue;
        }
        table.row({event, Value::measured(at + ".packed", a), Value::measured(at + ".padded", b),
                   b > 0 ? Value::measured(at + ".ratio", static_cast<double>(a) / static_cast<double>(b), "{:.1f}x")
                               .quoted("{:.1f}")
                         : Value::unknown(at + ".ratio", "padded counted 0").quoted()});
    }
    table.print();
    report.line("  the MESI model's stand-in, 2 cores x 1000 increments: packed {} transfers (strict alternation)",
                Value::exact("counters.stand_in.packed_strict", model_two_counters(8, 1000, 1).transfers));
    report.line("  to {} (bursts of 64); padded {}",
                Value::exact("counters.stand_in.packed_burst_64", model_two_counters(8, 1000, 64).transfers),
                Value::exact("counters.stand_in.padded", model_two_counters(64, 1000, 1).transfers));
}

}  // namespace ch06
