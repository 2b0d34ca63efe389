#include "lab.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ch01 {

std::vector<std::string> stepper_grid(const StepperRun& run, std::size_t upto) {
    std::vector<std::string> grid(run.rows, std::string(run.cols, '.'));
    for (std::size_t s = 0; s < run.steps.size() && s < upto; ++s) {
        const Step& st = run.steps[s];
        grid[st.i][st.j] = st.hit ? 'H' : 'M';
    }
    return grid;
}

std::string cells_text(const std::vector<cachebook::Cell>& order, std::size_t count) {
    std::string text;
    for (std::size_t k = 0; k < order.size() && k < count; ++k)
        text += fmt::format("{}({},{})", k ? " " : "", order[k].first, order[k].second);
    return text;
}

nlohmann::json cells_json(const std::vector<cachebook::Cell>& order, std::size_t count) {
    nlohmann::json pairs = nlohmann::json::array();
    for (std::size_t k = 0; k < order.size() && k < count; ++k) pairs.push_back({order[k].first, order[k].second});
    return pairs;
}

std::vector<std::uint64_t> first_addresses(const std::vector<std::uint64_t>& trace, std::size_t count) {
    return {trace.begin(), trace.begin() + static_cast<std::ptrdiff_t>(std::min(count, trace.size()))};
}

nlohmann::json to_json(const Location& l) {
    return {{"address", l.address}, {"line", l.line}, {"offset", l.offset}};
}

nlohmann::json to_json(const StepperRun& r) {
    nlohmann::json steps = nlohmann::json::array();
    for (const Step& s : r.steps)
        steps.push_back({{"i", s.i}, {"j", s.j}, {"line", s.line}, {"hit", s.hit}, {"cache_after", s.cache_after}});
    return {{"walk", r.walk},
            {"rows", r.rows},
            {"cols", r.cols},
            {"elem", r.elem},
            {"line_bytes", r.line_bytes},
            {"cache_lines", r.cache_lines},
            {"hits", r.hits},
            {"misses", r.misses},
            {"steps", steps}};
}

}  // namespace ch01
