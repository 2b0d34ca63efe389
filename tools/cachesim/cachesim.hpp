#pragma once
// cachesim's logic: simulating a lackey trace on one to three cache levels.
// main.cpp parses options and prints; the tests call these same functions.

#include <array>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/miss_kinds.hpp"
#include "hierarchy.hpp"
#include "lackey.hpp"

namespace cachesim {

/// A named address range whose accesses are counted apart (--region name:start:len).
struct Region {
    std::string name;
    std::uint64_t start = 0;
    std::uint64_t length = 0;
};

/// Parses "name:start:len" (start and len decimal or 0x-hex); throws cachebook::UsageError.
Region parse_region(std::string_view text);

/// The geometry given as set-index bits, lines per set and block bits (-s, -E, -b).
/// Throws cachebook::UsageError when a value is out of range.
cachebook::CacheConfig geometry(std::int64_t set_bits, std::int64_t ways, std::int64_t block_bits,
                                cachebook::Policy policy = cachebook::Policy::LRU, std::uint64_t seed = 1);
/// Parses "s,E,b" (--L2, --L3) into a geometry; throws cachebook::UsageError.
cachebook::CacheConfig parse_level(std::string_view option, std::string_view text, cachebook::Policy policy,
                                   std::uint64_t seed);
/// Rejects a cache larger than this machine's memory, or whose model would not fit in it.
void require_fits(const cachebook::CacheConfig& config, std::string_view level);

struct Options {
    std::vector<cachebook::CacheConfig> levels;  ///< L1 first
    Inclusion inclusion = Inclusion::NonInclusive;
    bool split = false;  ///< an access spans every line its size covers (cachegrind); else only its first byte's
    bool modify_once =
        false;  ///< M is one reference, as cachegrind counts it; else a load then a store (the reference)
    std::vector<Region> regions;
};

/// The outcome of a whole trace.
struct Result {
    std::uint64_t lines = 0;  ///< lines read
    std::uint64_t instructions = 0, loads = 0, stores = 0, modifies = 0;
    std::uint64_t skipped = 0;  ///< malformed lines skipped (--skip-bad)
    std::string first_skipped;
};

/// Runs records through the caches and, when asked, writes the reference's verbose lines.
class Simulator {
public:
    /// Throws std::invalid_argument (bad geometry) or cachebook::UsageError (overlapping regions).
    explicit Simulator(const Options& options);

    /// Simulates `records`, in order. With `verbose`, one line per data access, as csim-ref -v prints it.
    void feed(std::span<const LackeyRecord> records, std::string* verbose = nullptr);
    /// Reads the whole trace at `path` ("-": standard input) and simulates it;
    /// verbose lines go to `verbose_out` when given. With `threads` 2, parsing
    /// runs on two threads at once (read_lackey()).
    Result run(const std::string& path, bool skip_bad = false, unsigned threads = 1, std::FILE* verbose_out = nullptr);

    [[nodiscard]] const Hierarchy& hierarchy() const { return hierarchy_; }
    [[nodiscard]] const Options& options() const { return options_; }
    /// The stream id of region `i` (in the order given); stream 0 is every access.
    [[nodiscard]] int region_stream(std::size_t i) const { return region_streams_.at(i); }
    /// The stream of accesses outside every region (only when regions were given).
    [[nodiscard]] int other_stream() const { return other_stream_; }
    /// Counts of data records so far.
    [[nodiscard]] const Result& tally() const { return tally_; }

private:
    int stream_of(std::uint64_t address) const;
    void count(const std::array<std::uint64_t, 4>& kinds);  // records by kind: I, L, S, M

    Options options_;
    Hierarchy hierarchy_;
    std::vector<Region> sorted_;      // regions by start address
    std::vector<int> sorted_stream_;  // their stream ids
    std::vector<int> region_streams_;
    int other_stream_ = 0;
    // One LRU or FIFO level of up to 8 ways, no regions, no --split: without
    // -v, accesses go to FastCache::access_batch() as references (lackey.hpp).
    bool batch_ = false;
    std::vector<std::uint64_t> refs_;  // feed()'s references
    Result tally_;
};

/// A trace's data accesses one by one, as the first level sees them without
/// --split: each address, and whether it writes.
struct Accesses {
    std::vector<std::uint64_t> addresses;
    std::vector<bool> writes;
};

/// Reads the whole trace at `path` ("-": standard input) and keeps every
/// record: --policy opt and --classify need all of it before they start.
/// `result` gets the lines read, the lines skipped and the records of each kind.
std::vector<LackeyRecord> read_records(const std::string& path, bool skip_bad, unsigned threads, Result& result);

/// The data accesses of `records` in order: L a load, S a store, M a load
/// then a store (one store with `modify_once`), I nothing.
Accesses accesses_of(std::span<const LackeyRecord> records, bool modify_once);

/// The one line --classify prints: "compulsory:C capacity:P conflict:F".
std::string kinds_line(const cachebook::MissKinds& kinds);

/// The kinds as --json records them.
nlohmann::json kinds_json(const cachebook::MissKinds& kinds);

/// What a --policy opt run found, for --json: the shape to_json() gives, one level.
nlohmann::json optimal_json(const cachebook::CacheConfig& l1, const cachebook::Counts& counts, const Result& result,
                            bool modify_once);

/// The one line csim-ref prints: "hits:H misses:M evictions:V".
std::string summary_line(const cachebook::Counts& c);

/// Everything a run found, for --json.
nlohmann::json to_json(const Simulator& sim, const Result& result);

/// Writes a lackey trace of an n x n float transpose, dst[j][i] = src[i][j] in
/// row order: a load of src then a store to dst per element, 2 n^2 lines.
void write_transpose_trace(std::FILE* out, std::size_t n);

}  // namespace cachesim
