#pragma once
/// @file machine.hpp
/// @brief What this machine is: its caches, CPU model, clock, cores and CPU features.
///
/// Nothing in the book hard-codes these; every chapter asks this module at run time, and no
/// chapter reads sysfs or /proc itself. The caches come from hwloc (the library made to
/// describe a machine: it reads sysfs, and cpuid where sysfs has nothing), then from
/// sysconf, then from sysfs directly. Every figure carries the source it came from.
///
/// Tests replace every source with a fixture: a directory named by the environment variable
/// CACHEBOOK_MACHINE (see detect_machine). A source the fixture does not hold reports nothing.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cachebook/cache.hpp"

namespace cachebook {

/// Where a figure about the machine came from.
enum class Source { unknown, hwloc, sysconf, sysfs, cpuinfo };
/// "hwloc", "sysconf", "sysfs", "/proc/cpuinfo" or "unknown".
std::string source_name(Source s);

/// One cache, as the first source that reports it describes it.
struct CacheInfo {
    int level = 0;     ///< 1, 2, 3, ...
    std::string type;  ///< "Data", "Instruction" or "Unified"
    std::size_t size_bytes = 0;
    std::size_t ways = 0;        ///< 0: not reported
    std::size_t line_bytes = 0;  ///< 0: not reported
    std::size_t sets = 0;        ///< size / (ways x line) when both are known, else 0
    std::string shared_cpus;     ///< the cpus that share it ("0-1"), empty when not reported
    Source source = Source::unknown;
    /// "L1d", "L1i", "L2", "L3".
    [[nodiscard]] std::string name() const;
};

/// Everything the book asks about the machine, with where each figure came from.
struct Machine {
    std::vector<CacheInfo> caches;  ///< every cache of the first usable CPU, by level
    std::string cpu_model;          ///< empty when no source reports it
    Source cpu_model_source = Source::unknown;
    double nominal_ghz = 0;          ///< "cpu MHz" / 1000 of /proc/cpuinfo; 0 when unknown
    std::vector<std::string> notes;  ///< one line per source: what it reported, or why nothing
    std::string fixture;             ///< the fixture directory, empty on the real machine

    /// The data (or unified) cache of the given level, if some source reports one.
    [[nodiscard]] std::optional<CacheInfo> data_cache(int level) const;
    /// The line size of the L1d (or of the first cache that reports one), if any source gives it.
    [[nodiscard]] std::optional<std::size_t> line_bytes() const;
    /// The source of line_bytes() ("unknown" when it is nullopt).
    [[nodiscard]] Source line_source() const;
    /// One line saying why `what` (for example "L2" or "the line size") is unknown here.
    [[nodiscard]] std::string why_unknown(const std::string& what) const;
};

/// Detects the machine from its real sources, or, when `fixture` is not empty, from that
/// directory only: `hwloc.xml` (an hwloc topology, as `lstopo --of xml` writes it),
/// `sysconf.txt` (lines "LEVEL1_DCACHE_SIZE 32768", names as `getconf -a` prints them),
/// `sysfs/cpu0/cache/indexN/` (files as in /sys/devices/system/cpu/cpu0/cache) and
/// `cpuinfo` (as /proc/cpuinfo). A file the fixture does not hold reports nothing.
Machine detect_machine(const std::string& fixture = "");

/// Every figure of `m` with its source, for a chapter's --json (the book's captions read it):
/// cpu, cpu_source, usable_cpus, caches [{name, level, type, size_bytes, ways, line_bytes, sets,
/// shared_cpus, source}], line_bytes, line_source, nominal_ghz, notes, fixture; null when unknown.
nlohmann::json machine_json(const Machine& m);

/// This machine, detected once: from the fixture named by CACHEBOOK_MACHINE when it is set.
const Machine& machine();

/// Reads every cache under `root` laid out as sysfs lays it out (default: the kernel's sysfs for
/// cpu0). Returns an empty list when the directory is absent or unreadable.
std::vector<CacheInfo> read_caches(const std::string& root = "/sys/devices/system/cpu/cpu0/cache");

/// machine().data_cache(level).
std::optional<CacheInfo> data_cache(int level);

/// A cache the machine reports, as the cache model runs it (CacheConfig::from_capacity, LRU):
/// nullopt when none is reported, or when its size, ways and line size are not consistent (a
/// line size that is not a power of two, ways not reported, a size that is not a whole number
/// of sets). A chapter that places addresses in this machine's L1d starts from
/// `cache_config(machine().data_cache(1))`.
std::optional<CacheConfig> cache_config(const std::optional<CacheInfo>& info);

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
/// machine().cpu_model, or "unknown CPU".
std::string cpu_model();
/// Pins the calling thread to one CPU; false if the system refused.
bool pin_to_cpu(int cpu);
/// The index of the n-th CPU in this process's affinity mask, or -1.
int nth_usable_cpu(int n);

/// A size in bytes as a reader reads it, in the largest binary unit it reaches:
/// "512 B", "48 KiB", "1.25 MiB", "300 MiB", "2 GiB". Exact where two decimals
/// say it exactly; otherwise rounded to one ("49.4 KiB" for 50628 bytes).
std::string size_text(std::size_t bytes);

}  // namespace cachebook
