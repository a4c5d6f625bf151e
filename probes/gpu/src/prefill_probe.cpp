// gpu-prefill: the model's prefill time on this GPU, from one synthetic layer of each kind at
// the model's real shapes (layer_plan.h). One layer's weights stand for all of them, so even a
// 405B model is timed on one GPU; the FLOPs are core's detailed count, so the TFLOP/s here and
// the cost model's utilisation mean the same thing.
#include "cuda_device.h"
#include "flash_attention.h"
#include "gemm_timing.h"
#include "kvbe/base/units.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/gpu/layer_plan.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/scenario/gpu_names.h"
#include "kvbe/scenario/presets.h"
#include "prefill_runner.h"
#include "probe_util.h"

namespace kvbe::gpu {
using probes::ExitCode;

namespace {

// CUDA context growth, cuBLASLt, fragmentation.
constexpr double kHeadroomBytes = 512.0 * 1024 * 1024;

std::string gb(double bytes) {
    return fixedDecimals(bytes / 1e9, 1) + " GB";
}

nlohmann::ordered_json planJson(const LayerPlan& plan) {
    nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
    for (const auto& b : plan.blocks) {
        nlohmann::ordered_json j;
        j["name"] = b.name;
        j["layers"] = b.layers;
        nlohmann::ordered_json ops = nlohmann::ordered_json::array();
        for (const auto& g : b.gemms)
            ops.push_back({{"name", g.name},
                           {"n", g.n},
                           {"k", g.k},
                           {"rows_per_token", g.rowsPerToken},
                           {"instances", g.instances}});
        for (const auto& a : b.attention)
            ops.push_back({{"name", "attention"},
                           {"mask", a.label()},
                           {"q_heads", a.qHeads},
                           {"kv_heads", a.kvHeads},
                           {"d_qk", a.dQk},
                           {"d_v", a.dV}});
        j["ops"] = ops;
        blocks.push_back(j);
    }
    return blocks;
}

} // namespace

probes::ProbeOutcome PrefillProbe::run(const probes::ProbeOptions& options,
                                       probes::ProbeSink& sink) {
    PrefillSettings s = m_s;
    if (s.model.empty()) s.model = options.model;
    if (auto st = validate(s); !st) return reportFailure(sink, ExitCode::BadInput, st.message());
    auto presets = Presets::loadBuiltin();
    if (!presets) return reportFailure(sink, ExitCode::Failed, presets.message());
    auto model = resolveModel(s.model, *presets);
    if (!model)
        return reportFailure(sink, ExitCode::BadInput,
                             "--model " + s.model + ": " + model.message());
    auto plan = buildLayerPlan(*model);
    if (!plan)
        return reportFailure(sink, ExitCode::BadInput,
                             "--model " + s.model + ": " + plan.message());
    for (const auto& b : plan->blocks)
        for (const auto& a : b.attention)
            if (!attentionSupports(a.dQk, a.dV))
                return reportFailure(
                    sink, ExitCode::CannotRun,
                    model->id + " has attention head dims " + std::to_string(a.dQk) + "/" +
                        std::to_string(a.dV) +
                        ", which the attention kernel is not built for (64, 128, 256, "
                        "MLA 192/128)");
    if (!s.gpuPreset.empty() && !presets->findGpu(s.gpuPreset))
        return reportFailure(sink, ExitCode::BadInput,
                             "--gpu-preset " + s.gpuPreset +
                                 " is not a preset; presets: " + presets->gpuKeys());

    auto dev = openDevice(s.device);
    if (!dev) return reportFailure(sink, ExitCode::CannotRun, dev.message());
    NvmlLibrary nvml;
    const std::string presetKey =
        !s.gpuPreset.empty() ? s.gpuPreset : matchGpuPreset(dev->name).value_or("");
    const GpuSpec* preset = presetKey.empty() ? nullptr : presets->findGpu(presetKey);

    // The memory check, before anything is allocated.
    auto mem = deviceMemory();
    if (!mem) return reportFailure(sink, ExitCode::CannotRun, mem.message());
    const double freeBytes = double(mem->first);
    const std::int64_t longest = s.lengths.back();
    const MemoryEstimate need = estimateMemory(*plan, longest);
    if (need.totalBytes() + kHeadroomBytes > freeBytes) {
        std::int64_t fits = 0;
        for (auto n : s.lengths)
            if (estimateMemory(*plan, n).totalBytes() + kHeadroomBytes <= freeBytes) fits = n;
        std::string advice =
            fits > 0
                ? "; lengths up to " + std::to_string(fits) + " tokens fit"
                : "; even its shortest length does not fit, so free GPU memory or use a larger GPU";
        return reportFailure(sink, ExitCode::CannotRun,
                             model->id + " at " + std::to_string(longest) + " tokens needs " +
                                 gb(need.totalBytes() + kHeadroomBytes) +
                                 " of GPU memory (one layer of weights and the lm_head " +
                                 gb(need.weightBytes) + ", activations " +
                                 gb(need.activationBytes) + ") but only " + gb(freeBytes) +
                                 " is free" + advice);
    }

    CostInputs ci;
    ci.model = *model;
    ci.flopModel = FlopModel::Detailed;
    ci.peakFlops = preset ? preset->bf16Flops : 1e15; // only flops() is used here
    ci.utilisation = 1;
    auto cost = CostModel::create(ci);
    if (!cost) return reportFailure(sink, ExitCode::BadInput, cost.message());

    nlohmann::ordered_json params;
    params["model"] = model->id;
    params["model_source"] = model->source;
    params["lengths"] = s.lengths;
    params["samples"] = s.samples;
    params["flop_model"] = "detailed";
    params["plan"] = planJson(*plan);
    params["memory_bytes"] = {{"weights", need.weightBytes},
                              {"activations", need.activationBytes},
                              {"workspace", need.workspaceBytes},
                              {"free", freeBytes}};
    params["not_timed"] = "norms, RoPE, activations functions, residual adds, MoE routing and "
                          "gathers (elementwise work)";
    if (preset) params["preset"] = {{"key", presetKey}, {"bf16_tflops", preset->bf16Flops / 1e12}};
    params["gpu"] = deviceJson(*dev, nvml);
    sink.begin(key(), params);

    // The GEMM peak first, so that its operands are freed before the layer is allocated.
    double gemmPeak = s.gemmPeakTflops.value_or(0);
    std::string gemmPeakSource = "given with --gemm-peak-tflops";
    if (!s.gemmPeakTflops) {
        sink.progress(0, "measuring the BF16 GEMM peak (8192³)");
        auto gemm = GemmRunner::create(std::size_t(kGemmWorkspaceBytes));
        if (!gemm) return reportFailure(sink, ExitCode::CannotRun, gemm.message());
        cudaStream_t stream = nullptr;
        cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
        auto t = timeSquareGemm(**gemm, 8192, 5, 1.0, stream);
        cudaStreamDestroy(stream);
        if (!t) return reportFailure(sink, ExitCode::Failed, t.message());
        gemmPeak = t->medianTflops;
        gemmPeakSource = "measured here, 8192³ cuBLASLt BF16";
    }

    auto runner = PrefillRunner::create(*plan, longest);
    if (!runner) return reportFailure(sink, ExitCode::CannotRun, runner.message());

    probes::TextTable table;
    table.title =
        model->id + ": prefill on " + dev->name + " (one synthetic layer per kind, × layers)";
    table.columns = {"tokens",        "t_prefill",    "TFLOP/s",
                     "of data sheet", "of GEMM peak", "attention share"};
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    const double steps = double(s.lengths.size() * (plan->blocks.size() + 1));
    double done = 0;
    for (const auto n : s.lengths) {
        double total = 0, attention = 0;
        nlohmann::ordered_json blocks = nlohmann::ordered_json::array();
        for (size_t bi = 0; bi < plan->blocks.size(); ++bi) {
            if (probes::stopRequested())
                return reportFailure(sink, ExitCode::Stopped, probes::stopMessage());
            const Block& b = plan->blocks[bi];
            sink.progress(done++ / steps, std::to_string(n) + " tokens: " + b.name);
            auto t = (*runner)->timeBlock(bi, n, s.samples);
            if (!t)
                return reportFailure(sink, ExitCode::Failed,
                                     b.name + " at " + std::to_string(n) +
                                         " tokens: " + t.message());
            total += b.layers * t->seconds;
            if (b.kind == BlockKind::Attention) attention += b.layers * t->seconds;
            const double f = b.flops(n);
            blocks.push_back({{"name", b.name},
                              {"layers", b.layers},
                              {"seconds_per_layer", t->seconds},
                              {"flops_per_layer", f},
                              {"tflops", f / t->seconds / 1e12},
                              {"samples", t->samples},
                              {"runs_per_sample", t->runsPerSample}});
        }
        auto lm = (*runner)->timeLmHead(s.samples);
        if (!lm) return reportFailure(sink, ExitCode::Failed, "lm_head: " + lm.message());
        done += 1;
        total += lm->seconds;
        const double flops = cost->flops(double(n), 0);
        const double tflops = flops / total / 1e12;

        nlohmann::ordered_json r;
        r["tokens"] = n;
        r["t_prefill_s"] = total;
        r["flops"] = flops;
        r["tflops"] = tflops;
        if (preset) r["util_vs_preset"] = tflops * 1e12 / preset->bf16Flops;
        r["util_vs_gemm_peak"] = tflops / gemmPeak;
        r["attention_s"] = attention;
        r["lm_head_s"] = lm->seconds;
        r["blocks"] = blocks;
        if (auto tel = nvml.query(dev->pciBusId)) r["gpu"] = toJson(*tel);
        results.push_back(r);

        const auto emit = [&](std::string_view name, double y, const char* unit) {
            probes::ProbePoint p;
            p.series = name;
            p.x = double(n);
            p.y = y;
            p.unit = unit;
            p.meta["model"] = model->id;
            if (r.contains("gpu")) p.meta["gpu"] = r["gpu"];
            sink.point(p);
        };
        emit(series::kPrefill, total, "s");
        emit(series::kPrefillFlops, tflops, "TFLOP/s");
        if (preset) emit(series::kUtilVsPreset, tflops * 1e12 / preset->bf16Flops, "fraction");
        emit(series::kUtilVsGemmPeak, tflops / gemmPeak, "fraction");
        table.rows.push_back({std::to_string(n), formatSeconds(total), fixedDecimals(tflops, 1),
                              percentOfDataSheet(preset, tflops),
                              fixedDecimals(100 * tflops / gemmPeak, 1) + " %",
                              fixedDecimals(100 * attention / total, 1) + " %"});
    }
    table.footnotes.push_back("FLOPs: the detailed count (2·P_mm·N + 2·h·vocab + attention pairs), "
                              "as in docs/cost-model.md");
    table.footnotes.push_back("GEMM peak " + fixedDecimals(gemmPeak, 1) + " TFLOP/s, " +
                              gemmPeakSource);
    if (preset)
        table.footnotes.push_back(dataSheetFootnote(*preset));
    else
        table.footnotes.push_back("no GPU preset matches '" + dev->name +
                                  "': pass --gpu-preset for a data-sheet figure");
    table.footnotes.push_back(
        "not timed: norms, RoPE, activation functions, residual adds, MoE routing (elementwise)");
    sink.table(table);

    nlohmann::ordered_json summary;
    summary["model"] = model->id;
    summary["gemm_peak_tflops"] = gemmPeak;
    summary["gemm_peak_source"] = gemmPeakSource;
    if (preset) {
        summary["preset"] = presetKey;
        summary["preset_bf16_tflops"] = preset->bf16Flops / 1e12;
    }
    summary["prefill"] = results;
    summary["gpu"] = deviceJson(*dev, nvml);
    sink.result(summary);
    return {};
}

} // namespace kvbe::gpu
