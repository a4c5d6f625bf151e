// The attention kernel. Fragment layouts are those of mma.sync.m16n8k16 (PTX ISA, "Matrix
// Fragments for mma.m16n8k16"): with g = lane / 4 and t = lane % 4,
//   A (16×16, row):  a0 = (g, 2t..2t+1)  a1 = (g+8, 2t..)  a2 = (g, 2t+8..)  a3 = (g+8, 2t+8..)
//   B (16×8, col):   b0 = (k 2t..2t+1, n g)                 b1 = (k 2t+8..2t+9, n g)
//   C (16×8, f32):   c0,c1 = (g, 2t..2t+1)                  c2,c3 = (g+8, 2t..2t+1)
// The C layout of two neighbouring 8-key score tiles is exactly the A layout of one 16-key step
// of P·V, so probabilities go from the scores to the second product without touching memory.
// B fragments come from shared memory with ldmatrix: K is stored [key][dim], which is B's
// layout already; V is stored [key][col] and read with ldmatrix.trans, which hands each thread
// the (key 2t..2t+1, col g) pair B needs. Rows are padded by 16 bytes so that the eight rows of
// one 8×8 matrix fall into different banks. K/V tiles arrive by cp.async into two stages, so
// the next tile is in flight while the current one is computed on (one stage where two do not
// fit, e.g. head dim 256 on Ada).
#include "flash_attention.h"

#include "kvbe/gpu/attention_mask.h"

#include <cmath>
#include <cuda_bf16.h>
#include <string>

namespace kvbe::gpu {
namespace {

constexpr int kWarps = 4;
constexpr int kBlockM = 16 * kWarps; // query rows per block
constexpr int kBlockN = 64;          // keys per tile
constexpr int kPad = 8;              // bf16 of padding per smem row: rows start 4 banks apart

__device__ __forceinline__ void mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned packBf16(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi); // .x = lo (lower address)
    return *reinterpret_cast<unsigned*>(&v);
}

__device__ __forceinline__ unsigned load32(const __nv_bfloat16* p) {
    return *reinterpret_cast<const unsigned*>(p);
}

// 16 bytes global → shared without passing through registers; `valid` false writes zeros.
__device__ __forceinline__ void cpAsync16(__nv_bfloat16* dst, const __nv_bfloat16* src,
                                          bool valid) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(addr), "l"(src),
                 "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cpAsyncCommit() {
    asm volatile("cp.async.commit_group;\n" ::);
}
template <int N> __device__ __forceinline__ void cpAsyncWait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix4(unsigned (&r)[4], const __nv_bfloat16* p) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldmatrix4Trans(unsigned (&r)[4], const __nv_bfloat16* p) {
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

// Shared memory of one stage: a K tile and a V tile.
template <int DQK, int DV> __host__ __device__ constexpr int stageElems() {
    return kBlockN * ((DQK + kPad) + (DV + kPad));
}

// STAGES = 2 loads the next K/V tile (cp.async) while the current one is computed on; 1 where
// two stages do not fit in shared memory.
template <int DQK, int DV, int STAGES>
__global__ void __launch_bounds__(kWarps * 32)
    flashAttentionKernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                         const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o,
                         long long qStride, long long kStride, long long vStride, long long oStride,
                         int tokens, int group, int maskKind, int window, float scaleLog2) {
    extern __shared__ __align__(16) unsigned char smem[];
    // Per stage: Ks[key][dim] and Vs[key][col], row-major with padded rows.
    __nv_bfloat16* const stage0 = reinterpret_cast<__nv_bfloat16*>(smem);

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    // Heads vary fastest, so the query heads of one KV head run side by side and read the same
    // K/V tiles from L2. Heavy (late) query tiles first: under a causal mask they have the most
    // keys.
    const int head = blockIdx.x;
    const int qTile = gridDim.y - 1 - blockIdx.y;
    const int kvHead = head / group;
    const int q0 = qTile * kBlockM;
    const int row0 = q0 + warp * 16 + g, row1 = row0 + 8; // the two rows this thread owns

    // Q fragments stay in registers for the whole kernel.
    unsigned qa[DQK / 16][4];
    {
        const __nv_bfloat16* q0p = q + (long long)row0 * qStride + (long long)head * DQK;
        const __nv_bfloat16* q1p = q + (long long)row1 * qStride + (long long)head * DQK;
#pragma unroll
        for (int kk = 0; kk < DQK / 16; ++kk) {
            const int c = kk * 16 + 2 * t;
            qa[kk][0] = row0 < tokens ? load32(q0p + c) : 0u;
            qa[kk][1] = row1 < tokens ? load32(q1p + c) : 0u;
            qa[kk][2] = row0 < tokens ? load32(q0p + c + 8) : 0u;
            qa[kk][3] = row1 < tokens ? load32(q1p + c + 8) : 0u;
        }
    }

    float acc[DV / 8][4];
#pragma unroll
    for (int n = 0; n < DV / 8; ++n)
        acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    float m0 = -INFINITY, m1 = -INFINITY, l0 = 0.f, l1 = 0.f;

    const int lastRow = min(q0 + kBlockM - 1, tokens - 1);
    const int kStart = (firstVisibleKey(maskKind, window, q0) / kBlockN) * kBlockN;
    const int tiles = (lastRow + 1 - kStart + kBlockN - 1) / kBlockN;
    // Queues the copies of key tile `tile` into stage `st`; rows past the last token are zeros.
    const auto loadTile = [&](int tile, int st) {
        const int kt = kStart + tile * kBlockN;
        __nv_bfloat16* kdst = stage0 + st * stageElems<DQK, DV>();
        __nv_bfloat16* vdst = kdst + kBlockN * (DQK + kPad);
        for (int idx = threadIdx.x; idx < kBlockN * (DQK / 8); idx += kWarps * 32) {
            const int r = idx / (DQK / 8), c = (idx % (DQK / 8)) * 8;
            const bool ok = kt + r < tokens;
            cpAsync16(kdst + r * (DQK + kPad) + c,
                      k + (ok ? (long long)(kt + r) * kStride + (long long)kvHead * DQK + c : 0),
                      ok);
        }
        for (int idx = threadIdx.x; idx < kBlockN * (DV / 8); idx += kWarps * 32) {
            const int r = idx / (DV / 8), c = (idx % (DV / 8)) * 8;
            const bool ok = kt + r < tokens;
            cpAsync16(vdst + r * (DV + kPad) + c,
                      v + (ok ? (long long)(kt + r) * vStride + (long long)kvHead * DV + c : 0),
                      ok);
        }
    };

    loadTile(0, 0);
    cpAsyncCommit();
    for (int it = 0; it < tiles; ++it) {
        const int kt = kStart + it * kBlockN;
        if constexpr (STAGES == 2) {
            if (it + 1 < tiles) loadTile(it + 1, (it + 1) & 1);
            cpAsyncCommit(); // possibly empty, so that "all but the newest group" is always tile it
            cpAsyncWait<1>();
        } else {
            if (it > 0) {
                loadTile(it, 0);
                cpAsyncCommit();
            }
            cpAsyncWait<0>();
        }
        __syncthreads(); // every thread's copies of tile it have landed
        const __nv_bfloat16* ks = stage0 + (STAGES == 2 ? (it & 1) : 0) * stageElems<DQK, DV>();
        const __nv_bfloat16* vs = ks + kBlockN * (DQK + kPad);

        // S = Q·Kᵀ for 16 rows × 64 keys: 8 tiles of 16×8.
        // Lane l addresses row l % 8 of matrix l / 8: matrices 0, 1 are the two 8-dim halves of
        // step kk, matrices 2, 3 those of step kk + 1.
        const int lm = lane / 8, lr = lane % 8;
        float s[kBlockN / 8][4];
#pragma unroll
        for (int n = 0; n < kBlockN / 8; ++n) {
            s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
            const __nv_bfloat16* kr =
                ks + (n * 8 + lr) * (DQK + kPad) + (lm & 1) * 8 + (lm >> 1) * 16;
#pragma unroll
            for (int kk = 0; kk < DQK / 16; kk += 2) {
                unsigned b[4];
                ldmatrix4(b, kr + kk * 16);
                mma16816(s[n], qa[kk], b[0], b[1]);
                mma16816(s[n], qa[kk + 1], b[2], b[3]);
            }
        }

        // Mask only tiles that reach past a row's first or last visible key.
        const int warpRowLo = q0 + warp * 16, warpRowHi = warpRowLo + 15;
        const bool needMask = kt + kBlockN - 1 > warpRowLo ||
                              kt < firstVisibleKey(maskKind, window, warpRowHi) ||
                              kt + kBlockN > tokens;
        float tileMax0 = -INFINITY, tileMax1 = -INFINITY;
#pragma unroll
        for (int n = 0; n < kBlockN / 8; ++n) {
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                float x = s[n][i] * scaleLog2;
                if (needMask) {
                    const int key = kt + n * 8 + 2 * t + (i & 1);
                    const int row = i < 2 ? row0 : row1;
                    if (key > row || key < firstVisibleKey(maskKind, window, row) || key >= tokens)
                        x = -INFINITY;
                }
                s[n][i] = x;
            }
            tileMax0 = fmaxf(tileMax0, fmaxf(s[n][0], s[n][1]));
            tileMax1 = fmaxf(tileMax1, fmaxf(s[n][2], s[n][3]));
        }
        // The four lanes of a row group share rows g and g+8.
#pragma unroll
        for (int off = 1; off < 4; off <<= 1) {
            tileMax0 = fmaxf(tileMax0, __shfl_xor_sync(0xffffffffu, tileMax0, off));
            tileMax1 = fmaxf(tileMax1, __shfl_xor_sync(0xffffffffu, tileMax1, off));
        }
        const float new0 = fmaxf(m0, tileMax0), new1 = fmaxf(m1, tileMax1);
        // A row that has seen no key yet keeps max -inf; subtract 0 then, not -inf (NaN).
        const float base0 = new0 == -INFINITY ? 0.f : new0;
        const float base1 = new1 == -INFINITY ? 0.f : new1;
        const float alpha0 = exp2f(m0 - base0), alpha1 = exp2f(m1 - base1);
        m0 = new0;
        m1 = new1;

        float sum0 = 0.f, sum1 = 0.f;
        unsigned pa[kBlockN / 16][4];
#pragma unroll
        for (int n = 0; n < kBlockN / 8; ++n) {
            const float p0 = exp2f(s[n][0] - base0), p1 = exp2f(s[n][1] - base0);
            const float p2 = exp2f(s[n][2] - base1), p3 = exp2f(s[n][3] - base1);
            sum0 += p0 + p1;
            sum1 += p2 + p3;
            // Score tile n is the low (even n) or high (odd n) half of P step n / 2.
            pa[n / 2][(n & 1) * 2 + 0] = packBf16(p0, p1);
            pa[n / 2][(n & 1) * 2 + 1] = packBf16(p2, p3);
        }
        l0 = l0 * alpha0 + sum0; // per-lane partial sums; reduced across the group at the end
        l1 = l1 * alpha1 + sum1;

        // O = O·alpha + P·V. Transposed loads: matrices 0, 1 are keys 0-7 and 8-15 of step kk
        // for output columns n·8…, matrices 2, 3 the same keys for columns (n + 1)·8….
#pragma unroll
        for (int n = 0; n < DV / 8; ++n) {
            acc[n][0] *= alpha0;
            acc[n][1] *= alpha0;
            acc[n][2] *= alpha1;
            acc[n][3] *= alpha1;
        }
#pragma unroll
        for (int n = 0; n < DV / 8; n += 2) {
            const __nv_bfloat16* vr = vs + ((lm & 1) * 8 + lr) * (DV + kPad) + (n + (lm >> 1)) * 8;
#pragma unroll
            for (int kk = 0; kk < kBlockN / 16; ++kk) {
                unsigned b[4];
                ldmatrix4Trans(b, vr + kk * 16 * (DV + kPad));
                mma16816(acc[n], pa[kk], b[0], b[1]);
                mma16816(acc[n + 1], pa[kk], b[2], b[3]);
            }
        }
        __syncthreads(); // the stage just read is the next one to be refilled
    }

#pragma unroll
    for (int off = 1; off < 4; off <<= 1) {
        l0 += __shfl_xor_sync(0xffffffffu, l0, off);
        l1 += __shfl_xor_sync(0xffffffffu, l1, off);
    }
    const float inv0 = l0 > 0.f ? 1.f / l0 : 0.f, inv1 = l1 > 0.f ? 1.f / l1 : 0.f;
    __nv_bfloat16* o0 = o + (long long)row0 * oStride + (long long)head * DV;
    __nv_bfloat16* o1 = o + (long long)row1 * oStride + (long long)head * DV;
#pragma unroll
    for (int n = 0; n < DV / 8; ++n) {
        const int c = n * 8 + 2 * t;
        if (row0 < tokens)
            *reinterpret_cast<unsigned*>(o0 + c) = packBf16(acc[n][0] * inv0, acc[n][1] * inv0);
        if (row1 < tokens)
            *reinterpret_cast<unsigned*>(o1 + c) = packBf16(acc[n][2] * inv1, acc[n][3] * inv1);
    }
}

template <int DQK, int DV> Status launch(const AttentionArgs& a, cudaStream_t stream) {
    int device = 0, optin = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    const size_t stageBytes = sizeof(__nv_bfloat16) * size_t(stageElems<DQK, DV>());
    const bool twoStages = a.stages == 2 || (a.stages == 0 && 2 * stageBytes <= size_t(optin));
    const size_t smemBytes = (twoStages ? 2 : 1) * stageBytes;
    auto kernel = twoStages ? flashAttentionKernel<DQK, DV, 2> : flashAttentionKernel<DQK, DV, 1>;
    cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(smemBytes));
    if (err != cudaSuccess)
        return Error{"the attention kernel needs " + std::to_string(smemBytes / 1024) +
                     " KiB of shared memory per block, which this GPU refuses (" +
                     cudaGetErrorString(err) + ")"};
    const float scale = a.scale > 0 ? a.scale : 1.0f / std::sqrt(static_cast<float>(a.dQk));
    const dim3 grid(a.qHeads, (a.tokens + kBlockM - 1) / kBlockM);
    kernel<<<grid, kWarps * 32, smemBytes, stream>>>(
        static_cast<const __nv_bfloat16*>(a.q), static_cast<const __nv_bfloat16*>(a.k),
        static_cast<const __nv_bfloat16*>(a.v), static_cast<__nv_bfloat16*>(a.o), a.qStride,
        a.kStride, a.vStride, a.oStride, a.tokens, a.qHeads / a.kvHeads, a.maskKind, a.window,
        scale * 1.4426950408889634f);
    err = cudaGetLastError();
    if (err != cudaSuccess)
        return Error{std::string("the attention kernel did not launch: ") +
                     cudaGetErrorString(err)};
    return Ok{};
}

bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

} // namespace

bool attentionSupports(int dQk, int dV) {
    return (dQk == 64 && dV == 64) || (dQk == 128 && dV == 128) || (dQk == 192 && dV == 128) ||
           (dQk == 256 && dV == 256);
}

Status launchFlashAttention(const AttentionArgs& a, cudaStream_t stream) {
    if (!attentionSupports(a.dQk, a.dV))
        return Error{"the attention kernel is built for head dims 64, 128, 256 and MLA's 192/128, "
                     "not " +
                     std::to_string(a.dQk) + "/" + std::to_string(a.dV)};
    if (a.tokens <= 0 || a.qHeads <= 0 || a.kvHeads <= 0 || a.qHeads % a.kvHeads != 0)
        return Error{"attention needs tokens > 0 and query heads a multiple of KV heads"};
    if (a.maskKind != kMaskFull && a.window <= 0)
        return Error{"a sliding or chunked attention layer needs a window > 0"};
    // 16-byte K/V loads and 4-byte Q/O accesses.
    if (!aligned16(a.k) || !aligned16(a.v) || a.kStride % 8 != 0 || a.vStride % 8 != 0 ||
        reinterpret_cast<std::uintptr_t>(a.q) % 4 != 0 ||
        reinterpret_cast<std::uintptr_t>(a.o) % 4 != 0 || a.qStride % 2 != 0 || a.oStride % 2 != 0)
        return Error{
            "attention buffers must be 16-byte aligned with strides a multiple of 8 elements"};
    if (a.dQk == 64) return launch<64, 64>(a, stream);
    if (a.dQk == 128) return launch<128, 128>(a, stream);
    if (a.dQk == 192) return launch<192, 128>(a, stream);
    return launch<256, 256>(a, stream);
}

} // namespace kvbe::gpu
