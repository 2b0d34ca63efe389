#include "cachebook/core_share.hpp"

#include <algorithm>
#include <stdexcept>

namespace cachebook {

void CoreShares::note(const std::vector<double>& cpu_seconds, const std::vector<double>& wall_seconds) {
    if (cpu_seconds.size() != wall_seconds.size()) throw std::invalid_argument("CoreShares: one wall time a thread");
    if (cpu_.size() < cpu_seconds.size()) {
        cpu_.resize(cpu_seconds.size(), 0.0);
        wall_.resize(cpu_seconds.size(), 0.0);
    }
    for (std::size_t t = 0; t < cpu_seconds.size(); ++t) {
        cpu_[t] += cpu_seconds[t];
        wall_[t] += wall_seconds[t];
    }
    ++races_;
}

std::vector<double> CoreShares::each() const {
    std::vector<double> shares;
    // A thread with no wall time did no work to share: it got no core. Past 1 is the clocks' grain.
    for (std::size_t t = 0; t < cpu_.size(); ++t)
        shares.push_back(wall_[t] > 0 ? std::min(1.0, cpu_[t] / wall_[t]) : 0.0);
    return shares;
}

void CoreShares::clear() {
    cpu_.clear();
    wall_.clear();
    races_ = 0;
}

}  // namespace cachebook
