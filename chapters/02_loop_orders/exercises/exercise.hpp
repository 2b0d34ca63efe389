#pragma once
// Chapter 2 exercises. Write the bodies in starter.cpp; `make grade CH=02` scores them.
#include <cstddef>

#include "cachebook/cache.hpp"

namespace ch02_exercise {

/// Exercise 1 (the power-of-two trap): how many distinct sets of `cache` do
/// the lines of column 0 of a matrix of `rows` rows fall into, when its rows
/// are `leading` elements of `elem` bytes apart and it starts at address 0?
/// For the course notes' L1 (64 sets) and double a[256][256] the answer is 2.
std::size_t sets_touched_by_column(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t leading,
                                   std::size_t elem);

/// Exercise 2 (the cure): the smallest leading dimension, at least `cols`,
/// for which walking the first `walked` columns of a rows x cols matrix of
/// `elem`-byte values, column by column, pays only compulsory misses (one per
/// distinct line touched) in `cache`. For the course notes' L1 and a[256][256],
/// walking 64 columns, 256 does not do and 257 does.
std::size_t padded_leading_dimension(const cachebook::CacheConfig& cache, std::size_t rows, std::size_t cols,
                                     std::size_t walked, std::size_t elem);

}  // namespace ch02_exercise
