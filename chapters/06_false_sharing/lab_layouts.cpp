// Chapter 6's facts and model runs: the layouts as the compiler laid them out, the ping-pong
// trace, and the queue and lock models the program prints.
#include <fmt/format.h>

#include <cstddef>

#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch06 {
namespace {

#define FIELD(type, field) std::pair<std::string, std::size_t>(#field, offsetof(type, field))

template <class T>
StructFacts facts(std::string name, std::vector<std::pair<std::string, std::size_t>> offsets) {
    return StructFacts{std::move(name), sizeof(T), alignof(T), std::move(offsets)};
}

}  // namespace

const PaddingLine& this_machine_line() {
    static const PaddingLine line = padding_line(cachebook::machine());
    return line;
}

LayoutFacts layout_facts() {
    LayoutFacts layout;
    layout.counters = facts<Counters>("Counters", {FIELD(Counters, thread0_count), FIELD(Counters, thread1_count)});
    layout.counters_char_pad = facts<CountersCharPad>(
        "CountersCharPad", {FIELD(CountersCharPad, thread0_count), FIELD(CountersCharPad, thread1_count)});
    layout.counters_aligned = facts<CountersAligned>(
        "CountersAligned", {FIELD(CountersAligned, thread0_count), FIELD(CountersAligned, thread1_count)});
    const PortableLayout portable = portable_layout();
    layout.counters_portable =
        StructFacts{"CountersPortable",
                    portable.size,
                    portable.align,
                    {{"thread0_count", portable.thread0_offset}, {"thread1_count", portable.thread1_offset}}};
    layout.worker_state = facts<WorkerState>(
        "WorkerState",
        {FIELD(WorkerState, worker_id), FIELD(WorkerState, items_processed), FIELD(WorkerState, errors)});
    layout.worker_state_aligned = facts<WorkerStateAligned>(
        "WorkerStateAligned", {FIELD(WorkerStateAligned, worker_id), FIELD(WorkerStateAligned, items_processed),
                               FIELD(WorkerStateAligned, errors)});
    layout.stats = facts<Stats>("Stats", {FIELD(Stats, requests), FIELD(Stats, bytes_sent), FIELD(Stats, errors)});
    layout.stats_aligned = facts<StatsAligned>(
        "StatsAligned", {FIELD(StatsAligned, requests), FIELD(StatsAligned, bytes_sent), FIELD(StatsAligned, errors)});
    layout.worker_states_per_line = static_cast<double>(layout.line_bytes) / static_cast<double>(sizeof(WorkerState));
    layout.destructive = portable.destructive;
    layout.constructive = portable.constructive;
    for (int i = 0; i < layout.workers; ++i) {
        const auto u = static_cast<std::uint64_t>(i);
        layout.worker_line.push_back((u * sizeof(WorkerState) + offsetof(WorkerState, items_processed)) /
                                     layout.line_bytes);
        layout.worker_line_aligned.push_back(
            (u * sizeof(WorkerStateAligned) + offsetof(WorkerStateAligned, items_processed)) / layout.line_bytes);
    }
    layout.workers_per_line.assign(layout.worker_line.back() + 1, 0);
    for (auto line : layout.worker_line) ++layout.workers_per_line[line];
    for (int i = 0; i < layout.workers; ++i) {
        const auto first = static_cast<std::size_t>(i) * sizeof(WorkerState), last = first + sizeof(WorkerState) - 1;
        if (first / layout.line_bytes != last / layout.line_bytes) layout.straddling.push_back(i);
    }
    return layout;
}

#undef FIELD

std::string offsets_text(const StructFacts& facts) {
    std::string out;
    for (const auto& [name, offset] : facts.offsets)
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, offset);
    return out;
}

std::vector<TraceStep> trace_two_counters(std::size_t offset_b, std::size_t steps) {
    cachebook::CoherenceModel model(2);
    std::vector<TraceStep> out;
    for (std::size_t s = 0; s < steps; ++s) {
        const int core = static_cast<int>(s % 2);
        const std::uint64_t address = core == 0 ? 0 : offset_b;
        TraceStep step{core, address, model.access(core, address, cachebook::AccessKind::Write), {}};
        step.states = fmt::format("{} {}", cachebook::mesi_letter(model.state(0, 0)),
                                  cachebook::mesi_letter(model.state(1, offset_b)));
        out.push_back(step);
    }
    return out;
}

std::string dashboard_name(Dashboard d) {
    switch (d) {
        case Dashboard::Packed:
            return "Stats[4], total right after";
        case Dashboard::TotalApart:
            return "Stats[4], total on its own line";
        case Dashboard::Padded:
            return "StatsAligned[4], total on its own line";
    }
    return "?";
}

std::vector<CaseModel> case_models(const CaseModelSettings& s) {
    std::vector<CaseModel> out;
    for (auto [name, spacing] : {std::pair{"packed", Spacing::Packed}, std::pair{"padded", Spacing::Padded}}) {
        const std::size_t apart = second_field_offset(spacing, offsetof(QueueIndices, tail), 64);
        out.push_back({fmt::format("queue, tail {} B after head", apart),
                       fmt::format("queue_lock.model.queue.{}", name),
                       model_queue(spacing, s.items, s.ring, s.lag, s.refresh)});
    }
    for (auto [name, spacing] : {std::pair{"packed", Spacing::Packed}, std::pair{"padded", Spacing::Padded}}) {
        const std::size_t apart = second_field_offset(spacing, offsetof(GuardedCounters, value), 64);
        out.push_back({fmt::format("lock, data {} B after lock", apart), fmt::format("queue_lock.model.lock.{}", name),
                       model_lock(spacing, s.sections, kLockWrites)});
    }
    return out;
}

}  // namespace ch06
