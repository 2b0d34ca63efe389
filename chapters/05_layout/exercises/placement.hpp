#pragma once
// Exercise 3's rules for a placement of the particle's fields, shared by the cases and the
// instructor's performance probe (perf.cpp).
#include <string>
#include <vector>

#include "exercise.hpp"

namespace ch05_checks {

/// The bytes a placement of n particles may use: twice the packed 72 bytes a particle.
inline std::size_t placement_budget(std::size_t n) {
    return 2 * 72 * n;
}

/// Empty when place_field's placement of n particles keeps the rules (inside the budget, each field
/// at a multiple of 8, no byte of two fields shared); else the first rule broken.
inline std::string placement_problem(std::size_t n) {
    using namespace ch05_exercise;
    std::vector<bool> used(placement_budget(n));
    for (std::size_t f = 0; f < kParticleFields; ++f) {
        const Placement p = place_field(f, n);
        const std::string field = "field " + std::to_string(f);
        if (p.offset % 8 != 0 || p.stride % 8 != 0)
            return field + ": offset " + std::to_string(p.offset) + " or stride " + std::to_string(p.stride) +
                   " is not a multiple of 8";
        for (std::size_t k = 0; k < n; ++k) {
            const std::size_t start = p.offset + k * p.stride;
            if (start + kParticleFieldBytes[f] > used.size())
                return field + " of particle " + std::to_string(k) + " ends past the " + std::to_string(used.size()) +
                       " bytes allowed for " + std::to_string(n) + " particles";
            for (std::size_t b = start; b < start + kParticleFieldBytes[f]; ++b) {
                if (used[b])
                    return field + " of particle " + std::to_string(k) + " overlaps another field at byte " +
                           std::to_string(b);
                used[b] = true;
            }
        }
    }
    return "";
}

}  // namespace ch05_checks
