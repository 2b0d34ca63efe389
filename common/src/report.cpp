#include "cachebook/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cachebook/conditions.hpp"

namespace cachebook {
namespace {

// Display width of UTF-8 text: count code points, not bytes.
std::size_t width(const std::string& s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
}

// The object at a dotted path ("measured.orders") below `root`, made on the way.
nlohmann::json& node_at(nlohmann::json& root, std::string_view path) {
    nlohmann::json* node = &root;
    std::size_t start = 0;
    while (start <= path.size() && !path.empty()) {
        const std::size_t dot = std::min(path.find('.', start), path.size());
        node = &(*node)[std::string(path.substr(start, dot - start))];
        start = dot + 1;
    }
    return *node;
}

// Sets the value at a dotted path. A key is written once: a second write is a mistake in the chapter.
void set_once(nlohmann::json& root, std::string_view key, nlohmann::json value) {
    if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string_view::npos)
        throw std::logic_error(fmt::format("report: '{}' is not a key", key));
    const std::size_t last_dot = key.rfind('.');
    const std::string leaf(last_dot == std::string_view::npos ? key : key.substr(last_dot + 1));
    nlohmann::json& parent = node_at(root, last_dot == std::string_view::npos ? "" : key.substr(0, last_dot));
    if (parent.contains(leaf)) throw std::logic_error(fmt::format("report: key '{}' recorded twice", key));
    parent[leaf] = std::move(value);
}

// A Value's key (and its quoted text) set below `root`.
void set_value(nlohmann::json& root, const Value& value) {
    if (value.key().empty()) return;
    set_once(root, value.key(), value.json());
    if (value.is_quoted()) set_once(root, value.key() + "_text", value.quoted_text());
}

}  // namespace

Table::Table(std::vector<std::string> headers, std::vector<Align> align)
    : headers_(std::move(headers)), align_(std::move(align)) {
    if (align_.empty()) {
        align_.assign(headers_.size(), Align::Right);
        if (!align_.empty()) align_[0] = Align::Left;
    }
    if (align_.size() != headers_.size()) throw std::invalid_argument("Table: one alignment per column");
}

Table& Table::row(std::vector<std::string> cells) {
    if (cells.size() != headers_.size())
        throw std::invalid_argument(
            fmt::format("Table: row has {} cells, table has {} columns", cells.size(), headers_.size()));
    rows_.push_back(std::move(cells));
    return *this;
}

std::string Table::render(int indent) const {
    std::vector<std::size_t> w(headers_.size());
    for (std::size_t c = 0; c < headers_.size(); ++c) {
        w[c] = width(headers_[c]);
        for (const auto& r : rows_) w[c] = std::max(w[c], width(r[c]));
    }
    const std::string pad(static_cast<std::size_t>(indent), ' ');
    auto line = [&](const std::vector<std::string>& cells) {
        std::string out = pad;
        for (std::size_t c = 0; c < cells.size(); ++c) {
            const std::string fill(w[c] - width(cells[c]), ' ');
            if (c > 0) out += "  ";
            out += align_[c] == Align::Left ? cells[c] + fill : fill + cells[c];
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out = line(headers_);
    std::size_t total = 0;
    for (std::size_t c = 0; c < w.size(); ++c) total += w[c] + (c > 0 ? 2 : 0);
    out += pad + std::string(total, '-') + "\n";
    for (const auto& r : rows_) out += line(r);
    return out;
}

nlohmann::json Value::rounded(const std::string& text, double value) {
    // Read back from the printed text, so that the JSON and the page round alike, ties too.
    if (!std::isfinite(value)) return nullptr;
    return std::stod(text);
}

Value& Value::quoted() {
    quoted_ = true;
    quoted_text_ = text_;
    return *this;
}

Value& Value::quoted(std::string_view format) {
    quoted_ = true;
    if (json_.is_number_unsigned())
        quoted_text_ = fmt::format(fmt::runtime(format), json_.get<std::uint64_t>());
    else if (json_.is_number_integer())
        quoted_text_ = fmt::format(fmt::runtime(format), json_.get<std::int64_t>());
    else if (json_.is_number())
        quoted_text_ = fmt::format(fmt::runtime(format), json_.get<double>());
    else if (json_.is_string())
        quoted_text_ = fmt::format(fmt::runtime(format), json_.get<std::string>());
    else  // null, a list, a flag: the text as printed
        quoted_text_ = text_;
    return *this;
}

std::string Value::shown(bool golden) const {
    if (golden && golden_text_) return *golden_text_;
    return measured_ && golden ? std::string(kMeasuredPlaceholder) : text_;
}

Report::Report(std::string_view title, bool golden, std::ostream& out) : golden_(golden), out_(out) {
    if (const char* path = std::getenv("CACHEBOOK_GOLDEN_COPY"); path != nullptr && *path != '\0') {
        if (!golden_) {
            golden_copy_ = std::make_unique<std::ofstream>(path);
            if (!*golden_copy_) throw std::runtime_error(fmt::format("CACHEBOOK_GOLDEN_COPY: cannot write '{}'", path));
        }
        unsetenv("CACHEBOOK_GOLDEN_COPY");  // a child process of this run writes no copy over it
    }
    print(fmt::format("{}\n", title));
}

void Report::print_to(std::ostream& out, std::string_view text) {
    out << text;
    out.flush();
}

void Report::print(std::string_view text) {
    print_shown([&](bool) { return std::string(text); });
}

void Report::record(std::string_view key, nlohmann::json value) {
    set_once(json_, key, std::move(value));
}

void Report::record(const Value& value) {
    set_value(json_, value);
    note_exact(value.key(), value);
}

void Report::note_exact(const std::string& path, const Value& value) {
    if (!value.key().empty() && !value.is_measured() && !value.json().is_null()) exact_keys_.push_back(path);
}

ResultTable Report::table(std::vector<std::string> headers, std::vector<Table::Align> align) {
    return ResultTable(*this, "", std::move(headers), std::move(align));
}

ResultTable Report::table_of_rows(std::string array_key, std::vector<std::string> headers,
                                  std::vector<Table::Align> align) {
    record(array_key, nlohmann::json::array());
    return ResultTable(*this, std::move(array_key), std::move(headers), std::move(align));
}

void Report::save(const std::string& path) const {
    if (path.empty()) return;
    nlohmann::json out = json_;
    out["conditions"] = conditions_json(run_conditions());  // what may have distorted this run
    out["exact_keys"] = exact_keys_;                        // what every machine must compute alike
    write_json(path, out);
}

ResultTable::ResultTable(Report& report, std::string array_key, std::vector<std::string> headers,
                         std::vector<Table::Align> align)
    : report_(report), array_key_(std::move(array_key)), headers_(std::move(headers)), align_(std::move(align)) {
    Table(headers_, align_);  // checks the alignments now, not at the first print
}

ResultTable& ResultTable::row(std::vector<Value> cells, const nlohmann::json& unprinted) {
    if (cells.size() != headers_.size())
        throw std::invalid_argument(
            fmt::format("Table: row has {} cells, table has {} columns", cells.size(), headers_.size()));
    if (array_key_.empty()) {
        for (const Value& cell : cells) report_.record(cell);
    } else {
        nlohmann::json object = unprinted;
        nlohmann::json& rows = node_at(report_.json_, array_key_);
        for (const Value& cell : cells) {
            set_value(object, cell);
            report_.note_exact(fmt::format("{}[{}].{}", array_key_, rows.size(), cell.key()), cell);
        }
        rows.push_back(std::move(object));
    }
    rows_.push_back(std::move(cells));
    return *this;
}

std::string ResultTable::render(int indent, bool golden) const {
    Table table(headers_, align_);
    for (const auto& cells : rows_) {
        std::vector<std::string> shown;
        for (const Value& cell : cells) shown.push_back(cell.shown(golden));
        table.row(std::move(shown));
    }
    return table.render(indent);
}

void ResultTable::print(int indent) {
    report_.print_shown([&](bool golden) { return render(indent, golden); });
}

void check_writable(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw std::runtime_error(fmt::format("cannot write '{}': it is a directory", path));
    const std::string probe = path + ".tmp";
    std::FILE* f = std::fopen(probe.c_str(), "w");
    if (f == nullptr) throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    std::fclose(f);
    std::remove(probe.c_str());
}

void write_json(const std::string& path, const nlohmann::json& value) {
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)));
    const std::string text = value.dump(2) + "\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = errno;
        std::remove(tmp.c_str());
        throw std::runtime_error(fmt::format("cannot write '{}': {}", path, std::strerror(err)));
    }
}

}  // namespace cachebook
