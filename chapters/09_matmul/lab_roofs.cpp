// Chapter 9, the lab: the roofline's roofs below the peak, one core's read bandwidth from L2,
// from L3 and from memory: as chapter 8 measured it, or measured here with the same kernel.
#include <fstream>
#include <sstream>

#include "cachebook/bandwidth.hpp"
#include "lab.hpp"

namespace ch09 {

std::optional<Roofs> roofs_from_json(const nlohmann::json& cliff) {
    const auto pointer = nlohmann::json::json_pointer("/bandwidth/read_gbs");
    if (!cliff.is_object() || !cliff.contains(pointer) || !cliff[pointer].is_object()) return std::nullopt;
    const auto& read = cliff[pointer];
    Roofs roofs{{}, "from chapter 8's run"};
    const char* names[] = {"L2", "L3", "memory"};
    bool any = false;
    for (int i = 0; i < 3; ++i)
        if (read.contains(names[i]) && read[names[i]].is_number() && read[names[i]].get<double>() > 0) {
            roofs.gbs[i] = read[names[i]].get<double>();
            any = true;
        }
    return any ? std::optional<Roofs>(roofs) : std::nullopt;
}

namespace {

std::optional<Roofs> read_roofs(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    const auto json = nlohmann::json::parse(text.str(), nullptr, false);
    return json.is_discarded() ? std::nullopt : roofs_from_json(json);
}

}  // namespace

Roofs find_roofs(const Settings& o) {
    if (!o.caches_path.empty())
        if (auto roofs = read_roofs(o.caches_path)) return *roofs;
    auto sizes = cachebook::level_sizes_of_this_machine();
    sizes.l1 = 0;  // no roof of its own here: the peak is far below it
    const auto levels = cachebook::read_bandwidth_by_level(sizes, o.quick ? 2 << 20 : 8 << 20, 3);
    Roofs roofs{{levels[1].gbs, levels[2].gbs, levels[3].gbs}, "measured here, a short run"};
    return roofs;
}

}  // namespace ch09
