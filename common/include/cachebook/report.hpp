#pragma once
/// @file report.hpp
/// @brief Plain-text tables for the terminal and JSON results for the book.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cachebook {

/// A text table: a header row, a rule, then rows; columns padded to fit.
class Table {
public:
    enum class Align { Left, Right };
    /// One column per header; the first column is left-aligned, the rest right-aligned
    /// unless `align` says otherwise.
    explicit Table(std::vector<std::string> headers, std::vector<Align> align = {});
    /// Adds a row; it must have one cell per column (throws std::invalid_argument).
    Table& row(std::vector<std::string> cells);
    /// The table as lines of text, each ending in '\n', indented by `indent` spaces.
    [[nodiscard]] std::string render(int indent = 2) const;

private:
    std::vector<std::string> headers_;
    std::vector<Align> align_;
    std::vector<std::vector<std::string>> rows_;
};

/// Checks up front that `path` can be written (so a long run does not fail at
/// its end); throws std::runtime_error naming the path otherwise.
void check_writable(const std::string& path);

/// Writes `value` to `path` atomically (a temporary file, then a rename), so
/// that a failed write leaves no partial file. Throws std::runtime_error.
void write_json(const std::string& path, const nlohmann::json& value);

}  // namespace cachebook
