#pragma once
/// @file chapter_main.hpp
/// @brief The `main()` every chapter program shares: the command line, the report, its sections in
/// order, the JSON saved, all inside guarded_main.
///
/// ```
/// int main(int argc, char** argv) {
///     return cachebook::chapter_main<ch02::Options>(
///         argc, argv, {"ch02_loop_orders", "Chapter 2: row or column ...", "Chapter 2 · Row or column"}, parse,
///         [](cachebook::Report& report, const ch02::Options& options) {
///             ch02::arithmetic_section(report);
///             ch02::sum_section(report, options);
///         });
/// }
/// ```

#include <optional>
#include <string>

#include "cachebook/cli.hpp"
#include "cachebook/report.hpp"

namespace cachebook {

/// What names a chapter's program.
struct ChapterProgram {
    std::string name;         ///< the program, "ch02_loop_orders": --help's usage line and every error line
    std::string description;  ///< --help's description
    std::string title;        ///< the report's title line, "Chapter 2 · Row or column"
};

/// Runs a chapter's program and returns its exit status:
/// - `parse(cli, options, argc, argv)` adds the chapter's options to `cli`, parses the command
///   line and checks what it read; it returns an exit status when the program stops there
///   (`--help`), std::nullopt to go on. A UsageError it throws is one line on stderr and status 2;
/// - `sections(report, options)` prints the numbered sections, in order, through `report`;
/// - the report is then saved to `--json FILE` when given.
template <class Options, class Parse, class Sections>
int chapter_main(int argc, char** argv, const ChapterProgram& program, Parse&& parse, Sections&& sections) {
    return guarded_main(program.name, [&]() -> int {
        Cli cli(program.name, program.description);
        Options options;
        if (const std::optional<int> status = parse(cli, options, argc, argv)) return *status;
        Report report(program.title);
        sections(report, static_cast<const Options&>(options));
        report.save(cli.json_path());
        return 0;
    });
}

}  // namespace cachebook
