// What the GPU probes share with or without CUDA: their settings from the flags.
#include "kvbe/gpu/gpu_probes.h"

#include "kvbe/base/units.h"

#include <cstdint>

namespace kvbe::gpu {

namespace {

// --samples (0 keeps the probe's default) and --device.
Status readCommon(const ProbeArgs& a, int& samples, int& device) {
    auto n = a.count("--samples");
    if (!n) return n.error();
    if (*n) samples = *n;
    auto d = a.count("--device");
    if (!d) return d.error();
    device = *d;
    return Ok{};
}

} // namespace

Result<probes::ProbeOptions> GpuCopyProbe::configure(const ProbeArgs& a) {
    if (const std::string text = a.text("--sizes"); !text.empty()) {
        auto sizes = parseWholeByteList(text);
        if (!sizes) return Error{"--sizes: " + sizes.message()};
        m_s.sizes = *sizes;
    }
    m_s.model = a.text("--model");
    m_s.pinned = !a.on("--pageable-only");
    m_s.pageable = !a.on("--pinned-only");
    if (auto st = readCommon(a, m_s.samples, m_s.device); !st) return st.error();
    return probes::ProbeOptions{};
}

Result<probes::ProbeOptions> GemmPeakProbe::configure(const ProbeArgs& a) {
    m_s.sizes.clear();
    if (const std::string text = a.text("--sizes"); !text.empty()) {
        // Counts ("8k" allowed); validate() then checks each is a size this probe runs.
        auto sizes = parseCountList(text, 1, 1 << 20);
        if (!sizes) return Error{"--sizes: " + sizes.message()};
        for (auto n : *sizes)
            m_s.sizes.push_back(static_cast<int>(n));
    }
    if (auto st = readCommon(a, m_s.samples, m_s.device); !st) return st.error();
    return probes::ProbeOptions{};
}

Result<probes::ProbeOptions> PrefillProbe::configure(const ProbeArgs& a) {
    m_s.lengths.clear();
    if (const std::string text = a.text("--lengths"); !text.empty()) {
        auto lengths = parseTokenList(text);
        if (!lengths) return Error{"--lengths: " + lengths.message()};
        for (double n : *lengths)
            m_s.lengths.push_back(static_cast<std::int64_t>(n));
    }
    m_s.model = a.text("--model");
    m_s.gpuPreset = a.text("--gpu-preset");
    if (a.given("--gemm-peak-tflops")) {
        auto peak = a.number("--gemm-peak-tflops"); // validate() checks its range
        if (!peak) return peak.error();
        m_s.gemmPeakTflops = *peak;
    }
    if (auto st = readCommon(a, m_s.samples, m_s.device); !st) return st.error();
    return probes::ProbeOptions{};
}

} // namespace kvbe::gpu
