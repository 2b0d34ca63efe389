// Grades chapter 6's exercises against the book's own code: the padded layout
// must leave the MESI model nothing to move, and the prediction must equal
// what the model counts.
#include <catch2/catch.hpp>

#include "cachebook/coherence.hpp"
#include "exercise.hpp"
#include "false_sharing.hpp"

TEST_CASE("exercise 1: padded records share no line, overlap nowhere, waste nothing", "[1 point]") {
    for (std::size_t line : {32u, 64u, 128u})
        for (std::size_t record : {8u, 24u, 64u, 72u, 200u})
            for (std::uint64_t base : {0u, 8u, 64u, 100u, 4096u + 24u}) {
                INFO("line " << line << ", record " << record << " bytes, buffer at " << base);
                const int threads = 6;
                std::vector<std::uint64_t> at;
                for (int t = 0; t < threads; ++t)
                    at.push_back(ch06_exercise::padded_record_address(base, t, record, line));
                // Every thread writes the first and the last byte of its record, in turns.
                cachebook::CoherenceModel model(threads, line);
                for (int round = 0; round < 3; ++round)
                    for (int t = 0; t < threads; ++t) {
                        model.access(t, at[static_cast<std::size_t>(t)], cachebook::AccessKind::Write);
                        model.access(t, at[static_cast<std::size_t>(t)] + record - 1, cachebook::AccessKind::Write);
                    }
                CHECK(model.total().transfers == 0);
                CHECK(at[0] >= base);
                const std::uint64_t lines_per_record = (record + line - 1) / line;
                for (int t = 0; t + 1 < threads; ++t)
                    CHECK(at[static_cast<std::size_t>(t) + 1] >= at[static_cast<std::size_t>(t)] + record);
                // No more space than needed: the first record within a line of base,
                // and records the fewest whole lines apart.
                CHECK(at[0] < base + line);
                CHECK(at.back() - at[0] == (threads - 1) * lines_per_record * line);
            }
}

TEST_CASE("exercise 2: the predicted transfer count equals the MESI model's", "[3 points]") {
    struct Case {
        std::size_t elem, offset;
        int workers;
        std::uint64_t writes;
        std::size_t burst;
    };
    const Case cases[] = {{8, 0, 2, 1000, 1},  {8, 0, 2, 1000, 16},  {64, 0, 2, 1000, 1}, {24, 8, 8, 100, 1},
                          {24, 8, 8, 100, 10}, {24, 8, 8, 100, 7},   {64, 8, 8, 100, 1},  {16, 0, 8, 50, 3},
                          {40, 32, 5, 60, 4},  {8, 0, 16, 20, 1},    {128, 0, 3, 10, 2},  {24, 16, 3, 9, 9},
                          {12, 4, 6, 33, 5},   {48, 8, 4, 100, 100}, {32, 24, 7, 13, 2}};
    for (const Case& c : cases) {
        INFO(c.workers << " workers, " << c.elem << "-byte elements, field at " << c.offset << ", " << c.writes
                       << " writes each, bursts of " << c.burst);
        const auto model = ch06::model_workers(c.elem, c.offset, c.workers, c.writes, c.burst);
        CHECK(ch06_exercise::predict_transfers(c.elem, c.offset, c.workers, c.writes, c.burst) == model.transfers);
    }
}
