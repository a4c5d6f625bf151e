// Which keys a query sees in a causal prefill, shared by the CUDA kernel and the CPU reference
// so that both mask the same way as core's attentionPairs(): query i sees keys
//   full     [0, i]
//   sliding  [i - w + 1, i]          (min(i + 1, w) keys)
//   chunked  [floor(i / w) · w, i]   (Llama 4 local attention)
#pragma once

#if defined(__CUDACC__)
#define KVBE_HOST_DEVICE __host__ __device__
#else
#define KVBE_HOST_DEVICE
#endif

namespace kvbe::gpu {

enum MaskKind : int { kMaskFull = 0, kMaskSliding = 1, kMaskChunked = 2 };

KVBE_HOST_DEVICE inline int firstVisibleKey(int kind, int window, int query) {
    if (kind == kMaskSliding) return query - window + 1 > 0 ? query - window + 1 : 0;
    if (kind == kMaskChunked) return (query / window) * window;
    return 0;
}

} // namespace kvbe::gpu
