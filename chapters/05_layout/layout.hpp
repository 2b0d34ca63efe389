#pragma once
// Chapter 5: what a line holds. Struct sizes and line counts computed by the
// compiler (sizeof, offsetof, alignof), and the layouts and walks measured.

#include <array>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cachebook/measure.hpp"

namespace ch05 {

// The line size the structs below are laid out for. A constant of our own:
// std::hardware_destructive_interference_size may change with compiler flags,
// so it does not belong in a header that fixes a layout (g++ warns, see layout.cpp).
inline constexpr std::size_t kLineBytes = 64;

// [snippet: particle]
struct Particle {  // the course notes' particle: one struct per particle (AoS)
    double x, y, z, vx, vy, vz;
    int id;
    char name[20];
};

struct HotParticle {  // hot/cold split: what every step touches ...
    double x, y, z, vx, vy, vz;
};
struct ColdParticle {  // ... and what is read now and then, in a parallel array
    int id;
    char name[20];
};
// [end: particle]

// [snippet: field_order]
struct CharDoubleInt {  // in the order a person might write them
    char c;
    double d;
    int i;
};
struct DoubleIntChar {  // the same fields, largest first
    double d;
    int i;
    char c;
};
// [end: field_order]

// [snippet: aligned_body]
struct Body {  // 48 bytes: in a plain array some straddle two lines
    double position[3], velocity[3];
};
struct alignas(kLineBytes) AlignedBody {  // rounded up to a whole line: none straddle
    double position[3], velocity[3];
};
// [end: aligned_body]

/// One field of a struct, where the compiler put it.
struct Field {
    std::string name;
    std::size_t offset = 0, size = 0;
};

/// A struct as the compiler laid it out.
struct StructLayout {
    std::string name;
    std::size_t size = 0, align = 0;
    std::vector<Field> fields;
    /// Bytes the compiler added (holes between fields and at the end).
    [[nodiscard]] std::size_t padding() const;
    /// "c@0+1 [7 pad] d@8+8 i@16+4 [4 pad]".
    [[nodiscard]] std::string picture() const;
    /// Structs per line: line / size (2.67 for a 24-byte struct and 64-byte lines).
    [[nodiscard]] double per_line(std::size_t line_bytes) const;
};

StructLayout particle_layout();
StructLayout hot_particle_layout();
StructLayout cold_particle_layout();
StructLayout char_double_int_layout();
StructLayout double_int_char_layout();
StructLayout body_layout();
StructLayout aligned_body_layout();

/// Lines that `bytes` contiguous bytes starting on a line boundary span.
std::uint64_t lines_for(std::uint64_t bytes, std::size_t line_bytes);

/// How many lines the update loop x += vx * dt brings in, three ways.
struct ParticleLines {
    std::uint64_t n = 0;
    std::size_t line_bytes = 0;
    std::uint64_t aos = 0;       // n x sizeof(Particle) / line: every line of the array
    std::uint64_t soa = 0;       // two arrays of n doubles (x and vx)
    std::uint64_t hot_cold = 0;  // the hot array only
    double used_fraction = 0;    // bytes the loop uses / bytes it brings in, AoS: 16 / 72
    // The same counts from the cache model: the loop's addresses through a small
    // LRU cache, misses counted (a streaming walk misses once per line).
    std::uint64_t aos_simulated = 0, soa_simulated = 0, hot_cold_simulated = 0;
};
ParticleLines particle_lines(std::uint64_t n, std::size_t line_bytes = kLineBytes);

/// Objects of `size` bytes placed every `stride` bytes from `base`: how many of
/// the first n span two (or more) lines, and lines touched per object on average.
struct Straddle {
    std::size_t size = 0, stride = 0;
    std::uint64_t n = 0, straddling = 0, lines_touched = 0;
    [[nodiscard]] double lines_per_object() const;
};
Straddle straddle(std::size_t size, std::size_t stride, std::uint64_t n, std::uint64_t base,
                  std::size_t line_bytes = kLineBytes);

/// What the compiler and the allocator say about alignment, on this build.
struct AlignmentFacts {
    std::size_t destructive = 0, constructive = 0;  // std::hardware_*_interference_size (0 if absent)
    std::size_t max_align = 0;                      // alignof(std::max_align_t): what malloc promises
    std::uint64_t malloc_offset = 0;                // a malloc'd 48-byte block's address mod 64
    std::uint64_t aligned_alloc_offset = 0;         // std::aligned_alloc(64, 64 * k): address mod 64
    std::uint64_t aligned_new_offset = 0;           // new AlignedBody[k]: address mod 64
};
AlignmentFacts alignment_facts();

// --- The update loop, three layouts -------------------------------------------------

struct ParticlesAoS {
    std::vector<Particle> p;
};
struct ParticlesSoA {
    std::vector<double> x, y, z, vx, vy, vz;
    std::vector<int> id;
    std::vector<std::array<char, 20>> name;
};
struct ParticlesHotCold {
    std::vector<HotParticle> hot;
    std::vector<ColdParticle> cold;
};

/// The same n particles (positions, velocities, ids, names from i) in each layout.
ParticlesAoS make_aos(std::size_t n);
ParticlesSoA make_soa(std::size_t n);
ParticlesHotCold make_hot_cold(std::size_t n);

void update(ParticlesAoS& s, double dt);
void update(ParticlesSoA& s, double dt);
void update(ParticlesHotCold& s, double dt);

/// Sum of all x: the layouts agree bit for bit after the same updates.
double sum_x(const ParticlesAoS& s);
double sum_x(const ParticlesSoA& s);
double sum_x(const ParticlesHotCold& s);

struct LayoutTimes {
    std::size_t n = 0;
    cachebook::Timing aos, soa, hot_cold;
    double sum_aos = 0, sum_soa = 0, sum_hot_cold = 0;  // identical
};
/// Times `runs` updates of each layout (interleaved, one warm-up each). Every
/// time*() function here uses the calling thread's CPU clock (cachebook/cpu_time.hpp).
LayoutTimes time_layouts(std::size_t n, int runs);

// --- Linked list against vector -------------------------------------------------------

struct Node {
    std::int64_t value;
    Node* next;
};
/// The same values three ways, plus the scattered order as a list of indices.
struct ListBench {
    std::vector<Node> ordered_pool;              // linked in address order (nodes from a pool, in order)
    std::vector<Node> scattered_pool;            // linked in a random order: each hop lands anywhere
    std::vector<std::int64_t> values;            // a vector of the same values
    std::vector<std::uint32_t> scattered_order;  // the slots of the scattered list, in list order
    Node* ordered_head = nullptr;
    Node* scattered_head = nullptr;
};
ListBench make_lists(std::size_t n, std::uint64_t seed = 5);
std::int64_t sum_list(const Node* head);
std::int64_t sum_vector(const std::vector<std::int64_t>& v);
/// The scattered order with every address known up front: sum of values[order[i]].
std::int64_t sum_gather(const std::vector<std::int64_t>& v, const std::vector<std::uint32_t>& order);

struct ListTimes {
    std::size_t n = 0;
    cachebook::Timing vector, ordered, scattered, gather;
    std::int64_t sum_vector = 0, sum_ordered = 0, sum_scattered = 0, sum_gather = 0;
};
ListTimes time_lists(std::size_t n, int runs);

// --- Software prefetch on a gather ------------------------------------------------------

/// sum of a[idx[i]], prefetching a[idx[i + distance]] (no prefetch when distance is 0).
double gather(const double* a, const std::uint32_t* idx, std::size_t n, std::size_t distance);

struct PrefetchTimes {
    std::size_t n = 0;
    std::vector<std::size_t> distances;  // 0 first: no prefetch
    std::vector<cachebook::Timing> times;
    std::vector<double> sums;  // identical
};
PrefetchTimes time_prefetch(std::size_t n, const std::vector<std::size_t>& distances, int runs);
/// The index of the timing with the fastest run (the first of equals); 0 for none.
std::size_t fastest(const std::vector<cachebook::Timing>& times);

// --- Loop fusion and fission --------------------------------------------------------------

/// How large the fusion arrays are and why: beyond the last-level cache when
/// that is affordable, else beyond L2 (said so).
struct StreamSize {
    std::size_t bytes_per_array = 0;
    std::string beyond;  // "L3", "L2" or "default"
    std::string reason;
};
/// `llc_bytes`, `l2_bytes`: as sysfs reports them (0 if unknown); `budget`: most bytes per array.
StreamSize choose_stream_size(std::size_t llc_bytes, std::size_t l2_bytes, std::size_t budget);

void separate_loops(const double* a, double* b, double* c, std::size_t n);
void fused_loop(const double* a, double* b, double* c, std::size_t n);

/// Fission: `ways` pairs a_k[i] += b_k[i], in one loop or one loop per pair.
void one_loop_many_arrays(std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);
void one_loop_per_array(std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);

/// Where the fusion arrays lie. All five (a; b and c for each version) share one
/// allocation, each starting this many bytes after the end of the one before. Streams whose
/// addresses differ by only a few KiB past a multiple of a large power of two can slow the
/// fused loop badly (see chapter.md); 64 KiB and a line keeps them apart.
inline constexpr std::size_t kFusionGapBytes = (std::size_t{64} << 10) + 64;
/// The placement the chapter shows for contrast: 8 KiB between arrays.
inline constexpr std::size_t kFusionCloseGapBytes = std::size_t{8} << 10;

/// The fused and two-loop versions over `n` doubles (arrays `gap_bytes` apart, as above)
/// and the fission pair; each run times every version once, in turn. With
/// `close_gap_bytes` > 0, the two fusion versions are also timed with the arrays that
/// close (the `_close` timings; empty otherwise).
struct FusionTimes {
    std::size_t n = 0, fission_n = 0, fission_ways = 0;
    std::size_t gap_bytes = 0, close_gap_bytes = 0;
    cachebook::Timing separate, fused, fission_one, fission_split;
    cachebook::Timing separate_close, fused_close;
    bool same_result = false;  // b and c agree after every version; so do the a_k
};
FusionTimes time_fusion(std::size_t n, std::size_t fission_n, std::size_t ways, int runs,
                        std::size_t gap_bytes = kFusionGapBytes, std::size_t close_gap_bytes = 0);

nlohmann::json to_json(const StructLayout& s);
nlohmann::json to_json(const Straddle& s);

}  // namespace ch05
