#include "cuda_device.h"

#include <cuda_bf16.h>

namespace kvbe::gpu {
namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) { // splitmix64
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void fillNormalKernel(__nv_bfloat16* dst, std::size_t count, std::uint64_t seed,
                                 float stddev) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        const std::uint64_t r = mix(seed ^ mix(i));
        // Box–Muller from two 24-bit uniforms in (0, 1].
        const float u1 = (float((r >> 40) & 0xffffff) + 1.0f) / 16777216.0f;
        const float u2 = float((r >> 8) & 0xffffff) / 16777216.0f;
        const float z = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
        dst[i] = __float2bfloat16(z * stddev);
    }
}

__device__ __forceinline__ std::uint64_t globalTimer() {
    std::uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void spinKernel(volatile int* release, int* timedOut, std::uint64_t timeoutNs) {
    const std::uint64_t start = globalTimer();
    while (*release == 0) {
        if (globalTimer() - start > timeoutNs) {
            *timedOut = 1;
            return;
        }
    }
}

} // namespace

void fillNormalBf16(void* dst, std::size_t count, std::uint64_t seed, float stddev,
                    cudaStream_t s) {
    if (count == 0) return;
    const unsigned blocks =
        static_cast<unsigned>(count / 256 + 1 < 65536 ? count / 256 + 1 : 65536);
    fillNormalKernel<<<blocks, 256, 0, s>>>(static_cast<__nv_bfloat16*>(dst), count, seed, stddev);
}

void launchSpin(volatile int* release, int* timedOut, std::uint64_t timeoutNs, cudaStream_t s) {
    spinKernel<<<1, 1, 0, s>>>(release, timedOut, timeoutNs);
}

} // namespace kvbe::gpu
