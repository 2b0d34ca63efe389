// ch05_layout: prints what chapter 5 shows. Logic lives in layout.cpp.
#include <fmt/format.h>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "layout.hpp"

namespace {

using cachebook::measured;
constexpr double kMiB = 1024.0 * 1024.0;

std::string with_commas(std::uint64_t v) {
    const std::string digits = std::to_string(v);
    std::string s;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
        s += digits[i];
    }
    return s;
}

// Nanoseconds per element of the fastest run.
double ns_per(const cachebook::Timing& t, std::size_t n) { return t.min() * 1e9 / static_cast<double>(n); }

nlohmann::json timing_json(const cachebook::Timing& t, std::size_t n) {
    return {{"min_s", t.min()}, {"median_s", t.median()}, {"runs_s", t.runs}, {"ns_per_element", ns_per(t, n)}};
}

void print_struct(const ch05::StructLayout& s) {
    fmt::print("  {:<14} sizeof {:>2}, alignof {}, padding {:>2}: {}\n", s.name, s.size, s.align, s.padding(),
               s.picture());
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("ch05_layout", [&] {
        cachebook::Cli cli("ch05_layout", "Chapter 5: data layout -- AoS and SoA, padding, alignment, lists, "
                                          "prefetch, fusion and fission");
        std::int64_t particles = 2'000'000;
        std::int64_t nodes = 1 << 20;
        std::int64_t gather_n = 1 << 22;
        std::int64_t runs = 5;
        std::int64_t stream_mib = 0;
        cli.add_int("--particles", particles, "Particles in the measured update loop", 1'000'000, 64'000'000);
        cli.add_int("--nodes", nodes, "Nodes of the measured lists", 1024, 1 << 26);
        cli.add_int("--gather", gather_n, "Elements of the prefetch gather", 1024, 1 << 27);
        cli.add_int("--runs", runs, "Timed runs per measurement (the minimum is reported)", 1, 100);
        cli.add_int("--stream-mib", stream_mib, "MiB per array for fusion (0: chosen from the caches)", 0, 4096);
        if (auto status = cli.parse(argc, argv)) return *status;
        if (cli.quick()) {
            particles = 1'000'000;
            nodes = 1 << 18;
            gather_n = 1 << 20;
            runs = std::min<std::int64_t>(runs, 3);
        }
        const auto n_particles = static_cast<std::size_t>(particles);
        const auto n_nodes = static_cast<std::size_t>(nodes);
        const auto n_gather = static_cast<std::size_t>(gather_n);
        const int n_runs = static_cast<int>(runs);
        cachebook::require_memory(3ull * n_particles * sizeof(ch05::Particle), "--particles");
        cachebook::require_memory(7ull * n_nodes * 8, "--nodes");
        cachebook::require_memory(12ull * n_gather, "--gather");
        nlohmann::json out;

        fmt::print("Chapter 5 · Data layout\n\n");

        // 1. R8: sizes and lines, from the compiler.
        const auto particle = ch05::particle_layout();
        const auto hot = ch05::hot_particle_layout();
        const auto cold = ch05::cold_particle_layout();
        constexpr std::uint64_t kR8Particles = 1'000'000;
        const auto lines = ch05::particle_lines(kR8Particles);
        fmt::print("1. The particle, as the compiler lays it out (sizeof, offsetof, alignof)\n");
        print_struct(particle);
        print_struct(hot);
        print_struct(cold);
        fmt::print("\n  x += vx * dt over {} particles, {}-byte lines:\n", with_commas(kR8Particles), lines.line_bytes);
        cachebook::Table t1({"layout", "lines brought in", "simulated misses", "bytes used per line"});
        t1.row({"AoS (array of Particle)", with_commas(lines.aos), with_commas(lines.aos_simulated),
                fmt::format("{:.0f} %", 100.0 * lines.used_fraction)});
        t1.row({"SoA (x[] and vx[])", with_commas(lines.soa), with_commas(lines.soa_simulated), "100 %"});
        t1.row({"hot/cold (HotParticle[])", with_commas(lines.hot_cold), with_commas(lines.hot_cold_simulated),
                fmt::format("{:.0f} %", 100.0 * 16 / static_cast<double>(hot.size))});
        fmt::print("{}", t1.render());
        fmt::print("  AoS / SoA = {:.1f}x the lines; AoS / hot-cold = {:.1f}x\n\n",
                   static_cast<double>(lines.aos) / static_cast<double>(lines.soa),
                   static_cast<double>(lines.aos) / static_cast<double>(lines.hot_cold));
        out["r8"] = {{"particle", ch05::to_json(particle)},
                     {"hot", ch05::to_json(hot)},
                     {"cold", ch05::to_json(cold)},
                     {"n", kR8Particles},
                     {"n_commas", with_commas(kR8Particles)},
                     {"aos_lines", lines.aos},
                     {"aos_lines_commas", with_commas(lines.aos)},
                     {"soa_lines", lines.soa},
                     {"soa_lines_commas", with_commas(lines.soa)},
                     {"hot_cold_lines", lines.hot_cold},
                     {"hot_cold_lines_commas", with_commas(lines.hot_cold)},
                     {"aos_simulated", lines.aos_simulated},
                     {"soa_simulated", lines.soa_simulated},
                     {"hot_cold_simulated", lines.hot_cold_simulated},
                     {"used_percent", fmt::format("{:.0f}", 100.0 * lines.used_fraction)},
                     {"aos_over_soa", fmt::format("{:.1f}", static_cast<double>(lines.aos) / lines.soa)}};

        // 2. The update loop, measured.
        fmt::print("2. The update loop, measured ({} particles, {} runs each, fastest shown)\n",
                   with_commas(n_particles), n_runs);
        const auto lt = ch05::time_layouts(n_particles, n_runs);
        cachebook::Table t2({"layout", "array MiB", "ms", "ns/particle", "vs SoA"});
        auto layout_row = [&](const char* name, double mib, const cachebook::Timing& t) {
            t2.row({name, fmt::format("{:.0f}", mib), measured("{:.2f}", t.min() * 1e3),
                    measured("{:.2f}", ns_per(t, n_particles)), measured("{:.2f}", t.min() / lt.soa.min())});
        };
        layout_row("AoS", static_cast<double>(n_particles * sizeof(ch05::Particle)) / kMiB, lt.aos);
        layout_row("SoA", static_cast<double>(n_particles * 2 * sizeof(double)) / kMiB, lt.soa);
        layout_row("hot/cold", static_cast<double>(n_particles * sizeof(ch05::HotParticle)) / kMiB, lt.hot_cold);
        fmt::print("{}", t2.render());
        fmt::print("  the three layouts end with the same positions: {}\n\n",
                   lt.sum_aos == lt.sum_soa && lt.sum_soa == lt.sum_hot_cold ? "yes" : "NO");
        out["layouts"] = {{"n", n_particles},
                         {"runs", n_runs},
                         {"aos", timing_json(lt.aos, n_particles)},
                         {"soa", timing_json(lt.soa, n_particles)},
                         {"hot_cold", timing_json(lt.hot_cold, n_particles)},
                         {"aos_over_soa", fmt::format("{:.2f}", lt.aos.min() / lt.soa.min())},
                         {"aos_over_hot_cold", fmt::format("{:.2f}", lt.aos.min() / lt.hot_cold.min())},
                         {"same_result", lt.sum_aos == lt.sum_soa && lt.sum_soa == lt.sum_hot_cold}};

        // 3. Field order, alignment, straddling.
        const auto cdi = ch05::char_double_int_layout();
        const auto dic = ch05::double_int_char_layout();
        fmt::print("3. Padding and field order\n");
        print_struct(cdi);
        print_struct(dic);
        fmt::print("  per {}-byte line: {:.2f} against {:.2f}; a million of them: {} lines against {} ({:.0f} % fewer)\n\n",
                   ch05::kLineBytes, cdi.per_line(ch05::kLineBytes), dic.per_line(ch05::kLineBytes),
                   with_commas(ch05::lines_for(kR8Particles * cdi.size, ch05::kLineBytes)),
                   with_commas(ch05::lines_for(kR8Particles * dic.size, ch05::kLineBytes)),
                   100.0 * (1.0 - static_cast<double>(dic.size) / static_cast<double>(cdi.size)));
        out["field_order"] = {
            {"char_double_int", ch05::to_json(cdi)},
            {"double_int_char", ch05::to_json(dic)},
            {"lines_cdi", ch05::lines_for(kR8Particles * cdi.size, ch05::kLineBytes)},
            {"lines_dic", ch05::lines_for(kR8Particles * dic.size, ch05::kLineBytes)},
            {"fewer_percent",
             fmt::format("{:.0f}", 100.0 * (1.0 - static_cast<double>(dic.size) / static_cast<double>(cdi.size)))}};

        const auto body = ch05::body_layout();
        const auto aligned = ch05::aligned_body_layout();
        const auto s_plain = ch05::straddle(body.size, body.size, 1024, 0);
        const auto s_plain16 = ch05::straddle(body.size, body.size, 1024, 16);
        const auto s_aligned = ch05::straddle(aligned.size, aligned.size, 1024, 0);
        fmt::print("4. Objects that straddle two lines, and alignas({})\n", ch05::kLineBytes);
        print_struct(body);
        print_struct(aligned);
        cachebook::Table t4({"array of 1,024", "starts at", "straddle", "lines per object", "bytes"});
        t4.row({"Body", "a line", fmt::format("{}", s_plain.straddling), fmt::format("{:.2f}", s_plain.lines_per_object()),
                with_commas(1024 * body.size)});
        t4.row({"Body", "line + 16", fmt::format("{}", s_plain16.straddling),
                fmt::format("{:.2f}", s_plain16.lines_per_object()), with_commas(1024 * body.size)});
        t4.row({"AlignedBody", "a line", fmt::format("{}", s_aligned.straddling),
                fmt::format("{:.2f}", s_aligned.lines_per_object()), with_commas(1024 * aligned.size)});
        fmt::print("{}", t4.render());
        const auto facts = ch05::alignment_facts();
        fmt::print("  std::hardware_destructive_interference_size  = {} ({}, for this -mtune)\n",
                   measured("{}", facts.destructive), measured("g++ {}.{}", __GNUC__, __GNUC_MINOR__));
        fmt::print("  std::hardware_constructive_interference_size = {}\n", measured("{}", facts.constructive));
        const auto& machine = cachebook::machine();
        const auto line = machine.line_bytes();
        fmt::print("  the line size the machine reports            = {}\n",
                   measured("{}", line ? fmt::format("{} (from {})", *line, cachebook::source_name(machine.line_source()))
                                       : machine.why_unknown("the line size")));
        fmt::print("  malloc(48): address mod 64 = {} (malloc promises alignof(max_align_t) = {})\n",
                   measured("{}", facts.malloc_offset), facts.max_align);
        fmt::print("  aligned_alloc(64, 256): address mod 64 = {}; new AlignedBody[4]: address mod 64 = {}\n\n",
                   facts.aligned_alloc_offset, facts.aligned_new_offset);
        out["straddle"] = {{"body", ch05::to_json(body)},
                           {"aligned_body", ch05::to_json(aligned)},
                           {"plain", ch05::to_json(s_plain)},
                           {"plain_16", ch05::to_json(s_plain16)},
                           {"aligned", ch05::to_json(s_aligned)}};
        out["alignment"] = {{"destructive", facts.destructive},
                            {"constructive", facts.constructive},
                            {"max_align", facts.max_align},
                            {"malloc_offset", facts.malloc_offset},
                            {"aligned_alloc_offset", facts.aligned_alloc_offset},
                            {"aligned_new_offset", facts.aligned_new_offset},
                            {"gcc", fmt::format("{}.{}", __GNUC__, __GNUC_MINOR__)},
                            {"line_bytes", line ? nlohmann::json(*line) : nlohmann::json()},
                            {"line_source", cachebook::source_name(machine.line_source())}};

        // 5. Lists.
        fmt::print("5. Linked list against vector: the same sum ({} values, {} runs, fastest shown)\n",
                   with_commas(n_nodes), n_runs);
        const auto ls = ch05::time_lists(n_nodes, n_runs);
        cachebook::Table t5({"walk", "ns/element", "vs vector"});
        auto list_row = [&](const char* name, const cachebook::Timing& t) {
            t5.row({name, measured("{:.2f}", ns_per(t, n_nodes)), measured("{:.1f}", t.min() / ls.vector.min())});
        };
        list_row("vector", ls.vector);
        list_row("list, nodes in address order (pool)", ls.ordered);
        list_row("list, nodes scattered", ls.scattered);
        list_row("vector read in the scattered order", ls.gather);
        fmt::print("{}", t5.render());
        fmt::print("  all four sums agree: {}\n\n",
                   ls.sum_vector == ls.sum_ordered && ls.sum_ordered == ls.sum_scattered &&
                           ls.sum_scattered == ls.sum_gather
                       ? "yes"
                       : "NO");
        out["lists"] = {{"n", n_nodes},
                        {"vector", timing_json(ls.vector, n_nodes)},
                        {"ordered", timing_json(ls.ordered, n_nodes)},
                        {"scattered", timing_json(ls.scattered, n_nodes)},
                        {"gather", timing_json(ls.gather, n_nodes)},
                        {"scattered_over_vector", fmt::format("{:.1f}", ls.scattered.min() / ls.vector.min())},
                        {"ordered_over_vector", fmt::format("{:.1f}", ls.ordered.min() / ls.vector.min())},
                        {"scattered_over_gather", fmt::format("{:.1f}", ls.scattered.min() / ls.gather.min())}};

        // 6. Prefetch.
        const std::vector<std::size_t> distances{0, 4, 16, 64, 256};
        fmt::print("6. Software prefetch on a gather sum += a[idx[i]] ({} doubles, {:.0f} MiB, random idx)\n",
                   with_commas(n_gather), static_cast<double>(n_gather * sizeof(double)) / kMiB);
        const auto pf = ch05::time_prefetch(n_gather, distances, n_runs);
        cachebook::Table t6({"prefetch distance", "ns/element", "vs none"});
        bool sums_agree = true;
        nlohmann::json pf_json = nlohmann::json::array();
        for (std::size_t d = 0; d < distances.size(); ++d) {
            t6.row({distances[d] == 0 ? std::string("none") : fmt::format("{}", distances[d]),
                    measured("{:.2f}", ns_per(pf.times[d], n_gather)),
                    measured("{:.2f}", pf.times[d].min() / pf.times[0].min())});
            sums_agree = sums_agree && pf.sums[d] == pf.sums[0];
            pf_json.push_back({{"distance", distances[d]},
                               {"timing", timing_json(pf.times[d], n_gather)},
                               {"vs_none", fmt::format("{:.2f}", pf.times[d].min() / pf.times[0].min())}});
        }
        fmt::print("{}", t6.render());
        std::size_t best = 0;
        for (std::size_t d = 1; d < distances.size(); ++d)
            if (pf.times[d].min() < pf.times[best].min()) best = d;
        fmt::print("  sums agree: {}; fastest: {}\n\n", sums_agree ? "yes" : "NO",
                   measured("{}", best == 0 ? std::string("no prefetch") : fmt::format("distance {}", distances[best])));
        out["prefetch"] = {{"n", n_gather},
                           {"rows", pf_json},
                           {"best_distance", distances[best]},
                           {"best_vs_none", fmt::format("{:.2f}", pf.times[best].min() / pf.times[0].min())}};

        // 7. Fusion and fission.
        const auto l2 = machine.data_cache(2);
        const auto l3 = machine.data_cache(3);
        constexpr std::size_t kBudget = std::size_t{128} << 20;
        auto size = ch05::choose_stream_size(l3 ? l3->size_bytes : 0, l2 ? l2->size_bytes : 0, kBudget);
        if (stream_mib > 0) size = {static_cast<std::size_t>(stream_mib) << 20, "option", "--stream-mib"};
        if (cli.quick()) size = {std::size_t{8} << 20, "quick", "--quick: 8 MiB"};
        const std::size_t n_stream = size.bytes_per_array / sizeof(double);
        constexpr std::size_t kWays = 8;
        const std::size_t n_fission = std::max<std::size_t>(1024, 2 * n_stream / (2 * kWays));
        cachebook::require_memory(5ull * size.bytes_per_array + 6ull * kWays * n_fission * sizeof(double),
                                  "the fusion arrays");
        fmt::print("7. Loop fusion and fission\n");
        fmt::print("  arrays of {} MiB each: {}\n",
                   measured("{:.0f}", static_cast<double>(size.bytes_per_array) / kMiB), measured("{}", size.reason));
        auto kib_text = [](std::size_t bytes) {
            return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes >> 10)
                                     : fmt::format("{} KiB + {} B", bytes >> 10, bytes % 1024);
        };
        const auto fu = ch05::time_fusion(n_stream, n_fission, kWays, n_runs, ch05::kFusionGapBytes,
                                          ch05::kFusionCloseGapBytes);
        cachebook::Table t7({"loops", "ns/element", "ratio"});
        t7.row({"b = 2a; then c = b + 1 (two loops)", measured("{:.2f}", ns_per(fu.separate, n_stream)),
                measured("{:.2f}", fu.separate.min() / fu.fused.min())});
        t7.row({"both in one loop (fused)", measured("{:.2f}", ns_per(fu.fused, n_stream)), "1.00"});
        t7.row({fmt::format("{} pairs a_k += b_k in one loop", kWays),
                measured("{:.2f}", ns_per(fu.fission_one, n_fission * kWays)),
                measured("{:.2f}", fu.fission_one.min() / fu.fission_split.min())});
        t7.row({"one loop per pair (fission)", measured("{:.2f}", ns_per(fu.fission_split, n_fission * kWays)), "1.00"});
        fmt::print("{}", t7.render());
        fmt::print("  the fusion arrays lie {} apart; the same two versions with them {} apart:\n",
                   kib_text(fu.gap_bytes), kib_text(fu.close_gap_bytes));
        cachebook::Table t7c({"loops, arrays close", "ns/element", "vs arrays apart"});
        t7c.row({"two loops", measured("{:.2f}", ns_per(fu.separate_close, n_stream)),
                 measured("{:.2f}", fu.separate_close.min() / fu.separate.min())});
        t7c.row({"fused", measured("{:.2f}", ns_per(fu.fused_close, n_stream)),
                 measured("{:.2f}", fu.fused_close.min() / fu.fused.min())});
        fmt::print("{}", t7c.render());
        fmt::print("  two loops / fused with the arrays close: {}\n",
                   measured("{:.2f}", fu.separate_close.min() / fu.fused_close.min()));
        fmt::print("  results identical: {}\n", fu.same_result ? "yes" : "NO");
        out["fusion"] = {{"bytes_per_array", size.bytes_per_array},
                         {"mib_per_array", size.bytes_per_array >> 20},
                         {"beyond", size.beyond},
                         {"reason", size.reason},
                         {"separate", timing_json(fu.separate, n_stream)},
                         {"fused", timing_json(fu.fused, n_stream)},
                         {"fission_one", timing_json(fu.fission_one, n_fission * kWays)},
                         {"fission_split", timing_json(fu.fission_split, n_fission * kWays)},
                         {"separate_over_fused", fmt::format("{:.2f}", fu.separate.min() / fu.fused.min())},
                         {"one_over_split", fmt::format("{:.2f}", fu.fission_one.min() / fu.fission_split.min())},
                         {"ways", kWays},
                         {"gap", kib_text(fu.gap_bytes)},
                         {"close_gap", kib_text(fu.close_gap_bytes)},
                         {"separate_close", timing_json(fu.separate_close, n_stream)},
                         {"fused_close", timing_json(fu.fused_close, n_stream)},
                         {"close_separate_over_fused",
                          fmt::format("{:.2f}", fu.separate_close.min() / fu.fused_close.min())},
                         {"fused_close_over_apart", fmt::format("{:.2f}", fu.fused_close.min() / fu.fused.min())},
                         {"same_result", fu.same_result}};

        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
