#pragma once
// Chapter 6 exercises. Write the bodies in starter.cpp; `make grade CH=06` scores them.
#include <cstddef>
#include <cstdint>

namespace ch06_exercise {

/// Exercise 1 (the course notes' per-thread stats of a server): thread t's record
/// of `record_bytes` bytes goes in a buffer that starts at byte address `base`
/// (not necessarily at a line boundary). Return the address of thread t's
/// record such that no two threads' records share a line of `line_bytes`
/// bytes, records never overlap, and no more space is used than that needs:
/// the first record at the first line boundary at or after `base`, each next
/// one the fewest whole lines further on.
std::uint64_t padded_record_address(std::uint64_t base, int thread, std::size_t record_bytes, std::size_t line_bytes);

/// Exercise 2 (the model's transfer count): `workers` cores; worker w
/// increments the 8-byte field at `field_offset` of element w of an array of
/// `elem_size`-byte elements starting at address 0, `writes_per_worker` times;
/// the cores take turns in bursts of `burst` writes (worker 0's burst, then
/// worker 1's, ..., round and round, as cachebook::interleave does). Lines
/// are 64 bytes. Without running the model, predict how many line transfers
/// (cache-to-cache moves) the MESI model counts.
std::uint64_t predict_transfers(std::size_t elem_size, std::size_t field_offset, int workers,
                                std::uint64_t writes_per_worker, std::size_t burst);

}  // namespace ch06_exercise
