// kvbe-cli probe gpu-copy | gpu-gemm-peak | gpu-prefill: the GPU probes (probes/gpu), with the
// same JSON Lines stream, table, exit codes and stop handling as the other probes.
#include "commands.h"
#include "probe_watchdog.h"

#include "kvbe/base/units.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace kvbe::cli {
namespace {

using namespace kvbe::probes;

struct GpuFlags {
    std::vector<std::string> sizes, lengths;
    std::string model, gpuPreset, format = "table";
    bool pinnedOnly = false, pageableOnly = false;
    int samples = 0, device = 0;
    std::string gemmPeak; // TFLOP/s
};

// A list flag given once with commas, repeated, or both: "1k,8k" "--lengths 32k".
std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : ",") + item;
    return out;
}

ExitCode badInput(const std::string& format, const std::string& key, const std::string& message) {
    std::cerr << "kvbe-cli: " << message << "\n";
    if (format == "jsonl") JsonlSink(std::cout, key).error(message);
    return ExitCode::BadInput;
}

// A CUDA kernel cannot be interrupted: the probe checks for a stop between kernels, and the
// process ends anyway two seconds after the signal.
ExitCode runGpuProbe(Probe& probe, const std::string& format) {
    auto sink = makeProbeSink(format, probe.key());
    return runProbeWithWatchdog(probe, ProbeOptions{}, *sink, std::chrono::milliseconds(2000));
}

ExitCode runCopy(const GpuFlags& f) {
    gpu::CopySettings s;
    if (!f.sizes.empty()) {
        auto sizes = parseWholeByteList(joined(f.sizes));
        if (!sizes) return badInput(f.format, "gpu-copy", "--sizes: " + sizes.message());
        s.sizes = *sizes;
    }
    s.model = f.model;
    s.pinned = !f.pageableOnly;
    s.pageable = !f.pinnedOnly;
    if (f.samples) s.samples = f.samples;
    s.device = f.device;
    gpu::GpuCopyProbe probe(s);
    return runGpuProbe(probe, f.format);
}

ExitCode runGemmPeak(const GpuFlags& f) {
    gpu::GemmPeakSettings s;
    if (!f.sizes.empty()) {
        // Counts ("8k" allowed); validate() then checks each is a size this probe runs.
        auto sizes = parseCountList(joined(f.sizes), 1, 1 << 20);
        if (!sizes) return badInput(f.format, "gpu-gemm-peak", "--sizes: " + sizes.message());
        for (auto n : *sizes)
            s.sizes.push_back(static_cast<int>(n));
    }
    if (f.samples) s.samples = f.samples;
    s.device = f.device;
    gpu::GemmPeakProbe probe(s);
    return runGpuProbe(probe, f.format);
}

ExitCode runPrefill(const GpuFlags& f) {
    gpu::PrefillSettings s;
    if (!f.lengths.empty()) {
        auto lengths = parseTokenList(joined(f.lengths));
        if (!lengths) return badInput(f.format, "gpu-prefill", "--lengths: " + lengths.message());
        for (double n : *lengths)
            s.lengths.push_back(static_cast<std::int64_t>(n));
    }
    s.model = f.model;
    s.gpuPreset = f.gpuPreset;
    if (!f.gemmPeak.empty()) {
        auto peak = parseNumber(f.gemmPeak); // validate() checks its range
        if (!peak) return badInput(f.format, "gpu-prefill", "--gemm-peak-tflops " + peak.message());
        s.gemmPeakTflops = *peak;
    }
    if (f.samples) s.samples = f.samples;
    s.device = f.device;
    gpu::PrefillProbe probe(s);
    return runGpuProbe(probe, f.format);
}

void addCommon(CLI::App* sub, GpuFlags& f, int defaultSamples) {
    sub->add_option("--samples", f.samples,
                    "Timed samples per setting; the median is reported (default " +
                        std::to_string(defaultSamples) + ", at least 3)");
    sub->add_option("--device", f.device, "CUDA device index (default 0)");
    addProbeFormatOption(sub, f.format);
    sub->footer(
        "\nWithout a usable CUDA GPU the probe says so in one sentence and exits with 3.\n" +
        exitCodeHelp());
}

} // namespace

void addGpuProbeCommands(CLI::App& probe, Command& run) {
    auto copy = std::make_shared<GpuFlags>();
    auto* copyCmd = probe.add_subcommand("gpu-copy", gpu::GpuCopyProbe().description());
    copyCmd->add_option(
        "--sizes", copy->sizes,
        "Copy sizes, e.g. 64KiB,28MiB,1GiB (default 64KiB to 1GiB by 4×, and the KV block)");
    copyCmd->add_option(
        "--model", copy->model,
        "Model whose KV block (256 tokens) joins the sizes (default: the default scenario's)");
    auto* pinned = copyCmd->add_flag("--pinned-only", copy->pinnedOnly,
                                     "Only pinned (page-locked) host memory");
    copyCmd->add_flag("--pageable-only", copy->pageableOnly, "Only pageable host memory")
        ->excludes(pinned);
    addCommon(copyCmd, *copy, 5);
    copyCmd->callback([copy, &run] { run = [copy] { return runCopy(*copy); }; });

    auto gemm = std::make_shared<GpuFlags>();
    auto* gemmCmd = probe.add_subcommand("gpu-gemm-peak", gpu::GemmPeakProbe().description());
    gemmCmd->add_option("--sizes", gemm->sizes,
                        "Square sizes m = n = k, e.g. 4096,8192 (default 4096,8192,16384)");
    addCommon(gemmCmd, *gemm, 5);
    gemmCmd->callback([gemm, &run] { run = [gemm] { return runGemmPeak(*gemm); }; });

    auto pre = std::make_shared<GpuFlags>();
    auto* preCmd = probe.add_subcommand("gpu-prefill", gpu::PrefillProbe().description());
    preCmd
        ->add_option("--model", pre->model,
                     "Preset id, config.json, model folder or Hugging Face cache id")
        ->required();
    preCmd->add_option(
        "--lengths", pre->lengths,
        "Prompt lengths in tokens, e.g. 1k,8k,32k,80k (default; up to 1M, memory permitting)");
    preCmd->add_option(
        "--gpu-preset", pre->gpuPreset,
        "GPU preset for the data-sheet peak (default: matched from the device name)");
    preCmd->add_option("--gemm-peak-tflops", pre->gemmPeak,
                       "Peak from a gpu-gemm-peak run (default: measured here on 8192³)");
    addCommon(preCmd, *pre, 3);
    preCmd->callback([pre, &run] { run = [pre] { return runPrefill(*pre); }; });
}

} // namespace kvbe::cli
