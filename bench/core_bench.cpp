// Recomputes every curve of the default scenario, as the explorer does on each slider move:
// 512 prompt lengths × 6 tiers, a 200 × 100 frontier grid and a 20-model size sweep.
// Target: at most 1 ms on one core. Prints the ratio to that budget.
#include "kvbe/cost/curves.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdio>
#include <stdexcept>

namespace {

struct Fixture {
    kvbe::Presets presets;
    kvbe::Evaluation eval;
    std::vector<kvbe::ModelSpec> models;
    std::vector<double> lengths, frontierLengths, fractions;
};

Fixture& fixture() {
    static Fixture* f = [] {
        auto presets = kvbe::Presets::loadBuiltin();
        if (!presets) throw std::runtime_error(presets.message());
        auto s = kvbe::defaultScenario(*presets);
        if (!s) throw std::runtime_error(s.message());
        // Six tiers: the default three plus three more presets.
        for (const char* key : {"dram-pcie4", "nvme-gen5-raid4", "net-100g"})
            s->tiers.push_back(kvbe::tierFromPreset(*presets->findTier(key)));
        auto e = kvbe::evaluate(*s, *presets);
        if (!e) throw std::runtime_error(e.message());
        auto* fx = new Fixture{std::move(*presets), std::move(*e), {}, {}, {}, {}};
        // 20 models: the shipped presets, padded with copies (the sweep's cost is per model).
        while (fx->models.size() < 20)
            for (const auto& m : fx->presets.models())
                if (fx->models.size() < 20) fx->models.push_back(m.spec);
        fx->lengths = kvbe::lengthGrid(256, 131072, 512, true);
        fx->frontierLengths = kvbe::lengthGrid(256, 131072, 200, true);
        for (int j = 0; j < 100; ++j)
            fx->fractions.push_back((j + 0.5) / 100.0);
        return fx;
    }();
    return *f;
}

void BM_DefaultScenarioAllCurves(benchmark::State& state) {
    auto& f = fixture();
    const auto start = std::chrono::steady_clock::now();
    for (auto _ : state) {
        auto curves = kvbe::computeCurves(f.eval.cost, f.eval.tiers, f.lengths, 0.5);
        auto frontier =
            kvbe::computeFrontier(f.eval.cost, f.eval.tiers[1], f.frontierLengths, f.fractions);
        auto sweep = kvbe::modelSweep(f.eval.cost.inputs(), f.models, 32768, std::nullopt);
        benchmark::DoNotOptimize(curves);
        benchmark::DoNotOptimize(frontier);
        benchmark::DoNotOptimize(sweep);
    }
    // Time per full recompute over the 1 ms budget: below 1 is within budget.
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
    state.counters["budget_ratio"] = spent.count() / static_cast<double>(state.iterations()) / 1e-3;
}
BENCHMARK(BM_DefaultScenarioAllCurves)->Unit(benchmark::kMicrosecond);

void BM_CurvesOnly(benchmark::State& state) {
    auto& f = fixture();
    for (auto _ : state)
        benchmark::DoNotOptimize(kvbe::computeCurves(f.eval.cost, f.eval.tiers, f.lengths, 0.5));
}
BENCHMARK(BM_CurvesOnly)->Unit(benchmark::kMicrosecond);

void BM_Frontier(benchmark::State& state) {
    auto& f = fixture();
    for (auto _ : state)
        benchmark::DoNotOptimize(
            kvbe::computeFrontier(f.eval.cost, f.eval.tiers[1], f.frontierLengths, f.fractions));
}
BENCHMARK(BM_Frontier)->Unit(benchmark::kMicrosecond);

void BM_ModelSweep(benchmark::State& state) {
    auto& f = fixture();
    for (auto _ : state)
        benchmark::DoNotOptimize(
            kvbe::modelSweep(f.eval.cost.inputs(), f.models, 32768, std::nullopt));
}
BENCHMARK(BM_ModelSweep)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
