// The measuring helpers every chapter shares (common/include/cachebook/measure.hpp) and the
// Value that carries a figure's rounding (report.hpp).
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "support.hpp"

TEST_CASE("the clock is estimated on x86-64 and 64-bit ARM, and only there", "[measure]") {
    const auto ghz = cachebook::estimate_clock_ghz(0.001);
#if defined(__x86_64__) || defined(__aarch64__)
    REQUIRE(ghz.has_value());
    CHECK(*ghz > 0);  // how fast is a [timing] question, asked below
#else
    CHECK_FALSE(ghz.has_value());
#endif
}

TEST_CASE("measured: the clock estimate is one a core can run at", "[measure][timing]") {
    const auto ghz = cachebook::estimate_clock_ghz(0.01);
    if (!ghz) CACHEBOOK_SKIP("no clock estimate on this architecture");
    INFO("estimate " << *ghz << " GHz");
    // No x86-64 core has shipped above about 6.2 GHz; a chain the core can shortcut
    // (immediate adds folded while renaming) would report several times the clock.
    CHECK(*ghz < 6.5);
    CHECK(*ghz > 0.3);
}

TEST_CASE("run_command returns what the command printed on stdout and its exit status", "[measure]") {
    const cachebook::CommandResult ok = cachebook::run_command("printf 'one\\ntwo\\n'; echo hidden >&2");
    CHECK(ok.status == 0);
    CHECK(ok.output == "one\ntwo\n");
    const cachebook::CommandResult merged = cachebook::run_command("echo shown >&2; exit 3 2>&1");
    CHECK(merged.status == 3);
    CHECK(cachebook::run_command("(echo to-stderr >&2) 2>&1").output == "to-stderr\n");
    CHECK(cachebook::run_command("kill -9 $$").status == -1);
}

TEST_CASE("wait_for_idle_threads returns once no other thread of the process runs", "[measure]") {
    std::error_code ec;
    if (!std::filesystem::is_directory("/proc/self/task", ec)) CACHEBOOK_SKIP("no /proc/self/task on this system");
    std::atomic<bool> finished{false};
    std::thread spinner([&] {  // a BLAS worker after a call: busy, yielding, for a while
        const auto start = cachebook::Clock::now();
        while (cachebook::seconds_since(start) < 0.15) std::this_thread::yield();
        finished = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the spinner has started
    CHECK(cachebook::wait_for_idle_threads(10.0));
    CHECK(finished);  // true only if the wait outlasted the spin
    spinner.join();

    std::mutex m;
    std::condition_variable cv;
    bool go = false;
    std::thread sleeper([&] {  // a worker asleep on a condition: idle, so no wait
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return go; });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(cachebook::wait_for_idle_threads(10.0));
    {
        std::lock_guard lock(m);
        go = true;
    }
    cv.notify_one();
    sleeper.join();
}

TEST_CASE("a Value with decimals prints and records the same rounding", "[measure][report]") {
    const auto v = cachebook::Value::measured("k", 12.3456, 2);
    CHECK(v.text() == "12.35");
    CHECK(v.json().get<double>() == 12.35);
    CHECK(v.is_measured());
    const auto e = cachebook::Value::exact("k", 0.25, 1);  // a tie: the JSON rounds as the text does
    CHECK(e.text() == "0.2");
    CHECK(e.json().get<double>() == 0.2);
    CHECK_FALSE(e.is_measured());
    CHECK(cachebook::Value::measured("k", std::nan(""), 1).json().is_null());
    CHECK(cachebook::Value::measured("k", 2.0, 0).text() == "2");
}
