// Chapter 6's held-back cases: other lines, records and workers than grader.cpp's, run
// only by the instructor's copy (never in the handout).
#include <catch2/catch.hpp>

#include "cachebook/coherence.hpp"
#include "exercise.hpp"
#include "false_sharing.hpp"

TEST_CASE("exercise 1 (held back): padded records on other lines and buffers", "[held back][1 point]") {
    for (std::size_t line : {16u, 256u})
        for (std::size_t record : {1u, 16u, 100u, 256u})
            for (std::uint64_t base : {1u, 255u, 1000u}) {
                INFO("line " << line << ", record " << record << " bytes, buffer at " << base);
                const int threads = 4;
                std::vector<std::uint64_t> at;
                for (int t = 0; t < threads; ++t)
                    at.push_back(ch06_exercise::padded_record_address(base, t, record, line));
                cachebook::CoherenceModel model(threads, line);
                for (int round = 0; round < 2; ++round)
                    for (int t = 0; t < threads; ++t) {
                        model.access(t, at[static_cast<std::size_t>(t)], cachebook::AccessKind::Write);
                        model.access(t, at[static_cast<std::size_t>(t)] + record - 1, cachebook::AccessKind::Write);
                    }
                CHECK(model.total().transfers == 0);
                CHECK(at[0] >= base);
                CHECK(at[0] < base + line);
                const std::uint64_t lines_per_record = (record + line - 1) / line;
                CHECK(at.back() - at[0] == (threads - 1) * lines_per_record * line);
            }
}

TEST_CASE("exercise 2 (held back): predicted transfers on other layouts", "[held back][2 points]") {
    struct Case {
        std::size_t elem, offset;
        int workers;
        std::uint64_t writes;
        std::size_t burst;
    };
    const Case cases[] = {{4, 0, 4, 200, 3},  {20, 4, 6, 50, 6},   {8, 56, 9, 30, 1},
                          {96, 40, 5, 25, 2}, {16, 8, 12, 40, 41}, {33, 1, 4, 77, 8}};
    for (const Case& c : cases) {
        INFO(c.workers << " workers, " << c.elem << "-byte elements, field at " << c.offset << ", " << c.writes
                       << " writes each, bursts of " << c.burst);
        const auto model = ch06::model_workers(c.elem, c.offset, c.workers, c.writes, c.burst);
        CHECK(ch06_exercise::predict_transfers(c.elem, c.offset, c.workers, c.writes, c.burst) == model.transfers);
    }
}
