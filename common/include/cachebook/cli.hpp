#pragma once
/// @file cli.hpp
/// @brief The one command-line shape every program of the book shares.
///
/// `--help`, `--quick` and `--json FILE` for all; chapter options are added
/// with the helpers below. A bad argument gives one line on stderr naming it
/// and exit status 2; never a crash, a hang or a silent default.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cachebook {

/// Bad input found after parsing (a size too large for memory, a tile larger
/// than the matrix, ...). Reported as one line, exit status 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A program's command line.
class Cli {
public:
    Cli(std::string program, std::string description);

    /// The underlying CLI11 app, for options the helpers do not cover.
    CLI::App& app() { return app_; }
    const std::string& program() const { return program_; }

    /// An integer option accepting only [min, max]; the range shows in --help.
    CLI::Option* add_int(const std::string& flags, std::int64_t& value, const std::string& help, std::int64_t min,
                         std::int64_t max);
    /// A string option (e.g. a file path).
    CLI::Option* add_string(const std::string& flags, std::string& value, const std::string& help);

    /// Parses the command line. Returns an exit status when the program should
    /// stop now (0 after --help, 2 after a bad argument, with one line on
    /// stderr); std::nullopt when it should go on. Checks that --json's file
    /// can be written before any work starts.
    std::optional<int> parse(int argc, char** argv);

    /// --quick: smaller sizes, for tests and CI.
    [[nodiscard]] bool quick() const { return quick_; }
    /// --json FILE, or empty.
    [[nodiscard]] const std::string& json_path() const { return json_; }

private:
    std::string program_;
    CLI::App app_;
    bool quick_ = false;
    std::string json_;
};

/// Runs a program's body and turns an escaping exception into one line on
/// stderr: UsageError, std::invalid_argument and std::runtime_error give exit
/// status 2 (bad input, unwritable output), anything else exit status 1.
int guarded_main(std::string_view program, const std::function<int()>& body);

/// Throws UsageError ("<what> needs N GiB, this machine has M GiB available")
/// when `bytes` exceed the memory available now.
void require_memory(std::uint64_t bytes, std::string_view what);

/// Bytes of memory available now (MemAvailable of /proc/meminfo), or 0 if unknown.
std::uint64_t available_memory();

}  // namespace cachebook
