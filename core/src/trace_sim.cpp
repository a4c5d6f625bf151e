// Replay of a trace through the tiered prefix cache, and the admission rules of
// docs/workload-model.md evaluated on every request's hit run.
#include "kvbe/trace_sim.h"

#include "trace_cache.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <span>

namespace kvbe {

std::string_view toString(EvictionPolicy p) {
    return p == EvictionPolicy::Lru ? "lru" : "s3fifo";
}
std::string_view toString(Placement p) {
    return p == Placement::WriteThrough ? "write-through" : "cascade";
}
std::string_view toString(Admission a) {
    return a == Admission::Always ? "always" : a == Admission::Breakeven ? "breakeven" : "optimal";
}
std::optional<EvictionPolicy> parseEvictionPolicy(std::string_view s) {
    if (s == "lru") return EvictionPolicy::Lru;
    if (s == "s3fifo" || s == "s3-fifo") return EvictionPolicy::S3Fifo;
    return std::nullopt;
}
std::optional<Placement> parsePlacement(std::string_view s) {
    if (s == "write-through") return Placement::WriteThrough;
    if (s == "cascade") return Placement::Cascade;
    return std::nullopt;
}
std::optional<Admission> parseAdmission(std::string_view s) {
    if (s == "always") return Admission::Always;
    if (s == "breakeven") return Admission::Breakeven;
    if (s == "optimal") return Admission::Optimal;
    return std::nullopt;
}

const RuleResult* ReplayResult::rule(std::string_view name) const {
    for (const auto& r : rules)
        if (r.name == name) return &r;
    return nullptr;
}

std::vector<double> logGrid(double lo, double hi, int n) {
    std::vector<double> g;
    if (n <= 0 || lo <= 0 || hi < lo) return g;
    if (n == 1) return {lo};
    const double a = std::log(lo), b = std::log(hi);
    for (int i = 0; i < n; ++i)
        g.push_back(std::exp(a + (b - a) * i / (n - 1)));
    g.front() = lo;
    g.back() = hi;
    return g;
}

namespace {

using detail::kNoLimit;
using detail::TierCache;

constexpr int kMaxTiers = 8; // the GPU and up to 7 offload tiers (one resident bit each)

std::uint64_t capacityBlocks(double bytes, double blockBytes) {
    if (!std::isfinite(bytes)) return kNoLimit;
    // A hair above the quotient: "6000 blocks" given in bytes must not round down to 5999.
    return static_cast<std::uint64_t>(std::floor(bytes / blockBytes * (1 + 1e-12)));
}

// Linear interpolation between order statistics (numpy's default).
// Over `zeros` zeros followed by `sorted` (ascending, all above zero): the empty windows are
// counted without being stored, so a trace spanning years costs nothing extra.
double percentile(const std::vector<double>& sorted, std::uint64_t zeros, double q) {
    const std::uint64_t n = zeros + sorted.size();
    if (n == 0) return 0;
    auto at = [&](std::uint64_t i) {
        return i < zeros ? 0.0 : sorted[static_cast<std::size_t>(i - zeros)];
    };
    const double pos = q * static_cast<double>(n - 1);
    const auto i = std::min<std::uint64_t>(static_cast<std::uint64_t>(pos), n - 1);
    const double f = pos - static_cast<double>(i);
    return i + 1 < n ? at(i) * (1 - f) + at(i + 1) * f : at(i);
}

// The 1-minute window of a trace time (clamped: a fuzzed timestamp can be 1e300 s).
std::uint64_t windowOf(double t) {
    return static_cast<std::uint64_t>(std::floor(std::min(t / 60.0, 1e18)));
}

// Reorders [b, e).
TtftStats stats(double* b, double* e) {
    TtftStats s;
    const std::span<double> v(b, e);
    if (v.empty()) return s;
    for (double x : v)
        s.totalS += x;
    s.mean = s.totalS / static_cast<double>(v.size());
    // Ascending quantiles, each selected in the part above the one before (about 1.6 passes
    // over the data instead of 3).
    std::size_t from = 0;
    auto select = [&](double q) {
        const double pos = q * static_cast<double>(v.size() - 1);
        const auto i = static_cast<std::size_t>(pos);
        const double f = pos - static_cast<double>(i);
        std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from),
                         v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
        from = i;
        const double lo = v[i];
        if (i + 1 >= v.size() || f == 0) return lo;
        const double hi =
            *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(i) + 1, v.end());
        return lo * (1 - f) + hi * f;
    };
    s.p50 = select(0.50);
    s.p90 = select(0.90);
    s.p99 = select(0.99);
    return s;
}

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
    for (const auto& t : c.tiers) {
        if (!(t.capacityBytes >= 0))
            return Error{"tier " + t.name + ": capacity expected 0 or more bytes"};
        if (!(t.path.bandwidthBps > 0))
            return Error{"tier " + t.name + ": read bandwidth expected more than 0"};
    }
    return Ok{};
}

// The time of one request that loads its first j blocks and recomputes the rest.
struct RequestCost {
    const CostModel& cost;
    const std::vector<SimTier>& tiers;
    double n = 0;

    // tok[k]: tokens loaded from tier k (k = 0 is the GPU: free).
    double loadTime(const std::array<double, kMaxTiers>& tok) const {
        double t = 0;
        for (std::size_t k = 1; k <= tiers.size(); ++k)
            if (tok[k] > 0) t += cost.tLoad(tiers[k - 1].path, tok[k]);
        return t;
    }
};

} // namespace

Result<ReplayResult> replayTrace(const Trace& trace, const CostModel& cost,
                                 const ReplayConfig& config, RequestTimes* per,
                                 const std::function<bool(double)>& progress) {
    if (auto ok = checkConfig(trace, config); !ok) return ok.error();
    const std::size_t K = config.tiers.size() + 1;
    const double B = trace.summary.blockTokens;
    const std::uint32_t nb = trace.distinctBlocks;

    ReplayResult res;
    res.requests = trace.size();
    res.distinctBlocks = nb;

    detail::BlockArray<std::uint8_t> resident(nb, 0);
    // Write-through LRU (the common case) runs on one recency list for all tiers; the other
    // policies and placements keep a cache per tier.
    const bool inclusive = config.policy == EvictionPolicy::Lru &&
                           config.placement == Placement::WriteThrough &&
                           trace.blocks.size() < detail::InclusiveLru::kNever;
    std::vector<std::uint64_t> caps(K);
    res.tiers.resize(K);
    for (std::size_t k = 0; k < K; ++k) {
        const double bytes = k == 0 ? config.gpuCapacityBytes : config.tiers[k - 1].capacityBytes;
        caps[k] = capacityBlocks(bytes, config.blockBytes);
        auto& tr = res.tiers[k];
        tr.name = k == 0 ? "gpu" : config.tiers[k - 1].name;
        tr.capacityBytes = bytes;
        tr.capacityBlocks = caps[k];
        if (k > 0) {
            tr.pStarTokens = cost.breakevenPrefix(config.tiers[k - 1].path);
            tr.writeBps = config.tiers[k - 1].writeBps;
        }
    }
    std::optional<detail::InclusiveLru> lru;
    std::optional<detail::TierLinks> links;
    std::vector<TierCache> caches;
    if (inclusive) {
        lru.emplace(nb, caps, resident.data(), trace.blocks.data(), trace.blocks.size());
    } else {
        links.emplace(nb, K);
        caches.reserve(K);
        for (std::size_t k = 0; k < K; ++k)
            caches.emplace_back(nb, caps[k], config.policy, resident.data(), static_cast<int>(k),
                                links->base(k), links->stride());
    }

    // The write queues: one per offload tier with a write bandwidth. pending: a write of the block
    // to the tier is queued; dropped: the tier holds the block's place but its write was dropped.
    struct WriteQueue {
        bool on = false;
        double tau = 0;          // seconds to write one block
        std::uint64_t bound = 0; // queued blocks before the oldest is dropped
        std::deque<std::uint32_t> q;
        double headDone = 0;   // when the write at the front completes
        bool shared = false;   // reads take the same link (SimTier::sharedLink)
        double linkFreeAt = 0; // shared: when the reads issued so far have finished
    };
    std::array<WriteQueue, kMaxTiers> queues;
    bool anyQueue = false;
    bool anySharedLink = false;
    if (config.writeQueue) {
        for (std::size_t k = 1; k < K; ++k) {
            const auto& t = config.tiers[k - 1];
            if (!(t.writeBps > 0) || caps[k] == 0) continue;
            auto& wq = queues[k];
            wq.on = anyQueue = true;
            wq.shared = t.sharedLink;
            anySharedLink = anySharedLink || t.sharedLink;
            wq.tau = config.blockBytes / t.writeBps;
            const double b = std::floor(t.writeBufferBytes / config.blockBytes);
            wq.bound = b >= 1 ? (b < 1e18 ? static_cast<std::uint64_t>(b) : kNoLimit) : 1;
        }
    }
    detail::BlockArray<std::uint8_t> pending(anyQueue ? nb : 0, 0), dropped(anyQueue ? nb : 0, 0);
    double now = 0;
    double issueDelay = 0; // the current request's prefill time: its blocks are written after it
    auto drainTier = [&](std::size_t k, double t) {
        auto& wq = queues[k];
        const auto bit = static_cast<std::uint8_t>(1u << k);
        while (!wq.q.empty() && wq.headDone <= t) {
            pending[wq.q.front()] &= static_cast<std::uint8_t>(~bit);
            wq.q.pop_front();
            if (!wq.q.empty()) wq.headDone += wq.tau;
        }
    };
    // Writes wait for their request's prefill to end, then join their tier's queue in the order
    // they were issued. A request's writes are one batch (one issue time): the writes sit in a
    // FIFO in request order, and a heap orders the batches by issue time.
    struct Write {
        std::uint32_t id;
        std::uint32_t tier;
    };
    struct Batch {
        std::uint64_t begin = 0, end = 0; // absolute indices into the writes
        bool done = false;
    };
    struct BatchEvent {
        double t;
        std::uint64_t batch; // absolute index into the batches (also the tie-break: trace order)
        bool operator>(const BatchEvent& o) const { return t != o.t ? t > o.t : batch > o.batch; }
    };
    std::deque<Write> writes;
    std::deque<Batch> batches;
    std::uint64_t writesBase = 0, batchesBase = 0;
    std::priority_queue<BatchEvent, std::vector<BatchEvent>, std::greater<>> events;
    auto issue = [&](std::size_t k, std::uint32_t id, double t) {
        auto& wq = queues[k];
        const auto bit = static_cast<std::uint8_t>(1u << k);
        drainTier(k, t);
        // On a shared link a write starts once the reads before it have finished.
        const double start = wq.shared ? std::max(t, wq.linkFreeAt) : t;
        if (wq.q.empty()) wq.headDone = start + wq.tau;
        wq.q.push_back(id);
        if (wq.q.size() > wq.bound) {
            // A full queue drops its oldest pending write; the next one starts now.
            const std::uint32_t old = wq.q.front();
            wq.q.pop_front();
            pending[old] &= static_cast<std::uint8_t>(~bit);
            if (resident[old] & bit) dropped[old] |= bit;
            ++res.tiers[k].writesDropped;
            wq.headDone = start + wq.tau;
        }
        const double backlog = wq.headDone - t + static_cast<double>(wq.q.size() - 1) * wq.tau;
        res.tiers[k].maxBacklogS = std::max(res.tiers[k].maxBacklogS, backlog);
    };
    auto drain = [&](double t) {
        while (!events.empty() && events.top().t <= t) {
            const BatchEvent e = events.top();
            events.pop();
            Batch& b = batches[static_cast<std::size_t>(e.batch - batchesBase)];
            for (std::uint64_t w = b.begin; w < b.end; ++w) {
                const Write& wr = writes[static_cast<std::size_t>(w - writesBase)];
                issue(wr.tier, wr.id, e.t);
            }
            b.done = true;
            while (!batches.empty() && batches.front().done) {
                const std::uint64_t count = batches.front().end - batches.front().begin;
                writes.erase(writes.begin(), writes.begin() + static_cast<std::ptrdiff_t>(count));
                writesBase += count;
                batches.pop_front();
                ++batchesBase;
            }
        }
        for (std::size_t k = 1; k < K; ++k)
            if (queues[k].on) drainTier(k, t);
    };
    // A load of `busy` seconds from a tier whose reads and writes share one link, at time t (the
    // queue already drained to t): reads go first, so the write in progress and every write
    // behind it finish `busy` later, and a write issued meanwhile starts when the reads end.
    auto occupyLink = [&](std::size_t k, double t, double busy) {
        auto& wq = queues[k];
        wq.linkFreeAt = std::max(wq.linkFreeAt, t) + busy;
        if (!wq.q.empty()) wq.headDone += busy;
    };
    // Block id is stored in tier k by the current request: it is not readable there until its
    // write, issued when the request's prefill ends, has gone through the queue.
    auto enqueue = [&](std::size_t k, std::uint32_t id) {
        const auto bit = static_cast<std::uint8_t>(1u << k);
        dropped[id] &= static_cast<std::uint8_t>(~bit);
        if (pending[id] & bit) return; // its earlier write is still to come: that one stores it
        pending[id] |= bit;
        writes.push_back(Write{id, static_cast<std::uint32_t>(k)});
    };
    // After a request's updates: its writes become one batch, issued when its prefill ends.
    auto closeBatch = [&]() {
        const std::uint64_t end = writesBase + writes.size();
        const std::uint64_t begin = batches.empty() ? writesBase : batches.back().end;
        if (end == begin) return;
        batches.push_back(Batch{begin, end, false});
        events.push(BatchEvent{now + issueDelay, batchesBase + batches.size() - 1});
    };
    std::array<double, kMaxTiers> pStar{};
    for (std::size_t k = 1; k < K; ++k)
        pStar[k] = res.tiers[k].pStarTokens ? *res.tiers[k].pStarTokens : kUnlimited;

    double maxArrival = 0;
    for (double a : trace.arrivalS)
        maxArrival = std::max(maxArrival, a);
    res.durationS = maxArrival;
    res.windows = windowOf(maxArrival) + 1;
    // Bytes written per window, as (window, bytes) runs in the order written: only the windows
    // with writes take memory.
    std::vector<std::vector<std::pair<std::uint64_t, double>>> windowBytes(K);

    const std::size_t n = trace.size();
    // Prefill times per rule (none, gpu-only, always, breakeven, optimal), and with instances the
    // load part of the last three (the part a wait can hide).
    detail::BlockArray<double> times(5 * n);
    double* const tNone = times.data();
    double* const tGpu = tNone + n;
    double* const tAlways = tGpu + n;
    double* const tBe = tAlways + n;
    double* const tOpt = tBe + n;
    const bool queueing = config.instances > 0;
    detail::BlockArray<double> loads(queueing ? 3 * n : 0);
    std::array<double, kMaxTiers> hitTok{}, hitBlk{}, hitReq{};
    double anyTok = 0, anyBlk = 0, anyReq = 0;
    std::array<RuleResult, 5> rules;
    const char* names[5] = {"none", "gpu-only", "always", "breakeven", "optimal"};
    for (int r = 0; r < 5; ++r)
        rules[static_cast<std::size_t>(r)].name = names[r];

    std::vector<std::uint8_t> tierOf;
    if (per) {
        per->hitBlocks.clear();
        per->hitBlocks.reserve(n);
    }
    RequestCost rc{cost, config.tiers, 0};
    std::uint64_t window = 0;
    // Cascade: a block evicted from tier k moves to k+1 (and is written there).
    std::size_t evictLevel = 0;
    std::function<void(std::uint32_t)> demote; // set below; recursion through the levels
    auto writeTo = [&](std::size_t k) {
        if (k == 0 || caps[k] == 0) return; // a tier of size 0 stores nothing
        ++res.tiers[k].blocksWritten;
        auto& wb = windowBytes[k];
        if (wb.empty() || wb.back().first != window) wb.emplace_back(window, 0.0);
        wb.back().second += config.blockBytes;
    };
    demote = [&](std::uint32_t id) {
        const std::size_t next = evictLevel + 1;
        if (next >= K) return;
        if (caches[next].holds(id)) {
            caches[next].touch(id);
            if (anyQueue && (dropped[id] & (1u << next))) {
                writeTo(next);
                if (queues[next].on) enqueue(next, id);
            }
            return;
        }
        const std::size_t saved = evictLevel;
        evictLevel = next;
        writeTo(next);
        caches[next].insert(id, demote);
        if (queues[next].on && caches[next].holds(id)) enqueue(next, id);
        evictLevel = saved;
    };
    auto dropEvicted = [](std::uint32_t) {};

    for (std::size_t i = 0; i < n; ++i) {
        if (progress && (i & 4095u) == 0 &&
            !progress(static_cast<double>(i) / static_cast<double>(n))) {
            res.cancelled = true;
            return res;
        }
        const auto ids = trace.blocksOf(i);
        const std::size_t m = ids.size();
        const double N = trace.inputTokens[i];
        window = windowOf(trace.arrivalS[i]);
        now = trace.arrivalS[i];
        if (anyQueue) drain(now);
        res.tokens += trace.inputTokens[i];
        res.blocks += m;
        if (tierOf.size() < m) tierOf.resize(m);

        // The request's blocks are known up front: start fetching their links (all tiers share
        // the lines) so the misses overlap instead of following one another in the update below.
        if (inclusive)
            for (std::size_t j = 0; j < m; ++j)
                lru->prefetch(ids[j]);
        else
            for (std::size_t j = 0; j < m; ++j)
                __builtin_prefetch(links->of(ids[j]), 1), __builtin_prefetch(&resident[ids[j]], 1);

        // Lookup: the hit run and, for each of its blocks, the fastest tier holding it (and, with
        // write queues, holding it readable: its write has completed and was not dropped).
        std::size_t h = 0;
        if (!anyQueue) {
            while (h < m) {
                const std::uint8_t mask = resident[ids[h]];
                if (!mask) break;
                tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
                ++h;
            }
        } else {
            while (h < m) {
                const std::uint32_t id = ids[h];
                const std::uint8_t held = resident[id];
                const std::uint8_t mask =
                    static_cast<std::uint8_t>(held & ~(pending[id] | dropped[id]));
                if (held && (held & -held) != (mask & -mask)) {
                    // The fastest tier holding it cannot serve it yet (or ever).
                    const auto f = static_cast<std::size_t>(__builtin_ctz(held));
                    if (pending[id] & (1u << f))
                        ++res.tiers[f].lookupsLate;
                    else
                        ++res.tiers[f].lookupsDropped;
                }
                if (!mask) break;
                tierOf[h] = static_cast<std::uint8_t>(__builtin_ctz(mask));
                ++h;
            }
        }
        res.lookups += h < m ? h + 1 : h;

        auto blockTokens = [&](std::size_t j) {
            const double a = static_cast<double>(j) * B;
            return std::min(a + B, N) - a;
        };

        // Hit ratios.
        std::array<double, kMaxTiers> tok{};
        for (std::size_t j = 0; j < h; ++j) {
            const double bt = blockTokens(j);
            tok[tierOf[j]] += bt;
            hitBlk[tierOf[j]] += 1;
        }
        double runTok = 0;
        for (std::size_t k = 0; k < K; ++k) {
            hitTok[k] += tok[k];
            hitReq[k] += tok[k] / N;
            runTok += tok[k];
        }
        anyTok += runTok;
        anyBlk += static_cast<double>(h);
        anyReq += runTok / N;
        // Shared links: the request's loads (its whole hit run, as `always` loads it: the cache
        // evolves as under `always`) hold each tier's link from its arrival.
        if (anySharedLink)
            for (std::size_t k = 1; k < K; ++k)
                if (queues[k].shared && tok[k] > 0) {
                    const TierPath& path = config.tiers[k - 1].path;
                    occupyLink(k, now, std::max(0.0, cost.tLoad(path, tok[k]) - path.tFixedS));
                }

        // Admission rules. Scan the run once; candidates for `optimal` are 0, every tier
        // boundary, the end of the run and the `breakeven` cut (within one tier t(j) is concave
        // in j for a convex recompute time, so its minimum sits at a segment end).
        rc.n = N;
        // Recompute time after j loaded blocks, memoised: the rules share their cut points.
        std::array<std::pair<std::size_t, double>, 8> memo;
        std::size_t memoN = 0;
        auto reAt = [&](std::size_t j) {
            for (std::size_t q = 0; q < memoN; ++q)
                if (memo[q].first == j) return memo[q].second;
            const double p = std::min(static_cast<double>(j) * B, N);
            const double v = cost.tRecompute(N - p, p);
            if (memoN < memo.size()) memo[memoN++] = {j, v};
            return v;
        };
        auto timeAt = [&](std::size_t j, const std::array<double, kMaxTiers>& loaded) {
            return rc.loadTime(loaded) + reAt(j);
        };
        const double none = reAt(0);
        std::array<double, kMaxTiers> acc{};
        double best = none, gpuOnly = none;
        std::size_t bestJ = 0, gpuJ = 0, beJ = 0;
        bool gpuRun = true;
        double maxP = 0;
        std::array<double, kMaxTiers> beTok{};
        for (std::size_t j = 0; j <= h; ++j) {
            // State: blocks 0 … j-1 loaded.
            const double p = std::min(static_cast<double>(j) * B, N);
            const bool boundary = j == h || (j > 0 && tierOf[j] != tierOf[j - 1]);
            if (j > 0 && p >= maxP) {
                beJ = j;
                beTok = acc;
            }
            if (gpuRun && (j == h || tierOf[j] != 0)) {
                gpuRun = false;
                gpuJ = j;
                if (j > 0) gpuOnly = timeAt(j, acc);
            }
            if (j > 0 && boundary) {
                const double t = timeAt(j, acc);
                if (t < best) {
                    best = t;
                    bestJ = j;
                }
            }
            if (j < h) {
                acc[tierOf[j]] += blockTokens(j);
                if (tierOf[j] != 0) maxP = std::max(maxP, pStar[tierOf[j]]);
            }
        }
        const double always = h > 0 ? timeAt(h, acc) : none;
        const double breakeven = beJ > 0 ? timeAt(beJ, beTok) : none;
        if (breakeven < best) {
            best = breakeven;
            bestJ = beJ;
        }
        const double optimal = best;

        tNone[i] = none;
        tGpu[i] = gpuOnly;
        tAlways[i] = always;
        tBe[i] = breakeven;
        tOpt[i] = optimal;
        issueDelay = always;
        if (queueing) {
            // t(j) = loads + recompute after j blocks: the load part is what a wait can hide.
            loads[i] = h > 0 ? std::max(0.0, always - reAt(h)) : 0;
            loads[n + i] = std::max(0.0, breakeven - reAt(beJ));
            loads[2 * n + i] = std::max(0.0, optimal - reAt(bestJ));
        }
        if (per) per->hitBlocks.push_back(static_cast<std::uint32_t>(h));

        const double loadAll = rc.loadTime(acc);
        auto declined = [&](RuleResult& r, std::size_t j, double t,
                            const std::array<double, kMaxTiers>& loaded) {
            if (j >= h) return;
            ++r.declinedRequests;
            r.declinedBlocks += h - j;
            r.declinedLoadS += loadAll - rc.loadTime(loaded);
            r.declinedNetS += always - t;
        };
        declined(rules[3], beJ, breakeven, beTok);
        if (bestJ < h) {
            std::array<double, kMaxTiers> optTok{};
            for (std::size_t j = 0; j < bestJ; ++j)
                optTok[tierOf[j]] += blockTokens(j);
            declined(rules[4], bestJ, optimal, optTok);
        }
        // GPU seconds saved: the recompute each rule avoided against no caching.
        auto recomputeSaved = [&](std::size_t j) { return none - reAt(j); };
        if (h > 0) {
            rules[1].gpuSecondsSaved += recomputeSaved(gpuJ);
            rules[2].gpuSecondsSaved += recomputeSaved(h);
            rules[3].gpuSecondsSaved += recomputeSaved(beJ);
            rules[4].gpuSecondsSaved += recomputeSaved(bestJ);
        }

        // Update the tiers: touch order 1 … m, so the deepest block is the most recent.
        // A tier holding a block whose write was dropped writes it again.
        if (inclusive) {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                std::uint8_t written =
                    lru->access(id, static_cast<std::uint32_t>(trace.blockOffset[i] + j));
                if (anyQueue) written |= static_cast<std::uint8_t>(dropped[id] & resident[id]);
                for (std::uint8_t w = static_cast<std::uint8_t>(written & ~1u); w;
                     w &= static_cast<std::uint8_t>(w - 1)) {
                    const auto k = static_cast<std::size_t>(__builtin_ctz(w));
                    writeTo(k);
                    if (queues[k].on) enqueue(k, id);
                }
            }
        } else if (config.placement == Placement::WriteThrough) {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                const std::uint8_t mask = resident[id];
                for (std::size_t k = 0; k < K; ++k) {
                    if (mask & (1u << k)) {
                        caches[k].touch(id);
                        if (anyQueue && (dropped[id] & (1u << k))) {
                            writeTo(k);
                            if (queues[k].on) enqueue(k, id);
                        }
                    } else {
                        writeTo(k);
                        caches[k].insert(id, dropEvicted);
                        if (queues[k].on && caches[k].holds(id)) enqueue(k, id);
                    }
                }
            }
        } else {
            for (std::size_t j = 0; j < m; ++j) {
                const std::uint32_t id = ids[j];
                const std::uint8_t mask = resident[id];
                if (mask & 1u) {
                    caches[0].touch(id);
                    continue;
                }
                if (mask) caches[static_cast<std::size_t>(__builtin_ctz(mask))].remove(id);
                evictLevel = 0;
                caches[0].insert(id, demote);
            }
        }
        if (anyQueue) closeBatch();
    }
    if (progress) progress(1.0);

    const double reqs = static_cast<double>(n);
    auto ratios = [&](double t, double b, double r) {
        HitRatios hr;
        hr.tokenWeighted = res.tokens ? t / static_cast<double>(res.tokens) : 0;
        hr.blockWeighted = res.blocks ? b / static_cast<double>(res.blocks) : 0;
        hr.perRequest = n ? r / reqs : 0;
        return hr;
    };
    res.anyTier = ratios(anyTok, anyBlk, anyReq);
    for (std::size_t k = 0; k < K; ++k) {
        auto& tr = res.tiers[k];
        tr.hits = ratios(hitTok[k], hitBlk[k], hitReq[k]);
        tr.bytesWritten = static_cast<double>(tr.blocksWritten) * config.blockBytes;
        auto& wb = windowBytes[k];
        std::sort(wb.begin(), wb.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<double> rates;
        for (std::size_t w = 0; w < wb.size(); ++w) {
            if (w > 0 && wb[w].first == wb[w - 1].first)
                rates.back() += wb[w].second / 60.0;
            else
                rates.push_back(wb[w].second / 60.0);
        }
        std::sort(rates.begin(), rates.end());
        const std::uint64_t empty =
            res.windows - std::min<std::uint64_t>(res.windows, rates.size());
        tr.writeRateP50 = percentile(rates, empty, 0.5);
        tr.writeRateP99 = percentile(rates, empty, 0.99);
        tr.writeRateMax = rates.empty() ? 0 : rates.back();
        if (tr.writeBps > 0)
            tr.windowsOverWriteBw = static_cast<std::uint64_t>(
                rates.end() - std::upper_bound(rates.begin(), rates.end(), tr.writeBps));
        if (!inclusive) res.stateBytes += caches[k].stateBytes();
    }
    res.stateBytes += resident.bytes() + pending.bytes() + dropped.bytes() +
                      (inclusive ? lru->stateBytes() : links->stateBytes());

    if (per) {
        per->none.assign(tNone, tNone + n);
        per->gpuOnly.assign(tGpu, tGpu + n);
        per->always.assign(tAlways, tAlways + n);
        per->breakeven.assign(tBe, tBe + n);
        per->optimal.assign(tOpt, tOpt + n);
    }
    if (queueing) {
        // n prefill servers, first come first served in arrival order (ties in trace order). A
        // request's load starts at its arrival, so it overlaps the wait for a server:
        //   wait = max(0, earliest free server − arrival)
        //   service = max(0, load − wait) + recompute      (the server is held for this long)
        //   TTFT = wait + service = max(wait, load) + recompute
        std::vector<std::uint32_t> order(n);
        for (std::size_t i = 0; i < n; ++i)
            order[i] = static_cast<std::uint32_t>(i);
        if (!std::is_sorted(trace.arrivalS.begin(), trace.arrivalS.end()))
            std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
                return trace.arrivalS[a] < trace.arrivalS[b];
            });
        std::vector<double> queued(n);
        std::vector<double>* perQueued[5] = {nullptr, nullptr, nullptr, nullptr, nullptr};
        if (per) {
            perQueued[0] = &per->queuedNone;
            perQueued[1] = &per->queuedGpuOnly;
            perQueued[2] = &per->queuedAlways;
            perQueued[3] = &per->queuedBreakeven;
            perQueued[4] = &per->queuedOptimal;
        }
        for (std::size_t r = 0; r < 5; ++r) {
            double* t = tNone + r * n;
            const double* load = r >= 2 ? loads.data() + (r - 2) * n : nullptr;
            std::priority_queue<double, std::vector<double>, std::greater<>> free;
            for (int s = 0; s < config.instances; ++s)
                free.push(0.0);
            double waitSum = 0, hidden = 0;
            for (const std::uint32_t i : order) {
                const double a = trace.arrivalS[i];
                const double start = std::max(a, free.top());
                const double wait = start - a;
                const double l = load ? std::min(load[i], t[i]) : 0;
                const double service = std::max(0.0, l - wait) + (t[i] - l);
                free.pop();
                free.push(start + service);
                queued[i] = wait + service;
                waitSum += wait;
                hidden += std::min(l, wait);
            }
            std::copy(queued.begin(), queued.end(), t);
            if (perQueued[r]) *perQueued[r] = queued;
            rules[r].meanWaitS = n ? waitSum / static_cast<double>(n) : 0;
            rules[r].hiddenLoadS = hidden;
        }
    }
    // Faster or slower than GPU-only caching (the TTFTs with queueing where it is modelled).
    for (std::size_t r = 0; r < 5; ++r) {
        const double* t = tNone + r * n;
        std::uint64_t gain = 0, loss = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double g = tGpu[i];
            if (t[i] < g * (1 - 1e-12))
                ++gain;
            else if (t[i] > g * (1 + 1e-12))
                ++loss;
        }
        rules[r].gainShare = n ? static_cast<double>(gain) / reqs : 0;
        rules[r].lossShare = n ? static_cast<double>(loss) / reqs : 0;
    }
    // The GPU-only column is compared against last, as the quantiles reorder each column.
    for (std::size_t r : {0, 2, 3, 4, 1})
        rules[r].ttft = stats(tNone + r * n, tNone + (r + 1) * n);
    res.rules.assign(rules.begin(), rules.end());
    return res;
}

} // namespace kvbe
