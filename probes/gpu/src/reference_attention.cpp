#include "kvbe/gpu/reference_attention.h"

#include "kvbe/gpu/attention_mask.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kvbe::gpu {

float roundToBf16(float x) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7f800000u) == 0x7f800000u) return x; // inf, nan
    bits += 0x7fffu + ((bits >> 16) & 1u);             // round to nearest even
    bits &= 0xffff0000u;
    float out = 0;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

std::vector<float> referenceAttention(const AttentionShape& s, const std::vector<float>& q,
                                      const std::vector<float>& k, const std::vector<float>& v,
                                      int keyTile) {
    const float scale = s.scale > 0 ? s.scale : 1.0f / std::sqrt(static_cast<float>(s.dQk));
    const int group = s.qHeads / s.kvHeads;
    std::vector<float> o(static_cast<size_t>(s.tokens) * s.qHeads * s.dV, 0.0f);
    std::vector<float> acc(static_cast<size_t>(s.dV));
    for (int i = 0; i < s.tokens; ++i) {
        const int first = firstVisibleKey(s.maskKind, s.window, i);
        for (int h = 0; h < s.qHeads; ++h) {
            const int kvh = h / group;
            const float* qi = &q[(static_cast<size_t>(i) * s.qHeads + h) * s.dQk];
            float runMax = -std::numeric_limits<float>::infinity();
            float runSum = 0;
            std::fill(acc.begin(), acc.end(), 0.0f);
            // Tiles are aligned to multiples of keyTile, like the kernel's key blocks.
            for (int t0 = (first / keyTile) * keyTile; t0 <= i; t0 += keyTile) {
                const int lo = std::max(t0, first), hi = std::min(t0 + keyTile - 1, i);
                float tileMax = -std::numeric_limits<float>::infinity();
                std::vector<float> scores(static_cast<size_t>(hi - lo + 1));
                for (int j = lo; j <= hi; ++j) {
                    const float* kj = &k[(static_cast<size_t>(j) * s.kvHeads + kvh) * s.dQk];
                    float dot = 0;
                    for (int c = 0; c < s.dQk; ++c)
                        dot += qi[c] * kj[c];
                    scores[static_cast<size_t>(j - lo)] = dot * scale;
                    tileMax = std::max(tileMax, dot * scale);
                }
                const float newMax = std::max(runMax, tileMax);
                const float rescale = std::exp(runMax - newMax); // exp(-inf) = 0 on the first tile
                runSum *= rescale;
                for (auto& a : acc)
                    a *= rescale;
                for (int j = lo; j <= hi; ++j) {
                    const float p = std::exp(scores[static_cast<size_t>(j - lo)] - newMax);
                    runSum += p;
                    const float* vj = &v[(static_cast<size_t>(j) * s.kvHeads + kvh) * s.dV];
                    for (int c = 0; c < s.dV; ++c)
                        acc[static_cast<size_t>(c)] += p * vj[c];
                }
                runMax = newMax;
            }
            float* oi = &o[(static_cast<size_t>(i) * s.qHeads + h) * s.dV];
            for (int c = 0; c < s.dV; ++c)
                oi[c] = acc[static_cast<size_t>(c)] / runSum;
        }
    }
    return o;
}

} // namespace kvbe::gpu
