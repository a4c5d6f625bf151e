#include "kvbe/gpu/gpu_options.h"

#include <algorithm>

namespace kvbe::gpu {

std::vector<std::uint64_t> defaultCopySizes() {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = 64ull << 10; s <= (1ull << 30); s *= 4)
        sizes.push_back(s);
    return sizes;
}

std::vector<int> defaultGemmSizes() {
    return {4096, 8192, 16384};
}

std::vector<std::int64_t> defaultPrefillLengths() {
    return {1024, 8192, 32768, 81920};
}

namespace {
template <class T> void sortUnique(std::vector<T>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

Status checkCommon(int samples, int device) {
    if (samples < kMinSamples || samples > 1000)
        return Error{"--samples " + std::to_string(samples) +
                     " is out of range; expected 3 to 1000 (a median needs three)"};
    if (device < 0)
        return Error{"--device " + std::to_string(device) +
                     " is negative; expected a CUDA device index"};
    return Ok{};
}
} // namespace

Status validate(CopySettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (!s.pinned && !s.pageable)
        return Error{"--pinned-only and --pageable-only exclude each other; name one"};
    for (auto b : s.sizes)
        if (b < kMinCopyBytes || b > kMaxCopyBytes)
            return Error{"--sizes: " + std::to_string(b) +
                         " bytes is out of range; expected 4 KiB to 4 GiB"};
    sortUnique(s.sizes);
    return Ok{};
}

Status validate(GemmPeakSettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (s.sizes.empty()) s.sizes = defaultGemmSizes();
    for (int n : s.sizes)
        if (n < 256 || n > 32768 || n % 64 != 0)
            return Error{"--sizes: " + std::to_string(n) +
                         " is not a square GEMM size this probe runs; expected a multiple of 64 "
                         "from 256 to 32768"};
    sortUnique(s.sizes);
    return Ok{};
}

Status validate(PrefillSettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (s.model.empty())
        return Error{"gpu-prefill needs --model ID|PATH (a preset id, a config.json or a Hugging "
                     "Face cache id)"};
    if (s.lengths.empty()) s.lengths = defaultPrefillLengths();
    for (auto n : s.lengths)
        if (n < 1 || n > kMaxPrefillTokens)
            return Error{"--lengths: " + std::to_string(n) +
                         " tokens is out of range; expected 1 to " +
                         std::to_string(kMaxPrefillTokens)};
    if (s.lengths.size() > 64) return Error{"--lengths: at most 64 lengths per run"};
    sortUnique(s.lengths);
    if (s.gemmPeakTflops && !(*s.gemmPeakTflops > 0 && *s.gemmPeakTflops < 1e5))
        return Error{
            "--gemm-peak-tflops must be a positive rate in TFLOP/s, as gpu-gemm-peak reports it"};
    return Ok{};
}

} // namespace kvbe::gpu
