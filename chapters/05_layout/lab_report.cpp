// Chapter 5's results as the Report's cells: each figure a Value made once, with its JSON key.
#include <fmt/format.h>

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

void claim_lines(Report& report, const std::string& name, const std::string& text, const cachebook::ClaimResult& c) {
    cachebook::report_claim(report, name, text, c);
    report.record("claims." + name + ".margin", to_json(c)["margin"]);
}

std::string kib_text(std::size_t bytes) {
    return bytes % 1024 == 0 ? fmt::format("{} KiB", bytes >> 10)
                             : fmt::format("{} KiB + {} B", bytes >> 10, bytes % 1024);
}

}  // namespace ch05
