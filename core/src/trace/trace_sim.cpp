// Replay of a trace through the tiered prefix cache (docs/workload-model.md): per request the
// lookup, the admission rules on its hit run (trace_admission.h), the tiers' update and its
// writes (trace_write_queues.h); at the end the hit ratios, write rates and, with prefill
// servers, the queueing (trace_loads.h). The caches themselves are in trace_cache.h.
#include "kvbe/trace/trace_sim.h"

#include "kvbe/base/statistics.h"

#include "trace_admission.h"
#include "trace_cache.h"
#include "trace_link_use.h"
#include "trace_loads.h"
#include "trace_write_queues.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <span>

namespace kvbe {

namespace {

using detail::BusySeries;
using detail::FifoLoads;
using detail::kMaxTiers;
using detail::kNoLimit;
using detail::Recompute;
using detail::RequestCost;
using detail::RuleTimes;
using detail::TierCache;
using detail::TierTokens;
using detail::WriteQueues;

std::uint64_t capacityBlocks(double bytes, double blockBytes) {
    if (!std::isfinite(bytes)) return kNoLimit;
    // A hair above the quotient: "6000 blocks" given in bytes must not round down to 5999.
    return static_cast<std::uint64_t>(std::floor(bytes / blockBytes * (1 + 1e-12)));
}

// The 1-minute window of a trace time (clamped: a fuzzed timestamp can be 1e300 s).
std::uint64_t windowOf(double t) {
    return static_cast<std::uint64_t>(std::floor(std::min(t / 60.0, 1e18)));
}

// Rules in the order of ReplayResult::rules.
enum Rule : std::size_t { None, GpuOnly, Always, Breakeven, Optimal, kRules };
constexpr const char* kRuleNames[kRules] = {"none", "gpu-only", "always", "breakeven", "optimal"};

Status checkConfig(const Trace& trace, const ReplayConfig& c) {
    if (!trace.summary.hasBlocks())
        return Error{"the trace has no block ids (" + std::string(toString(trace.summary.format)) +
                     " traces carry lengths and arrivals only): it feeds the length histogram, not "
                     "a replay"};
    if (!(c.blockBytes > 0))
        return Error{"block bytes: expected more than 0 (the model's KV bytes per token times the "
                     "block size)"};
    if (c.tiers.size() + 1 > kMaxTiers)
        return Error{"tiers: " + std::to_string(c.tiers.size()) +
                     " offload tiers; expected at most " + std::to_string(kMaxTiers - 1)};
    if (!(c.gpuCapacityBytes >= 0)) return Error{"GPU cache capacity: expected 0 or more bytes"};
    if (c.storeAfter < 1 || c.storeAfter > kMaxStoreAfter)
        return Error{"store after: " + std::to_string(c.storeAfter) +
                     " sightings; expected a whole number from 1 (store every block) to " +
                     std::to_string(kMaxStoreAfter)};
    if (!(c.rateScale > 0) || !std::isfinite(c.rateScale))
        return Error{"rate scale: expected a number above 0 (2 doubles the request rate)"};
    for (const auto& name : c.reportRules)
        if (std::find(std::begin(kRuleNames), std::end(kRuleNames), name) == std::end(kRuleNames))
            return Error{"report rules: '" + name +
                         "'; expected none, gpu-only, always, breakeven or optimal"};
    for (const auto& t : c.tiers) {
        if (!(t.capacityBytes >= 0))
            return Error{"tier " + t.name + ": capacity expected 0 or more bytes"};
        if (!(t.path.bandwidthBps > 0))
            return Error{"tier " + t.name + ": read bandwidth expected more than 0"};
    }
    return Ok{};
}

// One replay: the tiers' state, the per-request times under each rule and the counters of the
// report. run() walks the trace once (look up, admit, update per request); finish() summarises.
class Replay {
  public:
    // kept: the rules whose columns are kept (bits 1 << Rule); forQueueing: the replay stops
    // before the queueing (queueInputs()), which needs only the kept rules' inputs.
    Replay(const Trace& trace, const CostModel& cost, const ReplayConfig& config, RequestTimes* per,
           unsigned kept, bool forQueueing = false)
        : m_trace(trace), m_cost(cost), m_config(config), m_per(per), m_k(config.tiers.size() + 1),
          m_b(trace.summary.blockTokens), m_n(trace.size()), m_forQueueing(forQueueing),
          m_resident(trace.distinctBlocks, 0), m_rc{cost, config.tiers} {
        if (config.rateScale != 1) {
            m_scaled.reserve(m_n);
            for (double a : trace.arrivalS)
                m_scaled.push_back(a / config.rateScale);
            m_arrival = &m_scaled;
        }
        setUpTiers();
        m_queues.emplace(config, m_caps, trace.distinctBlocks, m_resident.data(), m_res.tiers,
                         m_res.binS);
        // Prefill times per rule (none, gpu-only, always, breakeven, optimal), and with instances
        // the load part of always and breakeven (the part a wait can hide), their transfers, and
        // the hit runs the load-aware rule cuts at queueing time.
        if (per || (config.instances > 0 && !forQueueing)) kept = detail::kAllRules;
        for (std::size_t r = 0; r < kRules; ++r)
            if (kept & (1u << r)) m_cols[r] = detail::BlockArray<double>(m_n);
        if (config.instances > 0) {
            for (std::size_t r : {Always, Breakeven})
                if (kept & (1u << r)) m_loads[r - Always] = detail::BlockArray<double>(m_n);
            if (kept & (1u << Optimal)) m_staticCut.reserve(m_n);
        }
        m_windowBytes.resize(m_k);
        for (std::size_t r = 0; r < kRules; ++r)
            m_rules[r].name = kRuleNames[r];
        if (per) {
            per->hitBlocks.clear();
            per->hitBlocks.reserve(m_n);
            per->hitTiers.clear();
            per->optimalCut.clear();
            per->optimalCut.reserve(m_n);
        }
    }

    // False when progress asked to stop.
    bool run(const std::function<bool(double)>& progress) {
        for (std::size_t i = 0; i < m_n; ++i) {
            if (progress && (i & 4095u) == 0 &&
                !progress(static_cast<double>(i) / static_cast<double>(m_n)))
                return false;
            request(i);
        }
        if (progress) progress(1.0);
        return true;
    }

    ReplayResult finish() {
        summariseTiers();
        if (m_per) {
            m_per->none.assign(column(None), column(None) + m_n);
            m_per->gpuOnly.assign(column(GpuOnly), column(GpuOnly) + m_n);
            m_per->always.assign(column(Always), column(Always) + m_n);
            m_per->breakeven.assign(column(Breakeven), column(Breakeven) + m_n);
            m_per->optimal.assign(column(Optimal), column(Optimal) + m_n);
        }
        if (m_config.instances > 0) queueOnInstances();
        summariseRuleTiers();
        for (std::size_t k = 1; k < m_k; ++k) {
            m_rules[Optimal].tiers[k].blocksDeclinedForBacklog = m_backlogBlocks[k];
            m_rules[Optimal].tiers[k].requestsDeclinedForBacklog = m_backlogRequests[k];
        }
        compareWithGpuOnly();
        // The GPU-only column is compared against last, as the quantiles reorder each column.
        for (std::size_t r : {None, Always, Breakeven, Optimal, GpuOnly})
            if (double* t = column(r)) m_rules[r].ttft = detail::ttftStats(t, t + m_n);
        for (std::size_t r = 0; r < kRules; ++r)
            if (column(r)) m_res.rules.push_back(m_rules[r]);
        return std::move(m_res);
    }

    // The columns before the servers queue them (the config has instances > 0).
    detail::QueueInputs queueInputs() {
        detail::QueueInputs q; // the columns moved, not copied: at 10^7 requests, 560 MB
        q.requests = m_n;
        q.columns = std::move(m_cols);
        q.loadColumns = std::move(m_loads);
        sealQueueInputs();
        q.fifo = std::move(m_fifo);
        q.runs = std::move(m_runs);
        q.staticCut = std::move(m_staticCut);
        return q;
    }

    ReplayResult cancelled() {
        m_res.cancelled = true;
        return std::move(m_res);
    }

  private:
    double* column(std::size_t rule) { return m_cols[rule].data(); } // null: not kept

    // Capacities in blocks, the report's tier rows, and the caches: write-through LRU (the
    // common case) runs on one recency list for all tiers; the other policies and placements
    // keep a cache per tier.
    void setUpTiers() {
        m_res.requests = m_trace.size();
        m_res.distinctBlocks = m_trace.distinctBlocks;
        m_caps.resize(m_k);
        m_res.tiers.resize(m_k);
        for (std::size_t k = 0; k < m_k; ++k) {
            const double bytes =
                k == 0 ? m_config.gpuCapacityBytes : m_config.tiers[k - 1].capacityBytes;
            m_caps[k] = capacityBlocks(bytes, m_config.blockBytes);
            auto& tr = m_res.tiers[k];
            tr.name = k == 0 ? "gpu" : m_config.tiers[k - 1].name;
            tr.capacityBytes = bytes;
            tr.capacityBlocks = m_caps[k];
            if (k > 0) {
                tr.pStarTokens = m_cost.breakevenPrefix(m_config.tiers[k - 1].path);
                tr.writeBps = m_config.tiers[k - 1].writeBps;
                m_pStar[k] = tr.pStarTokens ? *tr.pStarTokens : kUnlimited;
            }
        }
        const std::uint32_t nb = m_trace.distinctBlocks;
        m_inclusive = m_config.policy == EvictionPolicy::Lru &&
                      m_config.placement == Placement::WriteThrough &&
                      m_trace.blocks.size() < detail::InclusiveLru::kNever;
        if (m_config.storeAfter > 1) m_seen = detail::BlockArray<std::uint8_t>(nb, 0);
        if (m_inclusive && m_config.storeAfter > 1) {
            // Store admission: the GPU sees every access, the offload tiers only the accesses of
            // admitted blocks. Each stream is inclusive by itself, so one recency structure
            // each: the GPU's, and the offload tiers' (their cursors skip the positions of the
            // accesses they did not see, which are never their blocks' last admitted access).
            std::vector<std::uint64_t> gpu(m_k, 0), offload = m_caps;
            gpu[0] = m_caps[0];
            offload[0] = 0;
            m_lru.emplace(nb, gpu, m_resident.data(), m_trace.blocks.data(), m_trace.blocks.size());
            m_lruOffload.emplace(nb, offload, m_resident.data(), m_trace.blocks.data(),
                                 m_trace.blocks.size());
        } else if (m_inclusive) {
            m_lru.emplace(nb, m_caps, m_resident.data(), m_trace.blocks.data(),
                          m_trace.blocks.size());
        } else {
            m_links.emplace(nb, m_k);
            m_caches.reserve(m_k);
            for (std::size_t k = 0; k < m_k; ++k)
                m_caches.emplace_back(nb, m_caps[k], m_config.policy, m_resident.data(),
                                      static_cast<int>(k), m_links->base(k), m_links->stride());
        }
        double maxArrival = 0;
        for (double a : *m_arrival)
            maxArrival = std::max(maxArrival, a);
        m_res.durationS = maxArrival;
        m_res.windows = windowOf(maxArrival) + 1;
        m_res.binS = detail::linkBinSeconds(m_res.windows);
        m_offered.assign(m_k, BusySeries());
        for (std::size_t k = 1; k < m_k; ++k) {
            m_offered[k] = BusySeries(m_res.binS);
            m_res.tiers[k].readBps = m_config.tiers[k - 1].path.bandwidthBps;
        }
    }

    void request(std::size_t i) {
        const auto ids = m_trace.blocksOf(i);
        const std::size_t m = ids.size();
        const double now = (*m_arrival)[i];
        m_window = windowOf(now);
        if (m_queues->any()) m_queues->drain(now);
        m_res.tokens += m_trace.inputTokens[i];
        m_res.blocks += m;
        if (m_tierOf.size() < m) m_tierOf.resize(m);

        const std::size_t h = lookUp(ids);
        const auto tok = countHits(i, h);
        // Shared links: the request's loads (its whole hit run, as `always` loads it: the cache
        // evolves as under `always`) hold each tier's link from its arrival.
        if (m_queues->anySharedLink())
            for (std::size_t k = 1; k < m_k; ++k)
                if (m_queues->shared(k) && tok[k] > 0) {
                    const TierPath& path = m_config.tiers[k - 1].path;
                    m_queues->occupyLink(k, now,
                                         std::max(0.0, m_cost.tLoad(path, tok[k]) - path.tFixedS));
                }
        const double issueDelay = admit(i, h, now);
        update(i, ids);
        if (m_queues->any()) m_queues->closeBatch(now + issueDelay);
    }

    // The hit run and, for each of its blocks, the fastest tier holding it (and, with write
    // queues, holding it readable: its write has completed and was not dropped).
    std::size_t lookUp(std::span<const std::uint32_t> ids) {
        const std::size_t m = ids.size();
        // The request's blocks are known up front: start fetching their links (all tiers share
        // the lines) so the misses overlap instead of following one another in the update.
        if (m_inclusive)
            for (std::size_t j = 0; j < m; ++j) {
                m_lru->prefetch(ids[j]);
                if (m_lruOffload) m_lruOffload->prefetch(ids[j]);
            }
        else
            for (std::size_t j = 0; j < m; ++j)
                __builtin_prefetch(m_links->of(ids[j]), 1),
                    __builtin_prefetch(&m_resident[ids[j]], 1);

        std::size_t h = 0;
        if (!m_queues->any()) {
            while (h < m) {
                const std::uint8_t mask = m_resident[ids[h]];
                if (!mask) break;
                m_tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
                ++h;
            }
        } else {
            while (h < m) {
                const std::uint32_t id = ids[h];
                const std::uint8_t held = m_resident[id];
                const std::uint8_t pending = m_queues->pending(id);
                const std::uint8_t mask =
                    static_cast<std::uint8_t>(held & ~(pending | m_queues->dropped(id)));
                if (held && (held & -held) != (mask & -mask)) {
                    // The fastest tier holding it cannot serve it yet (or ever).
                    const auto f = static_cast<std::size_t>(__builtin_ctz(held));
                    if (pending & (1u << f))
                        ++m_res.tiers[f].lookupsLate;
                    else
                        ++m_res.tiers[f].lookupsDropped;
                }
                if (!mask) break;
                m_tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
                ++h;
            }
        }
        m_res.lookups += h < m ? h + 1 : h;
        return h;
    }

    double blockTokens(std::size_t j, double n) const {
        const double a = static_cast<double>(j) * m_b;
        return std::min(a + m_b, n) - a;
    }

    // The hit ratios' sums; returns the run's tokens per tier.
    TierTokens countHits(std::size_t i, std::size_t h) {
        const double N = m_trace.inputTokens[i];
        TierTokens tok{};
        for (std::size_t j = 0; j < h; ++j) {
            tok[m_tierOf[j]] += blockTokens(j, N);
            m_hitBlk[m_tierOf[j]] += 1;
        }
        double runTok = 0;
        for (std::size_t k = 0; k < m_k; ++k) {
            m_hitTok[k] += tok[k];
            m_hitReq[k] += tok[k] / N;
            runTok += tok[k];
        }
        m_anyTok += runTok;
        m_anyBlk += static_cast<double>(h);
        m_anyReq += runTok / N;
        return tok;
    }

    // The rules' times for request i, what they declined and the GPU time they saved, and the
    // reads its hit run offers each tier; returns the request's prefill time under `always` (its
    // writes are issued when it ends).
    double admit(std::size_t i, std::size_t h, double now) {
        const double N = m_trace.inputTokens[i];
        Recompute re(m_cost, m_b, N);
        const RuleTimes rt = detail::ruleTimes(m_rc, re, m_tierOf.data(), h, m_b, N, m_pStar);
        const double times[kRules] = {rt.none, rt.gpuOnly, rt.always, rt.breakeven, rt.optimal};
        for (std::size_t r = 0; r < kRules; ++r)
            if (double* c = column(r)) c[i] = times[r];
        if (m_config.instances > 0) {
            // t(j) = loads + recompute after j blocks: the load part is what a wait can hide.
            if (m_loads[0].size()) {
                m_loads[0][i] = h > 0 ? std::max(0.0, rt.always - re.at(h)) : 0;
                m_fifo[0].add(m_rc, rt.allTok);
            }
            if (m_loads[1].size()) {
                m_loads[1][i] = std::max(0.0, rt.breakeven - re.at(rt.beJ));
                m_fifo[1].add(m_rc, rt.beTok);
            }
            if (column(Optimal)) {
                m_runs.add(m_tierOf.data(), h);
                m_staticCut.push_back(static_cast<std::uint32_t>(rt.bestJ));
            }
            if (!m_forQueueing) m_hitRun.push_back(static_cast<std::uint32_t>(h));
        }
        for (std::size_t k = 1; k < m_k; ++k)
            if (rt.allTok[k] > 0) {
                const TierPath& path = m_config.tiers[k - 1].path;
                m_offered[k].addAt(now, std::max(0.0, rt.allLoad[k] - path.tFixedS));
                m_served[Always][k] += rt.allTok[k];
                m_served[Breakeven][k] += rt.beTok[k];
                m_served[Optimal][k] += rt.bestTok[k];
            }
        if (m_per) {
            m_per->hitBlocks.push_back(static_cast<std::uint32_t>(h));
            m_per->hitTiers.insert(m_per->hitTiers.end(), m_tierOf.begin(),
                                   m_tierOf.begin() + static_cast<std::ptrdiff_t>(h));
            m_per->optimalCut.push_back(static_cast<std::uint32_t>(rt.bestJ));
        }

        const double loadAll = m_rc.loadTime(rt.allTok);
        auto declined = [&](RuleResult& r, std::size_t j, double t, const TierTokens& loaded) {
            if (j >= h) return;
            ++r.declinedRequests;
            r.declinedBlocks += h - j;
            r.declinedLoadS += loadAll - m_rc.loadTime(loaded);
            r.declinedNetS += rt.always - t;
        };
        declined(m_rules[Breakeven], rt.beJ, rt.breakeven, rt.beTok);
        declined(m_rules[Optimal], rt.bestJ, rt.optimal, rt.bestTok);
        // GPU seconds saved: the recompute each rule avoided against no caching, where its
        // loads beat recomputing everything (with prefill servers the queueing counts it again).
        if (h > 0) {
            auto saved = [&](Rule r, double t, std::size_t j) {
                if (t < rt.none) m_rules[r].gpuSecondsSaved += rt.none - re.at(j);
            };
            saved(GpuOnly, rt.gpuOnly, rt.gpuJ);
            saved(Always, rt.always, h);
            saved(Breakeven, rt.breakeven, rt.beJ);
            saved(Optimal, rt.optimal, rt.bestJ);
        }
        return rt.always;
    }

    // Update the tiers: touch order 1 … m, so the deepest block is the most recent. A tier
    // holding a block whose write was dropped writes it again.
    void update(std::size_t i, std::span<const std::uint32_t> ids) {
        const std::size_t m = ids.size();
        auto& wq = *m_queues;
        if (m_inclusive) {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                const auto pos = static_cast<std::uint32_t>(m_trace.blockOffset[i] + j);
                std::uint8_t written = m_lru->access(id, pos);
                if (m_lruOffload && sighted(id)) written |= m_lruOffload->access(id, pos);
                if (wq.any()) written |= static_cast<std::uint8_t>(wq.dropped(id) & m_resident[id]);
                for (std::uint8_t w = static_cast<std::uint8_t>(written & ~1u); w;
                     w &= static_cast<std::uint8_t>(w - 1)) {
                    const auto k = static_cast<std::size_t>(__builtin_ctz(w));
                    writeTo(k);
                    if (wq.on(k)) wq.enqueue(k, id);
                }
            }
        } else if (m_config.placement == Placement::WriteThrough) {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                const std::uint8_t mask = m_resident[id];
                // Not yet admitted: only the GPU takes it (the offload tiers cannot hold it).
                const std::size_t tiers = sighted(id) ? m_k : 1;
                for (std::size_t k = 0; k < tiers; ++k) {
                    if (mask & (1u << k)) {
                        m_caches[k].touch(id);
                        if (wq.any() && (wq.dropped(id) & (1u << k))) {
                            writeTo(k);
                            if (wq.on(k)) wq.enqueue(k, id);
                        }
                    } else {
                        writeTo(k);
                        m_caches[k].insert(id, [](std::uint32_t) {});
                        if (wq.on(k) && m_caches[k].holds(id)) wq.enqueue(k, id);
                    }
                }
            }
        } else {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                sighted(id);
                const std::uint8_t mask = m_resident[id];
                if (mask & 1u) {
                    m_caches[0].touch(id);
                    continue;
                }
                if (mask) m_caches[static_cast<std::size_t>(__builtin_ctz(mask))].remove(id);
                m_evictLevel = 0;
                m_caches[0].insert(id, [this](std::uint32_t e) { demote(e); });
            }
        }
    }

    // Counts a sighting of block id (with store admission) and says whether the block is
    // admitted to the offload tiers: seen storeAfter times or more. The count stops at
    // storeAfter, which fits a byte.
    bool sighted(std::uint32_t id) {
        if (m_config.storeAfter <= 1) return true;
        const auto k = static_cast<std::uint8_t>(m_config.storeAfter);
        std::uint8_t& n = m_seen[id];
        if (n < k) ++n;
        return n >= k;
    }
    bool admitted(std::uint32_t id) const {
        return m_config.storeAfter <= 1 || m_seen[id] >= m_config.storeAfter;
    }

    // A block written to tier k in the current window.
    void writeTo(std::size_t k) {
        if (k == 0 || m_caps[k] == 0) return; // a tier of size 0 stores nothing
        ++m_res.tiers[k].blocksWritten;
        auto& wb = m_windowBytes[k];
        if (wb.empty() || wb.back().first != m_window) wb.emplace_back(m_window, 0.0);
        wb.back().second += m_config.blockBytes;
    }

    // Cascade: a block evicted from tier m_evictLevel moves to the next (and is written there);
    // what that tier evicts moves on in turn.
    void demote(std::uint32_t id) {
        const std::size_t next = m_evictLevel + 1;
        if (next >= m_k) return;
        // Store admission: a block leaving the GPU before its storeAfter-th sighting is dropped.
        if (m_evictLevel == 0 && !admitted(id)) return;
        auto& wq = *m_queues;
        if (m_caches[next].holds(id)) {
            m_caches[next].touch(id);
            if (wq.any() && (wq.dropped(id) & (1u << next))) {
                writeTo(next);
                if (wq.on(next)) wq.enqueue(next, id);
            }
            return;
        }
        const std::size_t saved = m_evictLevel;
        m_evictLevel = next;
        writeTo(next);
        m_caches[next].insert(id, [this](std::uint32_t e) { demote(e); });
        if (wq.on(next) && m_caches[next].holds(id)) wq.enqueue(next, id);
        m_evictLevel = saved;
    }

    // Hit ratios, bytes written and write rates over 1-minute windows per tier; state size.
    void summariseTiers() {
        const double reqs = static_cast<double>(m_n);
        auto ratios = [&](double t, double b, double r) {
            HitRatios hr;
            hr.tokenWeighted = m_res.tokens ? t / static_cast<double>(m_res.tokens) : 0;
            hr.blockWeighted = m_res.blocks ? b / static_cast<double>(m_res.blocks) : 0;
            hr.perRequest = m_n ? r / reqs : 0;
            return hr;
        };
        m_res.anyTier = ratios(m_anyTok, m_anyBlk, m_anyReq);
        for (std::size_t k = 0; k < m_k; ++k) {
            auto& tr = m_res.tiers[k];
            tr.hits = ratios(m_hitTok[k], m_hitBlk[k], m_hitReq[k]);
            tr.bytesWritten = static_cast<double>(tr.blocksWritten) * m_config.blockBytes;
            tr.blocksStored =
                m_queues->on(k) ? m_queues->queued(k) - tr.writesDropped : tr.blocksWritten;
            tr.bytesStored = static_cast<double>(tr.blocksStored) * m_config.blockBytes;
            if (k > 0) summariseLinks(k, tr);
            detail::summariseWriteRates(m_windowBytes[k], m_res.windows, tr);
            if (!m_inclusive) m_res.stateBytes += m_caches[k].stateBytes();
        }
        m_res.stateBytes += m_resident.bytes() + m_queues->stateBytes() + m_seen.bytes() +
                            (m_inclusive ? m_lru->stateBytes() : m_links->stateBytes()) +
                            (m_lruOffload ? m_lruOffload->stateBytes() : 0);
    }

    // An offload tier's links over the trace: the reads its hits offer and its writes (the write
    // queue's busy time, or without one the writes offered at its write bandwidth).
    void summariseLinks(std::size_t k, TierReport& tr) {
        const double span = m_res.durationS;
        tr.readOffered = m_offered[k].summary(span);
        const double w = m_config.tiers[k - 1].writeBps;
        if (!(w > 0) || m_caps[k] == 0) return;
        if (m_queues->on(k)) {
            tr.write = m_queues->writeBusy(k).summary(span);
            return;
        }
        BusySeries offered(m_res.binS);
        for (const auto& [window, bytes] : m_windowBytes[k])
            offered.addAt(static_cast<double>(window) * 60, bytes / w);
        tr.write = offered.summary(span);
    }

    // What each rule took from each offload tier: the hit tokens offered and served and, with
    // prefill servers, its reads' busy share of the link.
    void summariseRuleTiers() {
        for (std::size_t r = 0; r < kRules; ++r) {
            auto& tiers = m_rules[r].tiers;
            tiers.assign(m_k, RuleTierUse{});
            for (std::size_t k = 1; k < m_k; ++k) {
                tiers[k].tokensOffered = m_hitTok[k];
                tiers[k].tokensServed = m_served[r][k];
                if (!m_busy[r].empty()) tiers[k].read = m_busy[r][k].summary(m_res.durationS);
            }
        }
    }

    // n prefill servers, first come first served in arrival order (ties in trace order): the
    // columns become the TTFTs with queueing (detail::queueOnServers), each rule's loads queued
    // on the tiers' links behind the loads booked before them (FifoLoads); `optimal` cuts each
    // run at its arrival from the wait and the links' backlog (detail::queueLoadAware).
    void sealQueueInputs() {
        m_fifo[0].seal();
        m_fifo[1].seal();
        m_runs.seal();
    }

    void queueOnInstances() {
        sealQueueInputs();
        const auto& arrival = *m_arrival;
        std::vector<std::uint32_t> order(m_n);
        for (std::size_t i = 0; i < m_n; ++i)
            order[i] = static_cast<std::uint32_t>(i);
        if (!std::is_sorted(arrival.begin(), arrival.end()))
            std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
                return arrival[a] < arrival[b];
            });
        std::vector<double>* perQueued[kRules] = {};
        if (m_per) {
            perQueued[None] = &m_per->queuedNone;
            perQueued[GpuOnly] = &m_per->queuedGpuOnly;
            perQueued[Always] = &m_per->queuedAlways;
            perQueued[Breakeven] = &m_per->queuedBreakeven;
            perQueued[Optimal] = &m_per->queuedOptimal;
        }
        // Recomputing everything, before its column is queued: what the loads must beat.
        const std::vector<double> none(column(None), column(None) + m_n);
        for (std::size_t r : {Always, Breakeven, Optimal})
            m_busy[r].assign(m_k, BusySeries(m_res.binS));
        for (std::size_t r = 0; r < Optimal; ++r) {
            double* t = column(r);
            const double* load = r >= Always ? m_loads[r - Always].data() : nullptr;
            const std::vector<double> loadEnd =
                load ? m_fifo[r - Always].loadEnds(arrival, order, m_config.tiers, &m_busy[r])
                     : std::vector<double>();
            const auto q = detail::queueOnServers(m_config.instances, arrival, order, t, load,
                                                  loadEnd, none.data());
            if (perQueued[r]) perQueued[r]->assign(t, t + m_n);
            m_rules[r].meanWaitS = q.meanWaitS;
            m_rules[r].hiddenLoadS = q.hiddenLoadS;
            m_rules[r].sharedLoadS = q.sharedLoadS;
            m_rules[r].gpuSecondsSaved = q.gpuSecondsSaved;
        }
        detail::LoadAwareInputs in{&m_trace, &m_cost, &m_config.tiers, m_b, &m_runs, &m_staticCut};
        std::vector<std::uint32_t> cuts;
        double* t = column(Optimal);
        const auto q = detail::queueLoadAware(m_config.instances, arrival, order, in, t,
                                              &m_busy[Optimal], &cuts);
        if (perQueued[Optimal]) perQueued[Optimal]->assign(t, t + m_n);
        RuleResult& o = m_rules[Optimal];
        o.meanWaitS = q.meanWaitS;
        o.hiddenLoadS = q.hiddenLoadS;
        o.sharedLoadS = q.sharedLoadS;
        o.gpuSecondsSaved = q.gpuSecondsSaved;
        o.declinedRequests = q.declinedRequests;
        o.declinedBlocks = q.declinedBlocks;
        o.declinedLoadS = q.declinedLoadS;
        // What declining saved, against `always` queued on its own links.
        const double* always = column(Always);
        o.declinedNetS = 0;
        for (std::size_t i = 0; i < m_n; ++i)
            if (cuts[i] < m_hitRun[i]) o.declinedNetS += always[i] - t[i];
        if (m_per) m_per->optimalCut = cuts;
        for (std::size_t k = 1; k < m_k; ++k) {
            m_served[Optimal][k] = q.tokensServed[k];
            m_backlogBlocks[k] = q.blocksDeclinedForBacklog[k];
            m_backlogRequests[k] = q.requestsDeclinedForBacklog[k];
        }
    }

    // Faster or slower than GPU-only caching (the TTFTs with queueing where it is modelled).
    void compareWithGpuOnly() {
        const double* g = column(GpuOnly);
        for (std::size_t r = 0; r < kRules && g; ++r) {
            const double* t = column(r);
            if (!t) continue;
            std::uint64_t gain = 0, loss = 0;
            for (std::size_t i = 0; i < m_n; ++i) {
                if (t[i] < g[i] * (1 - 1e-12))
                    ++gain;
                else if (t[i] > g[i] * (1 + 1e-12))
                    ++loss;
            }
            const double reqs = static_cast<double>(m_n);
            m_rules[r].gainShare = m_n ? static_cast<double>(gain) / reqs : 0;
            m_rules[r].lossShare = m_n ? static_cast<double>(loss) / reqs : 0;
        }
    }

    const Trace& m_trace;
    const CostModel& m_cost;
    const ReplayConfig& m_config;
    RequestTimes* m_per;
    std::vector<double> m_scaled;                             // arrivals over the rate scale
    const std::vector<double>* m_arrival = &m_trace.arrivalS; // ... or as the trace gives them
    const std::size_t m_k;                                    // the GPU and the offload tiers
    const double m_b;                                         // tokens per block
    const std::size_t m_n;                                    // requests
    const bool m_forQueueing; // stops before the queueing (queueInputs())

    ReplayResult m_res;
    std::vector<std::uint64_t> m_caps;
    TierTokens m_pStar{};
    detail::BlockArray<std::uint8_t> m_resident; // a bit per tier holding the block
    bool m_inclusive = false;
    std::optional<detail::InclusiveLru> m_lru;
    std::optional<detail::InclusiveLru> m_lruOffload; // with store admission: the offload tiers
    detail::BlockArray<std::uint8_t> m_seen;          // with store admission: sightings so far
    std::optional<detail::TierLinks> m_links;
    std::vector<TierCache> m_caches;
    std::optional<WriteQueues> m_queues;
    // With instances: always's and breakeven's transfers, the hit runs and optimal's static cut
    // (the load-aware rule cuts at queueing time), the hit run's length per request.
    std::array<FifoLoads, 2> m_fifo;
    detail::HitRuns m_runs;
    std::vector<std::uint32_t> m_staticCut, m_hitRun;
    std::array<std::vector<BusySeries>, kRules> m_busy; // per rule and tier: the reads' time
    std::vector<BusySeries> m_offered;                  // per tier: the reads the hits offer
    std::array<TierTokens, kRules> m_served{};          // per rule and tier: tokens loaded
    std::array<std::uint64_t, kMaxTiers> m_backlogBlocks{}, m_backlogRequests{};
    RequestCost m_rc;

    std::array<detail::BlockArray<double>, kRules> m_cols; // per rule, the kept ones
    std::array<detail::BlockArray<double>, 2> m_loads;     // always's and breakeven's load parts
    std::array<RuleResult, kRules> m_rules;
    TierTokens m_hitTok{}, m_hitBlk{}, m_hitReq{};
    double m_anyTok = 0, m_anyBlk = 0, m_anyReq = 0;
    // Bytes written per window, as (window, bytes) runs in the order written: only the windows
    // with writes take memory.
    std::vector<std::vector<std::pair<std::uint64_t, double>>> m_windowBytes;
    std::uint64_t m_window = 0;
    std::vector<std::uint8_t> m_tierOf; // per block of the current hit run: the tier read
    std::size_t m_evictLevel = 0;       // cascade: the tier evicting
};

} // namespace

Result<ReplayResult> replayTrace(const Trace& trace, const CostModel& cost,
                                 const ReplayConfig& config, RequestTimes* per,
                                 const std::function<bool(double)>& progress) {
    if (auto ok = checkConfig(trace, config); !ok) return ok.error();
    unsigned kept = config.reportRules.empty() ? detail::kAllRules : 0;
    for (const auto& name : config.reportRules)
        for (std::size_t r = 0; r < kRules; ++r)
            if (name == kRuleNames[r]) kept |= 1u << r;
    Replay replay(trace, cost, config, per, kept);
    if (!replay.run(progress)) return replay.cancelled();
    return replay.finish();
}

Result<detail::QueueInputs> detail::replayForQueueing(const Trace& trace, const CostModel& cost,
                                                      const ReplayConfig& config, unsigned rules,
                                                      const std::function<bool(double)>& progress) {
    ReplayConfig c = config;
    c.instances = std::max(1, c.instances); // collects the loads and their segments
    if (auto ok = checkConfig(trace, c); !ok) return ok.error();
    Replay replay(trace, cost, c, nullptr, rules, true);
    if (!replay.run(progress)) {
        QueueInputs cancelled;
        cancelled.cancelled = true;
        return cancelled;
    }
    return replay.queueInputs();
}

} // namespace kvbe
