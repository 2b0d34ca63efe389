#pragma once
// Chapter 5: what a line holds. The lesson: the layouts, the line counts they imply,
// and the loops the chapter measures (lab.hpp times them).

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ch05 {

// The line size the structs below are laid out for. A constant of our own:
// std::hardware_destructive_interference_size may change with compiler flags,
// so it does not belong in a header that fixes a layout (g++ warns, see layout.cpp).
inline constexpr std::size_t kLineBytes = 64;

// [snippet: particle]
// The particle of "Cache-friendly programs": one struct per particle (AoS).
struct Particle {
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

/// Lines that `bytes` contiguous bytes starting on a line boundary span.
std::uint64_t lines_for(std::uint64_t bytes, std::size_t line_bytes);

/// How many lines the update loop x += vx * dt brings in, three ways.
struct ParticleLines {
    std::uint64_t n = 0;
    std::size_t line_bytes = 0;
    std::uint64_t aos = 0;              // n x sizeof(Particle) / line: every line of the array
    std::uint64_t soa = 0;              // two arrays of n doubles (x and vx)
    std::uint64_t hot_cold = 0;         // the hot array only
    double used_fraction = 0;           // bytes the loop uses / bytes it brings in, AoS: 16 / 72
    double hot_cold_used_fraction = 0;  // the same for hot/cold: 16 / 48 (SoA uses every byte)
    // The same counts from the cache model: the loop's addresses through a small
    // LRU cache, misses counted (a streaming walk misses once per line).
    std::uint64_t aos_simulated = 0, soa_simulated = 0, hot_cold_simulated = 0;
    // Lines the loop writes (those holding an x), which go back to memory: the model's dirty evictions.
    std::uint64_t aos_written = 0, soa_written = 0, hot_cold_written = 0;
    /// Lines moved between cache and memory, both ways: misses plus write-backs.
    [[nodiscard]] std::uint64_t aos_traffic() const { return aos_simulated + aos_written; }
    [[nodiscard]] std::uint64_t soa_traffic() const { return soa_simulated + soa_written; }
    [[nodiscard]] std::uint64_t hot_cold_traffic() const { return hot_cold_simulated + hot_cold_written; }
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

void update(ParticlesAoS& s, double dt);
void update(ParticlesSoA& s, double dt);
void update(ParticlesHotCold& s, double dt);

// --- Linked list against vector -------------------------------------------------------

struct Node {
    std::int64_t value;
    Node* next;
};
std::int64_t sum_list(const Node* head);
std::int64_t sum_vector(const std::vector<std::int64_t>& v);
/// The scattered order with every address known up front: sum of values[order[i]].
std::int64_t sum_gather(const std::vector<std::int64_t>& v, const std::vector<std::uint32_t>& order);

// --- Software prefetch on a gather ------------------------------------------------------

/// sum of a[idx[i]], prefetching a[idx[i + distance]] (no prefetch when distance is 0).
double gather(const double* a, const std::uint32_t* idx, std::size_t n, std::size_t distance);

// --- Loop fusion and fission --------------------------------------------------------------

void separate_loops(const double* a, double* b, double* c, std::size_t n);
void fused_loop(const double* a, double* b, double* c, std::size_t n);

/// Fission: `ways` pairs a_k[i] += b_k[i], in one loop or one loop per pair.
void one_loop_many_arrays(std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);
void one_loop_per_array(std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b);

// --- Writes: lines read for ownership and lines written back -----------------------------

/// Lines a loop moves between the cache and memory, as the cache model counts them.
struct LineTraffic {
    std::uint64_t read = 0;     // lines brought in: every miss, a store's included (write-allocate)
    std::uint64_t written = 0;  // dirty lines written back, during the walk or flushed after it
    [[nodiscard]] std::uint64_t total() const { return read + written; }
};

/// The lines the two fusion versions move over n doubles per array, reads for ownership included.
struct FusionLines {
    std::uint64_t n = 0;
    LineTraffic separate, fused;
};
FusionLines fusion_lines(std::uint64_t n, std::size_t line_bytes = kLineBytes);

/// The four loops of the stores experiment over n words: read, read and write, write only.
std::uint64_t read_only(const std::uint64_t* a, std::size_t n);
void read_modify_write(std::uint64_t* a, std::size_t n);
void plain_stores(std::uint64_t* a, std::size_t n, std::uint64_t x);
/// As plain_stores, with non-temporal stores where this instruction set has them.
void streaming_stores(std::uint64_t* a, std::size_t n, std::uint64_t x);
/// The non-temporal store streaming_stores uses here; "" when it makes plain stores.
const char* streaming_store_instruction();

/// Lines each loop of the stores experiment moves, from the cache model; non-temporal
/// stores, which the model does not have, write each line once and read none.
struct StoreLines {
    std::uint64_t n = 0;
    LineTraffic read_only, modify, store, stream;
};
StoreLines store_lines(std::uint64_t n, std::size_t line_bytes = kLineBytes);

}  // namespace ch05
