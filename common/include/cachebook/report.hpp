#pragma once
/// @file report.hpp
/// @brief What a chapter prints and what it records for the book, written once.
///
/// A chapter makes each result as a `Value` (exact or measured) with the JSON
/// key it is recorded under, and hands it to a `Report`: the report prints the
/// line or the table row, records the key for `--json`, and in golden mode
/// (`CACHEBOOK_GOLDEN=1`) prints a measured value as `<measured>`. With
/// `CACHEBOOK_GOLDEN_COPY=FILE` a measured run also writes to FILE what golden mode would
/// print, so that one run gives the book its figures and the golden test its text.
///
/// ```
/// cachebook::Report report("Chapter 3 · The six loop orders of C = A x B");
/// report.section("Measured: {} x {} doubles", Value::exact("measured.n", n), n);
/// auto times = report.table({"order", "ms"});
/// times.row({"ijk", Value::measured("measured.ijk_ms", seconds * 1e3, "{:.1f}")});
/// times.print();
/// report.save(cli.json_path());
/// ```

#include <fmt/args.h>
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cachebook/measure.hpp"

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

/// One result as a chapter reports it: the text it prints, the JSON it records
/// and where, and whether it is measured (machine-dependent). A plain string
/// converts to a Value that is printed and not recorded.
class Value {
public:
    Value(std::string text) : text_(std::move(text)) {}  // NOLINT: a plain cell or word
    Value(const char* text) : text_(text) {}             // NOLINT: a plain cell or word

    /// A value every machine computes the same: printed with `format`, recorded as itself.
    template <class T>
    static Value exact(std::string key, const T& value, fmt::format_string<const T&> format = "{}") {
        return Value(std::move(key), fmt::format(format, value), nlohmann::json(value), false);
    }
    /// A measured or machine-dependent value: `<measured>` in golden mode.
    template <class T>
    static Value measured(std::string key, const T& value, fmt::format_string<const T&> format = "{}") {
        return Value(std::move(key), fmt::format(format, value), nlohmann::json(value), true);
    }
    /// A measured or machine-dependent number with `decimals` places: the printed text and
    /// the JSON carry the same rounding, so the prose quotes what the reader saw.
    static Value measured(std::string key, double value, int decimals) {
        std::string text = fmt::format("{:.{}f}", value, decimals);
        nlohmann::json json = rounded(text, value);
        return Value(std::move(key), std::move(text), std::move(json), true);
    }
    /// An exact number with `decimals` places, printed and recorded alike.
    static Value exact(std::string key, double value, int decimals) {
        std::string text = fmt::format("{:.{}f}", value, decimals);
        nlohmann::json json = rounded(text, value);
        return Value(std::move(key), std::move(text), std::move(json), false);
    }
    /// An exact value recorded as `value` and printed as `text` ("yes" for true, a name for a code).
    static Value exact_as(std::string key, nlohmann::json value, std::string text) {
        return Value(std::move(key), std::move(text), std::move(value), false);
    }
    /// A measured value recorded as `value` and printed as `text`.
    static Value measured_as(std::string key, nlohmann::json value, std::string text) {
        return Value(std::move(key), std::move(text), std::move(value), true);
    }
    /// Text with a machine-dependent part: `before + part + after`, printed in golden mode with the
    /// part masked (a label such as "threads: 2"); not recorded.
    static Value partly_measured(const std::string& before, const std::string& part, const std::string& after) {
        Value v(before + part + after);
        v.golden_text_ = before + std::string(kMeasuredPlaceholder) + after;
        return v;
    }
    /// A value this run could not find (one cpu, no tool): prints `text`
    /// (masked if `measured`), and its key is still recorded, as null.
    static Value unknown(std::string key, std::string text, bool measured = true) {
        return Value(std::move(key), std::move(text), nlohmann::json(nullptr), measured);
    }

    /// Also records the printed text, under `key_text`, for prose that quotes the
    /// figure as the reader saw it.
    Value& quoted();
    /// Also records the value formatted with `format` under `key_text` (the prose's rounding).
    Value& quoted(std::string_view format);

    [[nodiscard]] const std::string& key() const { return key_; }
    [[nodiscard]] const std::string& text() const { return text_; }
    [[nodiscard]] const nlohmann::json& json() const { return json_; }
    [[nodiscard]] bool is_measured() const { return measured_; }
    [[nodiscard]] const std::string& quoted_text() const { return quoted_text_; }
    [[nodiscard]] bool is_quoted() const { return quoted_; }
    /// What the output shows: the text, or the placeholder for a measured value in golden mode.
    [[nodiscard]] std::string shown(bool golden) const;

private:
    /// The number `text` shows (`value` printed with some decimals), as JSON; null when
    /// `value` is not finite.
    static nlohmann::json rounded(const std::string& text, double value);
    Value(std::string key, std::string text, nlohmann::json json, bool measured)
        : key_(std::move(key)), text_(std::move(text)), json_(std::move(json)), measured_(measured) {}
    std::string key_;  // dotted path in the JSON ("measured.ijk_ms"); empty: not recorded
    std::string text_;
    nlohmann::json json_;
    bool measured_ = false;
    bool quoted_ = false;
    std::string quoted_text_;
    std::optional<std::string> golden_text_;  // what golden mode prints, when not the placeholder
};

class ResultTable;

/// A chapter's output: a title, numbered sections of lines and tables, and
/// the JSON of everything recorded on the way.
class Report {
public:
    /// Prints the title line. `golden` masks measured values; `out` receives the text.
    explicit Report(std::string_view title, bool golden = golden_mode(), std::ostream& out = std::cout);

    /// Starts the next numbered section: a blank line, then "N. heading".
    template <class... Args>
    void section(std::string_view heading, const Args&... args) {
        ++section_;
        (record_if_value(args), ...);
        print_shown(
            [&](bool golden) { return fmt::format("\n{}. {}\n", section_, format_line(heading, golden, args...)); });
    }
    /// One line of text; Values among `args` are recorded and masked as needed.
    template <class... Args>
    void line(std::string_view pattern, const Args&... args) {
        (record_if_value(args), ...);
        print_shown([&](bool golden) { return format_line(pattern, golden, args...) + "\n"; });
    }
    /// An empty line inside a section (or before the first one).
    void blank_line() { print("\n"); }

    /// Records a fact for `--json` that no line prints (the run's settings, a raw series).
    void record(std::string_view key, nlohmann::json value);
    /// Records a Value's key (and its quoted text); done for you by line, section and tables.
    void record(const Value& value);

    /// A table whose rows are recorded under each cell's key.
    ResultTable table(std::vector<std::string> headers, std::vector<Table::Align> align = {});
    /// A table recorded as a JSON array at `array_key`: one object per row, a cell's key its field.
    ResultTable table_of_rows(std::string array_key, std::vector<std::string> headers,
                              std::vector<Table::Align> align = {});

    /// Writes the JSON to `path` (nothing when `path` is empty), with the run's conditions
    /// (conditions.hpp) under "conditions", and under "exact_keys" the path of every exact
    /// value recorded ("six.orders[2].total"): what a results bundle from any machine must hold
    /// to the digit (make check-results).
    void save(const std::string& path) const;

    [[nodiscard]] const nlohmann::json& json() const { return json_; }
    [[nodiscard]] bool golden() const { return golden_; }
    [[nodiscard]] int section_number() const { return section_; }
    /// Prints `text` as it is.
    void print(std::string_view text);

private:
    friend class ResultTable;
    template <class... Args>
    static std::string format_line(std::string_view pattern, [[maybe_unused]] bool golden, const Args&... args) {
        fmt::dynamic_format_arg_store<fmt::format_context> store;
        (push(store, golden, args), ...);
        return fmt::vformat(pattern, store);
    }
    template <class T>
    static void push(fmt::dynamic_format_arg_store<fmt::format_context>& store, bool golden, const T& arg) {
        if constexpr (std::is_same_v<T, Value>)
            store.push_back(arg.shown(golden));
        else
            store.push_back(arg);
    }
    template <class T>
    void record_if_value(const T& arg) {
        if constexpr (std::is_same_v<T, Value>) record(arg);
    }
    /// Prints `render(golden_)`, and `render(true)` to the golden copy when there is one.
    template <class Render>
    void print_shown(const Render& render) {
        print_to(out_, render(golden_));
        if (golden_copy_) print_to(*golden_copy_, render(true));
    }
    static void print_to(std::ostream& out, std::string_view text);

    /// Notes `path` as an exact value's place when `value` is exact, keyed and known.
    void note_exact(const std::string& path, const Value& value);

    nlohmann::json json_ = nlohmann::json::object();
    std::vector<std::string> exact_keys_;
    bool golden_;
    std::ostream& out_;
    std::unique_ptr<std::ostream> golden_copy_;  // CACHEBOOK_GOLDEN_COPY's file, in a measured run
    int section_ = 0;
};

/// A table of results: cells are Values (or plain text), recorded as each row is added.
class ResultTable {
public:
    /// Adds a row, one cell per column (throws std::invalid_argument otherwise) and
    /// records its keyed cells; `unprinted` fields go into the row's JSON object only
    /// (tables of rows).
    ResultTable& row(std::vector<Value> cells, const nlohmann::json& unprinted = nlohmann::json::object());
    /// Prints the table, indented by `indent` spaces.
    void print(int indent = 2);
    /// The text print() writes (`golden`: as golden mode prints it).
    [[nodiscard]] std::string render(int indent = 2) const { return render(indent, report_.golden()); }
    [[nodiscard]] std::string render(int indent, bool golden) const;

private:
    friend class Report;
    ResultTable(Report& report, std::string array_key, std::vector<std::string> headers,
                std::vector<Table::Align> align);
    Report& report_;
    std::string array_key_;  // empty: each cell at its own key
    std::vector<std::string> headers_;
    std::vector<Table::Align> align_;
    std::vector<std::vector<Value>> rows_;
};

/// Checks up front that `path` can be written (so a long run does not fail at
/// its end); throws std::runtime_error naming the path otherwise.
void check_writable(const std::string& path);

/// Writes `value` to `path` atomically (a temporary file, then a rename), so
/// that a failed write leaves no partial file. Throws std::runtime_error.
void write_json(const std::string& path, const nlohmann::json& value);

}  // namespace cachebook
