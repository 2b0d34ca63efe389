#include "cachebook/machine.hpp"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#ifdef CACHEBOOK_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace cachebook {

std::string size_text(std::size_t bytes) {
    static constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) return fmt::format("{} B", bytes);
    std::size_t unit = 1024;
    int i = 0;
    // The unit whose value, rounded to one decimal, stays below 1024 ("1.0 MiB", not "1024.0 KiB").
    while (i < 3 && static_cast<double>(bytes) / static_cast<double>(unit) >= 1023.95) unit *= 1024, ++i;
    const double value = static_cast<double>(bytes) / static_cast<double>(unit);
    // Two decimals or fewer when they are exact (1.25 MiB), trailing zeros dropped; else one.
    if (bytes % unit == 0) return fmt::format("{} {}", bytes / unit, units[i]);
    if ((bytes * 10) % unit == 0) return fmt::format("{:.1f} {}", value, units[i]);
    if ((bytes * 100) % unit == 0) return fmt::format("{:.2f} {}", value, units[i]);
    return fmt::format("{:.1f} {}", value, units[i]);
}

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const fs::path& p) {
    std::ifstream in(p);
    std::string s;
    if (!in || !std::getline(in, s)) return std::nullopt;
    return s;
}

std::size_t read_number(const fs::path& p) {
    auto s = read_line(p);
    if (!s) return 0;
    try {
        return static_cast<std::size_t>(std::stoull(*s));
    } catch (...) {
        return 0;
    }
}

// sysfs writes sizes as "48K", "2048K" or "300M".
std::size_t read_size(const fs::path& p) {
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
            case 'K':
                v <<= 10;
                break;
            case 'M':
                v <<= 20;
                break;
            case 'G':
                v <<= 30;
                break;
            default:
                break;
        }
    }
    return v;
}

// Sets when ways and line are both known; the size alone does not say.
void complete(CacheInfo& c) {
    c.sets = c.ways > 0 && c.line_bytes > 0 ? c.size_bytes / (c.ways * c.line_bytes) : 0;
}

// What a source reported, as one note: "hwloc: L1d 48 KiB, L2 2 MiB" or "hwloc: <why not>".
std::string note_of(const std::string& source, const std::vector<CacheInfo>& caches, const std::string& why_none) {
    if (caches.empty()) return fmt::format("{}: {}", source, why_none);
    std::string s = source + ":";
    for (const auto& c : caches)
        s += fmt::format("{} {} {}", s.back() == ':' ? "" : ",", c.name(), size_text(c.size_bytes));
    return s;
}

#ifdef CACHEBOOK_HAVE_HWLOC
// The caches above one PU of an hwloc topology, and its package's CPU model.
std::vector<CacheInfo> caches_above(hwloc_obj_t pu, std::string& model) {
    std::vector<CacheInfo> out;
    for (hwloc_obj_t o = pu; o != nullptr; o = o->parent) {  // from the PU up: L1 first
        if (o->type == HWLOC_OBJ_PACKAGE && model.empty()) {
            const char* m = hwloc_obj_get_info_by_name(o, "CPUModel");
            if (m != nullptr) model = m;
        }
        if (!hwloc_obj_type_is_cache(o->type) || o->attr == nullptr) continue;
        const auto& a = o->attr->cache;
        CacheInfo c;
        c.level = static_cast<int>(a.depth);
        c.type = a.type == HWLOC_OBJ_CACHE_DATA          ? "Data"
                 : a.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "Instruction"
                                                         : "Unified";
        c.size_bytes = static_cast<std::size_t>(a.size);
        c.line_bytes = a.linesize;
        // hwloc writes -1 for a fully associative cache: one set, as many ways as lines.
        c.ways = a.associativity > 0                       ? static_cast<std::size_t>(a.associativity)
                 : a.associativity < 0 && c.line_bytes > 0 ? c.size_bytes / c.line_bytes
                                                           : 0;
        char* list = nullptr;
        if (o->cpuset != nullptr && hwloc_bitmap_list_asprintf(&list, o->cpuset) >= 0 && list != nullptr)
            c.shared_cpus = list;
        std::free(list);
        c.source = Source::hwloc;
        complete(c);
        if (c.level > 0 && c.size_bytes > 0) out.push_back(c);
    }
    return out;
}

// hwloc's view: the real machine, or the topology of `xml` (a fixture). `why` says why nothing.
std::vector<CacheInfo> hwloc_caches(const std::string* xml, std::string& model, std::string& why) {
    hwloc_topology_t topology = nullptr;
    if (hwloc_topology_init(&topology) != 0) {
        why = "could not start";
        return {};
    }
    std::vector<CacheInfo> out;
    if (xml != nullptr && hwloc_topology_set_xml(topology, xml->c_str()) != 0)
        why = "cannot read " + *xml;
    else if (hwloc_topology_load(topology) != 0)
        why = "could not load the topology";
    else {
        const int cpu = xml != nullptr ? -1 : nth_usable_cpu(0);
        hwloc_obj_t pu = cpu >= 0 ? hwloc_get_pu_obj_by_os_index(topology, static_cast<unsigned>(cpu)) : nullptr;
        if (pu == nullptr) pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, nullptr);
        if (pu != nullptr) out = caches_above(pu, model);
        why = "no caches in its topology";
    }
    hwloc_topology_destroy(topology);
    return out;
}
#endif

// sysconf's cache figures by getconf name; `value` gives 0 for a name it does not know.
std::vector<CacheInfo> sysconf_caches(const std::function<long(const std::string&)>& value) {
    struct Kind {
        int level;
        const char* prefix;
        const char* type;
    };
    const Kind kinds[] = {{1, "LEVEL1_DCACHE", "Data"},
                          {1, "LEVEL1_ICACHE", "Instruction"},
                          {2, "LEVEL2_CACHE", "Unified"},
                          {3, "LEVEL3_CACHE", "Unified"},
                          {4, "LEVEL4_CACHE", "Unified"}};
    std::vector<CacheInfo> out;
    for (const auto& k : kinds) {
        const std::string p = k.prefix;
        CacheInfo c;
        c.level = k.level;
        c.type = k.type;
        c.size_bytes = static_cast<std::size_t>(std::max(0L, value(p + "_SIZE")));
        c.ways = static_cast<std::size_t>(std::max(0L, value(p + "_ASSOC")));
        c.line_bytes = static_cast<std::size_t>(std::max(0L, value(p + "_LINESIZE")));
        c.source = Source::sysconf;
        complete(c);
        if (c.size_bytes > 0) out.push_back(c);
    }
    return out;
}

long real_sysconf(const std::string& name) {
#ifdef _SC_LEVEL1_DCACHE_SIZE  // glibc's names; other C libraries have none
    static const std::map<std::string, int> names = {
        {"LEVEL1_DCACHE_SIZE", _SC_LEVEL1_DCACHE_SIZE},         {"LEVEL1_DCACHE_ASSOC", _SC_LEVEL1_DCACHE_ASSOC},
        {"LEVEL1_DCACHE_LINESIZE", _SC_LEVEL1_DCACHE_LINESIZE}, {"LEVEL1_ICACHE_SIZE", _SC_LEVEL1_ICACHE_SIZE},
        {"LEVEL1_ICACHE_ASSOC", _SC_LEVEL1_ICACHE_ASSOC},       {"LEVEL1_ICACHE_LINESIZE", _SC_LEVEL1_ICACHE_LINESIZE},
        {"LEVEL2_CACHE_SIZE", _SC_LEVEL2_CACHE_SIZE},           {"LEVEL2_CACHE_ASSOC", _SC_LEVEL2_CACHE_ASSOC},
        {"LEVEL2_CACHE_LINESIZE", _SC_LEVEL2_CACHE_LINESIZE},   {"LEVEL3_CACHE_SIZE", _SC_LEVEL3_CACHE_SIZE},
        {"LEVEL3_CACHE_ASSOC", _SC_LEVEL3_CACHE_ASSOC},         {"LEVEL3_CACHE_LINESIZE", _SC_LEVEL3_CACHE_LINESIZE},
        {"LEVEL4_CACHE_SIZE", _SC_LEVEL4_CACHE_SIZE},           {"LEVEL4_CACHE_ASSOC", _SC_LEVEL4_CACHE_ASSOC},
        {"LEVEL4_CACHE_LINESIZE", _SC_LEVEL4_CACHE_LINESIZE}};
    const auto it = names.find(name);
    return it == names.end() ? 0 : sysconf(it->second);
#else
    (void)name;
    return 0;
#endif
}

// A fixture's sysconf.txt: "NAME value" lines; a name it does not hold is 0.
std::function<long(const std::string&)> fixture_sysconf(const fs::path& file) {
    std::map<std::string, long> values;
    std::ifstream in(file);
    std::string name;
    long v = 0;
    while (in >> name >> v) values[name] = v;
    return [values](const std::string& n) {
        const auto it = values.find(n);
        return it == values.end() ? 0L : it->second;
    };
}

// The value after "key<spaces>:" on the first line of /proc/cpuinfo's text that starts with key.
std::string cpuinfo_field(const std::string& text, const std::string& key) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind(key, 0) != 0) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
    }
    return "";
}

// Adds the caches of a later source that no earlier source reported (by level and type).
void merge(std::vector<CacheInfo>& into, const std::vector<CacheInfo>& more) {
    for (const auto& c : more) {
        const bool have = std::any_of(into.begin(), into.end(),
                                      [&](const CacheInfo& x) { return x.level == c.level && x.type == c.type; });
        if (!have) into.push_back(c);
    }
}

void read_cpuinfo(Machine& m, const fs::path& file) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    if (m.cpu_model.empty()) {
        m.cpu_model = cpuinfo_field(text.str(), "model name");
        if (!m.cpu_model.empty()) m.cpu_model_source = Source::cpuinfo;
    }
    try {
        m.nominal_ghz = std::stod(cpuinfo_field(text.str(), "cpu MHz")) / 1000.0;
    } catch (...) {
        m.nominal_ghz = 0;
    }
}

}  // namespace

std::string source_name(Source s) {
    switch (s) {
        case Source::hwloc:
            return "hwloc";
        case Source::sysconf:
            return "sysconf";
        case Source::sysfs:
            return "sysfs";
        case Source::cpuinfo:
            return "/proc/cpuinfo";
        case Source::unknown:
            break;
    }
    return "unknown";
}

std::string CacheInfo::name() const {
    if (type == "Data") return fmt::format("L{}d", level);
    if (type == "Instruction") return fmt::format("L{}i", level);
    return fmt::format("L{}", level);
}

std::vector<CacheInfo> read_caches(const std::string& root) {
    std::vector<CacheInfo> out;
    std::error_code ec;
    for (int idx = 0; idx < 16; ++idx) {
        const fs::path dir = fs::path(root) / fmt::format("index{}", idx);
        if (!fs::is_directory(dir, ec)) break;
        CacheInfo c;
        c.level = static_cast<int>(read_number(dir / "level"));
        c.type = read_line(dir / "type").value_or("");
        c.size_bytes = read_size(dir / "size");
        c.ways = read_number(dir / "ways_of_associativity");
        c.line_bytes = read_number(dir / "coherency_line_size");
        c.shared_cpus = read_line(dir / "shared_cpu_list").value_or("");
        c.source = Source::sysfs;
        complete(c);
        if (c.level > 0 && c.size_bytes > 0) out.push_back(c);
    }
    return out;
}

Machine detect_machine(const std::string& fixture) {
    Machine m;
    m.fixture = fixture;
    const bool fake = !fixture.empty();
    const fs::path dir(fixture);
    std::vector<CacheInfo> caches;
    std::string why = "not in the fixture";
#ifdef CACHEBOOK_HAVE_HWLOC
    const std::string xml = (dir / "hwloc.xml").string();
    std::error_code ec;
    if (!fake || fs::exists(xml, ec)) caches = hwloc_caches(fake ? &xml : nullptr, m.cpu_model, why);
    if (!m.cpu_model.empty()) m.cpu_model_source = Source::hwloc;
#else
    why = "this build has no hwloc";
#endif
    m.notes.push_back(note_of("hwloc", caches, why));
    const auto by_sysconf = sysconf_caches(fake ? fixture_sysconf(dir / "sysconf.txt") : real_sysconf);
    m.notes.push_back(note_of("sysconf", by_sysconf, fake ? "not in the fixture" : "no cache figures"));
    merge(caches, by_sysconf);
    const int cpu = fake ? 0 : std::max(0, nth_usable_cpu(0));
    const fs::path sysfs = fake ? dir / "sysfs" : fs::path("/sys/devices/system/cpu");
    const auto by_sysfs = read_caches((sysfs / fmt::format("cpu{}", cpu) / "cache").string());
    m.notes.push_back(note_of("sysfs", by_sysfs, fmt::format("no cache directories for cpu{}", cpu)));
    merge(caches, by_sysfs);
    std::stable_sort(caches.begin(), caches.end(), [](const CacheInfo& a, const CacheInfo& b) {
        return a.level != b.level ? a.level < b.level : (a.type == "Data") > (b.type == "Data");
    });
    m.caches = caches;
    read_cpuinfo(m, fake ? dir / "cpuinfo" : fs::path("/proc/cpuinfo"));
    return m;
}

const Machine& machine() {
    static const Machine m = [] {
        const char* fixture = std::getenv("CACHEBOOK_MACHINE");
        return detect_machine(fixture != nullptr ? fixture : "");
    }();
    return m;
}

std::optional<CacheInfo> Machine::data_cache(int level) const {
    for (const auto& c : caches)
        if (c.level == level && (c.type == "Data" || c.type == "Unified")) return c;
    return std::nullopt;
}

std::optional<CacheConfig> cache_config(const std::optional<CacheInfo>& info) {
    if (!info || info->ways == 0 || !std::has_single_bit(info->line_bytes)) return std::nullopt;
    const std::size_t set_bytes = info->ways * info->line_bytes;
    if (info->size_bytes == 0 || info->size_bytes % set_bytes != 0) return std::nullopt;
    return CacheConfig::from_capacity(info->size_bytes, info->ways, info->line_bytes);
}

namespace {
// The cache whose line size the book uses: the L1d's, else the first that reports one.
const CacheInfo* line_cache(const Machine& m) {
    for (const auto& c : m.caches)
        if (c.level == 1 && c.type != "Instruction" && c.line_bytes > 0) return &c;
    for (const auto& c : m.caches)
        if (c.line_bytes > 0) return &c;
    return nullptr;
}
}  // namespace

std::optional<std::size_t> Machine::line_bytes() const {
    const auto* c = line_cache(*this);
    return c != nullptr ? std::optional<std::size_t>(c->line_bytes) : std::nullopt;
}

Source Machine::line_source() const {
    const auto* c = line_cache(*this);
    return c != nullptr ? c->source : Source::unknown;
}

std::string Machine::why_unknown(const std::string& what) const {
    std::string s = fmt::format("{} unknown: no source reports it here", what);
    if (!fixture.empty()) s += fmt::format(" (fixture {})", fs::path(fixture).filename().string());
    for (const auto& n : notes) s += "; " + n;
    return s;
}

std::optional<CacheInfo> data_cache(int level) {
    return machine().data_cache(level);
}

namespace {
template <class T>
nlohmann::json or_null(bool known, const T& v) {
    return known ? nlohmann::json(v) : nlohmann::json();
}
}  // namespace

nlohmann::json machine_json(const Machine& m) {
    nlohmann::json caches = nlohmann::json::array();
    for (const auto& c : m.caches)
        caches.push_back({{"name", c.name()},
                          {"level", c.level},
                          {"type", c.type},
                          {"size_bytes", c.size_bytes},
                          {"size_text", size_text(c.size_bytes)},
                          {"ways", or_null(c.ways > 0, c.ways)},
                          {"line_bytes", or_null(c.line_bytes > 0, c.line_bytes)},
                          {"sets", or_null(c.sets > 0, c.sets)},
                          {"shared_cpus", or_null(!c.shared_cpus.empty(), c.shared_cpus)},
                          {"source", source_name(c.source)}});
    const auto line = m.line_bytes();
    return {{"cpu", or_null(!m.cpu_model.empty(), m.cpu_model)},
            {"cpu_source", source_name(m.cpu_model_source)},
            {"usable_cpus", usable_cpus()},
            {"caches", caches},
            {"line_bytes", or_null(line.has_value(), line.value_or(0))},
            {"line_source", source_name(m.line_source())},
            {"nominal_ghz", or_null(m.nominal_ghz > 0, m.nominal_ghz)},
            {"notes", m.notes},
            {"fixture", or_null(!m.fixture.empty(), m.fixture)}};
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
CpuFeatures cpu_features() {
    return {};
}  // no kernel here is written for this architecture
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
    const auto& m = machine();
    return m.cpu_model.empty() ? "unknown CPU" : m.cpu_model;
}

bool pin_to_cpu(int cpu) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

}  // namespace cachebook
