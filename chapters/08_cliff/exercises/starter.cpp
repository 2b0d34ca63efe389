// Chapter 8 exercises: replace each body. The grader calls these functions.
#include <stdexcept>

#include "exercise.hpp"

namespace ch08_exercise {

std::vector<std::uint32_t> random_cycle(std::size_t n, std::uint64_t seed) {
    (void)n;
    (void)seed;
    throw std::logic_error("random_cycle: not written yet");
}

std::optional<std::size_t> line_size(const std::vector<std::size_t>& strides, const std::vector<double>& probe_ns) {
    (void)strides;
    (void)probe_ns;
    throw std::logic_error("line_size: not written yet");
}

}  // namespace ch08_exercise
