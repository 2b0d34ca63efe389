// The model's C interface for WebAssembly: what book/model/model_api.js calls.
//
// It is compiled, with common/src/cache.cpp, prefetch.cpp, trace.cpp, chase.cpp
// and miss_kinds.cpp unchanged, by book/model/build_model.py for clang's wasm32-wasi
// target. That target has no C++ exceptions, so a throw (only a bad
// configuration throws) ends here in __cxa_throw: the message is kept for
// cb_error() and the call traps; the JavaScript side turns the trap into an
// Error carrying the message and restores the stack pointer.
//
// Numbers cross as 32-bit halves: an address is (lo, hi), so all 64 bits stay exact.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <typeinfo>
#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/chase.hpp"
#include "cachebook/miss_kinds.hpp"
#include "cachebook/prefetch.hpp"
#include "cachebook/trace.hpp"

#define CB_EXPORT(name) extern "C" __attribute__((export_name(#name)))

namespace {

char g_error[512];
alignas(16) unsigned char g_exception[256];  // one exception at a time: the call traps as it is thrown

std::uint64_t join(std::uint32_t lo, std::uint32_t hi) {
    return static_cast<std::uint64_t>(hi) << 32 | lo;
}

// A cache with the streams "A", "B", "C" (ids 1 to 3, as the walks number
// them), behind a prefetcher when one is asked for.
struct Model {
    std::unique_ptr<cachebook::Cache> plain;
    std::unique_ptr<cachebook::PrefetchingCache> prefetching;

    cachebook::AccessResult access(std::uint64_t address, int stream, bool write) {
        return prefetching ? prefetching->access(address, stream, write) : plain->access(address, stream, write);
    }
    [[nodiscard]] const cachebook::Cache& cache() const { return prefetching ? prefetching->cache() : *plain; }
};

// One access of a walk as it crosses to JavaScript: address halves, then
// flags (bit 0: a write; bits 8 and up: the stream).
struct Ref {
    std::uint32_t lo, hi, flags;
};

std::vector<Ref> g_refs;            // cb_buffer()'s and the walks' accesses
std::vector<std::uint32_t> g_out;   // cb_access(), cb_counts(), cb_resident() answers
std::vector<std::uint32_t> g_next;  // a pointer chase's successor of each node

void put_u64(std::uint64_t v) {
    g_out.push_back(static_cast<std::uint32_t>(v));
    g_out.push_back(static_cast<std::uint32_t>(v >> 32));
}

void add_ref(const cachebook::Access& a) {
    const auto flags = static_cast<std::uint32_t>(a.write) | static_cast<std::uint32_t>(a.stream) << 8;
    g_refs.push_back(Ref{static_cast<std::uint32_t>(a.address), static_cast<std::uint32_t>(a.address >> 32), flags});
}

// The addresses (and whether each is a write) of the buffer's first n accesses.
std::vector<std::uint64_t> buffered(std::uint32_t n, std::vector<bool>* writes) {
    std::vector<std::uint64_t> addresses;
    for (std::uint32_t k = 0; k < n && k < g_refs.size(); ++k) {
        addresses.push_back(join(g_refs[k].lo, g_refs[k].hi));
        if (writes) writes->push_back((g_refs[k].flags & 1) != 0);
    }
    return addresses;
}

// n nodes of `node_bytes` linked in one random cycle (chase.hpp's single_cycle),
// followed from node 0 for n hops: one read per hop.
void chase_walk(std::size_t n, std::size_t node_bytes, std::uint64_t seed) {
    const std::vector<std::uint32_t> next = cachebook::single_cycle(n, seed);
    std::uint32_t at = 0;
    for (std::size_t hop = 0; hop < n; ++hop) {
        add_ref({static_cast<std::uint64_t>(at) * node_bytes, 1, false});
        at = next[at];
    }
}

}  // namespace

extern "C" void* __cxa_allocate_exception(std::size_t size) noexcept {
    if (size > sizeof g_exception) __builtin_trap();
    return g_exception;
}

extern "C" [[noreturn]] void __cxa_throw(void* object, std::type_info*, void (*destroy)(void*)) {
    // Everything the model throws derives from std::exception, by single inheritance.
    std::strncpy(g_error, static_cast<std::exception*>(object)->what(), sizeof g_error - 1);
    if (destroy) destroy(object);
    __builtin_trap();
}

CB_EXPORT(cb_error) const char* cb_error() {
    return g_error;
}

CB_EXPORT(cb_new)
Model* cb_new(std::uint32_t sets, std::uint32_t ways, std::uint32_t line_bytes, std::uint32_t policy,
              std::uint32_t seed_lo, std::uint32_t seed_hi, std::uint32_t prefetch, std::uint32_t degree,
              std::uint32_t streams) {
    static constexpr const char* kPolicies[] = {"lru", "fifo", "random", "plru"};
    cachebook::CacheConfig config{sets, ways, line_bytes, cachebook::parse_policy(policy < 4 ? kPolicies[policy] : "?"),
                                  join(seed_lo, seed_hi)};
    config.validate();  // before anything is allocated
    if (prefetch > 2) throw std::invalid_argument("prefetch: 0 (none), 1 (next-line) or 2 (stride)");
    cachebook::PrefetchConfig pf{static_cast<cachebook::PrefetchKind>(prefetch), degree, streams};
    pf.validate();
    auto model = std::make_unique<Model>();
    if (pf.kind == cachebook::PrefetchKind::none)
        model->plain = std::make_unique<cachebook::Cache>(cachebook::abc_cache(config));
    else
        model->prefetching = std::make_unique<cachebook::PrefetchingCache>(cachebook::abc_cache(config), pf);
    return model.release();
}

CB_EXPORT(cb_free) void cb_free(Model* m) {
    delete m;
}

// One access; returns its outcome: hit, evicted, set, way, evicted line (lo, hi).
CB_EXPORT(cb_access)
const std::uint32_t* cb_access(Model* m, std::uint32_t lo, std::uint32_t hi, std::uint32_t flags) {
    const cachebook::AccessResult r = m->access(join(lo, hi), static_cast<int>(flags >> 8), (flags & 1) != 0);
    g_out.assign({r.hit, r.evicted, static_cast<std::uint32_t>(r.set), static_cast<std::uint32_t>(r.way)});
    put_u64(r.evicted_line);
    return g_out.data();
}

// Room for n accesses, for JavaScript to fill before cb_run(m, n).
CB_EXPORT(cb_buffer) Ref* cb_buffer(std::uint32_t n) {
    g_refs.resize(n);
    return g_refs.data();
}

// Runs the first n accesses of the buffer (a walk's, or cb_buffer()'s).
CB_EXPORT(cb_run) void cb_run(Model* m, std::uint32_t n) {
    for (std::uint32_t k = 0; k < n && k < g_refs.size(); ++k) {
        const Ref& r = g_refs[k];
        m->access(join(r.lo, r.hi), static_cast<int>(r.flags >> 8), (r.flags & 1) != 0);
    }
}

// Counts of a stream (0: every access, the prefetcher's fills included; 1 to 3: A, B, C; 4: the
// prefetcher's fills, zero without one): hits, misses, evictions, dirty evictions, then the
// prefetcher's demand accesses, demand misses, issued and useful; each as (lo, hi).
CB_EXPORT(cb_counts) const std::uint32_t* cb_counts(Model* m, std::uint32_t stream) {
    static const cachebook::Counts kNone{};
    // Stream 0 of Cache counts only accesses made on stream 0; "all" is its total.
    const cachebook::Counts& c = stream == 0 ? m->cache().total()
                                 : stream == 4 ? (m->prefetching ? m->cache().stream(m->prefetching->prefetch_stream()) : kNone)
                                               : m->cache().stream(static_cast<int>(stream));
    const cachebook::PrefetchCounts p = m->prefetching ? m->prefetching->counts() : cachebook::PrefetchCounts{};
    g_out.clear();
    for (std::uint64_t v :
         {c.hits, c.misses, c.evictions, c.dirty_evictions, p.demand_accesses, p.demand_misses, p.issued, p.useful})
        put_u64(v);
    return g_out.data();
}

// `misses` (lo, hi) of the buffer's first n accesses in the model's geometry split into
// kinds (miss_kinds.hpp): misses, compulsory, capacity, conflict, each as (lo, hi) of a
// 64-bit two's complement number (capacity and conflict may be negative).
CB_EXPORT(cb_split)
const std::uint32_t* cb_split(Model* m, std::uint32_t n, std::uint32_t misses_lo, std::uint32_t misses_hi) {
    const cachebook::MissKinds k =
        cachebook::split_misses(join(misses_lo, misses_hi), m->cache().config(), buffered(n, nullptr));
    g_out.clear();
    for (std::uint64_t v :
         {k.misses, k.compulsory, static_cast<std::uint64_t>(k.capacity), static_cast<std::uint64_t>(k.conflict)})
        put_u64(v);
    return g_out.data();
}

// Belady's optimal replacement (OPT) in the model's geometry on the buffer's first n
// accesses: hits, misses, evictions, dirty evictions, each as (lo, hi).
CB_EXPORT(cb_optimal) const std::uint32_t* cb_optimal(Model* m, std::uint32_t n) {
    std::vector<bool> writes;
    const std::vector<std::uint64_t> addresses = buffered(n, &writes);
    const cachebook::Counts c = cachebook::optimal_counts(m->cache().config(), addresses, writes);
    g_out.clear();
    for (std::uint64_t v : {c.hits, c.misses, c.evictions, c.dirty_evictions}) put_u64(v);
    return g_out.data();
}

// The lines held in a set: their count, then each line as (lo, hi).
CB_EXPORT(cb_resident) const std::uint32_t* cb_resident(Model* m, std::uint32_t set) {
    const std::vector<std::uint64_t> lines = m->cache().resident_lines(set);
    g_out.assign({static_cast<std::uint32_t>(lines.size())});
    for (std::uint64_t line : lines) put_u64(line);
    return g_out.data();
}

// The walks of the book, from the generators of common/include/cachebook/trace.hpp,
// into the buffer; returns their length. Matrices are n x n of elem-byte values.
// kind 0: row by row; 1: column by column; 2: C = A x B in loop order `order`
// (0 to 5, kAllOrders); 3: tiled C = A x B; 4: transpose (tile 0: plain);
// 5: pointer chase over n nodes of elem bytes, one cycle from seed `tile`.
CB_EXPORT(cb_walk)
std::uint32_t cb_walk(std::uint32_t kind, std::uint32_t n, std::uint32_t elem, std::uint32_t tile, std::uint32_t order,
                      std::uint32_t line_bytes) {
    g_refs.clear();
    auto add = [](const cachebook::Access& a) { add_ref(a); };
    const auto layout = cachebook::MatmulLayout::packed(n, elem, line_bytes == 0 ? 1 : line_bytes);
    if (kind == 0)
        for (std::uint64_t a : cachebook::row_major_trace(n, elem)) add_ref({a, 1, false});
    else if (kind == 1)
        for (std::uint64_t a : cachebook::col_major_trace(n, elem)) add_ref({a, 1, false});
    else if (kind == 2)
        cachebook::for_each_matmul_access(cachebook::kAllOrders[order % 6], n, elem, layout, add);
    else if (kind == 3)
        cachebook::for_each_tiled_matmul_access(n, tile, elem, layout, add);
    else if (kind == 4)
        cachebook::for_each_transpose_access(n, tile, elem, add);
    else if (kind == 5)
        chase_walk(n, elem, tile);
    else
        throw std::invalid_argument("walk: kind 0 to 5");
    return static_cast<std::uint32_t>(g_refs.size());
}

// A rows x cols array of elem-byte values at address 0, its rows `leading` elements apart,
// read row by row (column 0) or column by column (column 1): chapter 1's a[4][8] and
// chapter 2's walk down the first columns of a padded matrix. Returns the walk's length.
CB_EXPORT(cb_array_walk)
std::uint32_t cb_array_walk(std::uint32_t column, std::uint32_t rows, std::uint32_t cols, std::uint32_t leading,
                            std::uint32_t elem) {
    if (leading < cols) throw std::invalid_argument("walk: a row's leading dimension is at least its columns");
    g_refs.clear();
    auto read = [](std::uint64_t address) { add_ref({address, 1, false}); };
    if (column != 0)
        cachebook::for_each_column_walk(rows, cols, leading, elem, read);
    else
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) read(cachebook::row_major_address(0, i, j, leading, elem));
    return static_cast<std::uint32_t>(g_refs.size());
}

CB_EXPORT(cb_walk_data) const Ref* cb_walk_data() {
    return g_refs.data();
}
