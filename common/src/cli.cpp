#include "cachebook/cli.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cachebook/report.hpp"

namespace cachebook {
namespace {

// CLI11 messages may span lines; the book promises one.
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

}  // namespace

Cli::Cli(std::string program, std::string description)
    : program_(std::move(program)), app_(std::move(description), program_) {
    app_.add_flag("--quick", quick_, "Smaller sizes and fewer runs (for tests and CI)");
    app_.add_option("--json", json_, "Write every result, simulated and measured, to this JSON file");
}

CLI::Option* Cli::add_int(const std::string& flags, std::int64_t& value, const std::string& help, std::int64_t min,
                          std::int64_t max) {
    // Our own check, so every bad value gets the same plain sentence.
    CLI::Validator whole_number(
        [min, max](std::string& text) -> std::string {
            std::int64_t v = 0;
            std::size_t used = 0;
            try {
                v = std::stoll(text, &used, 10);
            } catch (...) {
                used = 0;
            }
            if (used == 0 || used != text.size() || v < min || v > max)
                return fmt::format("expected a whole number from {} to {}, got '{}'", min, max, text);
            return {};
        },
        fmt::format("INT in [{}, {}]", min, max));
    return app_.add_option(flags, value, help)->check(whole_number)->capture_default_str();
}

CLI::Option* Cli::add_string(const std::string& flags, std::string& value, const std::string& help) {
    return app_.add_option(flags, value, help);
}

std::optional<int> Cli::parse(int argc, char** argv) {
    try {
        app_.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app_.help();
        return 0;
    } catch (const CLI::ParseError& e) {
        std::cerr << fmt::format("{}: error: {}\n", program_, one_line(e.what()));
        return 2;
    }
    if (!json_.empty()) {
        try {
            check_writable(json_);
        } catch (const std::exception& e) {
            std::cerr << fmt::format("{}: error: --json: {}\n", program_, one_line(e.what()));
            return 2;
        }
    }
    return std::nullopt;
}

int guarded_main(std::string_view program, const std::function<int()>& body) {
    try {
        return body();
    } catch (const UsageError& e) {
        std::cerr << fmt::format("{}: error: {}\n", program, one_line(e.what()));
        return 2;
    } catch (const std::invalid_argument& e) {
        std::cerr << fmt::format("{}: error: {}\n", program, one_line(e.what()));
        return 2;
    } catch (const std::runtime_error& e) {
        std::cerr << fmt::format("{}: error: {}\n", program, one_line(e.what()));
        return 2;
    } catch (const std::exception& e) {
        std::cerr << fmt::format("{}: internal error: {}\n", program, one_line(e.what()));
        return 1;
    }
}

std::uint64_t available_memory() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (in >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return 0;
}

void require_memory(std::uint64_t bytes, std::string_view what) {
    const std::uint64_t have = available_memory();
    if (have != 0 && bytes > have) {
        constexpr double gib = 1024.0 * 1024.0 * 1024.0;
        throw UsageError(fmt::format("{} needs {:.1f} GiB, this machine has {:.1f} GiB available", what,
                                     static_cast<double>(bytes) / gib, static_cast<double>(have) / gib));
    }
}

}  // namespace cachebook
