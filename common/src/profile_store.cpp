// The profile one run of the chapters shares (profile.hpp): written once, read by the rest.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "cachebook/machine.hpp"
#include "cachebook/profile.hpp"
#include "cachebook/report.hpp"

namespace cachebook {

namespace {

Figure figure_from_json(const nlohmann::json& j) {
    Figure f;
    if (!j.at("value").is_null()) f.value = j.at("value").get<double>();
    if (!j.at("spread").is_null()) f.spread = j.at("spread").get<double>();
    f.source = j.at("source").get<std::string>();
    return f;
}

// What the key is made of: the machine as the machine module describes it, and the build.
std::string key_text() {
    return machine_json(machine()).dump() + "|" + __VERSION__ + "|" + std::to_string(widest_vector_bytes()) +
#if defined(__OPTIMIZE__)
           "|optimized";
#else
           "|unoptimized";
#endif
}

}  // namespace

std::string profile_key() {
    return fmt::format("{:016x}", std::hash<std::string>{}(key_text()));
}

Profile profile_from_json(const nlohmann::json& j) {
    Profile p;
    for (const auto& l : j.at("levels")) {
        LevelProfile level;
        level.name = l.at("name").get<std::string>();
        level.bytes = l.at("bytes").get<std::size_t>();
        level.latency_ns = figure_from_json(l.at("latency_ns"));
        level.read_gbs = figure_from_json(l.at("read_gbs"));
        level.vector_read_gbs = figure_from_json(l.at("vector_read_gbs"));
        level.store_gbs = figure_from_json(l.at("store_gbs"));
        level.stream_store_gbs = figure_from_json(l.at("stream_store_gbs"));
        level.in_flight = figure_from_json(l.at("in_flight"));
        p.levels.push_back(level);
    }
    const auto& core = j.at("core");
    p.core = {figure_from_json(core.at("int_add_ns")), figure_from_json(core.at("fp_add_ns")),
              figure_from_json(core.at("peak_gflops"))};
    p.l1_set_refill_ns = figure_from_json(j.at("l1_set_refill_ns"));
    p.l3_reach = figure_from_json(j.at("l3_reach_bytes"));
    const auto& sharing = j.at("sharing");
    p.sharing = {figure_from_json(sharing.at("ping_pong_ns")), figure_from_json(sharing.at("atomic_add_ns")),
                 figure_from_json(sharing.at("volatile_increment_ns"))};
    p.vector_bytes = std::stoul(j.at("vector_loads").get<std::string>());
    p.probe_seconds = j.at("probe_seconds").get<double>();
    p.origin = j.value("origin", std::string());
    return p;
}

Profile shared_profile_in(const std::string& dir) {
    const std::filesystem::path path = std::filesystem::path(dir) / ("profile-" + profile_key() + ".json");
    if (std::ifstream in(path); in) {
        try {
            Profile p = profile_from_json(nlohmann::json::parse(in));
            p.origin = "this run's shared profile, measured once by the first program that needed it";
            return p;
        } catch (const std::exception&) {
            // a file cut short or of an older shape: measured again below, and replaced
        }
    }
    Profile p = measure_profile();
    p.origin = "this run's shared profile, measured once by the first program that needed it";
    std::filesystem::create_directories(dir);
    write_json(path.string(), profile_json(p));  // atomic: a program reading meanwhile sees all of it or none
    return p;
}

Profile shared_profile() {
    static const Profile profile = [] {  // one per program, whoever asks first
        const char* dir = std::getenv("CACHEBOOK_PROFILE_DIR");
        if (dir != nullptr && *dir != '\0') return shared_profile_in(dir);
        Profile own = measure_profile({.runs = 3});
        own.origin = "a short probe of this program's own (run alone)";
        return own;
    }();
    return profile;
}

}  // namespace cachebook
