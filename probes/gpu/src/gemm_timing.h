// Timing a square BF16 GEMM, shared by gpu-gemm-peak and gpu-prefill (which measures a quick
// peak itself when it is not given one).
#pragma once

#include "gemm_runner.h"
#include "kvbe/base/result.h"

#include <vector>

namespace kvbe::gpu {

struct SquareGemmTiming {
    int size = 0;
    int gemmsPerSample = 0;
    std::vector<double> tflops; // one per sample
    double medianTflops = 0;
};

// Random normal A and B of size × size, a warm-up of about `warmupS` seconds, then `samples`
// event-timed samples of about 50 ms each.
Result<SquareGemmTiming> timeSquareGemm(GemmRunner& runner, int size, int samples, double warmupS,
                                        cudaStream_t stream);

} // namespace kvbe::gpu
