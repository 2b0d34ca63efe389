#pragma once
// The course notes' six loop orders table (misses per inner iteration, N = 64, 64-byte lines,
// fully associative LRU caches of 4 and 32 lines), held by two tests: the model's
// (tests/test_cache.cpp, through common's access streams) and chapter 3's (its own runs).
#include <cstddef>
#include <vector>

#include "cachebook/trace.hpp"

namespace cachebook_test {

struct SixOrdersRow {
    std::size_t lines;
    cachebook::LoopOrder order;
    const char *a, *b, *c, *total;  // as the notes print them: three decimals
};

inline const std::vector<SixOrdersRow>& notes_six_orders() {
    using cachebook::LoopOrder;
    static const std::vector<SixOrdersRow> rows = {
        {4, LoopOrder::ijk, "0.125", "1.000", "0.002", "1.127"},
        {4, LoopOrder::jik, "0.125", "1.000", "0.016", "1.141"},
        {4, LoopOrder::jki, "1.000", "0.016", "1.000", "2.016"},
        {4, LoopOrder::kji, "1.000", "0.002", "1.000", "2.002"},
        {4, LoopOrder::kij, "0.016", "0.125", "0.125", "0.266"},
        {4, LoopOrder::ikj, "0.002", "0.125", "0.125", "0.252"},
        {32, LoopOrder::ijk, "0.125", "1.000", "0.002", "1.127"},
        {32, LoopOrder::jik, "0.125", "1.000", "0.016", "1.141"},
        {32, LoopOrder::jki, "1.000", "0.016", "1.000", "2.016"},
        {32, LoopOrder::kji, "1.000", "0.002", "1.000", "2.002"},
        {32, LoopOrder::kij, "0.016", "0.002", "0.125", "0.143"},
        {32, LoopOrder::ikj, "0.002", "0.125", "0.002", "0.129"},
    };
    return rows;
}

}  // namespace cachebook_test
