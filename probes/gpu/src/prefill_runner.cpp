#include "prefill_runner.h"

#include "flash_attention.h"
#include "kvbe/gpu/attention_mask.h"
#include "probe_util.h"

#include <cmath>

namespace kvbe::gpu {

namespace {
int maskOf(AttnKind k) {
    return k == AttnKind::Sliding   ? kMaskSliding
           : k == AttnKind::Chunked ? kMaskChunked
                                    : kMaskFull;
}
std::size_t align256(double bytes) {
    return (std::size_t(bytes) + 255) / 256 * 256;
}
} // namespace

Result<std::unique_ptr<PrefillRunner>> PrefillRunner::create(const LayerPlan& plan,
                                                             std::int64_t maxTokens) {
    std::unique_ptr<PrefillRunner> r(new PrefillRunner(plan));
    KVBE_CUDA_TRY("creating a stream",
                  cudaStreamCreateWithFlags(&r->m_stream, cudaStreamNonBlocking));
    auto gemm = GemmRunner::create(std::size_t(kGemmWorkspaceBytes));
    if (!gemm) return gemm.error();
    r->m_gemm = std::move(*gemm);
    std::uint64_t seed = 100;
    for (const auto& b : plan.blocks) {
        std::vector<Buffer> ws;
        for (const auto& g : b.gemms) {
            auto w = Buffer::allocate(MemoryKind::Device, std::size_t(g.weightBytes()),
                                      b.name + " " + g.name + " weights");
            if (!w) return w.error();
            // Scaled like an initialised linear layer, so activations stay in range.
            fillNormalBf16(w->get(), std::size_t(g.weightBytes() / 2), seed++,
                           1.0f / std::sqrt(float(g.k)), r->m_stream);
            ws.push_back(std::move(*w));
        }
        r->m_weights.push_back(std::move(ws));
    }
    auto lm =
        Buffer::allocate(MemoryKind::Device, std::size_t(plan.lmHead.weightBytes()), "the lm_head");
    if (!lm) return lm.error();
    fillNormalBf16(lm->get(), std::size_t(plan.lmHead.weightBytes() / 2), seed++,
                   1.0f / std::sqrt(float(plan.lmHead.k)), r->m_stream);
    r->m_lmHead = std::move(*lm);
    const MemoryEstimate est = estimateMemory(plan, maxTokens);
    // Room for each sub-buffer's 256-byte alignment.
    auto arena = Buffer::allocate(MemoryKind::Device, align256(est.activationBytes) + 4 * 256,
                                  "activations");
    if (!arena) return arena.error();
    fillNormalBf16(arena->get(), arena->bytes() / 2, seed++, 1.0f, r->m_stream);
    r->m_arena = std::move(*arena);
    KVBE_CUDA_TRY("filling weights and activations", cudaStreamSynchronize(r->m_stream));
    return r;
}

PrefillRunner::~PrefillRunner() {
    if (m_stream) cudaStreamDestroy(m_stream);
}

Status PrefillRunner::runGemms(const std::vector<GemmOp>& ops, const std::vector<Buffer>& weights,
                               std::int64_t tokens) {
    // One input and one output region for all GEMMs of the block (they run one after another).
    double maxIn = 0;
    for (const auto& g : ops)
        maxIn = std::max(maxIn, double(g.rows(tokens)) * double(g.k));
    auto* base = m_arena.as<unsigned char>();
    auto* in = base;
    auto* out = base + align256(2 * maxIn);
    for (size_t i = 0; i < ops.size(); ++i) {
        const auto& g = ops[i];
        std::int64_t row = 0;
        for (int e = 0; e < g.instances; ++e) {
            const std::int64_t rows = g.rowsOf(e, tokens);
            const auto* w =
                weights[i].as<unsigned char>() + std::size_t(e) * std::size_t(g.n * g.k) * 2;
            if (auto st = m_gemm->run(in + std::size_t(row * g.k) * 2, w,
                                      out + std::size_t(row * g.n) * 2, rows, g.n, g.k, m_stream);
                !st)
                return st;
            row += rows;
        }
    }
    return Ok{};
}

Status PrefillRunner::runBlock(size_t index, std::int64_t tokens) {
    const Block& b = m_plan.blocks[index];
    if (b.kind != BlockKind::Attention) return runGemms(b.gemms, m_weights[index], tokens);
    const AttentionOp& a = b.attention.front();
    auto* p = m_arena.as<unsigned char>();
    const double n = double(tokens);
    AttentionArgs args;
    args.q = p;
    p += align256(2 * n * a.qHeads * a.dQk);
    args.k = p;
    p += align256(2 * n * a.kvHeads * a.dQk);
    args.v = p;
    p += align256(2 * n * a.kvHeads * a.dV);
    args.o = p;
    args.qStride = std::int64_t(a.qHeads) * a.dQk;
    args.kStride = std::int64_t(a.kvHeads) * a.dQk;
    args.vStride = std::int64_t(a.kvHeads) * a.dV;
    args.oStride = std::int64_t(a.qHeads) * a.dV;
    args.tokens = int(tokens);
    args.qHeads = a.qHeads;
    args.kvHeads = a.kvHeads;
    args.dQk = a.dQk;
    args.dV = a.dV;
    args.maskKind = maskOf(a.kind);
    args.window = int(a.window);
    return launchFlashAttention(args, m_stream);
}

Status PrefillRunner::runLmHead() {
    const GemmOp& g = m_plan.lmHead;
    auto* in = m_arena.as<unsigned char>();
    auto* out = in + align256(2.0 * double(g.k));
    return m_gemm->run(in, m_lmHead.get(), out, 1, g.n, g.k, m_stream);
}

template <class Fn> Result<BlockTiming> PrefillRunner::time(Fn run, int samples) {
    EventTimer timer;
    // Warm-up: plans every GEMM shape and measures one run.
    if (auto st = run(); !st) return st.error();
    timer.start(m_stream);
    if (auto st = run(); !st) return st.error();
    timer.stop(m_stream);
    auto one = timer.seconds();
    if (!one) return one.error();
    BlockTiming t;
    // Short blocks repeat within a sample so that launch gaps and timer resolution average out.
    t.runsPerSample = int(std::clamp(std::ceil(2e-3 / std::max(*one, 1e-7)), 1.0, 100.0));
    for (int s = 0; s < samples; ++s) {
        timer.start(m_stream);
        for (int r = 0; r < t.runsPerSample; ++r)
            if (auto st = run(); !st) return st.error();
        timer.stop(m_stream);
        auto sec = timer.seconds();
        if (!sec) return sec.error();
        t.samples.push_back(*sec / t.runsPerSample);
    }
    t.seconds = median(t.samples);
    return t;
}

Result<BlockTiming> PrefillRunner::timeBlock(size_t block, std::int64_t tokens, int samples) {
    return time([&] { return runBlock(block, tokens); }, samples);
}

Result<BlockTiming> PrefillRunner::timeLmHead(int samples) {
    return time([&] { return runLmHead(); }, samples);
}

} // namespace kvbe::gpu
