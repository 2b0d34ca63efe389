// What one line costs when cores write it in turn: the profile's ping-pong and the core's own
// increments, the price of a shared line's transfers (coherence.hpp), and chapter 6's races priced.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "../chapters/06_false_sharing/lab.hpp"
#include "cachebook/coherence.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/profile.hpp"
#include "support.hpp"

namespace {

// Two cores, `writes` writes each to byte 0 and byte `offset_b`, taking turns one write at a time.
cachebook::CoherenceStats turns(std::uint64_t offset_b, std::uint64_t writes) {
    std::vector<std::vector<cachebook::CoreAccess>> streams(2);
    streams[0].assign(writes, {0, cachebook::AccessKind::Write});
    streams[1].assign(writes, {offset_b, cachebook::AccessKind::Write});
    cachebook::CoherenceModel model(2);
    model.run(cachebook::interleave(streams, 1));
    return model.total();
}

cachebook::SharingProfile hand_sharing() {
    return {{64.0, 0.05, "ping-pong"}, {6.0, 0, "atomic adds"}, {1.5, 0, "volatile increments"}};
}

}  // namespace

TEST_CASE("a shared line's transfers priced by hand: 2047 moves at 64 ns over 1024 writes, plus 6 ns of work",
          "[coherence]") {
    // Taking turns, the first write fills from memory and every later one takes the line from the
    // other core: 2 x 1024 - 1 transfers. Over one core's 1024 writes, 2047 x 64 / 1024 = 127.9375 ns.
    const auto packed = turns(8, 1024);
    REQUIRE(packed.transfers == 2047);
    const auto t = cachebook::shared_line_time(packed, 1024, 64.0, 6.0);
    CHECK(t.transfers_ns == 127.9375);
    CHECK(t.core_ns == 6.0);
    CHECK(t.overlapped() == 127.9375);
    CHECK(t.added() == 133.9375);
    CHECK(t.bottleneck() == "transfer-bound");
    // One line apart nothing moves: the core's own work alone.
    const auto padded = cachebook::shared_line_time(turns(64, 1024), 1024, 64.0, 6.0);
    CHECK(padded.transfers_ns == 0.0);
    CHECK(padded.overlapped() == 6.0);
    CHECK(padded.added() == 6.0);
    CHECK(padded.bottleneck() == "core-bound");
    CHECK_THROWS_AS(cachebook::shared_line_time(packed, 0, 64.0, 6.0), std::invalid_argument);
    CHECK_THROWS_AS(cachebook::shared_line_time(packed, 1024, -1.0, 6.0), std::invalid_argument);
}

TEST_CASE("a core writes a held line for one move's time: 1 + floor(move / write)", "[coherence]") {
    CHECK(cachebook::writes_while_requested(64.0, 6.0) == 11);  // 64 / 6 = 10.7
    CHECK(cachebook::writes_while_requested(64.0, 64.0) == 2);
    CHECK(cachebook::writes_while_requested(63.0, 64.0) == 1);
    CHECK(cachebook::writes_while_requested(0.0, 5.0) == 1);
    CHECK_THROWS_AS(cachebook::writes_while_requested(64.0, 0.0), std::invalid_argument);
    CHECK_THROWS_AS(cachebook::writes_while_requested(-1.0, 6.0), std::invalid_argument);
}

TEST_CASE("chapter 6 prices a race from the model's turns and the profile, before it runs", "[ch06]") {
    const auto price = ch06::price_race(ch06::Op::AtomicFetchAdd, hand_sharing(), true);
    REQUIRE(price.why_not.empty());
    REQUIRE(price.packed.has_value());
    // Bursts of 1 + floor(64 / 6) = 11 writes; kPricedWrites = 10000 a core make ceil(10000 / 11) = 910
    // bursts each, 2 x 910 - 1 = 1819 transfers at 64 ns over 10000 writes, and the atomic add's 6 ns.
    CHECK(price.burst == 11);
    CHECK(price.packed->transfers_ns == 1819.0 * 64.0 / 10000.0);
    CHECK(price.packed->core_ns == 6.0);
    CHECK(price.padded->transfers_ns == 0.0);
    CHECK(price.padded->core_ns == 6.0);
    const auto volatile_price = ch06::price_race(ch06::Op::VolatileIncrement, hand_sharing(), true);
    CHECK(volatile_price.burst == 43);  // 1 + floor(64 / 1.5)
    CHECK(volatile_price.padded->core_ns == 1.5);

    // A race of 1000 increments a thread whose fastest runs took 200 us packed and 10 us padded.
    ch06::RaceResult race{ch06::Op::AtomicFetchAdd, {0, 1}, 1000, {}, true, {}};
    race.kit.slow_runs = {300e-6, 200e-6};
    race.kit.fast_runs = {10e-6, 11e-6};
    const auto claims = ch06::race_priced(price, race);
    REQUIRE(claims.size() == 3);
    CHECK(claims[0].key == "two_cores_atomic_packed_ns");
    CHECK(claims[0].predicted == 1819.0 * 64.0 / 10000.0);  // overlapped: the larger
    CHECK(claims[0].predicted_added == 1819.0 * 64.0 / 10000.0 + 6.0);
    CHECK(claims[0].bottleneck == "transfer-bound");
    CHECK(claims[0].measured == Approx(200.0));
    CHECK(claims[1].key == "two_cores_atomic_padded_ns");
    CHECK(claims[1].predicted == 6.0);
    CHECK(claims[1].bottleneck == "core-bound");
    CHECK(claims[1].measured == Approx(10.0));
    CHECK(claims[2].key == "two_cores_atomic_packed_over_padded");
    CHECK(claims[2].predicted == 1819.0 * 64.0 / 10000.0 / 6.0);
    CHECK(claims[2].predicted_added == (1819.0 * 64.0 / 10000.0 + 6.0) / 6.0);
    CHECK(claims[2].measured == Approx(20.0));
    CHECK(claims[2].bottleneck == "packed transfer-bound, padded core-bound");
}

TEST_CASE("chapter 6 says why a race is not priced", "[ch06]") {
    ch06::RaceResult race{ch06::Op::VolatileIncrement, {}, 1000, {}, false, {}};
    for (const auto& c : ch06::race_priced(ch06::price_race(race.op, hand_sharing(), false), race)) {
        CHECK_FALSE(c.predicted.has_value());
        CHECK(c.why_not == "the race needs 2 cpus");
    }
    auto no_ping_pong = hand_sharing();
    no_ping_pong.ping_pong_ns = {std::nullopt, 0, "unavailable: one cpu"};
    const auto price = ch06::price_race(race.op, no_ping_pong, true);
    CHECK_FALSE(price.packed.has_value());
    CHECK(price.why_not == "no ping-pong in the profile (unavailable: one cpu)");
    race.cpus = {0, 0};
    race.kit.slow_runs = {1e-3};
    race.kit.fast_runs = {1e-3};
    const auto one_core = ch06::one_core_priced(race);
    CHECK(one_core.key == "one_core_volatile_packed_over_padded");
    CHECK_FALSE(one_core.predicted.has_value());
    CHECK(one_core.measured == 1.0);
    CHECK(one_core.why_not.find("take turns") != std::string::npos);
}

TEST_CASE("profile: the sharing figures read back from JSON, and doctor's line shows them", "[time_model]") {
    cachebook::Profile p;
    p.sharing = hand_sharing();
    const auto json = cachebook::profile_json(p);
    CHECK(json["sharing"]["ping_pong_ns"]["value"] == 64.0);
    const auto back = cachebook::profile_from_json(json);
    CHECK(back.sharing.ping_pong_ns.value == 64.0);
    CHECK(back.sharing.ping_pong_ns.spread == 0.05);
    CHECK(back.sharing.atomic_add_ns.value == 6.0);
    CHECK(back.sharing.volatile_increment_ns.source == "volatile increments");
    CHECK(cachebook::profile_json(back) == json);
    const auto lines = cachebook::profile_lines(p);
    const auto line = std::find_if(lines.begin(), lines.end(), [](const auto& l) { return l.rfind("lines ", 0) == 0; });
    REQUIRE(line != lines.end());
    CHECK(line->find("moved between two cores in 64.0 ns (±5%) (ping-pong)") != std::string::npos);
    CHECK(line->find("an atomic add 6.00 ns (±0%), a volatile increment 1.50 ns (±0%)") != std::string::npos);
    p.sharing.ping_pong_ns = {std::nullopt, 0, "unavailable: one cpu"};
    CHECK(cachebook::profile_lines(p)[line - lines.begin()].find("moved between two cores: unavailable: one cpu") !=
          std::string::npos);
    auto old = json;
    old.erase("sharing");  // a file of the shape before the ping-pong: refused, so measured again
    CHECK_THROWS_AS(cachebook::profile_from_json(old), nlohmann::json::exception);
}

namespace {

cachebook::SharingProfile sharing_measured_here() {
    return cachebook::measure_profile(cachebook::LevelSizes{}, {.runs = 1}).sharing;
}

}  // namespace

TEST_CASE("profile: the ping-pong runs on two cpus, and on one says why it cannot", "[time_model][threads]") {
    const auto here = sharing_measured_here();
    REQUIRE(here.atomic_add_ns.value.has_value());
    REQUIRE(here.volatile_increment_ns.value.has_value());
    CHECK(*here.atomic_add_ns.value > 0);
    CHECK(*here.volatile_increment_ns.value > 0);
    if (cachebook::usable_cpus() >= 2) {
        INFO(here.ping_pong_ns.source);
        if (here.ping_pong_ns.value)
            CHECK(*here.ping_pong_ns.value > 0);
        else  // a machine too busy to run both threads at once for a run says so
            CHECK(here.ping_pong_ns.source.rfind("unavailable: ", 0) == 0);
    }
    // A thread pinned to one cpu measures as a process that may use one: its threads inherit the mask.
    cachebook::SharingProfile one;
    bool pinned = false;
    std::thread alone([&] {
        pinned = cachebook::pin_to_cpu(cachebook::nth_usable_cpu(0));
        if (pinned) one = sharing_measured_here();
    });
    alone.join();
    if (!pinned) CACHEBOOK_SKIP("could not pin a thread to one cpu");
    CHECK_FALSE(one.ping_pong_ns.value.has_value());
    CHECK(one.ping_pong_ns.source.rfind("unavailable: this process may use one cpu", 0) == 0);
}
