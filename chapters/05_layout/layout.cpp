// Chapter 5's lesson: the line counts of each layout, the loops over them, and the
// allocations that keep objects on a line. lab.cpp times them; the page shows this file.
#include "layout.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

#include "cachebook/cache.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace ch05 {

// [snippet: particle_lines]
std::uint64_t lines_for(std::uint64_t bytes, std::size_t line_bytes) {
    return (bytes + line_bytes - 1) / line_bytes;
}

// The loop `walk` describes, replayed through a small fully associative cache of the
// model: its misses are the lines read, a store's miss included (the cache fills a line
// before writing part of it). A written (dirty) line goes back to memory when it leaves
// the cache. After the walk, reading as many other lines as the cache holds, from
// `elsewhere` (past every array), pushes out the last written lines: each must reach
// memory some time, so every line the loop wrote is counted once, whatever the cache.
namespace {
constexpr std::size_t kCacheLines = 8;
template <class Walk>
LineTraffic replay(Walk&& walk, std::uint64_t elsewhere, std::size_t line_bytes) {
    using cachebook::CacheConfig;
    cachebook::Cache cache(CacheConfig::fully_associative(kCacheLines, line_bytes));
    walk([&](std::uint64_t address, bool write) { cache.access(address, 0, write); });
    LineTraffic t;
    t.read = cache.total().misses;
    for (std::uint64_t k = 0; k < kCacheLines; ++k) {
        cache.access(elsewhere + k * line_bytes);
    }
    t.written = cache.total().dirty_evictions;
    return t;
}
}  // namespace

ParticleLines particle_lines(std::uint64_t n, std::size_t line_bytes) {
    ParticleLines r;
    r.n = n;
    r.line_bytes = line_bytes;
    r.aos = lines_for(n * sizeof(Particle), line_bytes);
    r.soa = 2 * lines_for(n * sizeof(double), line_bytes);
    r.hot_cold = lines_for(n * sizeof(HotParticle), line_bytes);
    // The bytes the loop uses of each particle: its x and its vx.
    const auto used = static_cast<double>(sizeof(Particle::x) + sizeof(Particle::vx));
    r.used_fraction = used / sizeof(Particle);
    r.hot_cold_used_fraction = used / sizeof(HotParticle);

    // The loop's own addresses, each array starting on a line: it reads vx and writes x.
    const std::uint64_t elsewhere = r.aos * line_bytes;  // past every array
    const LineTraffic aos = replay(
        [&](auto&& touch) {
            for (std::uint64_t i = 0; i < n; ++i) {
                touch(i * sizeof(Particle) + offsetof(Particle, vx), false);
                touch(i * sizeof(Particle) + offsetof(Particle, x), true);
            }
        },
        elsewhere, line_bytes);
    const std::uint64_t vx_base = lines_for(n * sizeof(double), line_bytes) * line_bytes;
    const LineTraffic soa = replay(
        [&](auto&& touch) {
            for (std::uint64_t i = 0; i < n; ++i) {
                touch(vx_base + i * sizeof(double), false);
                touch(i * sizeof(double), true);
            }
        },
        elsewhere, line_bytes);
    const LineTraffic hot_cold = replay(
        [&](auto&& touch) {
            for (std::uint64_t i = 0; i < n; ++i) {
                touch(i * sizeof(HotParticle) + offsetof(HotParticle, vx), false);
                touch(i * sizeof(HotParticle) + offsetof(HotParticle, x), true);
            }
        },
        elsewhere, line_bytes);
    r.aos_simulated = aos.read;
    r.aos_written = aos.written;
    r.soa_simulated = soa.read;
    r.soa_written = soa.written;
    r.hot_cold_simulated = hot_cold.read;
    r.hot_cold_written = hot_cold.written;
    return r;
}
// [end: particle_lines]

// [snippet: update]
void update(ParticlesAoS& s, double dt) {
    for (Particle& p : s.p) p.x += p.vx * dt;  // 16 bytes used of every 72 brought in
}
void update(ParticlesSoA& s, double dt) {
    double* x = s.x.data();
    const double* vx = s.vx.data();
    for (std::size_t i = 0, n = s.x.size(); i < n; ++i) x[i] += vx[i] * dt;  // all used
}
void update(ParticlesHotCold& s, double dt) {
    for (HotParticle& p : s.hot) p.x += p.vx * dt;  // 16 of 48: the cold 24 stay away
}
// [end: update]

// [snippet: straddle]
double Straddle::lines_per_object() const {
    return n == 0 ? 0.0 : static_cast<double>(lines_touched) / static_cast<double>(n);
}

Straddle straddle(std::size_t size, std::size_t stride,  // bytes: one, one to the next
                  std::uint64_t n, std::uint64_t base, std::size_t line_bytes) {
    Straddle s{size, stride, n, 0, 0};
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t first = (base + k * stride) / line_bytes;
        const std::uint64_t last = (base + k * stride + size - 1) / line_bytes;
        s.lines_touched += last - first + 1;
        if (last != first) ++s.straddling;
    }
    return s;
}
// [end: straddle]

// [snippet: aligned_alloc]
AlignmentFacts alignment_facts() {
    AlignmentFacts f;
    f.max_align = alignof(std::max_align_t);
    constexpr std::size_t k = 4;
    // malloc aligns for any scalar, no more; aligned_alloc wants a size that is a
    // multiple of the alignment; new aligns an over-aligned type (C++17).
    void* plain = std::malloc(sizeof(Body));
    void* lined = std::aligned_alloc(kLineBytes, k * kLineBytes);
    auto bodies = std::make_unique<AlignedBody[]>(k);
    f.malloc_offset = reinterpret_cast<std::uintptr_t>(plain) % kLineBytes;
    f.aligned_alloc_offset = reinterpret_cast<std::uintptr_t>(lined) % kLineBytes;
    f.aligned_new_offset = reinterpret_cast<std::uintptr_t>(bodies.get()) % kLineBytes;
    std::free(plain);
    std::free(lined);
    // [end: aligned_alloc]
    // [snippet: interference]
#ifdef __cpp_lib_hardware_interference_size
    // Read here, in a source file, only to report it: g++ warns (-Winterference-size)
    // when it appears in a header, where it would fix a layout shared across builds.
    f.destructive = std::hardware_destructive_interference_size;
    f.constructive = std::hardware_constructive_interference_size;
#endif
    return f;
}
// [end: interference]

// [snippet: list_sum]
std::int64_t sum_list(const Node* head) {
    std::int64_t s = 0;
    // The next address is in the node.
    for (const Node* p = head; p != nullptr; p = p->next) s += p->value;
    return s;
}
std::int64_t sum_vector(const std::vector<std::int64_t>& v) {
    std::int64_t s = 0;
    for (std::int64_t x : v) s += x;  // the next address is known: base + i * 8
    return s;
}
std::int64_t sum_gather(const std::vector<std::int64_t>& v,  // the values
                        const std::vector<std::uint32_t>& order) {
    std::int64_t s = 0;
    for (std::uint32_t k : order) s += v[k];  // random, but every address known up front
    return s;
}
// [end: list_sum]

// [snippet: prefetch]
double gather(const double* a, const std::uint32_t* idx,  // reads a[idx[i]], i < n
              std::size_t n, std::size_t distance) {
    double s = 0;
    std::size_t i = 0;
    if (distance > 0 && n > distance) {
        for (; i < n - distance; ++i) {
            // Prefetch `distance` reads ahead: to read (0), low temporal locality (1).
            __builtin_prefetch(&a[idx[i + distance]], 0, 1);
            s += a[idx[i]];
        }
    }
    for (; i < n; ++i) s += a[idx[i]];
    return s;
}
// [end: prefetch]

// [snippet: fusion]
void separate_loops(const double* a, double* b, double* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) b[i] = a[i] * 2.0;
    for (std::size_t i = 0; i < n; ++i) c[i] = b[i] + 1.0;  // b comes back from memory
}
void fused_loop(const double* a, double* b, double* c, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        b[i] = a[i] * 2.0;
        c[i] = b[i] + 1.0;  // b[i] is still in a register
    }
}
// [end: fusion]

// [snippet: fusion_lines]
FusionLines fusion_lines(std::uint64_t n, std::size_t line_bytes) {
    // Each array on lines of its own.
    const std::uint64_t array = lines_for(n * sizeof(double), line_bytes) * line_bytes;
    auto a = [&](std::uint64_t i) { return i * sizeof(double); };
    auto b = [&](std::uint64_t i) { return array + i * sizeof(double); };
    auto c = [&](std::uint64_t i) { return 2 * array + i * sizeof(double); };
    FusionLines r;
    r.n = n;
    r.separate = replay(
        [&](auto&& touch) {
            // b = 2a, then c = b + 1.
            for (std::uint64_t i = 0; i < n; ++i) touch(a(i), false), touch(b(i), true);
            for (std::uint64_t i = 0; i < n; ++i) touch(b(i), false), touch(c(i), true);
        },
        3 * array, line_bytes);
    r.fused = replay(
        [&](auto&& touch) {
            for (std::uint64_t i = 0; i < n; ++i) {
                touch(a(i), false), touch(b(i), true), touch(c(i), true);
            }
        },
        3 * array, line_bytes);
    return r;
}
// [end: fusion_lines]

// [snippet: fission]
void one_loop_many_arrays(std::vector<std::vector<double>>& a,  // a_k += b_k
                          const std::vector<std::vector<double>>& b) {
    const std::size_t n = a[0].size(), ways = a.size();
    std::vector<double*> pa(ways);
    std::vector<const double*> pb(ways);
    for (std::size_t k = 0; k < ways; ++k) pa[k] = a[k].data(), pb[k] = b[k].data();
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < ways; ++k) pa[k][i] += pb[k][i];  // 2 x ways streams
}
void one_loop_per_array(std::vector<std::vector<double>>& a,  // a_k += b_k
                        const std::vector<std::vector<double>>& b) {
    for (std::size_t k = 0; k < a.size(); ++k) {
        double* pa = a[k].data();
        const double* pb = b[k].data();
        // Two streams.
        for (std::size_t i = 0, n = a[k].size(); i < n; ++i) pa[i] += pb[i];
    }
}
// [end: fission]

// [snippet: stores]
std::uint64_t read_only(const std::uint64_t* a, std::size_t n) {
    std::uint64_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += a[i];  // each line comes in; none goes back
    return s;
}
void read_modify_write(std::uint64_t* a, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) a[i] += 1;  // each line comes in and goes back
}
void plain_stores(std::uint64_t* a, std::size_t n, std::uint64_t x) {
    for (std::size_t i = 0; i < n; ++i) a[i] = x;  // read for ownership first, too
}
// [end: stores]

// [snippet: streaming_stores]
#if defined(__x86_64__)
void streaming_stores(std::uint64_t* a, std::size_t n, std::uint64_t x) {
    std::size_t i = 0;
    // Plain stores up to a 16-byte boundary, then pairs past the caches.
    for (; i < n && reinterpret_cast<std::uintptr_t>(a + i) % 16 != 0; ++i) a[i] = x;
    const __m128i pair = _mm_set1_epi64x(static_cast<long long>(x));
    for (; i + 2 <= n; i += 2) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(a + i), pair);
    }
    for (; i < n; ++i) a[i] = x;
    _mm_sfence();  // streamed stores are weakly ordered: let them land first
}
const char* streaming_store_instruction() {
    return "MOVNTDQ (_mm_stream_si128), then SFENCE";
}
#elif defined(__aarch64__)
void streaming_stores(std::uint64_t* a, std::size_t n, std::uint64_t x) {
    std::size_t i = 0;
    for (; i + 2 <= n; i += 2) {  // a pair at a time
        asm volatile("stnp %1, %1, [%0]" : : "r"(a + i), "r"(x) : "memory");
    }
    for (; i < n; ++i) a[i] = x;
}
const char* streaming_store_instruction() {
    return "STNP (a store pair with a non-temporal hint)";
}
#else
void streaming_stores(std::uint64_t* a, std::size_t n, std::uint64_t x) {
    plain_stores(a, n, x);  // the book knows no non-temporal store here
}
const char* streaming_store_instruction() {
    return "";
}
#endif
// [end: streaming_stores]

// [snippet: store_lines]
StoreLines store_lines(std::uint64_t n, std::size_t line_bytes) {
    const std::uint64_t lines = lines_for(n * sizeof(std::uint64_t), line_bytes);
    const std::uint64_t elsewhere = lines * line_bytes;  // past the array
    auto walk = [&](bool read, bool write) {
        return replay(
            [&](auto&& touch) {
                for (std::uint64_t i = 0; i < n; ++i) {
                    if (read) touch(i * sizeof(std::uint64_t), false);
                    if (write) touch(i * sizeof(std::uint64_t), true);
                }
            },
            elsewhere, line_bytes);
    };
    StoreLines r;
    r.n = n;
    r.read_only = walk(true, false);
    r.modify = walk(true, true);
    r.store = walk(false, true);
    r.stream = {0, lines};  // by its definition: written, never read
    return r;
}
// [end: store_lines]

}  // namespace ch05
