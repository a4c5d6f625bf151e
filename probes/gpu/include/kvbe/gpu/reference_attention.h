// Causal attention on the CPU, in FP32, the way the GPU kernel computes it: keys in tiles, a
// running maximum and sum per query (online softmax). The device test compares the kernel to
// this on small shapes; a unit test compares this to a plain softmax(QKᵀ)V.
#pragma once

#include <vector>

namespace kvbe::gpu {

struct AttentionShape {
    int tokens = 0;
    int qHeads = 0;
    // qHeads is a multiple of kvHeads; query head h reads KV head h / (qHeads / kvHeads).
    int kvHeads = 0;
    int dQk = 0;
    int dV = 0;
    int maskKind = 0; // MaskKind
    int window = 0;   // sliding / chunked tokens
    float scale = 0;  // softmax scale; 0: 1 / sqrt(dQk)
};

// q: [tokens][qHeads][dQk], k: [tokens][kvHeads][dQk], v: [tokens][kvHeads][dV];
// returns o: [tokens][qHeads][dV]. keyTile: keys per online-softmax step.
std::vector<float> referenceAttention(const AttentionShape& s, const std::vector<float>& q,
                                      const std::vector<float>& k, const std::vector<float>& v,
                                      int keyTile = 64);

// Round to the nearest BF16 and back, as the GPU's inputs and outputs are stored.
float roundToBf16(float x);

} // namespace kvbe::gpu
