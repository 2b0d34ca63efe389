#pragma once
/// @file coherence.hpp
/// @brief A MESI coherence model: private caches of several cores over one shared bus.
///
/// The model follows one line state per core (Modified, Exclusive, Shared,
/// Invalid) and counts what the protocol does for every access: hits, silent
/// E-to-M upgrades, upgrades of a Shared line (invalidations, no data),
/// read-for-ownership and read misses served by another core's cache (line
/// transfers) or by memory (fills). Private caches are taken to be large
/// enough that no line is ever evicted, so every miss is either the first
/// touch of a line or a coherence miss. That is what the false-sharing
/// chapter needs: the streams it runs touch a handful of lines.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cachebook {

/// The state of one line in one core's cache.
enum class Mesi : std::uint8_t {
    Modified,   ///< this core's copy is the only one, and it is dirty
    Exclusive,  ///< this core's copy is the only one, and it equals memory
    Shared,     ///< several cores may hold a clean copy; reads only
    Invalid,    ///< no usable copy here
};

/// "M", "E", "S" or "I".
char mesi_letter(Mesi s);

/// A read, or a write (a store or a read-modify-write: both need the line owned).
enum class AccessKind : std::uint8_t { Read, Write };

/// One access of a core to a byte address.
struct CoherenceAccess {
    int core = 0;                         ///< which core, 0 .. cores-1
    std::uint64_t address = 0;            ///< byte address
    AccessKind kind = AccessKind::Write;  ///< read or write
};

/// How the protocol served one access.
enum class Outcome : std::uint8_t {
    Hit,         ///< the local copy allowed it (a write to E turns it into M silently)
    Upgrade,     ///< a write to a Shared copy: the others are invalidated, no data moves
    MemoryFill,  ///< no cache held the line; it came from memory
    Transfer,    ///< another core's cache supplied the line (cache-to-cache transfer)
};

/// "hit", "upgrade", "memory" or "transfer".
std::string_view outcome_name(Outcome o);

/// What one access did.
struct CoherenceEvent {
    Outcome outcome = Outcome::Hit;
    int supplier = -1;    ///< the core whose cache supplied the line (Transfer only), else -1
    int invalidated = 0;  ///< copies in other cores turned Invalid by this access
};

/// Counts of what the protocol did, for all cores or for one.
struct CoherenceStats {
    std::uint64_t reads = 0;
    std::uint64_t writes = 0;
    std::uint64_t hits = 0;           ///< served by the local copy
    std::uint64_t upgrades = 0;       ///< S -> M: bus invalidation without data
    std::uint64_t memory_fills = 0;   ///< lines read from memory
    std::uint64_t transfers = 0;      ///< lines moved from another core's cache
    std::uint64_t invalidations = 0;  ///< copies invalidated in other cores
    /// Accesses that needed the bus: fills, transfers and upgrades.
    [[nodiscard]] std::uint64_t bus_transactions() const { return upgrades + memory_fills + transfers; }
    [[nodiscard]] std::uint64_t accesses() const { return reads + writes; }
    CoherenceStats& operator+=(const CoherenceStats& o) {
        reads += o.reads;
        writes += o.writes;
        hits += o.hits;
        upgrades += o.upgrades;
        memory_fills += o.memory_fills;
        transfers += o.transfers;
        invalidations += o.invalidations;
        return *this;
    }
    friend bool operator==(const CoherenceStats&, const CoherenceStats&) = default;
};

/// Private caches of `cores` cores kept coherent by MESI over one shared bus.
class CoherenceModel {
public:
    /// `cores` at least 1; `line_bytes` a power of two (throws std::invalid_argument).
    explicit CoherenceModel(int cores, std::size_t line_bytes = 64);

    /// Serves one access and counts it. Throws std::out_of_range for a core outside 0 .. cores-1.
    CoherenceEvent access(int core, std::uint64_t address, AccessKind kind);
    CoherenceEvent access(const CoherenceAccess& a) { return access(a.core, a.address, a.kind); }
    /// Serves every access of a stream in order.
    void run(const std::vector<CoherenceAccess>& stream);

    /// The state of the line holding `address` in `core`'s cache.
    [[nodiscard]] Mesi state(int core, std::uint64_t address) const;
    /// Counts of all cores together.
    [[nodiscard]] const CoherenceStats& total() const { return total_; }
    /// Counts of one core's accesses (a transfer counts for the core that received the line).
    [[nodiscard]] const CoherenceStats& of_core(int core) const;

    [[nodiscard]] int cores() const { return cores_; }
    [[nodiscard]] std::size_t line_bytes() const { return line_bytes_; }

private:
    int cores_;
    std::size_t line_bytes_;
    std::unordered_map<std::uint64_t, std::vector<Mesi>> lines_;  // line number -> state per core
    CoherenceStats total_;
    std::vector<CoherenceStats> per_core_;
};

/// The time of one core's access where the cores' accesses go to one line, priced (priced.hpp;
/// chapter 6's races): the line's transfers, which come one after another since the line is in one
/// place at a time, each costing one move of a line between two cores (the profile's ping-pong),
/// shared out over one core's accesses; and the core's own work an access. As the levels of the
/// time model (time_model.hpp), the two overlap (the time is the larger) or add (their sum).
struct SharedLineTime {
    double transfers_ns = 0;  ///< all the transfers x the cost of one, over one core's accesses
    double core_ns = 0;       ///< the core's own work an access
    [[nodiscard]] double overlapped() const { return transfers_ns > core_ns ? transfers_ns : core_ns; }
    [[nodiscard]] double added() const { return transfers_ns + core_ns; }
    /// "transfer-bound" or "core-bound": the larger of the two.
    [[nodiscard]] std::string_view bottleneck() const {
        return transfers_ns > core_ns ? "transfer-bound" : "core-bound";
    }
};

/// `all`'s transfers (every core's) priced at `transfer_ns` each, over `accesses_per_core`, and
/// `core_ns` an access. Throws std::invalid_argument for no accesses or a negative price.
SharedLineTime shared_line_time(const CoherenceStats& all, std::uint64_t accesses_per_core, double transfer_ns,
                                double core_ns);

/// The writes a core makes each time it holds a line another core also writes: the one the line
/// came for, and as many more as its own work allows while the other core's request for the line
/// travels to it, which takes about one move: 1 + floor(transfer_ns / core_ns), the burst of
/// interleave(). Throws std::invalid_argument unless core_ns > 0 and transfer_ns >= 0.
std::size_t writes_while_requested(double transfer_ns, double core_ns);

/// The accesses of one core, in program order.
struct CoreAccess {
    std::uint64_t address = 0;
    AccessKind kind = AccessKind::Write;
};

/// Merges per-core streams into one global order: core 0 issues up to `burst`
/// accesses, then core 1 up to `burst`, and so on round the cores until every
/// stream is used up. `burst` 1 is strict alternation; a larger burst stands
/// for a store buffer that lets a core commit several stores while it holds the
/// line. Throws std::invalid_argument when `burst` is 0.
std::vector<CoherenceAccess> interleave(const std::vector<std::vector<CoreAccess>>& per_core, std::size_t burst);

}  // namespace cachebook
