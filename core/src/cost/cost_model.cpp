#include "kvbe/cost/cost_model.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

std::string_view toString(FlopModel m) {
    return m == FlopModel::Simple ? "simple" : "detailed";
}
std::string_view toString(Staging s) {
    switch (s) {
    case Staging::None:
        return "none";
    case Staging::Serial:
        return "serial";
    case Staging::Pipelined:
        return "pipelined";
    }
    return "none";
}
std::optional<FlopModel> parseFlopModel(std::string_view s) {
    if (s == "simple") return FlopModel::Simple;
    if (s == "detailed") return FlopModel::Detailed;
    return std::nullopt;
}
std::optional<Staging> parseStaging(std::string_view s) {
    if (s == "none" || s == "direct") return Staging::None;
    if (s == "serial") return Staging::Serial;
    if (s == "pipelined") return Staging::Pipelined;
    return std::nullopt;
}

double stagedBandwidth(double tierBps, double linkBps, Staging staging) {
    switch (staging) {
    case Staging::None:
        return tierBps;
    case Staging::Serial:
        return 1.0 / (1.0 / tierBps + 1.0 / linkBps);
    case Staging::Pipelined:
        return std::min(tierBps, linkBps);
    }
    return tierBps;
}

namespace {

// The rule of tensorParallelProblem, without the sentence.
bool tensorParallelRuns(const ModelSpec& m, int t) {
    if (t == 1) return true;
    if (t < 1 || m.qHeads % t != 0) return false;
    if (m.mla || m.kvHeads <= 0) return true;
    return t <= m.kvHeads ? m.kvHeads % t == 0 : t % m.kvHeads == 0;
}

} // namespace

std::optional<std::string> tensorParallelProblem(const ModelSpec& m, int t) {
    if (tensorParallelRuns(m, t)) return std::nullopt;
    std::string valid;
    for (int v : validTensorParallelSizes(m))
        valid += (valid.empty() ? "" : ", ") + std::to_string(v);
    const std::string head = "tensor parallel " + std::to_string(t) + " cannot run " + m.id + ": ";
    const std::string tail = "; sizes this model can run: " + valid;
    const std::string ts = std::to_string(t), hq = std::to_string(m.qHeads),
                      hkv = std::to_string(m.kvHeads);
    if (t < 1) return head + "expected at least 1 GPU" + tail;
    if (m.qHeads % t != 0)
        return head + "its " + hq + " query heads do not divide by " + ts +
               " (serving stacks give every GPU the same number of query heads)" + tail;
    if (t <= m.kvHeads)
        return head + "its " + hkv + " KV heads do not divide by " + ts + " (up to " + hkv +
               " GPUs the KV heads are split evenly; past that each is replicated, which needs a "
               "multiple of " +
               hkv + ")" + tail;
    return head + ts + " is more than its " + hkv + " KV heads but not a multiple of " + hkv +
           " (each KV head is replicated on t / " + hkv + " GPUs, a whole number)" + tail;
}

std::vector<int> validTensorParallelSizes(const ModelSpec& m, int maxT) {
    std::vector<int> out;
    for (int t = 1; t <= std::min(maxT, std::max(1, m.qHeads)); ++t)
        if (tensorParallelRuns(m, t)) out.push_back(t);
    return out;
}

Result<CostModel> CostModel::create(CostInputs in) {
    const auto& m = in.model;
    if (m.layers <= 0 || m.qHeads <= 0 ||
        (m.attention.empty() && m.stateSsmElems <= 0 && m.stateConvElems <= 0))
        return Error{"model '" + m.id + "' has no decoder layers or heads"};
    if (!std::isfinite(in.peakFlops) || in.peakFlops <= 0)
        return Error{"GPU peak: expected a positive number of FLOP/s"};
    if (!std::isfinite(in.utilisation) || in.utilisation <= 0 || in.utilisation > 1)
        return Error{"utilisation " + std::to_string(in.utilisation) +
                     ": expected a fraction in (0, 1], e.g. 0.5 for 50 %"};
    if (in.rampHalfTokens && (!std::isfinite(*in.rampHalfTokens) || *in.rampHalfTokens < 0))
        return Error{"utilisation ramp: expected n_half ≥ 0 tokens"};
    if (in.tensorParallel < 1 || in.tensorParallel > 1024)
        return Error{"tensor parallel degree " + std::to_string(in.tensorParallel) +
                     ": expected a whole number from 1 to 1024"};
    if (auto why = tensorParallelProblem(m, in.tensorParallel)) return Error{*why};
    if (in.paramsOverride && (!std::isfinite(*in.paramsOverride) || *in.paramsOverride <= 0))
        return Error{"parameter override: expected a positive parameter count"};
    CostModel cm(std::move(in));
    const auto& mm = cm.m_in.model;
    cm.m_simpleP =
        cm.m_in.paramsOverride.value_or(mm.experts > 0 ? mm.paramsActive : mm.paramsTotal);
    cm.m_effectiveFlops = cm.m_in.peakFlops * cm.m_in.utilisation * cm.m_in.tensorParallel;
    return cm;
}

double CostModel::flops(double nNew, double nPast) const {
    const auto& m = m_in.model;
    if (m_in.flopModel == FlopModel::Simple) {
        const double total = nPast + nNew;
        return 2 * m_simpleP * nNew +
               m.simpleAttentionCoefficient() * (total * total - nPast * nPast);
    }
    const double lmHead = nNew > 0 ? 2 * m.lmHeadParams : 0;
    // Recurrences (linear attention, Mamba) cost a constant per token: linear in n.
    return (2 * m.paramsMatmul + m.recurrentFlopsPerToken) * nNew + lmHead +
           m.attentionFlops(nNew, nPast);
}

double CostModel::coldTime(double n) const {
    if (m_in.measuredPrefill) return (*m_in.measuredPrefill)(n);
    double rate = m_effectiveFlops;
    if (m_in.rampHalfTokens && n > 0) rate *= n / (n + *m_in.rampHalfTokens);
    return n > 0 ? flops(n, 0) / rate : 0;
}

double CostModel::tRecompute(double nNew, double nPast) const {
    if (nNew <= 0) return 0;
    // Constant utilisation: the FLOPs of the step. Otherwise (a ramp or a measured table)
    // additivity gives t_re(n_new, n_past) = t(n_past + n_new) − t(n_past).
    if (analytic() && !m_in.rampHalfTokens) return flops(nNew, nPast) / m_effectiveFlops;
    return std::max(0.0, coldTime(nPast + nNew) - coldTime(nPast));
}

double CostModel::kvSharePerGpu() const {
    // Tensor parallelism splits KV heads across GPUs, but not below one head per GPU (with more
    // GPUs than KV heads, heads are replicated), and an MLA latent is not split at all: every
    // rank keeps the whole latent. cost-model.md's "KV bytes split across t GPUs" holds only
    // while t divides the KV heads; this is the general case.
    const int t = m_in.tensorParallel;
    const auto& m = m_in.model;
    if (t <= 1) return 1.0;
    if (m.mla) return 1.0;
    const int heads = std::max(1, m.kvHeads);
    const int perGpu = (heads + t - 1) / t;
    return static_cast<double>(perGpu) / heads;
}

double CostModel::perPathBytesFactor() const {
    // With its own path, each GPU moves its share over B; when t GPUs share one path, each sees
    // B/t, so the bytes of all t GPUs cross the one path.
    const double share = kvSharePerGpu();
    return m_in.sharedPath ? share * m_in.tensorParallel : share;
}

double CostModel::stateBytesPerPathFactor() const {
    const int t = m_in.tensorParallel;
    return m_in.sharedPath ? 1.0 : 1.0 / t;
}

double CostModel::loadBytes(double p) const {
    if (p <= 0) return 0;
    return kvBytes(p) * perPathBytesFactor() + stateBytes() * stateBytesPerPathFactor();
}

// t_load = t_fixed + (kv_bytes(p) + state_bytes) / B, t_fixed = t0 + layers · t_layer: a hit
// loads the attention layers' KV for p tokens and one snapshot of the recurrent and conv state.
double CostModel::tLoad(const TierPath& tier, double p) const {
    if (p <= 0) return 0;
    return tFixed(tier) + loadBytes(p) / tier.effectiveBandwidthBps();
}

double CostModel::tHit(const TierPath& tier, double n, double p) const {
    p = std::clamp(p, 0.0, n);
    return tLoad(tier, p) + tRecompute(n - p, p);
}

double CostModel::speedup(const TierPath& tier, double n, double p) const {
    return tMiss(n) / tHit(tier, n, p);
}

std::optional<double> CostModel::breakevenBandwidth(double n, double tFixedS) const {
    const double budget = tMiss(n) - tFixedS;
    if (!(budget > 0) || n <= 0) return std::nullopt;
    const double b = loadBytes(n) / budget;
    if (!std::isfinite(b)) return std::nullopt;
    return b;
}

std::optional<double> CostModel::breakevenPrefixClosedForm(const TierPath& tier) const {
    if (m_in.flopModel != FlopModel::Simple || !analytic() || m_in.rampHalfTokens ||
        m_in.model.hasWindows())
        return std::nullopt;
    // t_re(p, 0) − t_load(p) = a·p² + b·p − t_fixed
    const double a = m_in.model.simpleAttentionCoefficient() / m_effectiveFlops;
    const double b = 2 * m_simpleP / m_effectiveFlops -
                     kvBytesPerToken() * perPathBytesFactor() / tier.effectiveBandwidthBps();
    // The state snapshot is a per-hit constant, like t_fixed, moved at the effective rate.
    const double c =
        -(tFixed(tier) + stateBytes() * stateBytesPerPathFactor() / tier.effectiveBandwidthBps());
    double p = 0;
    if (a > 0) {
        const double disc = b * b - 4 * a * c;
        // Stable form of (−b + √disc) / 2a.
        p = b >= 0 ? (2 * -c) / (b + std::sqrt(disc)) : (-b + std::sqrt(disc)) / (2 * a);
    } else if (b > 0) {
        p = -c / b;
    } else {
        return std::nullopt;
    }
    p = std::max(p, 0.0);
    if (p > m_in.model.contextLimit) return std::nullopt;
    return p;
}

std::optional<double> wholeBreakevenPrefix(std::optional<double> pStar) {
    if (!pStar) return std::nullopt;
    const double p = *pStar;
    if (!(p > 0)) return 0.0;
    if (!std::isfinite(p)) return p;
    return std::ceil(p);
}

std::optional<double> CostModel::breakevenPrefix(const TierPath& tier) const {
    auto gain = [&](double p) { return tRecompute(p, 0) - tLoad(tier, p); };
    const double limit = m_in.model.contextLimit;
    // With no fixed cost a tier that beats the linear term pays from the first token.
    if (tFixed(tier) <= 0 && stateBytes() <= 0 && gain(1e-6) >= 0) return 0.0;
    double lo = 0, hi = 0;
    bool found = false;
    for (double p = 1;; p = std::min(limit, p * 1.05 + 1)) {
        if (gain(p) >= 0) {
            hi = p;
            found = true;
            break;
        }
        lo = p;
        if (p >= limit) break;
    }
    if (!found) return std::nullopt;
    for (int i = 0; i < 80 && hi - lo > 1e-9 * std::max(1.0, hi); ++i) {
        const double mid = 0.5 * (lo + hi);
        (gain(mid) >= 0 ? hi : lo) = mid;
    }
    return hi;
}

std::optional<double> CostModel::minCachedFractionDirect(const TierPath& tier, double n) const {
    if (n <= 0) return std::nullopt;
    const double miss = tMiss(n);
    auto pays = [&](double p) { return tHit(tier, n, p) <= miss; };
    if (!pays(n)) {
        // t_hit is not always monotone in p (windows), so look below N too.
        bool any = false;
        for (int i = 1; i < 64 && !any; ++i)
            any = pays(n * i / 64.0);
        if (!any) return std::nullopt;
    }
    double lo = 0, hi = n;
    // Scan for the first paying p, then bisect.
    const int steps = 256;
    for (int i = 1; i <= steps; ++i) {
        const double p = n * i / steps;
        if (pays(p)) {
            hi = p;
            break;
        }
        lo = p;
    }
    for (int i = 0; i < 80 && hi - lo > 1e-9 * n; ++i) {
        const double mid = 0.5 * (lo + hi);
        (pays(mid) ? hi : lo) = mid;
    }
    return hi / n;
}

std::optional<double> CostModel::minCachedFraction(const TierPath& tier, double n,
                                                   std::optional<double> pStar) const {
    if (m_in.model.hasWindows()) return minCachedFractionDirect(tier, n);
    if (!pStar || *pStar > n || n <= 0) return std::nullopt;
    return *pStar / n;
}

std::optional<double> CostModel::minCachedFraction(const TierPath& tier, double n) const {
    return minCachedFraction(tier, n,
                             m_in.model.hasWindows() ? std::nullopt : breakevenPrefix(tier));
}

} // namespace kvbe
