#pragma once
// How chapter 6's exercises are checked, against the book's own code; grader.cpp and the
// instructor's held-back cases hold only the cases.
#include <catch2/catch.hpp>
#include <vector>

#include "cachebook/coherence.hpp"
#include "exercise.hpp"
#include "false_sharing.hpp"

namespace ch06_checks {

// Exercise 1: THREADS padded records from BASE share no line (each thread writes the first and
// last byte of its record, ROUNDS times in turns, and the MESI model moves nothing), overlap
// nowhere and waste nothing (the first within a line of BASE, the records the fewest lines apart).
inline void check_padded(std::size_t line, std::size_t record, std::uint64_t base, int threads, int rounds) {
    INFO("line " << line << ", record " << record << " bytes, buffer at " << base << ", " << threads << " threads");
    std::vector<std::uint64_t> at;
    for (int t = 0; t < threads; ++t) at.push_back(ch06_exercise::padded_record_address(base, t, record, line));
    cachebook::CoherenceModel model(threads, line);
    for (int round = 0; round < rounds; ++round)
        for (std::size_t t = 0; t < at.size(); ++t) {
            model.access(static_cast<int>(t), at[t], cachebook::AccessKind::Write);
            model.access(static_cast<int>(t), at[t] + record - 1, cachebook::AccessKind::Write);
        }
    CHECK(model.total().transfers == 0);
    CHECK(at[0] >= base);
    CHECK(at[0] < base + line);
    for (std::size_t t = 0; t + 1 < at.size(); ++t) CHECK(at[t + 1] >= at[t] + record);
    const std::uint64_t lines_per_record = (record + line - 1) / line;
    CHECK(at.back() - at[0] == static_cast<std::uint64_t>(threads - 1) * lines_per_record * line);
}

struct Case {
    std::size_t elem, offset;
    int workers;
    std::uint64_t writes;
    std::size_t burst;
};

// Exercise 2: the predicted transfer count equals the MESI model's.
inline void check_transfers(const Case& c) {
    INFO(c.workers << " workers, " << c.elem << "-byte elements, field at " << c.offset << ", " << c.writes
                   << " writes each, bursts of " << c.burst);
    const auto model = ch06::model_workers(c.elem, c.offset, c.workers, c.writes, c.burst);
    CHECK(ch06_exercise::predict_transfers(c.elem, c.offset, c.workers, c.writes, c.burst) == model.transfers);
}

}  // namespace ch06_checks
