// cachesim: a cachelab-compatible cache simulator for valgrind lackey traces,
// with lower levels, policies, regions and write-back counts beyond it.
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "cachebook/report.hpp"
#include "cachesim.hpp"

namespace {

constexpr const char* kProgram = "cachesim";

std::string counts_text(const cachebook::Counts& c) {
    return cachesim::summary_line(c);
}

// What --policy opt cannot do: OPT is simulated offline on one level, one access at a time.
void refuse_with_opt(bool lower_levels, bool verbose, bool regions, bool split) {
    const char* what = lower_levels ? "--L2 or --L3"
                       : verbose    ? "-v"
                       : regions    ? "--region"
                       : split      ? "--split"
                                    : nullptr;
    if (what != nullptr) throw cachebook::UsageError(fmt::format("--policy opt simulates one level without {}", what));
}

// --policy opt: the whole trace is read, then simulated with Belady's optimal replacement.
int run_optimal(const cachesim::Options& options, const std::string& trace, bool skip_bad, bool classify,
                bool write_back, const std::string& json_path) {
    cachesim::Result result;
    const auto records = cachesim::read_records(trace, skip_bad, cachebook::usable_cpus() >= 2 ? 2 : 1, result);
    const cachesim::Accesses accesses = cachesim::accesses_of(records, options.modify_once);
    const cachebook::CacheConfig& l1 = options.levels.front();
    const cachebook::Counts counts = cachebook::optimal_counts(l1, accesses.addresses, accesses.writes);
    fmt::print("{}\n", counts_text(counts));
    nlohmann::json json = cachesim::optimal_json(l1, counts, result, options.modify_once);
    if (classify) {
        const cachebook::MissKinds kinds = cachebook::split_misses(counts.misses, l1, accesses.addresses);
        fmt::print("{}\n", cachesim::kinds_line(kinds));
        json["classify"] = cachesim::kinds_json(kinds);
    }
    if (write_back)
        fmt::print("L1 dirty-evictions:{}\nmemory-writebacks:{}\n", counts.dirty_evictions, counts.dirty_evictions);
    if (result.skipped > 0)
        fmt::print(stderr, "{}: skipped {} malformed line{}; first: {}\n", kProgram, result.skipped,
                   result.skipped == 1 ? "" : "s", result.first_skipped);
    if (!json_path.empty()) cachebook::write_json(json_path, json);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main(kProgram, [&] {
        cachebook::Cli cli(kProgram,
                           "Simulates a valgrind lackey trace (valgrind --tool=lackey --trace-mem=yes) on a cache of "
                           "2^s sets x E lines x 2^b bytes and prints hits, misses and evictions as csim-ref does.");
        std::int64_t set_bits = -1, ways = -1, block_bits = -1, generate = 0, seed = 1;
        std::string trace = "-", policy = "lru", l2, l3, inclusion = "non-inclusive";
        std::vector<std::string> regions;
        bool verbose = false, split = false, modify_once = false, skip_bad = false, write_back = false,
             classify = false;
        auto& app = cli.app();
        // Required unless --generate-transpose; checked after parsing, so no default is shown.
        cli.add_int("-s", set_bits, "Set-index bits: 2^s sets", 0, 28)->default_str("");
        cli.add_int("-E", ways, "Lines per set (any whole number)", 1, std::int64_t{1} << 28)->default_str("");
        cli.add_int("-b", block_bits, "Block bits: 2^b-byte lines", 0, 20)->default_str("");
        cli.add_string("-t", trace, "Trace file; '-' or none: standard input");
        app.add_flag("-v", verbose, "Print each data access with hit, miss, eviction");
        app.add_option("--policy", policy,
                       "Replacement policy: lru, fifo, random, plru, or opt (Belady's optimal, offline)")
            ->capture_default_str();
        cli.add_int("--seed", seed, "Seed of the random policy", 0, std::int64_t{1} << 62);
        cli.add_string("--L2", l2, "A second level: s,E,b as for -s -E -b");
        cli.add_string("--L3", l3, "A third level: s,E,b (needs --L2)");
        app.add_option("--inclusion", inclusion, "inclusive (lower levels evict from upper ones) or non-inclusive")
            ->capture_default_str();
        app.add_flag("--split", split, "An access covers every line its size spans, counted once (as cachegrind)");
        app.add_flag("--modify-once", modify_once, "Count M as one reference (as cachegrind), not a load and a store");
        app.add_option("--region", regions, "name:start:length; counts accesses in that range apart (repeatable)");
        app.add_flag("--write-back", write_back, "Also print dirty evictions and write-backs to memory");
        app.add_flag("--classify", classify,
                     "Also print L1's misses split into compulsory, capacity and conflict (reads the trace whole)");
        app.add_flag("--skip-bad", skip_bad, "Skip malformed lines and report how many, instead of stopping");
        cli.add_int("--generate-transpose", generate,
                    "Print a lackey trace of an N x N float transpose to standard output, then stop", 1, 16384)
            ->default_str("");
        if (auto status = cli.parse(argc, argv)) return *status;

        if (generate > 0) {
            cachesim::write_transpose_trace(stdout, static_cast<std::size_t>(generate));
            return std::fflush(stdout) == 0 ? 0 : 2;
        }
        for (const auto& [flag, v] : {std::pair{"-s", set_bits}, std::pair{"-E", ways}, std::pair{"-b", block_bits}})
            if (v < 0) throw cachebook::UsageError(fmt::format("{} is required (see --help)", flag));
        const bool optimal = policy == "opt";
        if (!optimal && policy != "lru" && policy != "fifo" && policy != "random" && policy != "plru")
            throw cachebook::UsageError(
                fmt::format("--policy: unknown replacement policy '{}' (lru, fifo, random, plru, opt)", policy));
        const cachebook::Policy pol = optimal ? cachebook::Policy::LRU : cachebook::parse_policy(policy);
        if (optimal) refuse_with_opt(!l2.empty() || !l3.empty(), verbose, !regions.empty(), split);
        if (classify && split) throw cachebook::UsageError("--classify counts one line per access: drop --split");
        const auto seed_value = static_cast<std::uint64_t>(seed);

        cachesim::Options options;
        options.levels.push_back(cachesim::geometry(set_bits, ways, block_bits, pol, seed_value));
        if (!l3.empty() && l2.empty()) throw cachebook::UsageError("--L3 needs --L2");
        if (!l2.empty()) options.levels.push_back(cachesim::parse_level("--L2", l2, pol, seed_value));
        if (!l3.empty()) options.levels.push_back(cachesim::parse_level("--L3", l3, pol, seed_value));
        for (std::size_t k = 0; k < options.levels.size(); ++k)
            cachesim::require_fits(options.levels[k], fmt::format("L{}", k + 1));
        if (inclusion == "inclusive")
            options.inclusion = cachesim::Inclusion::Inclusive;
        else if (inclusion != "non-inclusive")
            throw cachebook::UsageError(
                fmt::format("--inclusion: expected inclusive or non-inclusive, got '{}'", inclusion));
        options.split = split;
        options.modify_once = modify_once;
        for (const std::string& r : regions) options.regions.push_back(cachesim::parse_region(r));

        if (optimal) return run_optimal(options, trace, skip_bad, classify, write_back, cli.json_path());

        cachesim::Simulator sim(options);
        // A second thread parses alongside this one where a second CPU can run it.
        const unsigned threads = cachebook::usable_cpus() >= 2 ? 2 : 1;
        std::optional<cachebook::MissKinds> kinds;
        cachesim::Result result;
        if (classify) {
            // The trace is kept whole: the kinds need it again after the simulation.
            const auto records = cachesim::read_records(trace, skip_bad, threads, result);
            std::string lines;
            sim.feed(records, verbose ? &lines : nullptr);
            std::fwrite(lines.data(), 1, lines.size(), stdout);
            const auto addresses = cachesim::accesses_of(records, modify_once).addresses;
            kinds = cachebook::split_misses(sim.hierarchy().counts(0).misses, options.levels.front(), addresses);
        } else {
            result = sim.run(trace, skip_bad, threads, verbose ? stdout : nullptr);
        }

        const cachesim::Hierarchy& h = sim.hierarchy();
        fmt::print("{}\n", counts_text(h.counts(0)));
        for (int k = 1; k < h.levels(); ++k) {
            fmt::print("L{} {}", k + 1, counts_text(h.counts(k)));
            if (h.inclusion() == cachesim::Inclusion::Inclusive)
                fmt::print(" back-invalidations:{}", h.back_invalidations(k));
            fmt::print("\n");
        }
        if (kinds) fmt::print("{}\n", cachesim::kinds_line(*kinds));
        if (write_back) {
            for (int k = 0; k < h.levels(); ++k)
                fmt::print("L{} dirty-evictions:{}\n", k + 1, h.counts(k).dirty_evictions);
            fmt::print("memory-writebacks:{}\n", h.memory_writebacks());
        }
        for (std::size_t i = 0; i < options.regions.size(); ++i)
            for (int k = 0; k < h.levels(); ++k)
                fmt::print("region {} L{} {}\n", options.regions[i].name, k + 1,
                           counts_text(h.counts(k, sim.region_stream(i))));
        if (!options.regions.empty())
            for (int k = 0; k < h.levels(); ++k)
                fmt::print("region other L{} {}\n", k + 1, counts_text(h.counts(k, sim.other_stream())));
        if (result.skipped > 0)
            fmt::print(stderr, "{}: skipped {} malformed line{}; first: {}\n", kProgram, result.skipped,
                       result.skipped == 1 ? "" : "s", result.first_skipped);
        if (!cli.json_path().empty()) {
            nlohmann::json json = cachesim::to_json(sim, result);
            if (kinds) json["classify"] = cachesim::kinds_json(*kinds);
            cachebook::write_json(cli.json_path(), json);
        }
        return 0;
    });
}
