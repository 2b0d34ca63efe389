#pragma once
// How chapter 9's program shows the roofs below the peak (section 4): one core's read bandwidth
// of L2, L3 and memory, and the roofs it sets for the steps whose intensity the model fixes.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cachebook/report.hpp"
#include "cells.hpp"
#include "lab.hpp"

namespace ch09::cells {

// A roof from one level's bandwidth, as a cell: "-" where the level was not measured.
inline Value level_roof(const std::string& key, const std::optional<double>& gbs, double intensity, double peak) {
    if (!gbs) return Value::unknown(key, "-");
    const double roof = std::min(peak, intensity * *gbs);
    return Value::measured(key, roof, 1);
}

// The roofs below the peak, from one core's read bandwidth of L2, L3 and memory, for the steps
// whose intensity is fixed by the model (steps 1, 1t and 2), each on one thread.
inline void measured_roofs(Report& report, const Settings& o, const std::vector<StepResult>& steps, const Peak& peak,
                           const ch09::Roofs& roofs) {
    const double flops = 2.0 * double(o.n) * double(o.n) * double(o.n);
    const char* names[] = {"L2", "L3", "memory"};
    std::vector<Value> gbs;
    for (int i = 0; i < 3; ++i) {
        const std::string key = fmt::format("roofs.{}_gbs", names[i]);
        gbs.push_back(roofs.gbs[i] ? Value::measured(key, *roofs.gbs[i], 1) : Value::unknown(key, "unknown"));
    }
    report.line("  one core's read bandwidth ({}): L2 {} GB/s, L3 {} GB/s, memory {} GB/s",
                Value::measured("roofs.source", roofs.source), gbs[0], gbs[1], gbs[2]);
    auto table = report.table({"step", "L2 roof", "L3 roof", "memory roof", "measured"});
    for (const auto& r : steps) {
        if (r.key != "naive" && r.key != "naive_bt" && r.key != "ikj") continue;
        const std::string k = "steps." + r.key + ".";
        table.row({shown_label(r), level_roof(k + "roof_l2_gflops", roofs.gbs[0], r.intensity, peak.core),
                   level_roof(k + "roof_l3_gflops", roofs.gbs[1], r.intensity, peak.core),
                   level_roof(k + "roof_memory_gflops", roofs.gbs[2], r.intensity, peak.core),
                   Value::measured("", r.seconds > 0 ? flops / r.seconds / 1e9 : 0, 2)});
    }
    table.print();
}

}  // namespace ch09::cells
