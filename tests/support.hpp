#pragma once
// Shared by the tests: skipping with a stated reason.
#include <catch2/catch.hpp>

// Catch2 2.x has no skip; ctest marks a test skipped when its output holds
// "SKIPPED:" (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt). The reason is printed.
#define CACHEBOOK_SKIP(reason)       \
    do {                             \
        WARN("SKIPPED: " << reason); \
        return;                      \
    } while (false)

#include <cstdlib>
#include <fstream>
#include <string>

namespace cachebook_test {

#ifdef CACHEBOOK_TEST_DATA
/// The path of a file in tests/data (in the targets that define CACHEBOOK_TEST_DATA: a test that
/// uses it elsewhere does not compile).
inline std::string test_data(const std::string& name) {
    return std::string(CACHEBOOK_TEST_DATA) + "/" + name;
}
#endif

/// Why this test program runs under an emulator, or "" when it runs on its own CPU. Two signs:
/// CACHEBOOK_EMULATOR (the command the cross build runs its programs with), or /proc/cpuinfo
/// describing a CPU of another architecture than the one this program was compiled for
/// (qemu-user passes the host's /proc/cpuinfo through).
inline std::string emulation_reason() {
    if (const char* emulator = std::getenv("CACHEBOOK_EMULATOR"); emulator && *emulator)
        return std::string("it runs under ") + emulator + " (CACHEBOOK_EMULATOR)";
#if defined(__aarch64__)
    const char* foreign = "vendor_id";  // a field only x86 CPUs have in /proc/cpuinfo
    const char* compiled_for = "an aarch64 program on an x86-64 CPU";
#elif defined(__x86_64__)
    const char* foreign = "CPU implementer";  // a field only ARM CPUs have
    const char* compiled_for = "an x86-64 program on an ARM CPU";
#else
    const char* foreign = nullptr;
    const char* compiled_for = "";
#endif
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; foreign && std::getline(cpuinfo, line);)
        if (line.rfind(foreign, 0) == 0)
            return std::string("this is ") + compiled_for + " (/proc/cpuinfo): an emulator runs it";
    return "";
}

}  // namespace cachebook_test
