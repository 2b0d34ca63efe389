// The performance score of exercise 3 (tools/teaching/perf.py; the instructor's copy only, like
// held_back.cpp): the hot loop x += vx * dt over particles placed three ways, in one buffer each:
// the reference solution's (struct of arrays, twice), the chapter's array of Particle (the
// baseline) and the submission's. Only the placement differs: the loop is the same code.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "exercise.hpp"
#include "layout.hpp"
#include "perf_probe.hpp"
#include "placement.hpp"

namespace {

using ch05_exercise::Placement;

struct Placed {
    std::size_t n = 0;
    Placement x, vx;
    std::unique_ptr<char, decltype(&std::free)> buffer{nullptr, &std::free};
};
Placed versions[4];  // in the order of perf_probe::Which

Placement reference_field(std::size_t field, std::size_t n) {  // struct of arrays
    return {field * 8 * n, ch05_exercise::kParticleFieldBytes[field]};
}
Placement baseline_field(std::size_t field, std::size_t) {  // the chapter's array of Particle
    constexpr std::size_t offsets[] = {offsetof(ch05::Particle, x),  offsetof(ch05::Particle, y),
                                       offsetof(ch05::Particle, z),  offsetof(ch05::Particle, vx),
                                       offsetof(ch05::Particle, vy), offsetof(ch05::Particle, vz),
                                       offsetof(ch05::Particle, id)};
    return {offsets[field], sizeof(ch05::Particle)};
}

void place(Placed& p, std::size_t n, Placement (*field)(std::size_t, std::size_t)) {
    const std::size_t bytes = ch05_checks::placement_budget(n);
    p.n = n;
    p.x = field(0, n);
    p.vx = field(3, n);
    p.buffer.reset(static_cast<char*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
    std::memset(p.buffer.get(), 0, bytes);
    for (std::size_t k = 0; k < n; ++k) {  // vx = k, so the loop's work is real
        const double v = double(k);
        std::memcpy(p.buffer.get() + p.vx.offset + k * p.vx.stride, &v, 8);
    }
}

void hot_loop(const Placed& p, double dt) {
    char* base = p.buffer.get();
    for (std::size_t k = 0; k < p.n; ++k) {
        double x, vx;
        std::memcpy(&x, base + p.x.offset + k * p.x.stride, 8);
        std::memcpy(&vx, base + p.vx.offset + k * p.vx.stride, 8);
        x += vx * dt;
        std::memcpy(base + p.x.offset + k * p.x.stride, &x, 8);
    }
}

}  // namespace

namespace perf_probe {

Spec spec() {
    return {"exercise 3: the hot loop x += vx * dt over the particles as place_field places them", {6, 8, 6}};
}

std::string check() {
    for (std::size_t n : {1u, 100u, 4096u, 1u << 19}) {
        if (auto why = ch05_checks::placement_problem(n); !why.empty()) return std::to_string(n) + " particles: " + why;
    }
    return "";
}

void prepare(bool traced, Which which) {
    const std::size_t n = traced ? 4096 : std::size_t{1} << 19;  // 288 KiB in the model's 32 KiB; 36 MiB timed
    constexpr Placement (*fields[])(std::size_t, std::size_t) = {reference_field, baseline_field,
                                                                 ch05_exercise::place_field, reference_field};
    place(versions[static_cast<int>(which)], n, fields[static_cast<int>(which)]);
}

void vary(Which which, std::uint32_t seed) {
    Placed& p = versions[static_cast<int>(which)];
    for (std::size_t k = 0; k < p.n; ++k) {  // x = 0, and vx from the seed
        const double x = 0.0, v = double((k * 2654435761u + seed) % 1024);
        std::memcpy(p.buffer.get() + p.x.offset + k * p.x.stride, &x, 8);
        std::memcpy(p.buffer.get() + p.vx.offset + k * p.vx.stride, &v, 8);
    }
}

void run(Which which) {
    hot_loop(versions[static_cast<int>(which)], 0.001);
}

std::string result(Which which) {  // a hash of every x, in particle order: the loop is the same code in both
    const Placed& p = versions[static_cast<int>(which)];
    std::uint64_t hash = 1469598103934665603u;
    for (std::size_t k = 0; k < p.n; ++k) {
        std::uint64_t bits;
        std::memcpy(&bits, p.buffer.get() + p.x.offset + k * p.x.stride, 8);
        hash = (hash ^ bits) * 1099511628211u;
    }
    return std::to_string(hash);
}

std::string result_problem(const std::string& submitted) {
    return submitted == result(Which::Reference) ? ""
                                                 : "the particles' x after the hot loop differ from the reference's";
}

}  // namespace perf_probe
