#include "cachesim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>

#include "cachebook/cli.hpp"
#include "cachebook/trace.hpp"

namespace cachesim {

using cachebook::UsageError;

namespace {

// A whole number, decimal or 0x-hex, and nothing else.
bool parse_number(std::string_view text, std::uint64_t& value) {
    int base = 10;
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        text.remove_prefix(2);
        base = 16;
    }
    if (text.empty()) return false;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    return error == std::errc{} && end == text.data() + text.size();
}

std::string level_name(std::size_t k) {
    return fmt::format("L{}", k + 1);
}

}  // namespace

Region parse_region(std::string_view text) {
    const auto first = text.find(':');
    const auto second = first == std::string_view::npos ? first : text.find(':', first + 1);
    if (second == std::string_view::npos || text.find(':', second + 1) != std::string_view::npos)
        throw UsageError(fmt::format("--region: expected name:start:length, got '{}'", text));
    Region r;
    r.name = std::string(text.substr(0, first));
    if (r.name.empty()) throw UsageError(fmt::format("--region: empty name in '{}'", text));
    if (r.name == "all" || r.name == "other")
        throw UsageError(fmt::format("--region: the name '{}' is taken (all, other)", r.name));
    if (!parse_number(text.substr(first + 1, second - first - 1), r.start))
        throw UsageError(fmt::format("--region: bad start address in '{}' (decimal or 0x-hex)", text));
    if (!parse_number(text.substr(second + 1), r.length) || r.length == 0)
        throw UsageError(fmt::format("--region: bad length in '{}' (a positive number)", text));
    if (r.start + r.length < r.start)  // wraps past 2^64
        throw UsageError(fmt::format("--region: '{}' runs past the end of the address space", text));
    return r;
}

cachebook::CacheConfig geometry(std::int64_t set_bits, std::int64_t ways, std::int64_t block_bits,
                                cachebook::Policy policy, std::uint64_t seed) {
    if (set_bits < 0 || set_bits > 28)
        throw UsageError(fmt::format("set-index bits must be 0 to 28, got {}", set_bits));
    if (ways < 1 || ways > (std::int64_t{1} << 28))
        throw UsageError(fmt::format("lines per set must be 1 to 2^28, got {}", ways));
    if (block_bits < 0 || block_bits > 20)
        throw UsageError(fmt::format("block bits must be 0 to 20, got {}", block_bits));
    cachebook::CacheConfig c;
    c.sets = std::size_t{1} << set_bits;
    c.ways = static_cast<std::size_t>(ways);
    c.line_bytes = std::size_t{1} << block_bits;
    c.policy = policy;
    c.seed = seed;
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    return c;
}

cachebook::CacheConfig parse_level(std::string_view option, std::string_view text, cachebook::Policy policy,
                                   std::uint64_t seed) {
    std::array<std::int64_t, 3> v{};
    std::size_t at = 0;
    for (std::size_t i = 0; i < 3; ++i) {
        const auto comma = i < 2 ? text.find(',', at) : text.size();
        std::uint64_t x = 0;
        if (comma == std::string_view::npos || !parse_number(text.substr(at, comma - at), x) || x > (1u << 30))
            throw UsageError(
                fmt::format("{}: expected s,E,b (set bits, lines per set, block bits), got '{}'", option, text));
        v[i] = static_cast<std::int64_t>(x);
        at = comma + 1;
    }
    try {
        return geometry(v[0], v[1], v[2], policy, seed);
    } catch (const UsageError& e) {
        throw UsageError(fmt::format("{}: {}", option, e.what()));
    }
}

void require_fits(const cachebook::CacheConfig& config, std::string_view level) {
    // The model keeps a tag, a stamp and a dirty bit per line.
    cachebook::require_memory(config.lines() * (2 * sizeof(std::uint64_t) + 1),
                              fmt::format("the model of {} ({} lines)", level, config.lines()));
    cachebook::require_memory(config.capacity_bytes(), fmt::format("{} ({} sets x {} ways x {} B, larger than memory)",
                                                                   level, config.sets, config.ways, config.line_bytes));
}

Simulator::Simulator(const Options& options) : options_(options), hierarchy_(options.levels, options.inclusion) {
    std::vector<std::size_t> order(options_.regions.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        order[i] = i;
        region_streams_.push_back(hierarchy_.add_stream(options_.regions[i].name));
    }
    if (!options_.regions.empty()) other_stream_ = hierarchy_.add_stream("other");
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return options_.regions[a].start < options_.regions[b].start; });
    for (std::size_t i : order) {
        const Region& r = options_.regions[i];
        if (!sorted_.empty() && sorted_.back().start + sorted_.back().length > r.start)
            throw UsageError(fmt::format("--region: {} and {} overlap", sorted_.back().name, r.name));
        sorted_.push_back(r);
        sorted_stream_.push_back(region_streams_[i]);
    }
    batch_ = sorted_.empty() && !options_.split && hierarchy_.batch_ready();
}

int Simulator::stream_of(std::uint64_t address) const {
    // The last region starting at or before the address, if the address is inside it.
    auto it = std::upper_bound(sorted_.begin(), sorted_.end(), address,
                               [](std::uint64_t a, const Region& r) { return a < r.start; });
    if (it == sorted_.begin()) return other_stream_;
    --it;
    if (address - it->start < it->length) return sorted_stream_[static_cast<std::size_t>(it - sorted_.begin())];
    return other_stream_;
}

void Simulator::count(const std::array<std::uint64_t, 4>& kinds) {
    tally_.instructions += kinds[0];
    tally_.loads += kinds[1];
    tally_.stores += kinds[2];
    tally_.modifies += kinds[3];
}

void Simulator::feed(std::span<const LackeyRecord> records, std::string* verbose) {
    if (batch_ && !verbose) {
        // The common case (see batch_): the cache runs the records' references
        // in one tight loop, a block at a time so they stay in cache.
        constexpr std::size_t kBlock = 4096;
        std::array<std::uint64_t, 4> kinds{};
        for (std::size_t at = 0; at < records.size(); at += kBlock) {
            refs_.clear();
            lackey_refs(records.subspan(at, std::min(kBlock, records.size() - at)), options_.modify_once, refs_, kinds);
            hierarchy_.access_batch(refs_.data(), refs_.size());
        }
        count(kinds);
        return;
    }
    const bool regions = !sorted_.empty();
    const bool split = options_.split;
    const bool once = options_.modify_once;
    Hierarchy& h = hierarchy_;
    for (const LackeyRecord& r : records) {
        const std::uint32_t size = split ? r.size : 1;
        const int stream = regions ? stream_of(r.address) : 0;
        HierarchyResult first, second;
        bool two = false;
        switch (r.op) {
            case 'L':
                ++tally_.loads;
                first = h.access(r.address, size, false, stream);
                break;
            case 'S':
                ++tally_.stores;
                first = h.access(r.address, size, true, stream);
                break;
            case 'M':
                ++tally_.modifies;
                if (once) {
                    first = h.access(r.address, size, true, stream);
                } else {
                    first = h.access(r.address, size, false, stream);
                    second = h.access(r.address, size, true, stream);
                    two = true;
                }
                break;
            default:
                ++tally_.instructions;
                continue;
        }
        if (!verbose) continue;
        auto out = std::back_inserter(*verbose);
        fmt::format_to(out, "{} {:x},{}", r.op, r.address, r.size);
        for (int k = 0; k < (two ? 2 : 1); ++k) {
            const HierarchyResult& x = k == 0 ? first : second;
            verbose->append(x.level == 0 ? " hit" : " miss");
            for (std::uint32_t e = 0; e < x.l1_evictions; ++e) verbose->append(" eviction");
            for (int lower = 1; x.level > 0 && lower < h.levels(); ++lower) {
                fmt::format_to(out, " L{}:{}", lower + 1, x.level == lower ? "hit" : "miss");
                if (x.level == lower) break;
            }
        }
        verbose->push_back('\n');
    }
}

Result Simulator::run(const std::string& path, bool skip_bad, unsigned threads, std::FILE* verbose_out) {
    LackeyTotals totals;
    if (batch_ && !verbose_out) {
        // The parser writes the references themselves: no records in between.
        totals = read_lackey_refs(
            path, skip_bad, threads, options_.modify_once,
            [&](std::span<const std::uint64_t> refs) { hierarchy_.access_batch(refs.data(), refs.size()); });
        count(totals.kinds);
    } else {
        std::string verbose;
        std::string* const sink = verbose_out ? &verbose : nullptr;
        totals = read_lackey(path, skip_bad, threads, [&](std::span<const LackeyRecord> records) {
            feed(records, sink);
            if (verbose_out && verbose.size() > (1u << 16)) {
                std::fwrite(verbose.data(), 1, verbose.size(), verbose_out);
                verbose.clear();
            }
        });
        if (verbose_out) std::fwrite(verbose.data(), 1, verbose.size(), verbose_out);
    }
    Result r = tally_;
    r.lines = totals.lines;
    r.skipped = totals.skipped;
    r.first_skipped = totals.first_skipped;
    return r;
}

std::vector<LackeyRecord> read_records(const std::string& path, bool skip_bad, unsigned threads, Result& result) {
    std::vector<LackeyRecord> records;
    const LackeyTotals totals = read_lackey(path, skip_bad, threads, [&](std::span<const LackeyRecord> batch) {
        const std::size_t wanted = records.size() + batch.size();
        if (wanted > records.capacity())  // the vector will grow to about twice its size
            cachebook::require_memory(2 * wanted * sizeof(LackeyRecord), "keeping the whole trace");
        records.insert(records.end(), batch.begin(), batch.end());
    });
    result = Result{};
    for (const LackeyRecord& r : records) {
        if (r.op == 'L') ++result.loads;
        if (r.op == 'S') ++result.stores;
        if (r.op == 'M') ++result.modifies;
        if (r.op == 'I') ++result.instructions;
    }
    result.lines = totals.lines;
    result.skipped = totals.skipped;
    result.first_skipped = totals.first_skipped;
    return records;
}

Accesses accesses_of(std::span<const LackeyRecord> records, bool modify_once) {
    // Per access the offline runs keep its address, its line, its next use and a share of
    // the table of lines seen: about 48 bytes. Refuse a trace whose accesses cannot all be held.
    cachebook::require_memory(2 * records.size() * 48,
                              fmt::format("--policy opt and --classify on {} records", records.size()));
    Accesses a;
    const auto add = [&a](std::uint64_t address, bool write) {
        a.addresses.push_back(address);
        a.writes.push_back(write);
    };
    for (const LackeyRecord& r : records) {
        if (r.op == 'L' || (r.op == 'M' && !modify_once)) add(r.address, false);
        if (r.op == 'S' || r.op == 'M') add(r.address, true);
    }
    return a;
}

std::string kinds_line(const cachebook::MissKinds& kinds) {
    return fmt::format("compulsory:{} capacity:{} conflict:{}", kinds.compulsory, kinds.capacity, kinds.conflict);
}

std::string summary_line(const cachebook::Counts& c) {
    return fmt::format("hits:{} misses:{} evictions:{}", c.hits, c.misses, c.evictions);
}

namespace {

nlohmann::json counts_json(const cachebook::Counts& c) {
    return nlohmann::json{{"hits", c.hits},
                          {"misses", c.misses},
                          {"evictions", c.evictions},
                          {"dirty_evictions", c.dirty_evictions},
                          {"miss_rate", c.miss_rate()}};
}

nlohmann::json level_json(const cachebook::CacheConfig& c) {
    return {{"sets", c.sets}, {"ways", c.ways}, {"line_bytes", c.line_bytes}, {"capacity_bytes", c.capacity_bytes()}};
}

nlohmann::json records_json(const Result& result) {
    return {{"I", result.instructions}, {"L", result.loads}, {"S", result.stores}, {"M", result.modifies}};
}

}  // namespace

nlohmann::json kinds_json(const cachebook::MissKinds& kinds) {
    return {{"misses", kinds.misses},
            {"compulsory", kinds.compulsory},
            {"capacity", kinds.capacity},
            {"conflict", kinds.conflict}};
}

nlohmann::json optimal_json(const cachebook::CacheConfig& l1, const cachebook::Counts& counts, const Result& result,
                            bool modify_once) {
    nlohmann::json level = counts_json(counts);
    level.update(level_json(l1));
    level["name"] = level_name(0);
    level["policy"] = "opt";
    level["back_invalidations"] = 0;
    return {{"levels", nlohmann::json::array({level})},
            {"inclusion", "non-inclusive"},
            {"split", false},
            {"modify_once", modify_once},
            {"lines", result.lines},
            {"records", records_json(result)},
            {"skipped", result.skipped},
            {"memory_writebacks", counts.dirty_evictions}};
}

nlohmann::json to_json(const Simulator& sim, const Result& result) {
    const Hierarchy& h = sim.hierarchy();
    const auto counts = counts_json;
    nlohmann::json levels = nlohmann::json::array();
    for (int k = 0; k < h.levels(); ++k) {
        const cachebook::CacheConfig& c = h.cache(k).config();
        nlohmann::json level = counts(h.counts(k));
        level.update(level_json(c));
        level["name"] = level_name(static_cast<std::size_t>(k));
        level["policy"] = cachebook::policy_name(c.policy);
        level["back_invalidations"] = h.back_invalidations(k);
        if (!sim.options().regions.empty()) {
            nlohmann::json regions = nlohmann::json::object();
            for (std::size_t i = 0; i < sim.options().regions.size(); ++i)
                regions[sim.options().regions[i].name] = counts(h.counts(k, sim.region_stream(i)));
            regions["other"] = counts(h.counts(k, sim.other_stream()));
            level["regions"] = regions;
        }
        levels.push_back(level);
    }
    return {{"levels", levels},
            {"inclusion", h.inclusion() == Inclusion::Inclusive ? "inclusive" : "non-inclusive"},
            {"split", sim.options().split},
            {"modify_once", sim.options().modify_once},
            {"lines", result.lines},
            {"records", records_json(result)},
            {"skipped", result.skipped},
            {"memory_writebacks", h.memory_writebacks()}};
}

void write_transpose_trace(std::FILE* out, std::size_t n) {
    std::string text;
    text.reserve(1 << 17);
    cachebook::for_each_transpose_access(n, 0, 4, [&](const cachebook::Access& a) {
        fmt::format_to(std::back_inserter(text), " {} {:08x},4\n", a.write ? 'S' : 'L', a.address);
        if (text.size() > (1 << 16)) {
            if (std::fwrite(text.data(), 1, text.size(), out) != text.size())
                throw std::runtime_error("cannot write the trace");
            text.clear();
        }
    });
    if (std::fwrite(text.data(), 1, text.size(), out) != text.size())
        throw std::runtime_error("cannot write the trace");
}

}  // namespace cachesim
