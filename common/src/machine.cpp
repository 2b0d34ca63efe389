#include "cachebook/machine.hpp"

#include <pthread.h>
#include <sched.h>
#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace cachebook {
namespace {

std::optional<std::string> read_line(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string s;
    if (!in || !std::getline(in, s)) return std::nullopt;
    return s;
}

std::size_t read_number(const std::filesystem::path& p) {
    auto s = read_line(p);
    if (!s) return 0;
    try {
        return static_cast<std::size_t>(std::stoull(*s));
    } catch (...) {
        return 0;
    }
}

// sysfs writes sizes as "48K", "2048K" or "300M".
std::size_t read_size(const std::filesystem::path& p) {
    auto s = read_line(p);
    if (!s || s->empty()) return 0;
    std::size_t pos = 0;
    std::size_t v = 0;
    try {
        v = static_cast<std::size_t>(std::stoull(*s, &pos));
    } catch (...) {
        return 0;
    }
    if (pos < s->size()) {
        switch ((*s)[pos]) {
            case 'K': v <<= 10; break;
            case 'M': v <<= 20; break;
            case 'G': v <<= 30; break;
            default: break;
        }
    }
    return v;
}

}  // namespace

std::string CacheInfo::name() const {
    if (type == "Data") return fmt::format("L{}d", level);
    if (type == "Instruction") return fmt::format("L{}i", level);
    return fmt::format("L{}", level);
}

std::vector<CacheInfo> read_caches(const std::string& root) {
    std::vector<CacheInfo> out;
    std::error_code ec;
    for (int idx = 0; idx < 16; ++idx) {
        const std::filesystem::path dir = std::filesystem::path(root) / fmt::format("index{}", idx);
        if (!std::filesystem::is_directory(dir, ec)) break;
        CacheInfo c;
        c.level = static_cast<int>(read_number(dir / "level"));
        c.type = read_line(dir / "type").value_or("");
        c.size_bytes = read_size(dir / "size");
        c.ways = read_number(dir / "ways_of_associativity");
        c.line_bytes = read_number(dir / "coherency_line_size");
        c.sets = read_number(dir / "number_of_sets");
        c.shared_cpus = read_line(dir / "shared_cpu_list").value_or("");
        if (c.level > 0 && c.size_bytes > 0) out.push_back(c);
    }
    return out;
}

std::optional<CacheInfo> data_cache(int level) {
    for (const auto& c : read_caches())
        if (c.level == level && (c.type == "Data" || c.type == "Unified")) return c;
    return std::nullopt;
}

#if defined(__x86_64__)
CpuFeatures cpu_features() {
    __builtin_cpu_init();  // cpuid, read once by the compiler's runtime
    CpuFeatures f;
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.avx512f = __builtin_cpu_supports("avx512f");
    return f;
}
#elif defined(__aarch64__)
CpuFeatures cpu_features() {
    // User code may not read the ID registers itself: the kernel reports them as HWCAP bits.
    const unsigned long hwcap = getauxval(AT_HWCAP);
    CpuFeatures f;
    f.neon = (hwcap & HWCAP_ASIMD) != 0;
    f.fma = f.neon;  // ASIMD includes FMLA, the fused multiply-add on vectors
    return f;
}
#else
CpuFeatures cpu_features() { return {}; }  // no kernel here is written for this architecture
#endif

int usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    const int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

int nth_usable_cpu(int n) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &set) && n-- == 0) return cpu;
    return -1;
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos) {
                auto v = line.substr(colon + 1);
                v.erase(0, v.find_first_not_of(" \t"));
                return v;
            }
        }
    }
    return "unknown CPU";
}

bool pin_to_cpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace cachebook
