// libFuzzer target for the shared command-line layer: any argument vector must
// end in "go on", a help text, or one error line with status 2; never a crash.
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cachebook/cli.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // Arguments are separated by NUL bytes in the input.
    std::vector<std::string> words{"fuzz_cli"};
    std::string cur;
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == 0) {
            words.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(static_cast<char>(data[i]));
        }
    }
    words.push_back(cur);
    // --json writes a probe file; the fuzzer must not write anywhere it likes.
    for (const auto& w : words)
        if (w.rfind("--j", 0) == 0) return 0;
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());

    cachebook::Cli cli("fuzz_cli", "fuzz target");
    std::int64_t n = 4, tile = 0, threads = 1;
    std::string trace;
    cli.add_int("--n", n, "size", 1, 4096);
    cli.add_int("--tile", tile, "tile", 0, 1024);
    cli.add_int("-t,--threads", threads, "threads", 1, 256);
    cli.add_string("--trace", trace, "a file");
    // Silence the error line for the parse only; libFuzzer reports on stderr too.
    static const int devnull = open("/dev/null", O_WRONLY);
    const int saved = dup(2);
    dup2(devnull, 2);
    const auto status = cli.parse(static_cast<int>(argv.size()), argv.data());
    dup2(saved, 2);
    close(saved);
    if (status && *status != 0 && *status != 2) __builtin_trap();
    if (!status && (n < 1 || n > 4096 || tile < 0 || tile > 1024 || threads < 1 || threads > 256)) __builtin_trap();
    return 0;
}
