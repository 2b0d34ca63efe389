#pragma once
/// @file machine.hpp
/// @brief What this machine is: its caches (from sysfs), cores and CPU features.
///
/// Nothing in the book hard-codes these; every chapter reads them at run time.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cachebook {

/// One cache as sysfs describes it.
struct CacheInfo {
    int level = 0;               ///< 1, 2, 3, ...
    std::string type;            ///< "Data", "Instruction" or "Unified"
    std::size_t size_bytes = 0;
    std::size_t ways = 0;
    std::size_t line_bytes = 0;
    std::size_t sets = 0;
    std::string shared_cpus;     ///< the cpus that share it, as sysfs lists them
    /// "L1d", "L1i", "L2", "L3".
    [[nodiscard]] std::string name() const;
};

/// Reads every cache of cpu0 under `root` (default: the kernel's sysfs).
/// Returns an empty list when the directory is absent or unreadable.
std::vector<CacheInfo> read_caches(const std::string& root = "/sys/devices/system/cpu/cpu0/cache");

/// The data (or unified) cache of the given level, if sysfs reports one.
std::optional<CacheInfo> data_cache(int level);

/// The SIMD features the book's kernels choose between. Each architecture fills in its own
/// fields (cpuid on x86-64, the kernel's hardware capabilities on aarch64); the others stay false.
struct CpuFeatures {
    bool avx2 = false;     ///< x86-64: 256-bit AVX2
    bool fma = false;      ///< fused multiply-add on vectors (x86-64: FMA3; aarch64: part of ASIMD)
    bool avx512f = false;  ///< x86-64: 512-bit AVX-512 Foundation
    bool neon = false;     ///< aarch64: Advanced SIMD (ASIMD, "NEON"), 128-bit registers
};
CpuFeatures cpu_features();

/// CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus();
/// The "model name" line of /proc/cpuinfo, or "unknown CPU".
std::string cpu_model();
/// Pins the calling thread to one CPU; false if the system refused.
bool pin_to_cpu(int cpu);
/// The index of the n-th CPU in this process's affinity mask, or -1.
int nth_usable_cpu(int n);

}  // namespace cachebook
