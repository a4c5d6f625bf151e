// Loads in a replay with prefill servers (docs/workload-model.md, "Queueing and links" and
// "Admission under load"): each tier's link serves the loads one after the other in arrival order,
// the servers take the requests first come first served, and the load-aware rule decides each
// request from the state at its arrival. Internal to kvbe_core.
#pragma once

#include "trace_admission.h"
#include "trace_cache.h"
#include "trace_link_use.h"

#include "kvbe/base/chunked_column.h"
#include "kvbe/base/result.h"
#include "kvbe/trace/trace.h"

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace kvbe::detail {

// A fleet's queues and links (docs/workload-model.md, "The fleet"): each request's server, whose
// queue is its own, and per tier and server the link its loads take (a local tier's: its node's;
// a pooled tier's: its node's link to the pool, and the pool's aggregate bandwidth behind it).
struct FleetLinks {
    const std::uint16_t* server = nullptr; // per request
    int servers = 0;
    std::vector<std::vector<std::uint32_t>> link; // per tier (GPU first, unused): per server
    std::vector<std::uint32_t> pool; // per tier: the pool's aggregate link (kNil: none)
    std::vector<double> poolScale;   // per tier: seconds on the pool per second on a node's link
    std::size_t links = 0;
    std::uint32_t slot(std::size_t k, std::uint32_t i) const { return link[k][server[i]]; }
};

// One transfer of `work` seconds on tier k's link `slot` (its node's), starting no sooner than
// `ready`: when it ends, the links' tails moved. Without a fleet the slot is the tier.
inline double bookTransfer(std::vector<double>& tail, const FleetLinks* fleet, std::size_t k,
                           std::uint32_t slot, double ready, double work, double* startOut) {
    const double start = std::max(ready, tail[slot]);
    double end = start + work;
    if (fleet && fleet->pool[k] != kNil) {
        double& p = tail[fleet->pool[k]];
        p = std::max(p, start) + work * fleet->poolScale[k];
        end = std::max(end, p);
    }
    tail[slot] = end;
    if (startOut) *startOut = start;
    return end;
}

// The loads of a rule whose cut is fixed before the queueing (always, breakeven): per request its
// transfer per tier. Each tier's link is one FIFO: a request reads its tiers one after the other,
// fastest first, as RequestCost::loadTime adds them; per tier t_fixed (a latency, shared with
// nobody), then its bytes, which take `work` seconds at the tier's whole bandwidth once the link
// has finished the loads booked before it.
class FifoLoads {
  public:
    // Request i's transfers; requests are added in trace order, then seal() once.
    void add(const RequestCost& rc, const TierTokens& tok) {
        m_adding.start.push_back(static_cast<std::uint32_t>(m_adding.segs.size()));
        for (std::size_t k = 1; k <= rc.tiers.size(); ++k)
            if (tok[k] > 0) {
                const TierPath& path = rc.tiers[k - 1].path;
                m_adding.segs.push_back(
                    {static_cast<std::uint8_t>(k),
                     std::max(0.0, rc.cost.tLoad(path, tok[k]) - path.tFixedS)});
            }
    }
    // The transfers added, in arrays of their exact size (read by loadEnds).
    void seal() {
        m_start = m_adding.start.join();
        m_segs = m_adding.segs.join();
    }

    // When each request's load ends (its arrival when it loads nothing), the loads booked in
    // `order` (arrival order, ties in trace order). With `busy` (one series per tier, GPU first)
    // each transfer's time on its link is added to its tier's.
    std::vector<double> loadEnds(const std::vector<double>& arrival,
                                 const std::vector<std::uint32_t>& order,
                                 const std::vector<SimTier>& tiers,
                                 std::vector<BusySeries>* busy = nullptr,
                                 const FleetLinks* fleet = nullptr) const;

  private:
    struct Segment {
        std::uint8_t tier; // 1 … the offload tiers
        double work;       // seconds at the tier's whole bandwidth
    };
    // While requests are added: chunks, which hold no spare capacity and never move what they
    // hold (at 10^7 requests a vector doubling its segments held them twice while it grew).
    struct Adding {
        ChunkedColumn<Segment> segs;
        ChunkedColumn<std::uint32_t> start;
    } m_adding;
    std::vector<Segment> m_segs;
    std::vector<std::uint32_t> m_start; // per request: its first segment
};

// Per request, its hit run as runs of blocks read from one tier: blocks [previous end, end) from
// `tier` (0: the GPU). Added in trace order.
// 4 bytes, not 8: at 10^7 requests the hit runs took 160 MB in 8-byte segments.
inline constexpr std::uint32_t kMaxRunBlocks = (1u << 29) - 1;
struct RunSegment {
    std::uint32_t end : 29; // at most kMaxRunBlocks (checked before a replay with servers)
    std::uint32_t tier : 3; // kMaxTiers = 8
};
static_assert(sizeof(RunSegment) == 4 && kMaxTiers <= 8);
class HitRuns {
  public:
    void add(const std::uint8_t* tierOf, std::size_t h); // in trace order, then seal() once
    void seal() {
        m_start = m_adding.start.join();
        m_segs = m_adding.segs.join();
    }
    std::span<const RunSegment> of(std::size_t i) const {
        const std::size_t b = m_start[i];
        const std::size_t e = i + 1 < m_start.size() ? m_start[i + 1] : m_segs.size();
        return {m_segs.data() + b, e - b};
    }
    std::size_t size() const { return m_start.size(); }

  private:
    struct Adding { // as FifoLoads's
        ChunkedColumn<RunSegment> segs;
        ChunkedColumn<std::uint32_t> start;
    } m_adding;
    std::vector<RunSegment> m_segs;
    std::vector<std::uint32_t> m_start;
};

// What queueing on the servers gave one rule.
struct ServerQueueing {
    double meanWaitS = 0;       // from arrival to a free server
    double hiddenLoadS = 0;     // Σ load time hidden by the wait
    double sharedLoadS = 0;     // Σ load time added by the loads ahead on the links
    double gpuSecondsSaved = 0; // Σ recompute avoided by the loads that beat recompute
};

// `servers` prefill servers, first come first served in `order` (arrival order, ties in trace
// order). times[i] is request i's prefill time under the rule, replaced by its TTFT with
// queueing; load[i] the load part of it (null for a rule that loads nothing) and loadEnd[i] when
// that load ends on the links (FifoLoads::loadEnds). A request's load starts at its arrival, so it
// overlaps the wait for a server: it ends at e ≥ arrival + load. With start the time a server
// takes the request:
//   wait = start − arrival,  start = max(arrival, earliest free server)
//   the server is held from start to max(start, e) + recompute
//   TTFT = max(start, e) + recompute − arrival       (= max(wait, load) + recompute alone)
// none[i] (null: no GPU time counted) is the time of recomputing everything: a request whose TTFT
// is below wait + none[i] saved none[i] − its recompute of GPU time.
ServerQueueing queueOnServers(int servers, const std::vector<double>& arrival,
                              const std::vector<std::uint32_t>& order, double* times,
                              const double* load, const std::vector<double>& loadEnd,
                              const double* none = nullptr, const FleetLinks* fleet = nullptr);

// The load-aware rule (`optimal` with prefill servers): at each request's arrival, in arrival
// order, the cut j of its hit run (0 ≤ j ≤ h) with the shortest TTFT given the wait for a server W
// and each tier's link as the loads booked before it left it:
//   TTFT(j) = max(W, L(j)) + recompute(j)
//   L(j)    = the end of its transfers, per tier in turn (fastest first)
//             max(end of the one before + t_fixed, the link's end) + transfer, less the arrival
// then books its transfers on the links. Ties go to the smaller cut: a load no faster than
// recomputing is not made.
struct LoadAwareInputs {
    const Trace* trace = nullptr;
    const CostModel* cost = nullptr;
    const std::vector<SimTier>* tiers = nullptr;
    double blockTokens = 0;
    const HitRuns* runs = nullptr;
    // Per request the static optimal cut (no wait, idle links): where the rule cuts a run
    // shorter, the blocks between are declined for the backlog.
    const std::vector<std::uint32_t>* staticCut = nullptr;
    const FleetLinks* fleet = nullptr; // a fleet's servers and links
};

struct LoadAwareResult : ServerQueueing {
    std::uint64_t declinedRequests = 0, declinedBlocks = 0;
    double declinedLoadS = 0; // what the blocks left unloaded would have taken alone
    TierTokens tokensServed{};
    std::array<std::uint64_t, kMaxTiers> blocksDeclinedForBacklog{};
    std::array<std::uint64_t, kMaxTiers> requestsDeclinedForBacklog{};
};

// ttft[i] gets request i's TTFT. With `busy` (a series per tier, GPU first) the transfers' time
// on the links; with `cuts` each request's cut.
LoadAwareResult queueLoadAware(int servers, const std::vector<double>& arrival,
                               const std::vector<std::uint32_t>& order, const LoadAwareInputs& in,
                               double* ttft, std::vector<BusySeries>* busy = nullptr,
                               std::vector<std::uint32_t>* cuts = nullptr);

// A replay's requests before the servers take them: per rule (none, gpu-only, always, breakeven,
// optimal) the prefill time alone; for always and breakeven the load part of it and the loads'
// transfers; for the load-aware rule the hit runs and the static cuts. None of it depends on the
// number of servers, and without write queues none of it depends on the arrival times: the
// capacity search (trace_capacity.h) queues the same inputs at every load and number of servers.
// Only the rules asked for are kept (replayForQueueing's `rules`): a column is 8 bytes a request,
// the transfers 20 or more, so at 10^7 requests every rule's inputs take 1.1 GB and one rule's
// (the plan's servers search) a quarter of it.
struct QueueInputs {
    std::size_t requests = 0;
    std::array<BlockArray<double>, 5> columns;     // per rule (none … optimal); empty: not kept
    std::array<BlockArray<double>, 2> loadColumns; // for always and breakeven
    const double* times(std::size_t rule) const { return columns[rule].data(); }
    const double* loads(std::size_t r) const { return loadColumns[r].data(); }
    std::array<FifoLoads, 2> fifo;
    HitRuns runs;                         // for optimal
    std::vector<std::uint32_t> staticCut; // for optimal
    bool cancelled = false;
};

// The rules a replay keeps each request's time for, as bits (1 << rule, in the order none,
// gpu-only, always, breakeven, optimal).
inline constexpr unsigned kAllRules = 0x1Fu;

// One pass of the replay (at config.rateScale) that stops before the queueing, keeping the inputs
// of `rules` only (kAllRules: every rule's).
Result<QueueInputs> replayForQueueing(const Trace& trace, const CostModel& cost,
                                      const ReplayConfig& config, unsigned rules,
                                      const std::function<bool(double)>& progress);

} // namespace kvbe::detail
