// Chapter 5's output, one function per numbered section, in the order printed: each figure a Value
// made once, with its JSON key. main.cpp calls them; the lesson is layout.cpp, the lab lab*.cpp.
#include "sections.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/measure.hpp"

namespace ch05 {
namespace {

using cachebook::Report;
using cachebook::Timing;
using cachebook::Value;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr std::uint64_t kCountedParticles = 1'000'000;  // the particles whose lines section 1 counts
constexpr std::uint64_t kCountedWords = 1'000'000;      // the array length whose lines sections 7 and 8 count

// A struct's layout, its fields wrapped onto further lines past 100 columns, recorded under `key`.
void struct_line(Report& report, const std::string& key, const StructLayout& s) {
    const auto head =
        fmt::format("  {:<14} sizeof {:>2}, alignof {}, padding {:>2}: ", s.name, s.size, s.align, s.padding());
    report.line("{}", Value::exact_as(key, to_json(s), wrap_words(head, s.picture(), 100)));
}

}  // namespace

void particle_section(Report& report) {
    const auto particle = particle_layout();
    const auto hot = hot_particle_layout();
    const auto cold = cold_particle_layout();
    const auto lines = particle_lines(kCountedParticles);
    report.section("The particle, as the compiler lays it out (sizeof, offsetof, alignof)");
    struct_line(report, "particle_lines.particle", particle);
    struct_line(report, "particle_lines.hot", hot);
    struct_line(report, "particle_lines.cold", cold);
    report.blank_line();
    report.line("  x += vx * dt over {} particles, {}-byte lines:", count("particle_lines.n", kCountedParticles),
                Value::exact("particle_lines.line_bytes", lines.line_bytes));
    auto table = report.table({"layout", "lines in", "simulated misses", "written back", "bytes used per line"});
    const double used_percent = 100.0 * lines.used_fraction;
    table.row({"AoS (array of Particle)", count("particle_lines.aos_lines", lines.aos),
               Value::exact_as("particle_lines.aos_simulated", lines.aos_simulated, with_commas(lines.aos_simulated)),
               count("particle_lines.aos_written", lines.aos_written),
               Value::exact_as("particle_lines.used_percent", fmt::format("{:.0f}", used_percent),
                               fmt::format("{:.0f} %", used_percent))});
    table.row({"SoA (x[] and vx[])", count("particle_lines.soa_lines", lines.soa),
               Value::exact_as("particle_lines.soa_simulated", lines.soa_simulated, with_commas(lines.soa_simulated)),
               count("particle_lines.soa_written", lines.soa_written), "100 %"});
    table.row({"hot/cold (HotParticle[])", count("particle_lines.hot_cold_lines", lines.hot_cold),
               Value::exact_as("particle_lines.hot_cold_simulated", lines.hot_cold_simulated,
                               with_commas(lines.hot_cold_simulated)),
               count("particle_lines.hot_cold_written", lines.hot_cold_written),
               Value::exact_as("particle_lines.hot_cold_used_percent",
                               fmt::format("{:.0f}", 100.0 * lines.hot_cold_used_fraction),
                               fmt::format("{:.0f} %", 100.0 * lines.hot_cold_used_fraction))});
    table.print();
    const double aos_over_soa = static_cast<double>(lines.aos) / static_cast<double>(lines.soa);
    const double aos_over_hot_cold = static_cast<double>(lines.aos) / static_cast<double>(lines.hot_cold);
    report.line("  AoS / SoA = {}x the lines; AoS / hot-cold = {}x",
                Value::exact("particle_lines.aos_over_soa", fmt::format("{:.1f}", aos_over_soa)),
                Value::exact("particle_lines.aos_over_hot_cold", fmt::format("{:.1f}", aos_over_hot_cold)));
    auto traffic_ratio = [](std::uint64_t a, std::uint64_t b) {
        return static_cast<double>(a) / static_cast<double>(b);
    };
    report.line(
        "  lines moved both ways (brought in + written back):\n"
        "    AoS / SoA = {}x; AoS / hot-cold = {}x; hot-cold / SoA = {}x",
        Value::exact("particle_lines.traffic_aos_over_soa", traffic_ratio(lines.aos_traffic(), lines.soa_traffic()), 1),
        Value::exact("particle_lines.traffic_aos_over_hot_cold",
                     traffic_ratio(lines.aos_traffic(), lines.hot_cold_traffic()), 1),
        Value::exact("particle_lines.traffic_hot_cold_over_soa",
                     traffic_ratio(lines.hot_cold_traffic(), lines.soa_traffic()), 1));
}

void update_loop_section(Report& report, const Options& options) {
    const std::size_t n = options.n_particles();
    report.section("The update loop, measured ({} particles, {} runs each, fastest shown)",
                   Value::exact_as("layouts.n", n, with_commas(n)), Value::exact("layouts.runs", options.n_runs()));
    const auto times = LayoutExperiments(n, options.n_runs()).run(options.quick);
    auto table = report.table({"layout", "array MiB", "ms", "ns/particle", "vs SoA"});
    bool all_beyond = true, any_beyond = false;
    std::string last_level;
    auto row = [&](const char* name, const std::string& key, std::size_t bytes, const Timing& t, Value vs_soa) {
        table.row({name, Value::exact("layouts." + key + ".mib", static_cast<double>(bytes) / kMiB, 0),
                   Value::measured("layouts." + key + ".ms", t.min() * 1e3, 2), ns_cell(report, "layouts." + key, t, n),
                   std::move(vs_soa)});
        const auto fit = cache_fit(bytes);  // which cache the array overflows, for the prose
        report.record("layouts." + key + ".caches", fit.text());
        all_beyond = all_beyond && fit.beyond_last_level();
        any_beyond = any_beyond || fit.beyond_last_level();
        last_level = fit.last_level;
    };
    row("AoS", "aos", n * sizeof(Particle), times.aos, ratio("layouts.aos_over_soa", times.aos, times.soa, 2));
    row("SoA", "soa", n * 2 * sizeof(double), times.soa, ratio("layouts.soa_over_soa", times.soa, times.soa, 2));
    row("hot/cold", "hot_cold", n * sizeof(HotParticle), times.hot_cold,
        ratio("layouts.hot_cold_over_soa", times.hot_cold, times.soa, 2));
    table.print();
    report.record("layouts.last_level", last_level);
    report.record("layouts.all_beyond_last_level", all_beyond);
    report.record("layouts.any_beyond_last_level", any_beyond);
    report.record("layouts.aos_over_hot_cold", fmt::format("{:.2f}", times.aos.min() / times.hot_cold.min()));
    report.line("  the three layouts end with the same positions: {}",
                Value::exact_as("layouts.same_result", times.same_result, times.same_result ? "yes" : "NO"));
    claim_lines(report, times.over_soa);
    claim_lines(report, times.over_hot_cold);
}

void field_order_section(Report& report) {
    const auto cdi = char_double_int_layout();
    const auto dic = double_int_char_layout();
    report.section("Padding and field order");
    struct_line(report, "field_order.char_double_int", cdi);
    struct_line(report, "field_order.double_int_char", dic);
    const auto lines_cdi = lines_for(kCountedParticles * cdi.size, kLineBytes);
    const auto lines_dic = lines_for(kCountedParticles * dic.size, kLineBytes);
    const double fewer = 100.0 * (1.0 - static_cast<double>(dic.size) / static_cast<double>(cdi.size));
    report.line("  per {}-byte line: {} against {}; a million of them: {} lines against {} ({} % fewer)",
                Value::exact("field_order.line_bytes", kLineBytes),
                Value::exact_as("field_order.cdi_per_line", cdi.per_line(kLineBytes),
                                fmt::format("{:.2f}", cdi.per_line(kLineBytes))),
                Value::exact_as("field_order.dic_per_line", dic.per_line(kLineBytes),
                                fmt::format("{:.2f}", dic.per_line(kLineBytes))),
                Value::exact_as("field_order.lines_cdi", lines_cdi, with_commas(lines_cdi)),
                Value::exact_as("field_order.lines_dic", lines_dic, with_commas(lines_dic)),
                Value::exact("field_order.fewer_percent", fmt::format("{:.0f}", fewer)));
}

namespace {

void straddle_table(Report& report, const StructLayout& body, const StructLayout& aligned) {
    const auto plain = straddle(body.size, body.size, 1024, 0);
    const auto plain_16 = straddle(body.size, body.size, 1024, 16);
    const auto aligned_at_line = straddle(aligned.size, aligned.size, 1024, 0);
    auto table = report.table({"array of 1,024", "starts at", "straddle", "lines per object", "bytes"});
    // Each row's figures under `key`, with the fields of to_json(s) the table does not show.
    auto row = [&](const char* name, const char* start, const std::string& key, const Straddle& s, std::size_t size) {
        table.row({name, start, Value::exact(key + ".straddling", s.straddling),
                   Value::exact_as(key + ".lines_per_object", s.lines_per_object(),
                                   fmt::format("{:.2f}", s.lines_per_object())),
                   Value::exact_as(key + ".bytes", 1024 * size, with_commas(1024 * size))});
        const nlohmann::json figures = to_json(s);
        for (const auto& field : figures.items())
            if (field.key() != "straddling" && field.key() != "lines_per_object")
                report.record(key + "." + field.key(), field.value());
    };
    row("Body", "a line", "straddle.plain", plain, body.size);
    row("Body", "line + 16", "straddle.plain_16", plain_16, body.size);
    row("AlignedBody", "a line", "straddle.aligned", aligned_at_line, aligned.size);
    table.print();
}

void alignment_lines(Report& report) {
    const auto facts = alignment_facts();
    const std::string gcc = fmt::format("{}.{}", __GNUC__, __GNUC_MINOR__);
    report.line("  std::hardware_destructive_interference_size  = {} ({}, for this -mtune)",
                Value::measured("alignment.destructive", facts.destructive),
                Value::measured_as("alignment.gcc", gcc, "g++ " + gcc));
    report.line("  std::hardware_constructive_interference_size = {}",
                Value::measured("alignment.constructive", facts.constructive));
    const auto& machine = cachebook::machine();
    const auto line = machine.line_bytes();
    report.line(
        "  the line size the machine reports            = {}",
        line ? Value::measured_as("alignment.line_bytes", *line,
                                  fmt::format("{} (from {})", *line, cachebook::source_name(machine.line_source())))
             : Value::unknown("alignment.line_bytes", machine.why_unknown("the line size")));
    report.record("alignment.line_source", cachebook::source_name(machine.line_source()));
    report.line("  malloc(48): address mod 64 = {} (malloc promises alignof(max_align_t) = {})",
                Value::measured("alignment.malloc_offset", facts.malloc_offset),
                Value::exact("alignment.max_align", facts.max_align));
    report.line("  aligned_alloc(64, 256): address mod 64 = {}; new AlignedBody[4]: address mod 64 = {}",
                Value::exact("alignment.aligned_alloc_offset", facts.aligned_alloc_offset),
                Value::exact("alignment.aligned_new_offset", facts.aligned_new_offset));
}

}  // namespace

void straddle_section(Report& report) {
    const auto body = body_layout();
    const auto aligned = aligned_body_layout();
    report.section("Objects that straddle two lines, and alignas({})", Value::exact("straddle.line_bytes", kLineBytes));
    struct_line(report, "straddle.body", body);
    struct_line(report, "straddle.aligned_body", aligned);
    straddle_table(report, body, aligned);
    alignment_lines(report);
}

void lists_section(Report& report, const Options& options) {
    const std::size_t n = options.n_nodes();
    report.section("Linked list against vector: the same sum ({} values, {} runs, fastest shown)",
                   Value::exact_as("lists.n", n, with_commas(n)), Value::exact("lists.runs", options.n_runs()));
    const auto lists = ListExperiments(n, options.n_runs()).run(options.quick);
    auto table = report.table({"walk", "ns/element", "vs vector"});
    auto row = [&](const char* name, const std::string& key, const Timing& t, Value vs_vector) {
        table.row({name, ns_cell(report, "lists." + key, t, n), std::move(vs_vector)});
    };
    row("vector", "vector", lists.vector, ratio("lists.vector_over_vector", lists.vector, lists.vector, 1));
    row("list, nodes in address order (pool)", "ordered", lists.ordered,
        ratio("lists.ordered_over_vector", lists.ordered, lists.vector, 1));
    row("list, nodes scattered", "scattered", lists.scattered,
        ratio("lists.scattered_over_vector", lists.scattered, lists.vector, 1));
    row("vector read in the scattered order", "gather", lists.gather,
        ratio("lists.gather_over_vector", lists.gather, lists.vector, 1));
    table.print();
    report.record("lists.scattered_over_gather", fmt::format("{:.1f}", lists.scattered.min() / lists.gather.min()));
    report.line("  all four sums agree: {}",
                Value::exact_as("lists.same_result", lists.same_result, lists.same_result ? "yes" : "NO"));
    claim_lines(report, lists.over_vector);
    claim_lines(report, lists.over_gather);
}

void prefetch_section(Report& report, const Options& options) {
    const std::size_t n = options.n_gather();
    const std::vector<std::size_t> distances{0, 4, 16, 64, 256};
    report.section("Software prefetch on a gather sum += a[idx[i]] ({} doubles, {} MiB, random idx)",
                   Value::exact_as("prefetch.n", n, with_commas(n)),
                   Value::exact("prefetch.mib", static_cast<double>(n * sizeof(double)) / kMiB, 0));
    const auto prefetch = time_prefetch(n, distances, options.n_runs());
    const auto fit = cache_fit(n * sizeof(double));  // which cache the array overflows, for the prose
    report.record("prefetch.caches", fit.text());
    report.record("prefetch.beyond_last_level", fit.beyond_last_level());
    auto table = report.table_of_rows("prefetch.rows", {"prefetch distance", "ns/element", "vs none"});
    bool sums_agree = true;
    for (std::size_t d = 0; d < distances.size(); ++d) {
        const Timing& t = prefetch.times[d];
        const nlohmann::json timing = {{"min_s", t.min()}, {"median_s", t.median()}, {"runs_s", t.runs}};
        table.row({Value::exact_as("distance", distances[d],
                                   distances[d] == 0 ? std::string("none") : fmt::format("{}", distances[d])),
                   Value::measured("timing.ns_per_element", ns_per(t, n), "{:.2f}"),
                   ratio("vs_none", t, prefetch.times[0], 2)},
                  {{"timing", timing}});
        sums_agree = sums_agree && prefetch.sums[d] == prefetch.sums[0];
    }
    table.print();
    const std::size_t best = fastest(prefetch.times);
    report.line(
        "  sums agree: {}; fastest: {}", Value::exact_as("prefetch.same_result", sums_agree, sums_agree ? "yes" : "NO"),
        Value::measured_as("prefetch.best_distance", distances[best],
                           best == 0 ? std::string("no prefetch") : fmt::format("distance {}", distances[best])));
    report.record("prefetch.best_vs_none", fmt::format("{:.2f}", prefetch.times[best].min() / prefetch.times[0].min()));
}

namespace {

// The fusion loops' lines, reads for ownership included, from the cache model.
void fusion_lines_table(Report& report) {
    const auto lines = fusion_lines(kCountedWords);
    report.line("  lines moved over {} doubles per array, from the cache model\n  (a store that misses reads first):",
                count("fusion_lines.n", kCountedWords));
    auto table = report.table({"loops", "lines read", "lines written back", "both ways"});
    auto row = [&](const char* name, const std::string& key, const LineTraffic& t) {
        table.row({name, count("fusion_lines." + key + ".read", t.read),
                   count("fusion_lines." + key + ".written", t.written),
                   count("fusion_lines." + key + ".total", t.total())});
    };
    row("two loops", "separate", lines.separate);
    row("fused", "fused", lines.fused);
    table.print();
    report.line(
        "  two loops / fused = {}x the lines moved",
        Value::exact("fusion_lines.separate_over_fused",
                     static_cast<double>(lines.separate.total()) / static_cast<double>(lines.fused.total()), 2));
}

}  // namespace

void fusion_section(Report& report, const Options& options) {
    const auto size = fusion_stream_size(options.stream_mib, options.quick);
    const std::size_t n = size.bytes_per_array / sizeof(double);
    constexpr std::size_t kWays = 8;
    const std::size_t n_fission = std::max<std::size_t>(1024, 2 * n / (2 * kWays));
    cachebook::require_memory(5ull * size.bytes_per_array + 6ull * kWays * n_fission * sizeof(double),
                              "the fusion arrays");
    report.section("Loop fusion and fission");
    report.line("  arrays of {} MiB each:\n    {}",
                Value::measured("fusion.mib", static_cast<double>(size.bytes_per_array) / kMiB, 0),
                Value::measured("fusion.reason", size.reason));
    report.record("fusion.bytes_per_array", size.bytes_per_array);
    report.record("fusion.mib_per_array", size.bytes_per_array >> 20);
    report.record("fusion.beyond", size.beyond);
    const auto fu = FusionExperiment(n, n_fission, kWays, options.n_runs()).run(options.quick);
    auto apart = report.table({"loops", "ns/element", "ratio"});
    apart.row({"b = 2a; then c = b + 1 (two loops)", ns_cell(report, "fusion.separate", fu.separate, n),
               ratio("fusion.separate_over_fused", fu.separate, fu.fused, 2)});
    apart.row({"both in one loop (fused)", ns_cell(report, "fusion.fused", fu.fused, n), "1.00"});
    apart.row({Value::exact_as("fusion.ways", kWays, fmt::format("{} pairs a_k += b_k in one loop", kWays)),
               ns_cell(report, "fusion.fission_one", fu.fission_one, n_fission * kWays),
               ratio("fusion.one_over_split", fu.fission_one, fu.fission_split, 2)});
    apart.row({"one loop per pair (fission)",
               ns_cell(report, "fusion.fission_split", fu.fission_split, n_fission * kWays), "1.00"});
    apart.print();
    claim_lines(report, fu.claim);
    fusion_lines_table(report);
    report.line("  the fusion arrays lie {} apart; the same two versions with them {} apart:",
                Value::exact("fusion.gap", kib_text(fu.gap_bytes)),
                Value::exact("fusion.close_gap", kib_text(fu.close_gap_bytes)));
    auto close = report.table({"loops, arrays close", "ns/element", "vs arrays apart"});
    close.row({"two loops", ns_cell(report, "fusion.separate_close", fu.separate_close, n),
               ratio("fusion.separate_close_over_apart", fu.separate_close, fu.separate, 2)});
    close.row({"fused", ns_cell(report, "fusion.fused_close", fu.fused_close, n),
               ratio("fusion.fused_close_over_apart", fu.fused_close, fu.fused, 2)});
    close.print();
    report.line("  two loops / fused with the arrays close: {}",
                ratio("fusion.close_separate_over_fused", fu.separate_close, fu.fused_close, 2));
    placement_line(report, placement_verdict(fu));
    report.line("  results identical: {}",
                Value::exact_as("fusion.same_result", fu.same_result, fu.same_result ? "yes" : "NO"));
}

namespace {

// One loop's row: the model's lines for kCountedWords words, then the measured time over n words.
void stores_row(cachebook::ResultTable& table, Report& report, const char* name, const std::string& key,
                const LineTraffic& lines, const Timing& t, const Timing& read_only, std::size_t n) {
    const double bytes_per_ns = static_cast<double>(n * sizeof(std::uint64_t)) / (t.min() * 1e9);
    table.row({name, count("stores.lines." + key + ".read", lines.read),
               count("stores.lines." + key + ".written", lines.written), ns_cell(report, "stores." + key, t, n),
               Value::measured("stores." + key + ".bytes_per_ns", bytes_per_ns, "{:.2f}"),
               ratio("stores." + key + ".over_read_only", t, read_only, 2)});
}

}  // namespace

void stores_section(Report& report, const Options& options) {
    const auto size = stores_stream_size(options.stream_mib, options.quick);
    const std::size_t n = size.bytes_per_array / sizeof(std::uint64_t);
    cachebook::require_memory(size.bytes_per_array, "the stores array");
    report.section("Writes: reads for ownership, write-backs and non-temporal stores");
    const auto t = StoresExperiment(n, options.n_runs()).run(options.quick);
    report.line("  one array of {} MiB ({}), {};\n  {} runs each, fastest shown",
                Value::measured("stores.mib", size.bytes_per_array >> 20),
                Value::measured("stores.reason", size.reason),
                Value::measured("stores.caches", t.fit.text().empty() ? "no cache sizes reported" : t.fit.text()),
                Value::exact("stores.runs", options.n_runs()));
    const auto lines = store_lines(kCountedWords);
    report.line("  lines in and back: the cache model's, over {} words", count("stores.lines.n", kCountedWords));
    auto table = report.table({"loop", "lines in", "lines back", "ns/word", "bytes/ns", "vs read only"});
    stores_row(table, report, "sum += a[i] (read only)", "read_only", lines.read_only, t.read_only, t.read_only, n);
    stores_row(table, report, "a[i] += 1 (read-modify-write)", "modify", lines.modify, t.modify, t.read_only, n);
    stores_row(table, report, "a[i] = x (plain stores)", "store", lines.store, t.store, t.read_only, n);
    stores_row(table, report, "a[i] = x (non-temporal stores)", "stream", lines.stream, t.stream, t.read_only, n);
    table.print();
    report.line("  non-temporal stores here: {}",
                Value::measured("stores.instruction", t.stream_instruction.empty()
                                                          ? std::string("none the book uses; plain stores ran")
                                                          : t.stream_instruction));
    report.record("stores.premise", kStoreOverReadPremise);  // the page says what a failed premise shows
    auto claim = t.claim;
    claim.result = stores_claim(t);
    claim_lines(report, claim);
    report.line("  every loop read or left the values it should: {}",
                Value::exact_as("stores.same_result", t.same_result, t.same_result ? "yes" : "NO"));
}

}  // namespace ch05
