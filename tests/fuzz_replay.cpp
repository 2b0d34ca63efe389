// Runs a libFuzzer target without libFuzzer (so without clang): every file of
// a corpus directory, then mutations of them for a time budget, seeded, so a
// short fuzz run is part of the ordinary test suite. `make fuzz` does the real,
// coverage-guided run.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR SECONDS\n", argv[0]);
        return 2;
    }
    std::vector<std::string> corpus;
    for (const auto& entry : std::filesystem::directory_iterator(argv[1])) {
        std::ifstream in(entry.path(), std::ios::binary);
        corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (corpus.empty()) {
        std::fprintf(stderr, "%s: empty corpus %s\n", argv[0], argv[1]);
        return 2;
    }
    auto run = [](const std::string& s) {
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    };
    for (const auto& s : corpus) run(s);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(argv[2]));
    std::mt19937_64 rng(1);
    const std::string alphabet = " \t\r\n,ILSMx0123456789abcdefABCDEFg=-\xff";
    std::size_t runs = corpus.size();
    while (std::chrono::steady_clock::now() < stop) {
        std::string s = corpus[rng() % corpus.size()];
        for (int edits = 1 + static_cast<int>(rng() % 8); edits > 0; --edits) {
            const std::size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
            switch (rng() % 4) {
                case 0:
                    s.insert(at, 1, alphabet[rng() % alphabet.size()]);
                    break;
                case 1:
                    if (at < s.size()) s.erase(at, 1);
                    break;
                case 2:
                    if (at < s.size()) s[at] = static_cast<char>(rng());
                    break;
                default:
                    s.insert(at, std::string(rng() % 300, alphabet[rng() % alphabet.size()]));
                    break;
            }
        }
        run(s);
        ++runs;
    }
    std::printf("%zu inputs, no failure\n", runs);
    return 0;
}
