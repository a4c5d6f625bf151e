// gpu-gemm-peak: the best BF16 rate cuBLASLt reaches on large square GEMMs with random normal
// data, so that utilisation can be stated against what this GPU really does, not only against
// the data sheet.
#include "cuda_device.h"
#include "gemm_timing.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/gpu/layer_plan.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/scenario/gpu_names.h"
#include "kvbe/scenario/presets.h"
#include "probe_util.h"

namespace kvbe::gpu {
using probes::ExitCode;

probes::ProbeOutcome GemmPeakProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    GemmPeakSettings s = m_s;
    if (auto st = validate(s); !st) return reportFailure(sink, ExitCode::BadInput, st.message());
    auto dev = openDevice(s.device);
    if (!dev) return reportFailure(sink, ExitCode::CannotRun, dev.message());
    NvmlLibrary nvml;
    auto presets = Presets::loadBuiltin();
    if (!presets) return reportFailure(sink, ExitCode::Failed, presets.message());
    const auto presetKey = matchGpuPreset(dev->name);
    const GpuSpec* preset = presetKey ? presets->findGpu(*presetKey) : nullptr;

    nlohmann::ordered_json params;
    params["sizes"] = s.sizes;
    params["samples"] = s.samples;
    params["dtype"] = "bf16 in and out, fp32 accumulation (cuBLASLt, TN layout)";
    params["gpu"] = deviceJson(*dev, nvml);
    if (preset) params["preset"] = {{"key", *presetKey}, {"bf16_tflops", preset->bf16Flops / 1e12}};
    sink.begin(key(), params);

    auto runner = GemmRunner::create(std::size_t(kGemmWorkspaceBytes));
    if (!runner) return reportFailure(sink, ExitCode::CannotRun, runner.message());
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        return reportFailure(sink, ExitCode::CannotRun, "cannot create a CUDA stream");
    struct StreamGuard {
        cudaStream_t s;
        ~StreamGuard() { cudaStreamDestroy(s); }
    } guard{stream};

    probes::TextTable table;
    table.title =
        "BF16 GEMM rate (cuBLASLt), TFLOP/s, median of " + std::to_string(s.samples) + " samples";
    table.columns = {"m = n = k", "TFLOP/s", "min", "max", "of data sheet"};
    double best = 0;
    int bestSize = 0;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (size_t i = 0; i < s.sizes.size(); ++i) {
        if (probes::stopRequested())
            return reportFailure(sink, ExitCode::Stopped, probes::stopMessage());
        const int n = s.sizes[i];
        sink.progress(double(i) / double(s.sizes.size()), std::to_string(n) + "³ GEMM");
        // The first size warms the GPU up to its working clocks for a second.
        auto t = timeSquareGemm(**runner, n, s.samples, i == 0 ? 1.0 : 0.2, stream);
        if (!t) return reportFailure(sink, ExitCode::Failed, t.message());
        if (t->medianTflops > best) {
            best = t->medianTflops;
            bestSize = n;
        }
        probes::ProbePoint p;
        p.series = series::kGemm;
        p.x = n;
        p.y = t->medianTflops;
        p.unit = "TFLOP/s";
        p.meta["samples"] = t->tflops;
        p.meta["gemms_per_sample"] = t->gemmsPerSample;
        if (auto tel = nvml.query(dev->pciBusId)) p.meta["gpu"] = toJson(*tel);
        sink.point(p);
        const auto [mn, mx] = std::minmax_element(t->tflops.begin(), t->tflops.end());
        table.rows.push_back({std::to_string(n), fixedDecimals(t->medianTflops, 1),
                              fixedDecimals(*mn, 1), fixedDecimals(*mx, 1),
                              percentOfDataSheet(preset, t->medianTflops)});
        rows.push_back({{"size", n}, {"tflops", t->medianTflops}, {"samples", t->tflops}});
    }
    if (preset)
        table.footnotes.push_back(dataSheetFootnote(*preset));
    else
        table.footnotes.push_back("no preset matches '" + dev->name +
                                  "', so there is no data-sheet peak to compare with");
    sink.table(table);

    nlohmann::ordered_json summary;
    summary["peak_tflops"] = best;
    summary["best_size"] = bestSize;
    if (preset) {
        summary["preset"] = *presetKey;
        summary["preset_bf16_tflops"] = preset->bf16Flops / 1e12;
        summary["fraction_of_preset"] = best * 1e12 / preset->bf16Flops;
    }
    summary["rows"] = rows;
    summary["gpu"] = deviceJson(*dev, nvml);
    sink.result(summary);
    return {};
}

} // namespace kvbe::gpu
