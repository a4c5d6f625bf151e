// What a user can ask of the GPU probes, and the checks that run before any GPU is touched. The
// flags' sizes and lengths are read with core's parsers (kvbe/base/units.h), as every flag is.
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kvbe::gpu {

inline constexpr std::int64_t kMaxPrefillTokens = 1 << 20; // the memory check decides below this
inline constexpr std::uint64_t kMinCopyBytes = 4096;
inline constexpr std::uint64_t kMaxCopyBytes = 4ull << 30;
inline constexpr int kMinSamples = 3; // a median needs three

struct CopySettings {
    std::vector<std::uint64_t> sizes; // empty: 64 KiB … 1 GiB by 4×, plus the model's KV block
    std::string model;                // KV block; empty: the default scenario's model
    bool pinned = true;
    bool pageable = true;
    int samples = 5;
    int device = 0;
};

struct GemmPeakSettings {
    std::vector<int> sizes; // square m = n = k; empty: 4096, 8192, 16384
    int samples = 5;
    int device = 0;
};

struct PrefillSettings {
    std::string model;                 // preset id, config.json, folder or HF cache id
    std::vector<std::int64_t> lengths; // prompt tokens; empty: 1k, 8k, 32k, 80k
    int samples = 3;
    std::string gpuPreset;                // data-sheet peak; empty: matched from the device name
    std::optional<double> gemmPeakTflops; // from a gpu-gemm-peak run; empty: measured here
    int device = 0;
};

std::vector<std::uint64_t> defaultCopySizes(); // 64 KiB, 256 KiB, …, 1 GiB
std::vector<int> defaultGemmSizes();
std::vector<std::int64_t> defaultPrefillLengths(); // 1024, 8192, 32768, 81920

// Range checks, sorting and de-duplication; the error names the flag.
Status validate(CopySettings& s);
Status validate(GemmPeakSettings& s);
Status validate(PrefillSettings& s);

} // namespace kvbe::gpu
