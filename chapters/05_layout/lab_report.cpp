// Chapter 5's results as the Report's cells: each figure a Value made once, with its JSON key.
#include <fmt/format.h>

#include <algorithm>

#include "lab.hpp"

namespace ch05 {

using cachebook::Report;
using cachebook::Timing;
using cachebook::Value;

std::string with_commas(std::uint64_t v) {
    const std::string digits = std::to_string(v);
    std::string s;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
        s += digits[i];
    }
    return s;
}

Value count(std::string key, std::uint64_t n) {
    return Value::exact_as(std::move(key), n, with_commas(n)).quoted();
}

double ns_per(const Timing& t, std::size_t n) {
    return t.min() * 1e9 / static_cast<double>(n);
}

Value ns_cell(Report& report, const std::string& key, const Timing& t, std::size_t n) {
    report.record(key + ".min_s", t.min());
    report.record(key + ".median_s", t.median());
    report.record(key + ".runs_s", t.runs);
    return Value::measured(key + ".ns_per_element", ns_per(t, n), "{:.2f}");
}

Value ratio(std::string key, const Timing& a, const Timing& b, int digits) {
    return Value::measured(std::move(key), fmt::format("{:.{}f}", a.min() / b.min(), digits));
}

void claim_lines(Report& report, const cachebook::ExperimentResult& outcome) {
    cachebook::report_experiment(report, outcome);
    const auto& c = outcome.result;
    report.record("claims." + outcome.key + ".margin", c.threshold > 0 ? c.effect / c.threshold - 1 : 0.0);
}

std::string kib_text(std::size_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes >> 10)
                             : fmt::format("{} KiB + {} B", bytes >> 10, bytes % 1024);
}

void placement_line(Report& report, const ch05::PlacementVerdict& v) {
    const auto& r = v.result;
    // The effect is the slower placement's time over the other's; close over apart for neither.
    const std::string ratio = v.slower == "apart" ? "apart / close" : "close / apart";
    const std::string figures = fmt::format("{} {:.2f}x, noise {:.0f} %", ratio, r.effect, 100 * r.noise);
    const std::string text = v.slower == "neither" ? fmt::format("neither beyond the noise ({})", figures)
                                                   : fmt::format("arrays {} ({})", v.slower, figures);
    report.line("  slower placement (both versions): {}",
                Value::measured_as("fusion.placement.slower", v.slower, text));
    report.record("fusion.placement.effect", r.effect);
    report.record("fusion.placement.noise", r.noise);
}

std::string wrap_words(const std::string& head, const std::string& words, std::size_t width) {
    std::string out = head, line = head;
    std::size_t start = 0;
    while (start < words.size()) {
        const std::size_t end = std::min(words.find(' ', start), words.size());
        const std::string word = words.substr(start, end - start);
        const bool first = line.size() == head.size();
        if (!first && line.size() + 1 + word.size() > width) {
            line = std::string(head.size(), ' ');
            out += "\n" + line;
        } else if (!first) {
            line += ' ';
            out += ' ';
        }
        line += word;
        out += word;
        start = end + 1;
    }
    return out;
}

}  // namespace ch05
