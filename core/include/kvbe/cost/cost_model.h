// The arithmetic of docs/cost-model.md: recompute against load, and every break-even from it.
#pragma once

#include "kvbe/base/interpolation.h"
#include "kvbe/base/result.h"
#include "kvbe/model/model_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

enum class FlopModel { Simple, Detailed };
enum class Staging { None, Serial, Pipelined };

std::string_view toString(FlopModel m);
std::string_view toString(Staging s);
std::optional<FlopModel> parseFlopModel(std::string_view s);
std::optional<Staging> parseStaging(std::string_view s);

// One way a cached prefix reaches the GPU, after staging: bandwidth and fixed cost per hit.
struct TierPath {
    std::string name;
    double bandwidthBps = 0; // what one storage path delivers
    double tFixedS = 0;      // t0: the fixed cost per hit whatever the model
    // Bytes moved per useful byte of KV (≥ 1): a connector that stages through a minimum
    // allocation copies more than the prefix holds. Loads see B / amplification.
    double amplification = 1;
    // The per-layer part of the fixed cost: a hit costs t0 + layers · t_layer, with the model's
    // KV/state layers (CostModel::tFixed). 0: the fixed cost is t0 on every model.
    double tLayerS = 0;

    // The rate at which useful KV bytes arrive.
    double effectiveBandwidthBps() const { return bandwidthBps / amplification; }
};

// The largest amplification a scenario, preset or flag may give (bytes moved per useful byte).
inline constexpr double kMaxAmplification = 1000;

// Staging through host DRAM: one stage after the other (1/B = 1/B_tier + 1/B_link) or
// pipelined (B = min(B_tier, B_link)).
double stagedBandwidth(double tierBps, double linkBps, Staging staging);

struct CostInputs {
    ModelSpec model;
    FlopModel flopModel = FlopModel::Simple;
    std::optional<double> paramsOverride; // P of the simple model (default P_total / P_active)
    KvDtype kvDtype = KvDtype::BF16;
    // The recurrent / SSM state's dtype (hybrid models; vLLM's --mamba-ssm-cache-dtype).
    // Default: the model's stateDtypeDefault. The conv state stays in the model's dtype.
    std::optional<KvDtype> stateDtype;
    double peakFlops = 0;                 // dense peak of the compute dtype, FLOP/s
    double utilisation = 0.5;             // u, or u_max with a ramp
    std::optional<double> rampHalfTokens; // n_half of u(n) = u_max · n / (n + n_half)
    int tensorParallel = 1;
    bool sharedPath = false; // the t GPUs share one storage path (each sees B/t)
    std::optional<PrefillTable> measuredPrefill; // replaces the analytic recompute time
};

// Tensor parallel sizes a serving stack can run: the query heads divide by t, and the KV heads
// divide by t (t ≤ Hkv) or t divides by the KV heads (t > Hkv, each KV head replicated on
// t / Hkv GPUs). MLA keeps one latent per token on every rank, so only the query rule applies.
// Returns the sentence that says why t is refused, or nothing when t is fine.
std::optional<std::string> tensorParallelProblem(const ModelSpec& model, int t);
// Every size from 1 to maxT that tensorParallelProblem accepts, in increasing order.
std::vector<int> validTensorParallelSizes(const ModelSpec& model, int maxT = 1024);

class CostModel {
  public:
    // Checks every input and names the one that is wrong.
    static Result<CostModel> create(CostInputs inputs);

    const CostInputs& inputs() const { return m_in; }
    const ModelSpec& model() const { return m_in.model; }
    bool analytic() const { return !m_in.measuredPrefill.has_value(); }
    // P of the simple FLOP model.
    double simpleParams() const { return m_simpleP; }

    // FLOPs of a causal prefill of nNew tokens after nPast cached ones (whole model, all GPUs).
    double flops(double nNew, double nPast) const;
    // Recompute time per GPU.
    double tRecompute(double nNew, double nPast) const;
    double tMiss(double n) const { return tRecompute(n, 0); }
    // KV bytes of a p-token prefix (all tensor-parallel ranks together).
    double kvBytes(double p) const { return m_in.model.kvBytes(p, m_in.kvDtype); }
    double kvBytesPerToken() const { return m_in.model.kvBytesPerToken(m_in.kvDtype); }
    // Bytes of the state snapshot a hit loads once per cached prefix (hybrid models; 0 otherwise).
    double stateBytes() const {
        return m_in.model.stateBytes(m_in.stateDtype.value_or(m_in.model.stateDtypeDefault));
    }
    // The layers a per-layer fixed cost counts: those that hold KV or state.
    int kvStateLayers() const { return m_in.model.kvStateLayers(); }
    // A tier's fixed cost per hit on this model: t0 + layers · t_layer.
    double tFixed(const TierPath& tier) const {
        return tier.tFixedS + kvStateLayers() * tier.tLayerS;
    }
    // The tier with its fixed cost resolved for this model (t_layer folded into t0), for code
    // that reads TierPath::tFixedS as the whole fixed cost.
    TierPath resolved(TierPath tier) const {
        tier.tFixedS = tFixed(tier);
        tier.tLayerS = 0;
        return tier;
    }
    // Bytes one storage path moves for a p-token prefix: KV and state, per GPU as the TP layout
    // says.
    double loadBytes(double p) const;
    // Time to load a p-token prefix from a tier, per GPU.
    double tLoad(const TierPath& tier, double p) const;
    double tHit(const TierPath& tier, double n, double p) const;
    double speedup(const TierPath& tier, double n, double p) const;

    // B*(N): the bandwidth one storage path must deliver for a fully cached N-token prompt to
    // tie with recompute; none where t_re(N, 0) ≤ t_fixed.
    std::optional<double> breakevenBandwidth(double n, double tFixedS = 0) const;
    // The same with the tier's fixed cost on this model.
    std::optional<double> breakevenBandwidth(double n, const TierPath& tier) const {
        return breakevenBandwidth(n, tFixed(tier));
    }
    // p*_T: the smallest prefix whose load is no slower than its recompute; none when that
    // does not happen up to the context limit. Scan, then bisect.
    std::optional<double> breakevenPrefix(const TierPath& tier) const;
    // The closed form of the simple model with constant utilisation (none otherwise).
    std::optional<double> breakevenPrefixClosedForm(const TierPath& tier) const;
    // f*_T(N): p*/N where p* ≤ N; with sliding windows solved directly from t_hit ≤ t_miss.
    std::optional<double> minCachedFraction(const TierPath& tier, double n) const;
    std::optional<double> minCachedFraction(const TierPath& tier, double n,
                                            std::optional<double> pStar) const;
    // The direct solve of t_hit(N, p) ≤ t_miss(N) for p in [0, N], as a fraction.
    std::optional<double> minCachedFractionDirect(const TierPath& tier, double n) const;

  private:
    explicit CostModel(CostInputs in) : m_in(std::move(in)) {}
    double coldTime(double n) const; // analytic with ramp, or measured
    double perPathBytesFactor() const;

  public:
    // The fraction of the KV bytes one GPU holds under tensor parallelism.
    double kvSharePerGpu() const;
    // The same for the state: Mamba and linear-attention heads split evenly over t GPUs.
    double stateBytesPerPathFactor() const;

  private:
    CostInputs m_in;
    double m_simpleP = 0;
    double m_effectiveFlops = 0; // peak · u · t
};

// A break-even prefix as every view states it: the smallest whole prefix that pays (its load no
// slower than its recompute), ceil(p*). The default scenario's host DRAM has p* = 736.0000005:
// 736 tokens do not quite pay, 737 do. calc, the charts, the pin table, the Workload tab, the
// trace reports and the sign-off report all show this value; none rounds p* itself. None stays
// none.
std::optional<double> wholeBreakevenPrefix(std::optional<double> pStar);

} // namespace kvbe
