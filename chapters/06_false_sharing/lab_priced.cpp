// Chapter 6's races priced before they run: the coherence model's transfers times the profile's
// ping-pong, plus the core's own increment (cachebook/coherence.hpp, cachebook/priced.hpp).
#include "lab.hpp"

namespace ch06 {

namespace {

// What the model leaves out that the packed race meets, by operation.
std::string packed_left_out(Op op) {
    return op == Op::AtomicFetchAdd
               ? "how long a core really keeps the line: the model lets it add for one move's time, and the two "
                 "cores' adds on the one line come one after another, which the model does not add up"
               : "the store buffer: a volatile increment's store waits there and the next load reads it, so the "
                 "core goes on while the line travels; the model lets it increment for one move's time";
}

constexpr const char* kPaddedLeftOut =
    "two cpus that are one core's two threads share its units, which the profile's one-thread figure does not see";

const cachebook::Figure& own_increment(Op op, const cachebook::SharingProfile& sharing) {
    return op == Op::AtomicFetchAdd ? sharing.atomic_add_ns : sharing.volatile_increment_ns;
}

}  // namespace

RacePrice price_race(Op op, const cachebook::SharingProfile& sharing, bool two_cpus) {
    RacePrice p{op, 0, {}, {}, ""};
    const auto& work = own_increment(op, sharing);
    if (!two_cpus)
        p.why_not = "the race needs 2 cpus";
    else if (!sharing.ping_pong_ns.value)
        p.why_not = "no ping-pong in the profile (" + sharing.ping_pong_ns.source + ")";
    else if (!work.value)
        p.why_not = "no increment of the core's own in the profile";
    if (!p.why_not.empty()) return p;
    const std::size_t line = this_machine_line().bytes;
    // Each core holds the line for a burst of writes: packed, the counters share it; padded, each has its own.
    const auto burst = cachebook::writes_while_requested(*sharing.ping_pong_ns.value, *work.value);
    const auto packed = model_two_counters(sizeof(long), kPricedWrites, burst, line);
    const auto padded = model_two_counters(line, kPricedWrites, burst, line);
    p.burst = burst;
    p.packed = cachebook::shared_line_time(packed, kPricedWrites, *sharing.ping_pong_ns.value, *work.value);
    p.padded = cachebook::shared_line_time(padded, kPricedWrites, *sharing.ping_pong_ns.value, *work.value);
    return p;
}

RacePrices price_races(bool two_cpus) {
    RacePrices prices{cachebook::shared_profile(), {}};
    for (Op op : {Op::VolatileIncrement, Op::AtomicFetchAdd})
        prices.races.push_back(price_race(op, prices.profile.sharing, two_cpus));
    return prices;
}

std::vector<cachebook::PricedClaim> race_priced(const RacePrice& price, const RaceResult& race) {
    const std::string key = "two_cores_" + op_key(price.op) + "_", name = op_name(price.op) + ", 2 cores, ";
    const double packed = race.packed_ns(), padded = race.padded_ns();
    std::vector<cachebook::PricedClaim> claims = {
        {key + "packed_ns", name + "packed, ns an increment", {}, {}, "", packed, packed_left_out(price.op), ""},
        {key + "padded_ns", name + "padded, ns an increment", {}, {}, "", padded, kPaddedLeftOut, ""},
        {key + "packed_over_padded",
         name + "packed / padded",
         {},
         {},
         "",
         padded > 0 ? packed / padded : 0,
         packed_left_out(price.op),
         ""}};
    const std::string why_not = !price.why_not.empty()       ? price.why_not
                                : packed <= 0 || padded <= 0 ? "the race did not run"
                                                             : "";
    if (!why_not.empty() || !price.packed || !price.padded) {
        for (auto& c : claims) c.why_not = why_not;
        return claims;
    }
    const auto& p = *price.packed;
    const auto& q = *price.padded;
    claims[0].predicted = p.overlapped();
    claims[0].predicted_added = p.added();
    claims[0].bottleneck = p.bottleneck();
    claims[1].predicted = q.overlapped();
    claims[1].predicted_added = q.added();
    claims[1].bottleneck = q.bottleneck();
    claims[2].predicted = p.overlapped() / q.overlapped();
    claims[2].predicted_added = p.added() / q.added();
    claims[2].bottleneck = "packed " + claims[0].bottleneck + ", padded " + claims[1].bottleneck;
    return claims;
}

cachebook::PricedClaim one_core_priced(const RaceResult& race) {
    const double packed = race.packed_ns(), padded = race.padded_ns();
    return {"one_core_" + op_key(race.op) + "_packed_over_padded",
            op_name(race.op) + ", 1 core, packed / padded",
            {},
            {},
            "",
            padded > 0 ? packed / padded : 0,
            "",
            "two threads on one cpu take turns a time slice long, and the line never leaves the core: the time is "
            "the scheduler's"};
}

}  // namespace ch06
