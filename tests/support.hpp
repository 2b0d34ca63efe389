#pragma once
// Shared by the tests: skipping with a stated reason.
#include <catch2/catch.hpp>

// Catch2 2.x has no skip; ctest marks a test skipped when its output holds
// "SKIPPED:" (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt). The reason is printed.
#define CACHEBOOK_SKIP(reason)                   \
    do {                                         \
        WARN("SKIPPED: " << reason);             \
        return;                                  \
    } while (false)
