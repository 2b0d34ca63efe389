// bench_cache: how many accesses per second the cache models simulate, the
// plain model of common/ (cachebook::Cache, the chapters') and cachesim's
// fast engine (tools/cachesim/fast_cache.hpp), one access at a time.
// Three address streams through a 32 KiB, 8-way, 64-byte-line LRU cache:
// a row walk (mostly hits), a column walk (mostly misses) and the ijk matmul trace.
#include <fmt/format.h>

#include <vector>

#include "cachebook/cache.hpp"
#include "cachebook/cli.hpp"
#include "cachebook/cpu_time.hpp"
#include "cachebook/measure.hpp"
#include "cachebook/report.hpp"
#include "cachebook/trace.hpp"
#include "fast_cache.hpp"

namespace {

struct Workload {
    std::string name;
    std::vector<std::uint64_t> addresses;
};

// Thread CPU time beside wall time: on a shared machine it leaves out the
// time other processes held the core.
std::vector<Workload> workloads(std::size_t n) {
    std::vector<Workload> w;
    w.push_back({"row walk", cachebook::row_major_trace(n)});
    w.push_back({"column walk", cachebook::col_major_trace(n)});
    std::vector<std::uint64_t> mm;
    const std::size_t m = 128;
    cachebook::for_each_matmul_access(cachebook::LoopOrder::ijk, m, 8, cachebook::MatmulLayout::packed(m, 8, 64),
                                      [&](const cachebook::Access& a) { mm.push_back(a.address); });
    w.push_back({"ijk matmul", std::move(mm)});
    return w;
}

}  // namespace

int main(int argc, char** argv) {
    return cachebook::guarded_main("bench_cache", [&] {
        cachebook::Cli cli(
            "bench_cache",
            "Simulated accesses per second of the plain cache model and of cachesim's engine (8-way LRU)");
        std::int64_t runs = 5;
        cli.add_int("--runs", runs, "Timed runs per workload (the minimum is reported)", 1, 1000);
        if (auto status = cli.parse(argc, argv)) return *status;
        const std::size_t n = cli.quick() ? 512 : 2048;
        const cachebook::CacheConfig config{64, 8, 64};
        nlohmann::json out = {{"cache", config.describe()}, {"workloads", nlohmann::json::array()}};
        cachebook::Table table(
            {"workload", "engine", "accesses", "miss rate", "best wall s", "best cpu s", "M accesses/s (cpu)"});
        auto bench = [&](const Workload& w, const char* engine, auto& cache) {
            double best_cpu = 1e300;
            const auto t = cachebook::time_runs(static_cast<int>(runs), [&] {
                const double cpu0 = cachebook::thread_cpu_seconds();
                cache.reset();
                for (std::uint64_t a : w.addresses) cache.access(a);
                cachebook::do_not_optimize(cache.total());
                best_cpu = std::min(best_cpu, cachebook::thread_cpu_seconds() - cpu0);
            });
            const double rate = static_cast<double>(w.addresses.size()) / best_cpu;
            table.row({w.name, engine, fmt::format("{}", w.addresses.size()),
                       fmt::format("{:.3f}", cache.total().miss_rate()), fmt::format("{:.4f}", t.min()),
                       fmt::format("{:.4f}", best_cpu), fmt::format("{:.0f}", rate / 1e6)});
            out["workloads"].push_back({{"name", w.name},
                                        {"engine", engine},
                                        {"accesses", w.addresses.size()},
                                        {"miss_rate", cache.total().miss_rate()},
                                        {"best_wall_seconds", t.min()},
                                        {"best_cpu_seconds", best_cpu},
                                        {"accesses_per_second", rate}});
        };
        for (const auto& w : workloads(n)) {
            cachebook::Cache plain(config);
            bench(w, "plain", plain);
            cachesim::FastCache fast(config);
            bench(w, "fast", fast);
        }
        fmt::print("Cache model throughput, {}\n\n{}", config.describe(), table.render());
        if (!cli.json_path().empty()) cachebook::write_json(cli.json_path(), out);
        return 0;
    });
}
