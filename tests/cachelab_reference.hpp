#pragma once
// The eight rows of the cachelab reference simulator's published answers (traces in
// tests/data/cachelab), which the cachesim tests hold cachesim and its OPT policy to.
#include "cachebook/cache.hpp"

namespace cachebook_test {

struct CachelabRow {
    int s, E, b;
    const char* trace;
    cachebook::Counts reference;  // hits, misses, evictions (LRU), as the reference prints them
};

inline const CachelabRow kCachelabRows[] = {
    {1, 1, 1, "yi2.trace", {9, 8, 6, 0}},       {4, 2, 4, "yi.trace", {4, 5, 2, 0}},
    {2, 1, 4, "dave.trace", {2, 3, 1, 0}},      {2, 1, 3, "trans.trace", {167, 71, 67, 0}},
    {2, 2, 3, "trans.trace", {201, 37, 29, 0}}, {2, 4, 3, "trans.trace", {212, 26, 10, 0}},
    {5, 1, 5, "trans.trace", {231, 7, 0, 0}},   {5, 1, 5, "long.trace", {265189, 21775, 21743, 0}},
};

}  // namespace cachebook_test
