// GPU probe tests that need no GPU: the layer plan (shapes per architecture, FLOPs of each GEMM
// and of attention, agreeing with core's detailed model), the memory estimate, option checks,
// the CPU reference attention against a plain softmax(QKᵀ)V, and the no-device path of kvbe-cli.
// Expected numbers are worked out here from the published configs, not taken from the code.
#include "check.h"

#include "kvbe/cost/cost_model.h"
#include "kvbe/gpu/attention_mask.h"
#include "kvbe/gpu/gpu_options.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/gpu/layer_plan.h"
#include "kvbe/gpu/reference_attention.h"
#include "kvbe/scenario/gpu_names.h"
#include "kvbe/scenario/presets.h"

#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <sys/wait.h>

using namespace kvbe;
using namespace kvbe::gpu;

namespace {

const Presets& presets() {
    static const Presets p = *Presets::loadBuiltin();
    return p;
}

LayerPlan planFor(const std::string& id) {
    const auto* m = presets().findModel(id);
    if (!m) {
        kvbe::test::fail(__FILE__, __LINE__, "no preset " + id);
        return {};
    }
    auto plan = buildLayerPlan(m->spec);
    if (!plan) {
        kvbe::test::fail(__FILE__, __LINE__, plan.message());
        return {};
    }
    return *plan;
}

const Block* findBlock(const LayerPlan& p, BlockKind kind, AttnKind attn = AttnKind::Full) {
    for (const auto& b : p.blocks)
        if (b.kind == kind && (kind != BlockKind::Attention || b.attention.front().kind == attn))
            return &b;
    return nullptr;
}

const GemmOp* findGemm(const Block* b, const std::string& name) {
    if (!b) return nullptr;
    for (const auto& g : b->gemms)
        if (g.name == name) return &g;
    return nullptr;
}

bool shapeIs(const GemmOp* g, std::int64_t n, std::int64_t k, double rowsPerToken = 1,
             int instances = 1) {
    return g && g->n == n && g->k == k && g->rowsPerToken == rowsPerToken &&
           g->instances == instances;
}

} // namespace

TEST_CASE("plan: Llama 3.2 3B shapes, GEMM FLOPs and P_mm from the config") {
    const LayerPlan p = planFor("meta-llama/Llama-3.2-3B");
    const Block* proj = findBlock(p, BlockKind::Projections);
    const Block* mlp = findBlock(p, BlockKind::DenseMlp);
    const Block* attn = findBlock(p, BlockKind::Attention);
    CHECK(proj && mlp && attn && !findBlock(p, BlockKind::MoeMlp));
    CHECK_EQ(p.blocks.size(), size_t(3));
    // hidden 3072, 24 query heads, 8 KV heads of 128, intermediate 8192, 28 layers.
    CHECK(shapeIs(findGemm(proj, "qkv_proj"), (24 + 2 * 8) * 128, 3072));
    CHECK(shapeIs(findGemm(proj, "o_proj"), 3072, 24 * 128));
    CHECK(shapeIs(findGemm(mlp, "gate_up_proj"), 2 * 8192, 3072));
    CHECK(shapeIs(findGemm(mlp, "down_proj"), 3072, 8192));
    CHECK_EQ(proj->layers, 28);
    CHECK_EQ(attn->layers, 28);
    CHECK(attn->attention.front().qHeads == 24 && attn->attention.front().kvHeads == 8 &&
          attn->attention.front().dQk == 128 && attn->attention.front().dV == 128);
    CHECK(shapeIs(&p.lmHead, 128256, 3072));
    CHECK_EQ(findGemm(proj, "qkv_proj")->flops(1024), 2.0 * 1024 * 5120 * 3072);
    const double pmm = 28.0 * (3072.0 * 5120 + 3072.0 * 3072 + 3.0 * 3072 * 8192);
    CHECK_EQ(p.paramsMatmulPerToken(), pmm);
    CHECK_EQ(presets().findModel("meta-llama/Llama-3.2-3B")->spec.paramsMatmul, pmm);
    // Detailed F(N, 0) = 2·P_mm·N + 2·h·vocab + L · N(N+1)/2 · 2·Hq·(d + d).
    const double n = 8192;
    const double expected =
        2 * pmm * n + 2.0 * 3072 * 128256 + 28 * (n * (n + 1) / 2) * 2 * 24 * 256;
    CHECK_NEAR(p.flops(8192), expected, 1e-12);
}

TEST_CASE("plan: Llama 3.3 70B projections and MLP") {
    const LayerPlan p = planFor("meta-llama/Llama-3.3-70B-Instruct");
    const Block* proj = findBlock(p, BlockKind::Projections);
    const Block* mlp = findBlock(p, BlockKind::DenseMlp);
    CHECK(shapeIs(findGemm(proj, "qkv_proj"), 10240, 8192)); // (64 + 2·8) · 128
    CHECK(shapeIs(findGemm(proj, "o_proj"), 8192, 8192));
    CHECK(shapeIs(findGemm(mlp, "gate_up_proj"), 57344, 8192));
    CHECK(shapeIs(findGemm(mlp, "down_proj"), 8192, 28672));
    CHECK_EQ(proj->layers, 80);
    CHECK_EQ(findGemm(mlp, "down_proj")->flops(1000), 2.0 * 1000 * 8192 * 28672);
}

TEST_CASE("plan: DeepSeek V3 MLA projections, dense and MoE layers, P_mm by hand") {
    const LayerPlan p = planFor("deepseek-ai/DeepSeek-V3");
    CHECK(p.mla);
    const Block* proj = findBlock(p, BlockKind::Projections);
    CHECK(shapeIs(findGemm(proj, "q_a_proj"), 1536, 7168));
    CHECK(shapeIs(findGemm(proj, "q_b_proj"), 128 * 192, 1536));
    CHECK(shapeIs(findGemm(proj, "kv_a_proj"), 512 + 64, 7168));
    CHECK(shapeIs(findGemm(proj, "kv_b_proj"), 128 * (128 + 128), 512));
    CHECK(shapeIs(findGemm(proj, "o_proj"), 7168, 128 * 128));
    const Block* attn = findBlock(p, BlockKind::Attention);
    CHECK(attn && attn->attention.front().kvHeads == 128 && attn->attention.front().dQk == 192 &&
          attn->attention.front().dV == 128);
    const Block* dense = findBlock(p, BlockKind::DenseMlp);
    const Block* moe = findBlock(p, BlockKind::MoeMlp);
    CHECK(dense && moe);
    CHECK_EQ(dense->layers, 3); // first_k_dense_replace
    CHECK_EQ(moe->layers, 58);
    CHECK(shapeIs(findGemm(dense, "gate_up_proj"), 2 * 18432, 7168));
    CHECK(shapeIs(findGemm(moe, "router"), 256, 7168));
    CHECK(shapeIs(findGemm(moe, "experts.gate_up_proj"), 2 * 2048, 7168, 8, 256));
    CHECK(shapeIs(findGemm(moe, "experts.down_proj"), 7168, 2048, 8, 256));
    CHECK(shapeIs(findGemm(moe, "shared.gate_up_proj"), 2 * 2048, 7168));
    const double attnProj =
        7168.0 * 1536 + 1536.0 * 24576 + 7168.0 * 576 + 512.0 * 32768 + 16384.0 * 7168;
    const double denseMlp = 3.0 * 7168 * 18432;
    const double moeMlp = 256.0 * 7168 + 8 * 3.0 * 7168 * 2048 + 3.0 * 7168 * 2048;
    CHECK_EQ(p.paramsMatmulPerToken(), 61 * attnProj + 3 * denseMlp + 58 * moeMlp);
    // Balanced routing: 1000 tokens × top-8 = 8000 rows over 256 experts, 31 or 32 each.
    const GemmOp* up = findGemm(moe, "experts.gate_up_proj");
    std::int64_t sum = 0, lo = 1 << 30, hi = 0;
    for (int e = 0; e < 256; ++e) {
        sum += up->rowsOf(e, 1000);
        lo = std::min(lo, up->rowsOf(e, 1000));
        hi = std::max(hi, up->rowsOf(e, 1000));
    }
    CHECK_EQ(sum, std::int64_t(8000));
    CHECK(lo == 31 && hi == 32);
    CHECK_EQ(up->flops(1000), 2.0 * 8000 * 4096 * 7168);
}

TEST_CASE("plan: gpt-oss-120b has sliding-128 and full attention blocks and a MoE MLP") {
    const LayerPlan p = planFor("openai/gpt-oss-120b");
    const Block* sliding = findBlock(p, BlockKind::Attention, AttnKind::Sliding);
    const Block* full = findBlock(p, BlockKind::Attention, AttnKind::Full);
    CHECK(sliding && full);
    CHECK_EQ(sliding->layers + full->layers, 36);
    CHECK_EQ(sliding->attention.front().window, 128.0);
    CHECK_EQ(sliding->attention.front().dQk, 64);
    CHECK(!findBlock(p, BlockKind::DenseMlp));
    const Block* moe = findBlock(p, BlockKind::MoeMlp);
    CHECK(shapeIs(findGemm(moe, "experts.gate_up_proj"), 2 * 2880, 2880, 4, 128));
    CHECK(
        shapeIs(findGemm(findBlock(p, BlockKind::Projections), "qkv_proj"), (64 + 16) * 64, 2880));
    // A sliding layer at 4096 tokens sees min(i + 1, 128) keys per query.
    const double pairs = 128.0 * 129 / 2 + (4096.0 - 128) * 128;
    CHECK_EQ(sliding->attention.front().pairs(4096), pairs);
}

TEST_CASE("plan: Llama 4 Scout chunked attention and shared expert") {
    const LayerPlan p = planFor("meta-llama/Llama-4-Scout-17B-16E-Instruct");
    const Block* chunked = findBlock(p, BlockKind::Attention, AttnKind::Chunked);
    const Block* moe = findBlock(p, BlockKind::MoeMlp);
    CHECK(chunked && chunked->attention.front().window == 8192.0);
    CHECK(shapeIs(findGemm(moe, "experts.gate_up_proj"), 2 * 8192, 5120, 1, 16));
    CHECK(shapeIs(findGemm(moe, "shared.down_proj"), 5120, 8192));
}

TEST_CASE("plan: every preset agrees with core's detailed FLOP model and P_mm") {
    for (const auto& preset : presets().models()) {
        auto plan = buildLayerPlan(preset.spec);
        if (preset.spec.isHybrid() || preset.spec.hasSparseAttention()) {
            // Mamba, linear and sparse attention are not built by the probe: refused, by name.
            CHECK_MSG(!plan.ok() && plan.message().find("cannot run yet") != std::string::npos,
                      preset.id);
            continue;
        }
        CHECK_MSG(plan.ok(), preset.id + ": " + (plan.ok() ? "" : plan.message()));
        if (!plan) continue;
        CHECK_MSG(kvbe::test::near(plan->paramsMatmulPerToken(), preset.spec.paramsMatmul, 1e-12),
                  preset.id);
        CostInputs in;
        in.model = preset.spec;
        in.flopModel = FlopModel::Detailed;
        in.peakFlops = 1e15;
        auto cost = CostModel::create(in);
        CHECK(cost.ok());
        if (!cost) continue;
        for (std::int64_t n : {1, 1000, 8192, 81920, 131072}) {
            CHECK_MSG(kvbe::test::near(plan->flops(n), cost->flops(double(n), 0), 1e-12),
                      preset.id + " at " + std::to_string(n));
            CHECK_MSG(kvbe::test::near(plan->attentionFlops(n),
                                       preset.spec.attentionFlops(double(n), 0), 1e-12),
                      preset.id);
        }
    }
}

TEST_CASE("memory: Llama 3.2 3B at 1024 tokens, worked out by hand") {
    const LayerPlan p = planFor("meta-llama/Llama-3.2-3B");
    const MemoryEstimate e = estimateMemory(p, 1024);
    const double weights =
        2.0 * (5120.0 * 3072 + 3072.0 * 3072 + 16384.0 * 3072 + 3072.0 * 8192 + 128256.0 * 3072);
    CHECK_EQ(e.weightBytes, weights);
    // Largest block: the MLP, input up to 1024 × 8192 and output up to 1024 × 16384, BF16.
    const double mlp = 2.0 * (1024.0 * 8192 + 1024.0 * 16384);
    const double attention = 2.0 * 1024 * (24 * 128 + 8 * 128 + 8 * 128 + 24 * 128);
    CHECK(mlp > attention);
    CHECK_EQ(e.activationBytes, mlp);
    CHECK_EQ(e.workspaceBytes, 64.0 * 1024 * 1024);
    CHECK_EQ(e.totalBytes(), weights + mlp + 64.0 * 1024 * 1024);
    // Activations grow linearly in the prompt: 131072 tokens of Llama 3.3 70B need about 45 GB.
    const MemoryEstimate big = estimateMemory(planFor("meta-llama/Llama-3.3-70B-Instruct"), 131072);
    CHECK_EQ(big.activationBytes, 2.0 * (131072.0 * 28672 + 131072.0 * 57344));
}

TEST_CASE("options: ranges, sorting and de-duplication") {
    PrefillSettings p;
    p.model = "meta-llama/Llama-3.2-3B";
    CHECK(validate(p).ok());
    CHECK(p.lengths == std::vector<std::int64_t>({1024, 8192, 32768, 81920}));
    p.lengths = {8192, 1024, 8192, 131072};
    CHECK(validate(p).ok());
    CHECK(p.lengths == std::vector<std::int64_t>({1024, 8192, 131072})); // sorted, de-duplicated
    p.lengths = {kMaxPrefillTokens + 1};
    CHECK(!validate(p).ok());
    p.lengths = {1024};
    p.samples = 2;
    auto st = validate(p);
    CHECK(!st.ok() && st.message().find("--samples") != std::string::npos);
    PrefillSettings noModel;
    CHECK(!validate(noModel).ok());

    CopySettings c;
    c.sizes = {1024};
    CHECK(!validate(c).ok());
    c.sizes = {8ull << 30};
    CHECK(!validate(c).ok());
    c.sizes = {1 << 20, 64 << 10};
    CHECK(validate(c).ok() && c.sizes.front() == (64 << 10));
    c.pinned = c.pageable = false;
    CHECK(!validate(c).ok());
    CHECK_EQ(defaultCopySizes().front(), std::uint64_t(64) << 10);
    CHECK_EQ(defaultCopySizes().back(), std::uint64_t(1) << 30);

    GemmPeakSettings g;
    CHECK(validate(g).ok() && g.sizes == std::vector<int>({4096, 8192, 16384}));
    g.sizes = {100};
    CHECK(!validate(g).ok());
}

// The probes take the preset by core's one rule (kvbe/scenario/gpu_names.h, the device_names of
// resources/gpus.json).
TEST_CASE("presets: device names map to data-sheet presets") {
    CHECK(matchGpuPreset("NVIDIA H200") == std::optional<std::string>("h200"));
    CHECK(matchGpuPreset("NVIDIA H100 80GB HBM3") == std::optional<std::string>("h100-sxm"));
    CHECK(matchGpuPreset("NVIDIA H100 PCIe") == std::optional<std::string>("h100-pcie"));
    CHECK(matchGpuPreset("NVIDIA H100 NVL") == std::optional<std::string>("h100-nvl"));
    CHECK(matchGpuPreset("NVIDIA A100-SXM4-80GB") == std::optional<std::string>("a100-80gb-sxm"));
    CHECK(!matchGpuPreset("Tesla T4").has_value());
    for (const char* key :
         {"h200", "h100-sxm", "h100-pcie", "h100-nvl", "a100-80gb-sxm", "l40s", "b200"})
        CHECK_MSG(presets().findGpu(key) != nullptr, key);
}

namespace {
// softmax(QKᵀ · scale + mask) V, one full score row at a time.
std::vector<float> naiveAttention(const AttentionShape& s, const std::vector<float>& q,
                                  const std::vector<float>& k, const std::vector<float>& v) {
    const float scale = 1.0f / std::sqrt(float(s.dQk));
    std::vector<float> o(size_t(s.tokens) * s.qHeads * s.dV);
    for (int h = 0; h < s.qHeads; ++h) {
        const int kvh = h / (s.qHeads / s.kvHeads);
        for (int i = 0; i < s.tokens; ++i) {
            std::vector<double> w(size_t(s.tokens), 0.0);
            double mx = -1e300;
            for (int j = 0; j < s.tokens; ++j) {
                bool visible = j <= i;
                if (s.maskKind == kMaskSliding) visible = visible && i - j < s.window;
                if (s.maskKind == kMaskChunked) visible = visible && i / s.window == j / s.window;
                if (!visible) continue;
                double dot = 0;
                for (int c = 0; c < s.dQk; ++c)
                    dot += double(q[(size_t(i) * s.qHeads + h) * s.dQk + c]) *
                           k[(size_t(j) * s.kvHeads + kvh) * s.dQk + c];
                w[size_t(j)] = dot * scale;
                mx = std::max(mx, w[size_t(j)]);
            }
            double sum = 0;
            for (int j = 0; j <= i; ++j) {
                bool visible = true;
                if (s.maskKind == kMaskSliding) visible = i - j < s.window;
                if (s.maskKind == kMaskChunked) visible = i / s.window == j / s.window;
                w[size_t(j)] = visible ? std::exp(w[size_t(j)] - mx) : 0.0;
                sum += w[size_t(j)];
            }
            for (int c = 0; c < s.dV; ++c) {
                double acc = 0;
                for (int j = 0; j <= i; ++j)
                    acc += w[size_t(j)] * v[(size_t(j) * s.kvHeads + kvh) * s.dV + c];
                o[(size_t(i) * s.qHeads + h) * s.dV + c] = float(acc / sum);
            }
        }
    }
    return o;
}
} // namespace

TEST_CASE("reference attention: online softmax in tiles equals softmax(QK^T)V, every mask") {
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    struct Case {
        int tokens, hq, hkv, dqk, dv, mask, window;
    };
    for (const Case c :
         {Case{150, 4, 2, 16, 8, kMaskFull, 0}, Case{150, 4, 2, 16, 16, kMaskSliding, 37},
          Case{133, 2, 1, 24, 8, kMaskChunked, 50}, Case{70, 3, 3, 8, 8, kMaskSliding, 200}}) {
        AttentionShape s{c.tokens, c.hq, c.hkv, c.dqk, c.dv, c.mask, c.window, 0};
        std::vector<float> q(size_t(c.tokens) * c.hq * c.dqk), k(size_t(c.tokens) * c.hkv * c.dqk),
            v(size_t(c.tokens) * c.hkv * c.dv);
        for (auto* vec : {&q, &k, &v})
            for (auto& x : *vec)
                x = normal(rng) * 2.0f; // large scores stress the running maximum
        const auto expected = naiveAttention(s, q, k, v);
        for (int tile : {64, 16, 1}) {
            const auto got = referenceAttention(s, q, k, v, tile);
            double worst = 0;
            for (size_t i = 0; i < got.size(); ++i)
                worst = std::max(worst, double(std::fabs(got[i] - expected[i])));
            CHECK_MSG(worst < 2e-5, "mask " + std::to_string(c.mask) + ", tile " +
                                        std::to_string(tile) + ": max error " +
                                        std::to_string(worst));
        }
    }
    // Query i sees min(i + 1, w) keys under a sliding window, as core counts pairs.
    long long pairs = 0;
    for (int i = 0; i < 4096; ++i)
        pairs += i - firstVisibleKey(kMaskSliding, 128, i) + 1;
    CHECK_EQ(double(pairs), attentionPairs(AttnKind::Sliding, 128, 4096, 0));
    pairs = 0;
    for (int i = 0; i < 20000; ++i)
        pairs += i - firstVisibleKey(kMaskChunked, 8192, i) + 1;
    CHECK_EQ(double(pairs), attentionPairs(AttnKind::Chunked, 8192, 20000, 0));
}

TEST_CASE("bf16: round to nearest even") {
    CHECK_EQ(roundToBf16(1.0f), 1.0f);
    CHECK_EQ(roundToBf16(1.0f + 1.0f / 256), 1.0f);             // half an ulp: ties to even
    CHECK_EQ(roundToBf16(1.0f + 3.0f / 256), 1.0f + 1.0f / 64); // 1.5 ulp: up to the even one
    CHECK_EQ(roundToBf16(-2.5f), -2.5f);
}

namespace {
struct Run {
    int exitCode = -1;
    std::string out;
};
Run runCli(const std::string& args) {
    // CUDA_VISIBLE_DEVICES= hides every GPU, so this path is tested on GPU machines too.
    const std::string cmd = "CUDA_VISIBLE_DEVICES= '" KVBE_CLI_PATH "' " + args + " 2>/dev/null";
    Run r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t got = 0;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0)
        r.out.append(buf, got);
    const int status = pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}
} // namespace

TEST_CASE("no device: each GPU probe says so in one sentence, exit code 3") {
    for (const std::string probe :
         {"gpu-copy", "gpu-gemm-peak", "gpu-prefill --model meta-llama/Llama-3.2-3B"}) {
        const Run r = runCli("probe " + probe + " --format jsonl");
        CHECK_MSG(r.exitCode == 3, probe + ": exit " + std::to_string(r.exitCode));
        std::istringstream lines(r.out);
        std::vector<nlohmann::json> events;
        for (std::string line; std::getline(lines, line);)
            if (!line.empty()) events.push_back(nlohmann::json::parse(line, nullptr, false));
        CHECK_MSG(events.size() == 2, probe + ": " + r.out);
        if (events.size() != 2) continue;
        CHECK(events[0].contains("kvbe_probe"));
        CHECK(events[1].value("type", "") == "error");
        const std::string message = events[1].value("message", "");
        CHECK_MSG(!message.empty() && message.find('\n') == std::string::npos &&
                      (message.find("GPU") != std::string::npos ||
                       message.find("CUDA") != std::string::npos),
                  message);
    }
    // Bad input is reported before the device is looked for.
    CHECK_EQ(runCli("probe gpu-prefill --model meta-llama/Llama-3.2-3B --lengths 0").exitCode, 1);
    CHECK_EQ(runCli("probe gpu-prefill --model no-such-model --lengths 1k").exitCode,
             builtWithCuda() ? 1 : 3);
}

// The sizes and lengths of the GPU probes are read by core's parsers, as every flag is: GB is
// 1e9 bytes here as for the drive probes and calc, and m is 1024² tokens.
TEST_CASE("gpu probe flags: sizes and lengths read as everywhere else") {
    if (!builtWithCuda()) {
        // Without CUDA the GPU probes are stubs that say so (exit 3) before reading their sizes.
        CHECK_EQ(runCli("probe gpu-copy --sizes 5GB --format jsonl").exitCode, 3);
        return;
    }
    // 5GB = 5,000,000,000 bytes, past the 4 GiB = 4,294,967,296 the copy probe takes.
    Run r = runCli("probe gpu-copy --sizes 5GB --format jsonl");
    CHECK_EQ(r.exitCode, 1);
    CHECK_MSG(r.out.find("5000000000 bytes") != std::string::npos, r.out);
    // 4.2GB = 4,200,000,000 bytes is within it: accepted, then no device.
    r = runCli("probe gpu-copy --sizes 64KiB,4.2GB --format jsonl");
    CHECK_MSG(r.exitCode == 3, r.out);
    // 1m = 1,048,576 tokens, the longest prefill the probe plans; 1.5m is past it.
    r = runCli("probe gpu-prefill --model meta-llama/Llama-3.2-3B --lengths 1m --format jsonl");
    CHECK_MSG(r.exitCode == 3, r.out);
    r = runCli("probe gpu-prefill --model meta-llama/Llama-3.2-3B --lengths 1.5m --format jsonl");
    CHECK_EQ(r.exitCode, 1);
    CHECK_MSG(r.out.find("1572864 tokens is out of range") != std::string::npos, r.out);
    // GEMM sizes are counts: 8k = 8192.
    CHECK_EQ(runCli("probe gpu-gemm-peak --sizes 8k --format jsonl").exitCode, 3);
}

int main(int argc, char** argv) {
    return kvbe::test::runAll(argc, argv);
}
