// Replay of a trace through the tiered prefix cache, and the admission rules of
// docs/workload-model.md evaluated on every request's hit run.
#include "kvbe/trace/trace_sim.h"

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

    // tok[k]: tokens loaded from tier k (k = 0 is the GPU: free).
    double loadTime(const std::array<double, kMaxTiers>& tok) const {
        double t = 0;
        for (std::size_t k = 1; k <= tiers.size(); ++k)
            if (tok[k] > 0) t += cost.tLoad(tiers[k - 1].path, tok[k]);
        return t;
    }
};

// The recompute time of a request of N tokens after its first j blocks are loaded, memoised:
// the rules share their cut points.
class Recompute {
  public:
    Recompute(const CostModel& cost, double blockTokens, double n)
        : m_cost(cost), m_b(blockTokens), m_n(n) {}
    double at(std::size_t j) {
        for (std::size_t q = 0; q < m_count; ++q)
            if (m_memo[q].first == j) return m_memo[q].second;
        const double p = std::min(static_cast<double>(j) * m_b, m_n);
        const double v = m_cost.tRecompute(m_n - p, p);
        if (m_count < m_memo.size()) m_memo[m_count++] = {j, v};
        return v;
    }

  private:
    const CostModel& m_cost;
    double m_b, m_n;
    std::array<std::pair<std::size_t, double>, 8> m_memo;
    std::size_t m_count = 0;
};

// One request's prefill time under each rule, and where each rule cut its hit run of h blocks.
struct RuleTimes {
    double none = 0, gpuOnly = 0, always = 0, breakeven = 0, optimal = 0;
    std::size_t gpuJ = 0, beJ = 0, bestJ = 0;
    std::array<double, kMaxTiers> allTok{};  // tokens per tier of the whole run (always)
    std::array<double, kMaxTiers> beTok{};   // … of the run breakeven loads
    std::array<double, kMaxTiers> bestTok{}; // … of the run optimal loads
};

// The admission rules on one hit run: tierOf[j] is the tier block j is read from, pStar[k] the
// break-even prefix of tier k. Scans the run once; candidates for `optimal` are 0, every tier
// boundary, the end of the run and the `breakeven` cut (within one tier t(j) is concave in j for
// a convex recompute time, so its minimum sits at a segment end).
RuleTimes ruleTimes(const RequestCost& rc, Recompute& re, const std::uint8_t* tierOf, std::size_t h,
                    double B, double N, const std::array<double, kMaxTiers>& pStar) {
    auto blockTokens = [&](std::size_t j) {
        const double a = static_cast<double>(j) * B;
        return std::min(a + B, N) - a;
    };
    auto timeAt = [&](std::size_t j, const std::array<double, kMaxTiers>& loaded) {
        return rc.loadTime(loaded) + re.at(j);
    };
    RuleTimes r;
    r.none = re.at(0);
    auto& acc = r.allTok;
    double best = r.none;
    r.gpuOnly = r.none;
    bool gpuRun = true;
    double maxP = 0;
    for (std::size_t j = 0; j <= h; ++j) {
        // State: blocks 0 … j-1 loaded.
        const double p = std::min(static_cast<double>(j) * B, N);
        const bool boundary = j == h || (j > 0 && tierOf[j] != tierOf[j - 1]);
        if (j > 0 && p >= maxP) {
            r.beJ = j;
            r.beTok = acc;
        }
        if (gpuRun && (j == h || tierOf[j] != 0)) {
            gpuRun = false;
            r.gpuJ = j;
            if (j > 0) r.gpuOnly = timeAt(j, acc);
        }
        if (j > 0 && boundary) {
            const double t = timeAt(j, acc);
            if (t < best) {
                best = t;
                r.bestJ = j;
                r.bestTok = acc;
            }
        }
        if (j < h) {
            acc[tierOf[j]] += blockTokens(j);
            if (tierOf[j] != 0) maxP = std::max(maxP, pStar[tierOf[j]]);
        }
    }
    r.always = h > 0 ? timeAt(h, acc) : r.none;
    r.breakeven = r.beJ > 0 ? timeAt(r.beJ, r.beTok) : r.none;
    if (r.breakeven < best) {
        best = r.breakeven;
        r.bestJ = r.beJ;
        r.bestTok = r.beTok;
    }
    r.optimal = best;
    return r;
}

// The write queues: one per offload tier with a write bandwidth (ReplayConfig::writeQueue).
// Writes wait for their request's prefill to end, then join their tier's queue in the order they
// were issued and drain at the tier's write bandwidth in trace time. A block is readable from a
// tier once its write has completed; a full queue drops its oldest pending write.
class WriteQueues {
  public:
    WriteQueues(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                std::uint32_t blocks, const std::uint8_t* resident, std::vector<TierReport>& report)
        : m_resident(resident), m_report(report), m_tiers(caps.size()) {
        if (config.writeQueue) {
            for (std::size_t k = 1; k < m_tiers; ++k) {
                const auto& t = config.tiers[k - 1];
                if (!(t.writeBps > 0) || caps[k] == 0) continue;
                auto& wq = m_q[k];
                wq.on = m_any = true;
                wq.shared = t.sharedLink;
                m_anyShared = m_anyShared || t.sharedLink;
                wq.tau = config.blockBytes / t.writeBps;
                const double b = std::floor(t.writeBufferBytes / config.blockBytes);
                wq.bound = b >= 1 ? (b < 1e18 ? static_cast<std::uint64_t>(b) : kNoLimit) : 1;
            }
        }
        m_pending = detail::BlockArray<std::uint8_t>(m_any ? blocks : 0, 0);
        m_dropped = detail::BlockArray<std::uint8_t>(m_any ? blocks : 0, 0);
    }

    bool any() const { return m_any; }
    bool anySharedLink() const { return m_anyShared; }
    bool on(std::size_t k) const { return m_q[k].on; }
    bool shared(std::size_t k) const { return m_q[k].shared; }
    // Per block, a bit per tier: its write to the tier is queued (pending), or the tier holds the
    // block's place but its write was dropped. Only when any().
    std::uint8_t pending(std::uint32_t id) const { return m_pending[id]; }
    std::uint8_t dropped(std::uint32_t id) const { return m_dropped[id]; }
    std::uint64_t stateBytes() const { return m_pending.bytes() + m_dropped.bytes(); }

    // Issues the batches due by t and completes the writes done by t.
    void drain(double t) {
        while (!m_events.empty() && m_events.top().t <= t) {
            const BatchEvent e = m_events.top();
            m_events.pop();
            Batch& b = m_batches[static_cast<std::size_t>(e.batch - m_batchesBase)];
            for (std::uint64_t w = b.begin; w < b.end; ++w) {
                const Write& wr = m_writes[static_cast<std::size_t>(w - m_writesBase)];
                issue(wr.tier, wr.id, e.t);
            }
            b.done = true;
            while (!m_batches.empty() && m_batches.front().done) {
                const std::uint64_t count = m_batches.front().end - m_batches.front().begin;
                m_writes.erase(m_writes.begin(),
                               m_writes.begin() + static_cast<std::ptrdiff_t>(count));
                m_writesBase += count;
                m_batches.pop_front();
                ++m_batchesBase;
            }
        }
        for (std::size_t k = 1; k < m_tiers; ++k)
            if (m_q[k].on) drainTier(k, t);
    }

    // A load of `busy` seconds from a tier whose reads and writes share one link, at time t (the
    // queue already drained to t): reads go first, so the write in progress and every write
    // behind it finish `busy` later, and a write issued meanwhile starts when the reads end.
    void occupyLink(std::size_t k, double t, double busy) {
        auto& wq = m_q[k];
        wq.linkFreeAt = std::max(wq.linkFreeAt, t) + busy;
        if (!wq.q.empty()) wq.headDone += busy;
    }

    // Block id is stored in tier k by the current request: it is not readable there until its
    // write, issued when the request's prefill ends, has gone through the queue.
    void enqueue(std::size_t k, std::uint32_t id) {
        const auto bit = static_cast<std::uint8_t>(1u << k);
        m_dropped[id] &= static_cast<std::uint8_t>(~bit);
        if (m_pending[id] & bit) return; // its earlier write is still to come: that one stores it
        m_pending[id] |= bit;
        m_writes.push_back(Write{id, static_cast<std::uint32_t>(k)});
    }

    // After a request's updates: its writes become one batch, issued at issueAt (when its
    // prefill ends).
    void closeBatch(double issueAt) {
        const std::uint64_t end = m_writesBase + m_writes.size();
        const std::uint64_t begin = m_batches.empty() ? m_writesBase : m_batches.back().end;
        if (end == begin) return;
        m_batches.push_back(Batch{begin, end, false});
        m_events.push(BatchEvent{issueAt, m_batchesBase + m_batches.size() - 1});
    }

  private:
    struct Queue {
        bool on = false;
        double tau = 0;          // seconds to write one block
        std::uint64_t bound = 0; // queued blocks before the oldest is dropped
        std::deque<std::uint32_t> q;
        double headDone = 0;   // when the write at the front completes
        bool shared = false;   // reads take the same link (SimTier::sharedLink)
        double linkFreeAt = 0; // shared: when the reads issued so far have finished
    };
    // A request's writes are one batch (one issue time): the writes sit in a FIFO in request
    // order, and a heap orders the batches by issue time.
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

    void drainTier(std::size_t k, double t) {
        auto& wq = m_q[k];
        const auto bit = static_cast<std::uint8_t>(1u << k);
        while (!wq.q.empty() && wq.headDone <= t) {
            m_pending[wq.q.front()] &= static_cast<std::uint8_t>(~bit);
            wq.q.pop_front();
            if (!wq.q.empty()) wq.headDone += wq.tau;
        }
    }

    void issue(std::size_t k, std::uint32_t id, double t) {
        auto& wq = m_q[k];
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
            m_pending[old] &= static_cast<std::uint8_t>(~bit);
            if (m_resident[old] & bit) m_dropped[old] |= bit;
            ++m_report[k].writesDropped;
            wq.headDone = start + wq.tau;
        }
        const double backlog = wq.headDone - t + static_cast<double>(wq.q.size() - 1) * wq.tau;
        m_report[k].maxBacklogS = std::max(m_report[k].maxBacklogS, backlog);
    }

    const std::uint8_t* m_resident;
    std::vector<TierReport>& m_report;
    std::size_t m_tiers;
    std::array<Queue, kMaxTiers> m_q;
    bool m_any = false, m_anyShared = false;
    detail::BlockArray<std::uint8_t> m_pending, m_dropped;
    std::deque<Write> m_writes;
    std::deque<Batch> m_batches;
    std::uint64_t m_writesBase = 0, m_batchesBase = 0;
    std::priority_queue<BatchEvent, std::vector<BatchEvent>, std::greater<>> m_events;
};

// The loads of one admission rule with prefill servers (ReplayConfig::instances): every request's
// load starts at its arrival, and loads in flight at the same time share each tier's read
// bandwidth, an equal share each, recomputed as transfers start and end (docs/workload-model.md,
// "Time and queueing"). A request reads its tiers one after the other, fastest first, as
// RequestCost::loadTime adds them: per tier t_fixed (a latency, shared with nobody), then its
// bytes, which take `work` seconds at the tier's whole bandwidth.
class SharedLoads {
  public:
    // Request i's segments; requests are added in trace order.
    void add(const RequestCost& rc, const std::array<double, kMaxTiers>& tok) {
        m_start.push_back(static_cast<std::uint32_t>(m_segs.size()));
        for (std::size_t k = 1; k <= rc.tiers.size(); ++k)
            if (tok[k] > 0) {
                const TierPath& path = rc.tiers[k - 1].path;
                m_segs.push_back({static_cast<std::uint8_t>(k),
                                  std::max(0.0, rc.cost.tLoad(path, tok[k]) - path.tFixedS)});
            }
    }

    // When each request's load ends (its arrival when it loads nothing). Processor sharing per
    // tier, kept in virtual time: a tier's clock v advances at 1/n per second while n transfers
    // run, so a transfer joining at v0 with work w ends when v reaches v0 + w, whatever joins or
    // leaves meanwhile.
    std::vector<double> loadEnds(const std::vector<double>& arrival,
                                 const std::vector<SimTier>& tiers) const {
        const std::size_t n = m_start.size();
        std::vector<double> end(arrival.begin(), arrival.begin() + static_cast<std::ptrdiff_t>(n));
        struct Join {
            double t;
            std::uint32_t seg, req;
            bool operator>(const Join& o) const { return t > o.t; }
        };
        struct Running {
            double v;
            std::uint32_t seg, req;
            bool operator>(const Running& o) const { return v > o.v; }
        };
        struct Tier {
            double v = 0, last = 0;
            std::priority_queue<Running, std::vector<Running>, std::greater<>> run;
            void advance(double t) {
                if (!run.empty()) v += (t - last) / static_cast<double>(run.size());
                last = t;
            }
            double nextEnd() const {
                if (run.empty()) return kUnlimited;
                return last + std::max(0.0, run.top().v - v) * static_cast<double>(run.size());
            }
        };
        std::vector<Tier> link(tiers.size() + 1);
        std::priority_queue<Join, std::vector<Join>, std::greater<>> joins;
        auto fixed = [&](std::uint32_t seg) { return tiers[m_segs[seg].tier - 1].path.tFixedS; };
        auto last = [&](std::uint32_t req) {
            return req + 1 < n ? m_start[req + 1] : static_cast<std::uint32_t>(m_segs.size());
        };
        for (std::uint32_t i = 0; i < n; ++i)
            if (m_start[i] < last(i)) joins.push({arrival[i] + fixed(m_start[i]), m_start[i], i});
        for (;;) {
            std::size_t k = 0;
            double tEnd = kUnlimited;
            for (std::size_t q = 1; q < link.size(); ++q)
                if (const double e = link[q].nextEnd(); e < tEnd) {
                    tEnd = e;
                    k = q;
                }
            if (joins.empty() && k == 0) break;
            if (!joins.empty() && joins.top().t <= tEnd) {
                const Join j = joins.top();
                joins.pop();
                Tier& tier = link[m_segs[j.seg].tier];
                tier.advance(j.t);
                tier.run.push({tier.v + m_segs[j.seg].work, j.seg, j.req});
                continue;
            }
            Tier& tier = link[k];
            tier.advance(tEnd);
            const Running done = tier.run.top();
            tier.run.pop();
            if (done.seg + 1 < last(done.req))
                joins.push({tEnd + fixed(done.seg + 1), done.seg + 1, done.req});
            else
                end[done.req] = tEnd;
        }
        return end;
    }

  private:
    struct Segment {
        std::uint8_t tier; // 1 … the offload tiers
        double work;       // seconds at the tier's whole bandwidth
    };
    std::vector<Segment> m_segs;
    std::vector<std::uint32_t> m_start; // per request: its first segment
};

// Rules in the order of ReplayResult::rules.
enum Rule : std::size_t { None, GpuOnly, Always, Breakeven, Optimal, kRules };

// One replay: the tiers' state, the per-request times under each rule and the counters of the
// report. run() walks the trace once (look up, admit, update per request); finish() summarises.
class Replay {
  public:
    Replay(const Trace& trace, const CostModel& cost, const ReplayConfig& config, RequestTimes* per)
        : m_trace(trace), m_cost(cost), m_config(config), m_per(per), m_k(config.tiers.size() + 1),
          m_b(trace.summary.blockTokens), m_n(trace.size()),
          m_resident(trace.distinctBlocks, 0), m_rc{cost, config.tiers} {
        setUpTiers();
        m_queues.emplace(config, m_caps, trace.distinctBlocks, m_resident.data(), m_res.tiers);
        // Prefill times per rule (none, gpu-only, always, breakeven, optimal), and with instances
        // the load part of the last three (the part a wait can hide).
        m_times = detail::BlockArray<double>(kRules * m_n);
        if (config.instances > 0) {
            m_loads = detail::BlockArray<double>(3 * m_n);
            m_shared.resize(3);
        }
        m_windowBytes.resize(m_k);
        const char* names[kRules] = {"none", "gpu-only", "always", "breakeven", "optimal"};
        for (std::size_t r = 0; r < kRules; ++r)
            m_rules[r].name = names[r];
        if (per) {
            per->hitBlocks.clear();
            per->hitBlocks.reserve(m_n);
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
        double* const t = m_times.data();
        if (m_per) {
            m_per->none.assign(column(None), column(None) + m_n);
            m_per->gpuOnly.assign(column(GpuOnly), column(GpuOnly) + m_n);
            m_per->always.assign(column(Always), column(Always) + m_n);
            m_per->breakeven.assign(column(Breakeven), column(Breakeven) + m_n);
            m_per->optimal.assign(column(Optimal), column(Optimal) + m_n);
        }
        if (m_config.instances > 0) queueOnInstances();
        compareWithGpuOnly();
        // The GPU-only column is compared against last, as the quantiles reorder each column.
        for (std::size_t r : {None, Always, Breakeven, Optimal, GpuOnly})
            m_rules[r].ttft = stats(t + r * m_n, t + (r + 1) * m_n);
        m_res.rules.assign(m_rules.begin(), m_rules.end());
        return std::move(m_res);
    }

    ReplayResult cancelled() {
        m_res.cancelled = true;
        return std::move(m_res);
    }

  private:
    double* column(std::size_t rule) { return m_times.data() + rule * m_n; }

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
        if (m_inclusive) {
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
        for (double a : m_trace.arrivalS)
            maxArrival = std::max(maxArrival, a);
        m_res.durationS = maxArrival;
        m_res.windows = windowOf(maxArrival) + 1;
    }

    void request(std::size_t i) {
        const auto ids = m_trace.blocksOf(i);
        const std::size_t m = ids.size();
        m_window = windowOf(m_trace.arrivalS[i]);
        const double now = m_trace.arrivalS[i];
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
        const double issueDelay = admit(i, h);
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
            for (std::size_t j = 0; j < m; ++j)
                m_lru->prefetch(ids[j]);
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
    std::array<double, kMaxTiers> countHits(std::size_t i, std::size_t h) {
        const double N = m_trace.inputTokens[i];
        std::array<double, kMaxTiers> tok{};
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

    // The rules' times for request i, what they declined and the GPU time they saved; returns
    // the request's prefill time under `always` (its writes are issued when it ends).
    double admit(std::size_t i, std::size_t h) {
        const double N = m_trace.inputTokens[i];
        Recompute re(m_cost, m_b, N);
        const RuleTimes rt = ruleTimes(m_rc, re, m_tierOf.data(), h, m_b, N, m_pStar);
        column(None)[i] = rt.none;
        column(GpuOnly)[i] = rt.gpuOnly;
        column(Always)[i] = rt.always;
        column(Breakeven)[i] = rt.breakeven;
        column(Optimal)[i] = rt.optimal;
        if (m_config.instances > 0) {
            // t(j) = loads + recompute after j blocks: the load part is what a wait can hide.
            m_loads[i] = h > 0 ? std::max(0.0, rt.always - re.at(h)) : 0;
            m_loads[m_n + i] = std::max(0.0, rt.breakeven - re.at(rt.beJ));
            m_loads[2 * m_n + i] = std::max(0.0, rt.optimal - re.at(rt.bestJ));
            m_shared[0].add(m_rc, rt.allTok);
            m_shared[1].add(m_rc, rt.beTok);
            m_shared[2].add(m_rc, rt.bestTok);
        }
        if (m_per) m_per->hitBlocks.push_back(static_cast<std::uint32_t>(h));

        const double loadAll = m_rc.loadTime(rt.allTok);
        auto declined = [&](RuleResult& r, std::size_t j, double t,
                            const std::array<double, kMaxTiers>& loaded) {
            if (j >= h) return;
            ++r.declinedRequests;
            r.declinedBlocks += h - j;
            r.declinedLoadS += loadAll - m_rc.loadTime(loaded);
            r.declinedNetS += rt.always - t;
        };
        declined(m_rules[Breakeven], rt.beJ, rt.breakeven, rt.beTok);
        declined(m_rules[Optimal], rt.bestJ, rt.optimal, rt.bestTok);
        // GPU seconds saved: the recompute each rule avoided against no caching.
        if (h > 0) {
            m_rules[GpuOnly].gpuSecondsSaved += rt.none - re.at(rt.gpuJ);
            m_rules[Always].gpuSecondsSaved += rt.none - re.at(h);
            m_rules[Breakeven].gpuSecondsSaved += rt.none - re.at(rt.beJ);
            m_rules[Optimal].gpuSecondsSaved += rt.none - re.at(rt.bestJ);
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
                std::uint8_t written =
                    m_lru->access(id, static_cast<std::uint32_t>(m_trace.blockOffset[i] + j));
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
                for (std::size_t k = 0; k < m_k; ++k) {
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
            auto& wb = m_windowBytes[k];
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
                m_res.windows - std::min<std::uint64_t>(m_res.windows, rates.size());
            tr.writeRateP50 = percentile(rates, empty, 0.5);
            tr.writeRateP99 = percentile(rates, empty, 0.99);
            tr.writeRateMax = rates.empty() ? 0 : rates.back();
            if (tr.writeBps > 0)
                tr.windowsOverWriteBw = static_cast<std::uint64_t>(
                    rates.end() - std::upper_bound(rates.begin(), rates.end(), tr.writeBps));
            if (!m_inclusive) m_res.stateBytes += m_caches[k].stateBytes();
        }
        m_res.stateBytes += m_resident.bytes() + m_queues->stateBytes() +
                            (m_inclusive ? m_lru->stateBytes() : m_links->stateBytes());
    }

    // n prefill servers, first come first served in arrival order (ties in trace order). A
    // request's load starts at its arrival, so it overlaps the wait for a server, and it shares
    // each tier's bandwidth with the loads in flight beside it (SharedLoads): it ends at e ≥
    // arrival + load. With start the time a server takes the request:
    //   wait = start − arrival,  start = max(arrival, earliest free server)
    //   the server is held from start to max(start, e) + recompute
    //   TTFT = max(start, e) + recompute − arrival       (= max(wait, load) + recompute alone)
    // The columns become the TTFTs with queueing.
    void queueOnInstances() {
        const auto& arrival = m_trace.arrivalS;
        std::vector<std::uint32_t> order(m_n);
        for (std::size_t i = 0; i < m_n; ++i)
            order[i] = static_cast<std::uint32_t>(i);
        if (!std::is_sorted(arrival.begin(), arrival.end()))
            std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
                return arrival[a] < arrival[b];
            });
        std::vector<double> queued(m_n);
        std::vector<double>* perQueued[kRules] = {};
        if (m_per) {
            perQueued[None] = &m_per->queuedNone;
            perQueued[GpuOnly] = &m_per->queuedGpuOnly;
            perQueued[Always] = &m_per->queuedAlways;
            perQueued[Breakeven] = &m_per->queuedBreakeven;
            perQueued[Optimal] = &m_per->queuedOptimal;
        }
        for (std::size_t r = 0; r < kRules; ++r) {
            double* t = column(r);
            const double* load = r >= Always ? m_loads.data() + (r - Always) * m_n : nullptr;
            const std::vector<double> loadEnd =
                load ? m_shared[r - Always].loadEnds(arrival, m_config.tiers)
                     : std::vector<double>();
            std::priority_queue<double, std::vector<double>, std::greater<>> free;
            for (int s = 0; s < m_config.instances; ++s)
                free.push(0.0);
            double waitSum = 0, hidden = 0, shared = 0;
            for (const std::uint32_t i : order) {
                const double a = arrival[i];
                const double start = std::max(a, free.top());
                const double alone = load ? std::min(load[i], t[i]) : 0;
                const double l = load ? std::max(alone, loadEnd[i] - a) : 0; // loads beside it
                const double end = std::max(start - a, l) + (t[i] - alone);
                free.pop();
                free.push(a + end);
                queued[i] = end;
                waitSum += start - a;
                hidden += std::min(l, start - a);
                shared += l - alone;
            }
            std::copy(queued.begin(), queued.end(), t);
            if (perQueued[r]) *perQueued[r] = queued;
            m_rules[r].meanWaitS = m_n ? waitSum / static_cast<double>(m_n) : 0;
            m_rules[r].hiddenLoadS = hidden;
            m_rules[r].sharedLoadS = shared;
        }
    }

    // Faster or slower than GPU-only caching (the TTFTs with queueing where it is modelled).
    void compareWithGpuOnly() {
        const double* g = column(GpuOnly);
        for (std::size_t r = 0; r < kRules; ++r) {
            const double* t = column(r);
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
    const std::size_t m_k; // the GPU and the offload tiers
    const double m_b;      // tokens per block
    const std::size_t m_n; // requests

    ReplayResult m_res;
    std::vector<std::uint64_t> m_caps;
    std::array<double, kMaxTiers> m_pStar{};
    detail::BlockArray<std::uint8_t> m_resident; // a bit per tier holding the block
    bool m_inclusive = false;
    std::optional<detail::InclusiveLru> m_lru;
    std::optional<detail::TierLinks> m_links;
    std::vector<TierCache> m_caches;
    std::optional<WriteQueues> m_queues;
    std::vector<SharedLoads> m_shared; // with instances: always, breakeven, optimal
    RequestCost m_rc;

    detail::BlockArray<double> m_times, m_loads;
    std::array<RuleResult, kRules> m_rules;
    std::array<double, kMaxTiers> m_hitTok{}, m_hitBlk{}, m_hitReq{};
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
    Replay replay(trace, cost, config, per);
    if (!replay.run(progress)) return replay.cancelled();
    return replay.finish();
}

} // namespace kvbe
