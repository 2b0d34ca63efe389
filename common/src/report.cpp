#include "cachebook/report.hpp"

#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace cachebook {
namespace {

// Display width of UTF-8 text: count code points, not bytes.
std::size_t width(const std::string& s) {
    std::size_t w = 0;
    for (unsigned char c : s)
        if ((c & 0xC0) != 0x80) ++w;
    return w;
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
        throw std::invalid_argument(fmt::format("Table: row has {} cells, table has {} columns", cells.size(),
                                                headers_.size()));
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
