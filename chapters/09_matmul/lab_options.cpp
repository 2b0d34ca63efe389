// Chapter 9's lab: the command line read into Settings, and the machine described in words.
#include <fmt/format.h>

#include <stdexcept>

#include "cachebook/cli.hpp"
#include "cachebook/machine.hpp"
#include "lab.hpp"

namespace ch09 {

namespace {

Isa parse_isa(const std::string& name) {
    if (name.empty()) return best_isa();
    for (Isa isa : kAllIsas)
        if (isa_name(isa) == name) {
            if (!isa_supported(isa))
                throw cachebook::UsageError(fmt::format("--isa {}: {}", name, isa_unavailable_reason(isa)));
            return isa;
        }
    throw cachebook::UsageError(fmt::format("--isa: expected scalar, avx2, avx512 or neon, got '{}'", name));
}

MicroKernel parse_kernel(const std::string& name, Isa isa) {
    if (name.empty()) return default_micro_kernel(isa);
    std::string known;
    for (Isa i : kAllIsas)
        for (const auto& k : micro_kernels(i)) {
            if (k.name == name && !isa_supported(i))
                throw cachebook::UsageError(fmt::format("--kernel '{}': this CPU cannot run it", name));
            if (k.name == name) return k;
            if (isa_supported(i)) known += (known.empty() ? "" : ", ") + k.name;
        }
    throw cachebook::UsageError(fmt::format("--kernel: expected one of {}; got '{}'", known, name));
}

MeasuredCaches parse_caches(const std::string& path) {
    try {
        return read_measured_caches(path);
    } catch (const std::invalid_argument& e) {
        throw cachebook::UsageError(fmt::format("--caches {}: {}", path, e.what()));
    }
}

std::optional<std::size_t> given(const CLI::Option* flag, std::int64_t value) {
    return flag->count() ? std::optional<std::size_t>(static_cast<std::size_t>(value)) : std::nullopt;
}

}  // namespace

std::optional<int> parse_settings(cachebook::Cli& cli, Settings& o, int argc, char** argv) {
    std::int64_t n = 2048, threads = cachebook::usable_cpus(), tile = 32, runs = 3, mc = 0, kc = 0, nc = 0;
    std::string isa, kernel;
    auto* n_flag = cli.add_int("--n", n, "Order N of the N x N matrices (--quick: 512)", 1, 8192);
    cli.add_int("--threads", threads, "Threads for steps 5 to 7 (default: every usable CPU)", 1, 256);
    auto* tile_flag = cli.add_int("--tile", tile, "Tile of steps 3 to 5 (default: from the L1 size)", 1, 4096);
    auto* runs_flag =
        cli.add_int("--runs", runs,
                    "Timed runs per figure at most: two, then more while half a second lasts; the minimum is "
                    "reported (--quick: 2)",
                    1, 100);
    cli.add_string("--isa", isa, "Kernels to use: scalar, avx2, avx512 or neon (default: the widest this CPU has)");
    cli.add_string("--kernel", kernel, "Micro-kernel of step 6, e.g. 'avx2 6x16' (default: the isa's first)");
    auto* mc_flag = cli.add_int("--mc", mc, "Step 6's MC (default: the rule, then a short search)", 1, 1 << 16);
    auto* kc_flag = cli.add_int("--kc", kc, "Step 6's KC (default: the rule, then a short search)", 1, 1 << 16);
    auto* nc_flag = cli.add_int("--nc", nc, "Step 6's NC (default: the rule, then a short search)", 1, 1 << 16);
    cli.add_string("--caches", o.caches_path,
                   "Results of ch08_cliff --json: step 6's blocks from the caches chapter 8 measured");
    cli.app().add_flag("--sweep-tiles", o.sweep_tiles, "Also time steps 3 and 4 for tiles 8 to 256");
    cli.app().add_flag("--sweep-threads", o.sweep_threads, "Also time steps 5 and 6 for 1 to --threads threads");
    cli.app().add_flag("--sweep-kernels", o.sweep_kernels, "Also time step 6 with every micro-kernel (register block)");
    cli.app().add_flag("--no-blas", o.no_blas, "Skip step 7 (OpenBLAS and BLIS)");
    auto* child_flag = cli.app().add_flag("--blas-child", o.child,
                                          "Internal: time step 6, OpenBLAS and BLIS side by side, print one JSON line");
    cli.app()
        .add_flag("--blas-probe", o.probe, "Internal, with --blas-child: time OpenBLAS alone, once per thread count")
        ->needs(child_flag);
    if (auto status = cli.parse(argc, argv)) return status;
    o.quick = cli.quick();
    o.n = static_cast<std::size_t>(o.quick && n_flag->count() == 0 ? 512 : n);
    o.threads = static_cast<int>(threads);
    o.runs = static_cast<int>(o.quick && runs_flag->count() == 0 ? 2 : runs);
    o.isa = parse_isa(isa);
    o.kernel = parse_kernel(kernel, o.isa);
    o.tile = given(tile_flag, tile);
    o.mc = given(mc_flag, mc), o.kc = given(kc_flag, kc), o.nc = given(nc_flag, nc);
    if (o.tile && *o.tile > o.n)
        throw cachebook::UsageError(fmt::format("--tile {} is larger than --n {}", *o.tile, o.n));
    if (!o.caches_path.empty()) o.measured_caches = parse_caches(o.caches_path);
    cachebook::require_memory(3 * o.n * o.n * sizeof(float) * 2, fmt::format("--n {}", o.n));
    return std::nullopt;
}

std::string level_name(int level) {
    return level == 1 ? "L1d" : fmt::format("L{}", level);
}

// "L1d hwloc, L2 hwloc, L3 hwloc", and why any level is unknown.
std::string cache_sources(const cachebook::Machine& machine) {
    std::string s, missing;
    for (int level = 1; level <= 3; ++level) {
        const auto c = machine.data_cache(level);
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", level_name(level),
                         cachebook::source_name(c ? c->source : cachebook::Source::unknown));
        if (!c) missing += (missing.empty() ? "" : ", ") + level_name(level);
    }
    return missing.empty() ? s : s + "; " + machine.why_unknown(missing);
}

// The vector instructions the kernels choose between, as this architecture names them.
std::string instruction_sets(const cachebook::CpuFeatures& f) {
    auto yes = [](bool b) { return b ? "yes" : "no"; };
#if defined(__aarch64__)
    return fmt::format("NEON {} (with FMA)", yes(f.neon));
#else
    return fmt::format("AVX2 {}, FMA {}, AVX-512 {}", yes(f.avx2), yes(f.fma), yes(f.avx512f));
#endif
}

// What steps 4 and 5 run: the vector kernel, or the scalar fallback and why.
std::string steps45_kernel(Isa isa) {
    if (isa == Isa::Avx2 || isa == Isa::Avx512) return "avx2 + fma";
    if (isa == Isa::Neon) return "neon fma";
#if defined(__aarch64__)
    constexpr Isa vector = Isa::Neon;
#else
    constexpr Isa vector = Isa::Avx2;
#endif
    return isa_supported(vector) ? "scalar, as --isa asks" : "scalar fallback, " + isa_unavailable_reason(vector);
}

}  // namespace ch09
