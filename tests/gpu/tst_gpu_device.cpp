// GPU tests that need a GPU: the attention kernel against the CPU reference on small shapes
// (every mask and head size), cuBLASLt GEMMs against a CPU product, and each probe end to end
// at small sizes. Without a usable GPU they are skipped (exit 77), unless KVBE_REQUIRE_GPU=1,
// when that is a failure: a broken GPU lane must not go quietly green.
#include "check.h"

#include "cuda_device.h"
#include "flash_attention.h"
#include "gemm_runner.h"
#include "kvbe/gpu/attention_mask.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/gpu/reference_attention.h"
#include "kvbe/probes/stream.h"

#include <cstdlib>
#include <cstring>
#include <random>

using namespace kvbe;
using namespace kvbe::gpu;

namespace {

std::uint16_t bf16Bits(float x) {
    const float r = roundToBf16(x);
    std::uint32_t bits = 0;
    std::memcpy(&bits, &r, sizeof bits);
    return std::uint16_t(bits >> 16);
}

float fromBits(std::uint16_t b) {
    const std::uint32_t bits = std::uint32_t(b) << 16;
    float f = 0;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// Random BF16 values: the float copy is exactly what the GPU sees.
std::vector<float> randomBf16(size_t n, std::mt19937& rng, std::vector<std::uint16_t>& bits) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> f(n);
    bits.resize(n);
    for (size_t i = 0; i < n; ++i) {
        bits[i] = bf16Bits(normal(rng));
        f[i] = fromBits(bits[i]);
    }
    return f;
}

Buffer upload(const std::vector<std::uint16_t>& bits) {
    auto b = Buffer::allocate(MemoryKind::Device, bits.size() * 2 + 16, "test data");
    if (!b) {
        kvbe::test::fail(__FILE__, __LINE__, b.message());
        return {};
    }
    cudaMemcpy(b->get(), bits.data(), bits.size() * 2, cudaMemcpyHostToDevice);
    return std::move(*b);
}

std::vector<float> download(const Buffer& b, size_t n) {
    std::vector<std::uint16_t> bits(n);
    cudaMemcpy(bits.data(), b.get(), n * 2, cudaMemcpyDeviceToHost);
    std::vector<float> f(n);
    for (size_t i = 0; i < n; ++i)
        f[i] = fromBits(bits[i]);
    return f;
}

// Collects what a probe reports.
class CollectSink : public probes::ProbeSink {
  public:
    void begin(const std::string&, const nlohmann::ordered_json& p) override { params = p; }
    void progress(double, const std::string&) override {}
    void point(const probes::ProbePoint& p) override { points.push_back(p); }
    void note(const std::string&) override {}
    void table(const probes::TextTable&) override {}
    void result(const nlohmann::ordered_json& s) override { summary = s; }
    void error(const std::string& m) override { errors.push_back(m); }
    nlohmann::ordered_json params, summary;
    std::vector<probes::ProbePoint> points;
    std::vector<std::string> errors;
};

} // namespace

TEST_CASE("attention kernel matches the CPU reference: masks, GQA, head sizes, ragged tails") {
    struct Case {
        int tokens, hq, hkv, dqk, dv, mask, window, stages;
    };
    std::mt19937 rng(11);
    for (const Case c :
         {Case{200, 4, 2, 64, 64, kMaskFull, 0, 0}, Case{300, 4, 1, 128, 128, kMaskFull, 0, 0},
          Case{333, 2, 1, 128, 128, kMaskSliding, 100, 0},
          Case{257, 2, 2, 192, 128, kMaskFull, 0, 0},
          Case{190, 2, 1, 128, 128, kMaskChunked, 80, 0},
          Case{130, 2, 1, 256, 256, kMaskFull, 0, 0}, Case{64, 1, 1, 64, 64, kMaskSliding, 1, 0},
          Case{1, 2, 2, 128, 128, kMaskFull, 0, 0}, Case{300, 4, 1, 128, 128, kMaskFull, 0, 1},
          Case{333, 2, 1, 128, 128, kMaskSliding, 100, 1},
          Case{200, 2, 1, 64, 64, kMaskFull, 0, 2}}) {
        std::vector<std::uint16_t> qb, kb, vb;
        const auto q = randomBf16(size_t(c.tokens) * c.hq * c.dqk, rng, qb);
        const auto k = randomBf16(size_t(c.tokens) * c.hkv * c.dqk, rng, kb);
        const auto v = randomBf16(size_t(c.tokens) * c.hkv * c.dv, rng, vb);
        Buffer dq = upload(qb), dk = upload(kb), dv = upload(vb);
        auto dout =
            Buffer::allocate(MemoryKind::Device, size_t(c.tokens) * c.hq * c.dv * 2, "output");
        CHECK(dout.ok());
        if (!dout) continue;
        AttentionArgs a;
        a.q = dq.get();
        a.k = dk.get();
        a.v = dv.get();
        a.o = dout->get();
        a.qStride = std::int64_t(c.hq) * c.dqk;
        a.kStride = std::int64_t(c.hkv) * c.dqk;
        a.vStride = std::int64_t(c.hkv) * c.dv;
        a.oStride = std::int64_t(c.hq) * c.dv;
        a.tokens = c.tokens;
        a.qHeads = c.hq;
        a.kvHeads = c.hkv;
        a.dQk = c.dqk;
        a.dV = c.dv;
        a.maskKind = c.mask;
        a.window = c.window;
        a.stages = c.stages;
        auto st = launchFlashAttention(a, nullptr);
        CHECK_MSG(st.ok(), st.ok() ? "" : st.message());
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        const auto got = download(*dout, size_t(c.tokens) * c.hq * c.dv);
        AttentionShape s{c.tokens, c.hq, c.hkv, c.dqk, c.dv, c.mask, c.window, 0};
        const auto want = referenceAttention(s, q, k, v);
        double worst = 0, mean = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            const double e = std::isfinite(got[i]) ? std::fabs(double(got[i]) - want[i]) : 1e9;
            worst = std::max(worst, e);
            mean += e / double(got.size());
        }
        // BF16 probabilities and outputs: about 3 significant digits.
        const std::string what = std::to_string(c.tokens) + " tokens, d " + std::to_string(c.dqk) +
                                 "/" + std::to_string(c.dv) + ", mask " + std::to_string(c.mask) +
                                 ", stages " + std::to_string(c.stages) + ": max error " +
                                 std::to_string(worst) + ", mean " + std::to_string(mean);
        CHECK_MSG(worst < 3e-2 && mean < 4e-3, what);
        std::printf("    %s\n", what.c_str());
    }
}

TEST_CASE("cuBLASLt GEMM: C = A·Wᵀ matches a CPU product, odd and one-row shapes") {
    auto runner = GemmRunner::create(32 << 20);
    CHECK(runner.ok());
    if (!runner) return;
    std::mt19937 rng(5);
    for (auto [m, n, k] :
         {std::tuple<int, int, int>{77, 96, 128}, {1, 1000, 256}, {513, 64, 320}}) {
        std::vector<std::uint16_t> ab, wb;
        const auto a = randomBf16(size_t(m) * k, rng, ab);
        const auto w = randomBf16(size_t(n) * k, rng, wb);
        Buffer da = upload(ab), dw = upload(wb);
        auto dc = Buffer::allocate(MemoryKind::Device, size_t(m) * n * 2, "C");
        CHECK(dc.ok());
        if (!dc) continue;
        auto st = (*runner)->run(da.get(), dw.get(), dc->get(), m, n, k, nullptr);
        CHECK_MSG(st.ok(), st.ok() ? "" : st.message());
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        const auto c = download(*dc, size_t(m) * n);
        double worst = 0;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < n; ++j) {
                double ref = 0;
                for (int p = 0; p < k; ++p)
                    ref += double(a[size_t(i) * k + p]) * w[size_t(j) * k + p];
                worst = std::max(worst, std::fabs(c[size_t(i) * n + j] - ref) /
                                            (std::fabs(ref) + std::sqrt(double(k))));
            }
        CHECK_MSG(worst < 1e-2, std::to_string(m) + "×" + std::to_string(n) + "×" +
                                    std::to_string(k) + ": " + std::to_string(worst));
    }
}

TEST_CASE("gpu-copy end to end: every direction and kind, verified, positive rates") {
    CopySettings s;
    s.sizes = {64 << 10, 28 << 20};
    s.samples = 3;
    GpuCopyProbe probe(s);
    CollectSink sink;
    const auto out = probe.run({}, sink);
    CHECK_MSG(out.ok(), out.message);
    CHECK_EQ(sink.points.size(), size_t(2 * 3 * 2));
    for (const auto& p : sink.points)
        CHECK_MSG(p.y > 0.01 && std::isfinite(p.y), p.series);
    CHECK(sink.params["gpu"].contains("name"));
}

TEST_CASE("gpu-gemm-peak end to end") {
    GemmPeakSettings s;
    s.sizes = {1024, 2048};
    s.samples = 3;
    GemmPeakProbe probe(s);
    CollectSink sink;
    const auto out = probe.run({}, sink);
    CHECK_MSG(out.ok(), out.message);
    CHECK(sink.summary.value("peak_tflops", 0.0) > 1.0);
}

TEST_CASE("gpu-prefill end to end: dense GQA, MLA + MoE, sliding + MoE") {
    for (const char* model :
         {"meta-llama/Llama-3.2-3B", "deepseek-ai/DeepSeek-V3", "openai/gpt-oss-120b"}) {
        PrefillSettings s;
        s.model = model;
        s.lengths = {256, 1024};
        s.samples = 3;
        s.gemmPeakTflops = 500; // skip the 8192³ measurement here
        PrefillProbe probe(s);
        CollectSink sink;
        const auto out = probe.run({}, sink);
        CHECK_MSG(out.ok(), std::string(model) + ": " + out.message);
        if (!out.ok()) continue;
        const auto& rows = sink.summary["prefill"];
        CHECK(rows.size() == 2);
        if (rows.size() != 2) continue;
        const double t1 = rows[0]["t_prefill_s"], t2 = rows[1]["t_prefill_s"];
        CHECK_MSG(t1 > 0 && t2 > t1, model);
        CHECK(rows[1]["tflops"].get<double>() > 1);
    }
}

TEST_CASE("gpu-prefill refuses what does not fit, in one sentence, before allocating") {
    PrefillSettings s;
    s.model = "meta-llama/Llama-3.1-405B";
    s.lengths = {1 << 20};
    PrefillProbe probe(s);
    CollectSink sink;
    const auto out = probe.run({}, sink);
    CHECK(out.exit == probes::ExitCode::CannotRun);
    CHECK_MSG(out.message.find("needs") != std::string::npos &&
                  out.message.find("free") != std::string::npos,
              out.message);
    CHECK_EQ(sink.errors.size(), size_t(1));
}

int main(int argc, char** argv) {
    const char* require = std::getenv("KVBE_REQUIRE_GPU");
    const bool required = require && std::string(require) == "1";
    if (auto st = cudaUsable(); !st) {
        std::printf("%s: %s\n", required ? "FAIL (KVBE_REQUIRE_GPU=1)" : "SKIP",
                    st.message().c_str());
        return required ? 1 : 77;
    }
    return kvbe::test::runAll(argc, argv);
}
