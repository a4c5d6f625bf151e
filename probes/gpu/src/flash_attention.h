// Causal flash attention, forward, BF16 in and out with FP32 accumulation: our own kernel, in
// the FlashAttention-2 style (one warp per 16 query rows, scores and the output kept in
// registers, online softmax). Full, sliding and chunked masks as in attention_mask.h.
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <cuda_runtime.h>

namespace kvbe::gpu {

// Element (token i, head h, column c) of Q lives at q[i · qStride + h · dQk + c]; likewise K and
// V with kvHeads heads, and O with qHeads heads of dV columns. Strides are in elements.
struct AttentionArgs {
    const void* q = nullptr; // __nv_bfloat16
    const void* k = nullptr;
    const void* v = nullptr;
    void* o = nullptr;
    std::int64_t qStride = 0, kStride = 0, vStride = 0, oStride = 0;
    int tokens = 0;
    int qHeads = 0;
    int kvHeads = 0;
    int dQk = 0;
    int dV = 0;
    int maskKind = 0; // MaskKind
    int window = 0;
    float scale = 0; // 0: 1 / sqrt(dQk)
    int stages = 0;  // K/V pipeline stages: 0 as many as fit (2 or 1); tests force 1 or 2
};

// Head dimensions the kernel is built for: (64, 64), (128, 128), (192, 128) (MLA), (256, 256).
bool attentionSupports(int dQk, int dV);
// Checks the arguments (shape, alignment, head dims) and launches on `stream`.
Status launchFlashAttention(const AttentionArgs& args, cudaStream_t stream);

} // namespace kvbe::gpu
