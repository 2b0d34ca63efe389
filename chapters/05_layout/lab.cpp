// Chapter 5's experiment: the structs as the compiler laid them out, the data each loop
// runs over, the timing loops (the thread's CPU clock), and the JSON the page reads.
#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "cachebook/chase.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/machine.hpp"

namespace ch05 {
namespace {

// The compiler's own answer, never a typed number.
#define CH05_FIELD(T, f)                 \
    Field {                              \
#f, offsetof(T, f), sizeof(T::f) \
    }

template <class T>
StructLayout layout_of(std::string name, std::vector<Field> fields) {
    return StructLayout{std::move(name), sizeof(T), alignof(T), std::move(fields)};
}

}  // namespace

std::size_t StructLayout::padding() const {
    std::size_t used = 0;
    for (const Field& f : fields) used += f.size;
    return size - used;
}

std::string StructLayout::picture() const {
    std::string s;
    std::size_t at = 0;
    for (const Field& f : fields) {
        if (f.offset > at) s += fmt::format("[{} pad] ", f.offset - at);
        s += fmt::format("{}@{}+{} ", f.name, f.offset, f.size);
        at = f.offset + f.size;
    }
    if (size > at) s += fmt::format("[{} pad]", size - at);
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

double StructLayout::per_line(std::size_t line_bytes) const {
    return static_cast<double>(line_bytes) / static_cast<double>(size);
}

StructLayout particle_layout() {
    return layout_of<Particle>(
        "Particle",
        {CH05_FIELD(Particle, x), CH05_FIELD(Particle, y), CH05_FIELD(Particle, z), CH05_FIELD(Particle, vx),
         CH05_FIELD(Particle, vy), CH05_FIELD(Particle, vz), CH05_FIELD(Particle, id), CH05_FIELD(Particle, name)});
}
StructLayout hot_particle_layout() {
    return layout_of<HotParticle>(
        "HotParticle", {CH05_FIELD(HotParticle, x), CH05_FIELD(HotParticle, y), CH05_FIELD(HotParticle, z),
                        CH05_FIELD(HotParticle, vx), CH05_FIELD(HotParticle, vy), CH05_FIELD(HotParticle, vz)});
}
StructLayout cold_particle_layout() {
    return layout_of<ColdParticle>("ColdParticle", {CH05_FIELD(ColdParticle, id), CH05_FIELD(ColdParticle, name)});
}
StructLayout char_double_int_layout() {
    return layout_of<CharDoubleInt>(
        "CharDoubleInt", {CH05_FIELD(CharDoubleInt, c), CH05_FIELD(CharDoubleInt, d), CH05_FIELD(CharDoubleInt, i)});
}
StructLayout double_int_char_layout() {
    return layout_of<DoubleIntChar>(
        "DoubleIntChar", {CH05_FIELD(DoubleIntChar, d), CH05_FIELD(DoubleIntChar, i), CH05_FIELD(DoubleIntChar, c)});
}
StructLayout body_layout() {
    return layout_of<Body>("Body", {CH05_FIELD(Body, position), CH05_FIELD(Body, velocity)});
}
StructLayout aligned_body_layout() {
    return layout_of<AlignedBody>("AlignedBody",
                                  {CH05_FIELD(AlignedBody, position), CH05_FIELD(AlignedBody, velocity)});
}

// --- The update loop -----------------------------------------------------------------

namespace {
double initial_x(std::size_t i) {
    return 0.5 * static_cast<double>(i % 1000);
}
double initial_v(std::size_t i) {
    return 0.25 * static_cast<double>(i % 7) - 0.75;
}
void name_into(char* out, std::size_t size, std::size_t i) {
    const auto end = fmt::format_to_n(out, size - 1, "p{}", i);
    *end.out = '\0';
}
}  // namespace

ParticlesAoS make_aos(std::size_t n) {
    ParticlesAoS s;
    s.p.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        Particle& p = s.p[i];
        p.x = p.y = p.z = initial_x(i);
        p.vx = p.vy = p.vz = initial_v(i);
        p.id = static_cast<int>(i);
        name_into(p.name, sizeof p.name, i);
    }
    return s;
}

ParticlesSoA make_soa(std::size_t n) {
    ParticlesSoA s;
    for (auto* v : {&s.x, &s.y, &s.z, &s.vx, &s.vy, &s.vz}) v->resize(n);
    s.id.resize(n);
    s.name.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        s.x[i] = s.y[i] = s.z[i] = initial_x(i);
        s.vx[i] = s.vy[i] = s.vz[i] = initial_v(i);
        s.id[i] = static_cast<int>(i);
        name_into(s.name[i].data(), s.name[i].size(), i);
    }
    return s;
}

ParticlesHotCold make_hot_cold(std::size_t n) {
    ParticlesHotCold s;
    s.hot.resize(n);
    s.cold.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        HotParticle& h = s.hot[i];
        h.x = h.y = h.z = initial_x(i);
        h.vx = h.vy = h.vz = initial_v(i);
        s.cold[i].id = static_cast<int>(i);
        name_into(s.cold[i].name, sizeof s.cold[i].name, i);
    }
    return s;
}

double sum_x(const ParticlesAoS& s) {
    double t = 0;
    for (const Particle& p : s.p) t += p.x;
    return t;
}
double sum_x(const ParticlesSoA& s) {
    return std::accumulate(s.x.begin(), s.x.end(), 0.0);
}
double sum_x(const ParticlesHotCold& s) {
    double t = 0;
    for (const HotParticle& p : s.hot) t += p.x;
    return t;
}

std::string CacheFit::text() const {
    if (last_level.empty()) return "";
    if (beyond_last_level()) return fmt::format("beyond {}, the last level", beyond);
    if (beyond.empty()) return fmt::format("within {}", within);
    return fmt::format("beyond {}, within {}", beyond, within);
}

CacheFit cache_fit(std::size_t bytes, const std::vector<std::size_t>& level_bytes) {
    CacheFit fit;
    for (std::size_t k = 0; k < level_bytes.size(); ++k) {
        if (level_bytes[k] == 0) continue;
        const std::string name = fmt::format("L{}", k + 1);
        fit.last_level = name;
        if (bytes > level_bytes[k])
            fit.beyond = name;
        else if (fit.within.empty())
            fit.within = name;
    }
    return fit;
}

CacheFit cache_fit(std::size_t bytes) {
    std::vector<std::size_t> level_bytes;
    for (int level = 1; level <= 4; ++level) {
        const auto cache = cachebook::machine().data_cache(level);
        level_bytes.push_back(cache ? cache->size_bytes : 0);
    }
    return cache_fit(bytes, level_bytes);
}

// --- Linked list against vector ----------------------------------------------------------

namespace {
std::int64_t value_of(std::size_t i) {
    return static_cast<std::int64_t>((i * 7919) % 1000) - 500;
}
}  // namespace

ListBench make_lists(std::size_t n, std::uint64_t seed) {
    ListBench b;
    b.values.resize(n);
    for (std::size_t i = 0; i < n; ++i) b.values[i] = value_of(i);

    b.ordered_pool.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        b.ordered_pool[i] = Node{b.values[i], i + 1 < n ? &b.ordered_pool[i + 1] : nullptr};
    b.ordered_head = n ? &b.ordered_pool[0] : nullptr;

    // The scattered list holds the same values in the same list order, but node
    // k of the list sits in a random slot of the pool: every hop lands far away.
    b.scattered_order = cachebook::random_permutation(n, seed);
    b.scattered_pool.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
        Node* next = k + 1 < n ? &b.scattered_pool[b.scattered_order[k + 1]] : nullptr;
        b.scattered_pool[b.scattered_order[k]] = Node{b.values[k], next};
    }
    b.scattered_head = n ? &b.scattered_pool[b.scattered_order[0]] : nullptr;
    return b;
}

std::vector<std::int64_t> scattered_values(const ListBench& b) {
    std::vector<std::int64_t> values(b.scattered_pool.size());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = b.scattered_pool[i].value;
    return values;
}

// --- Software prefetch -----------------------------------------------------------------

PrefetchTimes time_prefetch(std::size_t n, const std::vector<std::size_t>& distances, int runs) {
    PrefetchTimes t;
    t.n = n;
    t.distances = distances;
    std::vector<double> a(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<double>(i % 1024);
    const auto idx = cachebook::random_permutation(n, 11);
    t.times.resize(distances.size());
    t.sums.resize(distances.size());
    for (int r = -1; r < runs; ++r) {
        for (std::size_t d = 0; d < distances.size(); ++d) {
            const double start = cachebook::thread_cpu_seconds();
            t.sums[d] = gather(a.data(), idx.data(), n, distances[d]);
            cachebook::do_not_optimize(t.sums[d]);
            if (r >= 0) t.times[d].runs.push_back((cachebook::thread_cpu_seconds() - start));
        }
    }
    return t;
}

std::size_t fastest(const std::vector<cachebook::Timing>& times) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < times.size(); ++i)
        if (times[i].min() < times[best].min()) best = i;
    return best;
}

// --- JSON ------------------------------------------------------------------------------

nlohmann::json to_json(const StructLayout& s) {
    nlohmann::json fields = nlohmann::json::array();
    for (const Field& f : s.fields) fields.push_back({{"name", f.name}, {"offset", f.offset}, {"size", f.size}});
    return {{"name", s.name},
            {"size", s.size},
            {"align", s.align},
            {"padding", s.padding()},
            {"per_line", s.per_line(kLineBytes)},
            {"per_line_2dp", fmt::format("{:.2f}", s.per_line(kLineBytes))},
            {"picture", s.picture()},
            {"fields", fields}};
}

nlohmann::json to_json(const Straddle& s) {
    return {{"size", s.size},
            {"stride", s.stride},
            {"n", s.n},
            {"straddling", s.straddling},
            {"lines_touched", s.lines_touched},
            {"lines_per_object", s.lines_per_object()}};
}

}  // namespace ch05
