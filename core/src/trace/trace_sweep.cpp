// Every capacity of one tier in one pass (docs/workload-model.md, "One pass for every capacity").
// Under LRU with write-through placement every tier sees the same access stream, so a tier of
// capacity C holds exactly the C most recently used blocks: a block with stack distance d (the
// distinct blocks touched since its last access, counted at the request's arrival) is in every
// tier with C > d. A Fenwick tree over the live access times gives d in O(log n).
#include "kvbe/trace/trace_sim.h"

#include "trace_cache.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>

namespace kvbe {

namespace {

using detail::kMaxTiers;
constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();

// The live access times (each block's last access), counted below a time: a bit per time and a
// Fenwick tree over 64-time words. Where a Fenwick tree over the times themselves (4 bytes a
// time) is read at random far beyond the caches, this is 1/8 byte a time for the bits plus 1/16
// for the tree: a 12.7-million-access trace needs 2.4 MB instead of 51.
class LiveTimes {
  public:
    explicit LiveTimes(std::size_t times)
        : m_bits((times >> 6) + 1, 0), m_tree((times >> 6) + 2, 0) {}
    void add(std::size_t t) {
        m_bits[t >> 6] |= std::uint64_t(1) << (t & 63);
        bump((t >> 6) + 1, 1);
    }
    void remove(std::size_t t) {
        m_bits[t >> 6] &= ~(std::uint64_t(1) << (t & 63));
        bump((t >> 6) + 1, -1);
    }
    // Live times in [0, t].
    std::int64_t upTo(std::size_t t) const {
        std::int64_t s = 0;
        for (std::size_t i = t >> 6; i > 0; i -= i & (~i + 1))
            s += m_tree[i];
        const std::uint64_t w = m_bits[t >> 6];
        const unsigned b = static_cast<unsigned>(t & 63);
        return s + __builtin_popcountll(b == 63 ? w : w & ((std::uint64_t(2) << b) - 1));
    }

  private:
    void bump(std::size_t i, std::int32_t v) {
        for (; i < m_tree.size(); i += i & (~i + 1))
            m_tree[i] += v;
    }
    std::vector<std::uint64_t> m_bits;
    std::vector<std::int32_t> m_tree; // word w's count at index w + 1
};

Status checkSweep(const Trace& trace, const ReplayConfig& config, std::size_t X,
                  const std::vector<double>& capTokens) {
    if (!trace.summary.hasBlocks())
        return Error{"the trace has no block ids (" + std::string(toString(trace.summary.format)) +
                     "): a capacity sweep needs prefix ids"};
    if (config.placement != Placement::WriteThrough || config.policy != EvictionPolicy::Lru)
        return Error{
            "the one-pass capacity sweep needs LRU with write-through placement (inclusion); "
            "for cascade or S3-FIFO replay each capacity separately"};
    const std::size_t K = config.tiers.size() + 1;
    if (K > kMaxTiers)
        return Error{"tiers: at most " + std::to_string(kMaxTiers - 1) + " offload tiers"};
    if (X >= K)
        return Error{"sweep tier: index " + std::to_string(X) + " is not one of the " +
                     std::to_string(K) + " tiers"};
    if (capTokens.empty()) return Error{"capacities: expected at least one"};
    if (!(config.blockBytes > 0)) return Error{"block bytes: expected more than 0"};
    for (std::size_t g = 1; g < capTokens.size(); ++g)
        if (!(capTokens[g] >= capTokens[g - 1]))
            return Error{"capacities: expected an ascending grid"};
    return Ok{};
}

// The sweep of tier X over the grid: request(i) takes each request in trace order, result()
// turns the difference arrays into the points.
class CapacitySweep {
  public:
    CapacitySweep(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                  std::size_t X, const std::vector<double>& capTokens)
        : m_trace(trace), m_cost(cost), m_config(config), m_X(X), m_K(config.tiers.size() + 1),
          m_B(trace.summary.blockTokens), m_G(capTokens.size()), m_W(m_G + 1),
          m_capTokens(capTokens), m_cg(m_G), m_gTok(m_K * m_W, 0), m_gBlk(m_K * m_W, 0),
          m_gReq(m_K * m_W, 0), m_gTtft(m_W, 0), m_gGpu(m_W, 0), m_lTok(m_K * m_W, 0),
          m_touched(m_W, 0), m_live(trace.blocks.size() + 1), m_last(trace.distinctBlocks, 0) {
        for (std::size_t k = 0; k < m_K; ++k) {
            const double bytes =
                k == 0 ? config.gpuCapacityBytes : config.tiers[k - 1].capacityBytes;
            m_cap[k] = std::isfinite(bytes) ? static_cast<std::uint64_t>(std::floor(
                                                  bytes / config.blockBytes * (1 + 1e-12)))
                                            : kInf;
        }
        // A hair above the quotient: a log grid's 2048 may come out as 2047.9999….
        for (std::size_t g = 0; g < m_G; ++g)
            m_cg[g] = static_cast<std::uint64_t>(std::floor(capTokens[g] / m_B * (1 + 1e-12)));
        m_res.tierName = X == 0 ? "gpu" : config.tiers[X - 1].name;
    }

    void request(std::size_t i) {
        const auto ids = m_trace.blocksOf(i);
        const double N = m_trace.inputTokens[i];
        m_tokens += m_trace.inputTokens[i];
        m_blocks += ids.size();
        m_res.accesses += ids.size();
        stackDistances(ids);
        const double none = m_cost.tMiss(N);
        m_sumNone += none;
        hitRunEvents(N, none);
        ttftAtChanges(N, none);
    }

    SweepResult result();

  private:
    // The distances at arrival of the leading blocks seen before (m_dist), then the accesses.
    void stackDistances(std::span<const std::uint32_t> ids) {
        const std::size_t m = ids.size();
        for (std::size_t j = 0; j < m; ++j)
            __builtin_prefetch(&m_last[ids[j]]);
        m_dist.clear();
        for (std::size_t j = 0; j < m; ++j) {
            const std::uint32_t L = m_last[ids[j]];
            if (L == 0) break;
            m_dist.push_back(m_distinct - static_cast<std::uint64_t>(m_live.upTo(L)));
        }
        for (std::size_t j = 0; j < m; ++j) {
            const std::uint32_t id = ids[j];
            ++m_now;
            if (m_last[id])
                m_live.remove(m_last[id]);
            else
                ++m_distinct;
            m_live.add(m_now);
            m_last[id] = static_cast<std::uint32_t>(m_now);
        }
    }

    void touch(std::size_t g) {
        if (!m_touched[g]) {
            m_touched[g] = 1;
            m_touchedList.push_back(static_cast<std::uint32_t>(g));
        }
    }

    // Tier k serves `tok` tokens of the request at grid points [a, b).
    void event(std::size_t k, std::size_t a, std::size_t b, double tok, double N) {
        if (a >= b) return;
        const std::size_t W = m_W;
        m_gTok[k * W + a] += tok;
        m_gTok[k * W + b] -= tok;
        m_gBlk[k * W + a] += 1;
        m_gBlk[k * W + b] -= 1;
        m_gReq[k * W + a] += tok / N;
        m_gReq[k * W + b] -= tok / N;
        m_lTok[k * W + a] += tok;
        m_lTok[k * W + b] -= tok;
        touch(a);
        touch(b);
    }

    // Where each leading block is found at each grid point, and the GPU-only time.
    void hitRunEvents(double N, double none) {
        const std::size_t X = m_X, K = m_K, G = m_G;
        auto blockTok = [&](std::size_t j) {
            const double a = static_cast<double>(j) * m_B;
            return std::min(a + m_B, N) - a;
        };
        // GPU-only: the leading run held by the GPU alone.
        std::size_t R = 0;
        std::uint64_t runMax = 0;
        double gpuTok = 0, gpuPrevT = none;
        bool gpuFixedDone = false;
        m_gGpu[0] += X == 0 ? none : 0;
        for (std::size_t j = 0; j < m_dist.size(); ++j) {
            const std::uint64_t d = m_dist[j];
            runMax = std::max(runMax, d);
            const double tok = blockTok(j);
            if (X == 0) {
                const std::size_t gG = static_cast<std::size_t>(
                    std::upper_bound(m_cg.begin(), m_cg.end(), runMax) - m_cg.begin());
                if (gG < G) {
                    gpuTok += tok;
                    const double p = gpuTok;
                    const double t = m_cost.tRecompute(N - p, p);
                    m_gGpu[gG] += t - gpuPrevT;
                    gpuPrevT = t;
                }
            } else if (!gpuFixedDone) {
                if (runMax < m_cap[0])
                    gpuTok += tok;
                else
                    gpuFixedDone = true;
            }
            // Fastest fixed tier holding it, and from which grid point tier X holds it.
            std::size_t f = K;
            for (std::size_t k = 0; k < K; ++k)
                if (k != X && m_cap[k] > d) {
                    f = k;
                    break;
                }
            const std::size_t gX = static_cast<std::size_t>(
                std::upper_bound(m_cg.begin(), m_cg.end(), d) - m_cg.begin());
            const std::size_t pres = f < K ? 0 : gX;
            R = std::max(R, pres);
            if (R >= G) break;
            if (f < K && X < f) {
                const std::size_t s = std::max(R, gX);
                event(f, R, s, tok, N);
                event(X, s, G, tok, N);
            } else if (f < K) {
                event(f, R, G, tok, N);
            } else {
                event(X, R, G, tok, N);
            }
        }
        if (X != 0) m_sumGpuFixed += m_cost.tRecompute(N - gpuTok, gpuTok);
    }

    // TTFT under `always` at each grid point where this request's hit run changes.
    void ttftAtChanges(double N, double none) {
        std::sort(m_touchedList.begin(), m_touchedList.end());
        std::array<double, kMaxTiers> acc{};
        double prevT = none;
        m_gTtft[0] += none;
        for (const std::uint32_t g : m_touchedList) {
            for (std::size_t k = 0; k < m_K; ++k) {
                acc[k] += m_lTok[k * m_W + g];
                m_lTok[k * m_W + g] = 0;
            }
            m_touched[g] = 0;
            if (g >= m_G) continue;
            double p = 0, t = 0;
            for (std::size_t k = 0; k < m_K; ++k) {
                if (acc[k] < 0.5) continue; // whole tokens: below a half is rounding residue
                p += acc[k];
                if (k > 0) t += m_cost.tLoad(m_config.tiers[k - 1].path, acc[k]);
            }
            t += m_cost.tRecompute(N - p, p);
            m_gTtft[g] += t - prevT;
            prevT = t;
        }
        m_touchedList.clear();
    }

    const Trace& m_trace;
    const CostModel& m_cost;
    const ReplayConfig& m_config;
    const std::size_t m_X, m_K; // the tier swept; the GPU and the offload tiers
    const double m_B;           // tokens per block
    const std::size_t m_G, m_W; // grid points; and one more for the difference arrays' ends
    const std::vector<double>& m_capTokens;
    std::array<std::uint64_t, kMaxTiers> m_cap{}; // the fixed tiers' capacities in blocks
    std::vector<std::uint64_t> m_cg;              // the grid in blocks
    SweepResult m_res;

    // Global difference arrays over the grid, per tier: tokens, blocks, per-request fractions.
    std::vector<double> m_gTok, m_gBlk, m_gReq, m_gTtft, m_gGpu;
    double m_sumNone = 0, m_sumGpuFixed = 0;
    // Per-request local differences (tokens per tier), cleared where touched.
    std::vector<double> m_lTok;
    std::vector<std::uint8_t> m_touched;
    std::vector<std::uint32_t> m_touchedList;

    LiveTimes m_live;
    detail::BlockArray<std::uint32_t> m_last; // access time + 1 … 0: never
    std::uint64_t m_now = 0, m_distinct = 0;
    std::vector<std::uint64_t> m_dist;
    std::uint64_t m_tokens = 0, m_blocks = 0;
};

SweepResult CapacitySweep::result() {
    const std::size_t n = m_trace.size(), K = m_K, W = m_W;
    const double reqs = static_cast<double>(n);
    std::vector<std::array<double, 3>> run(K, {0, 0, 0});
    double ttft = 0, gpu = 0;
    for (std::size_t g = 0; g < m_G; ++g) {
        CapacityPoint pt;
        pt.capacityTokens = m_capTokens[g];
        pt.capacityBytes = m_capTokens[g] / m_B * m_config.blockBytes;
        ttft += m_gTtft[g];
        gpu += m_gGpu[g];
        pt.tiers.resize(K);
        for (std::size_t k = 0; k < K; ++k) {
            run[k][0] += m_gTok[k * W + g];
            run[k][1] += m_gBlk[k * W + g];
            run[k][2] += m_gReq[k * W + g];
            pt.tiers[k].tokenWeighted = m_tokens ? run[k][0] / static_cast<double>(m_tokens) : 0;
            pt.tiers[k].blockWeighted = m_blocks ? run[k][1] / static_cast<double>(m_blocks) : 0;
            pt.tiers[k].perRequest = n ? run[k][2] / reqs : 0;
            pt.anyTier.tokenWeighted += pt.tiers[k].tokenWeighted;
            pt.anyTier.blockWeighted += pt.tiers[k].blockWeighted;
            pt.anyTier.perRequest += pt.tiers[k].perRequest;
        }
        pt.meanTtftNone = n ? m_sumNone / reqs : 0;
        pt.meanTtftAlways = n ? ttft / reqs : 0;
        pt.meanTtftGpuOnly = n ? (m_X == 0 ? gpu : m_sumGpuFixed) / reqs : 0;
        pt.ttftSavedVsNone = pt.meanTtftNone > 0 ? 1 - pt.meanTtftAlways / pt.meanTtftNone : 0;
        pt.ttftSavedVsGpuOnly =
            pt.meanTtftGpuOnly > 0 ? 1 - pt.meanTtftAlways / pt.meanTtftGpuOnly : 0;
        // The means come out of difference arrays: clear the rounding residue of equal ones.
        if (std::abs(pt.ttftSavedVsGpuOnly) < 1e-12) pt.ttftSavedVsGpuOnly = 0;
        if (std::abs(pt.ttftSavedVsNone) < 1e-12) pt.ttftSavedVsNone = 0;
        m_res.points.push_back(std::move(pt));
    }
    return std::move(m_res);
}

} // namespace

Result<SweepResult> sweepCapacity(const Trace& trace, const CostModel& cost,
                                  const ReplayConfig& config, std::size_t X,
                                  const std::vector<double>& capTokens,
                                  const std::function<bool(double)>& progress) {
    if (auto ok = checkSweep(trace, config, X, capTokens); !ok) return ok.error();
    CapacitySweep sweep(trace, cost, config, X, capTokens);
    const std::size_t n = trace.size();
    for (std::size_t i = 0; i < n; ++i) {
        if (progress && (i & 4095u) == 0 &&
            !progress(static_cast<double>(i) / static_cast<double>(n)))
            return Error{"the sweep was cancelled"};
        sweep.request(i);
    }
    if (progress) progress(1.0);
    return sweep.result();
}

} // namespace kvbe
