// Loads in a replay with prefill servers (docs/workload-model.md, "Queueing and shared loads"):
// the loads in flight at the same time share each tier's read bandwidth, and the servers take
// the requests first come first served. Internal to kvbe_core.
#pragma once

#include "trace_admission.h"

#include "kvbe/base/result.h"
#include "kvbe/trace/trace.h"

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

namespace kvbe::detail {

// The loads of one admission rule with prefill servers (ReplayConfig::instances): every request's
// load starts at its arrival, and loads in flight at the same time share each tier's read
// bandwidth, an equal share each, recomputed as transfers start and end. A request reads its
// tiers one after the other, fastest first, as RequestCost::loadTime adds them: per tier t_fixed
// (a latency, shared with nobody), then its bytes, which take `work` seconds at the tier's whole
// bandwidth.
class SharedLoads {
  public:
    // Request i's segments; requests are added in trace order.
    void add(const RequestCost& rc, const TierTokens& tok) {
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
                                 const std::vector<SimTier>& tiers) const;

  private:
    struct Segment {
        std::uint8_t tier; // 1 … the offload tiers
        double work;       // seconds at the tier's whole bandwidth
    };
    std::vector<Segment> m_segs;
    std::vector<std::uint32_t> m_start; // per request: its first segment
};

// What queueing on the servers gave one rule.
struct ServerQueueing {
    double meanWaitS = 0;   // from arrival to a free server
    double hiddenLoadS = 0; // Σ load time hidden by the wait
    double sharedLoadS = 0; // Σ load time added by the loads beside it
};

// `servers` prefill servers, first come first served in `order` (arrival order, ties in trace
// order). times[i] is request i's prefill time under the rule, replaced by its TTFT with
// queueing; load[i] the load part of it (null for a rule that loads nothing) and loadEnd[i] when
// that load ends beside the others' (SharedLoads::loadEnds). A request's load starts at its
// arrival, so it overlaps the wait for a server: it ends at e ≥ arrival + load. With start the
// time a server takes the request:
//   wait = start − arrival,  start = max(arrival, earliest free server)
//   the server is held from start to max(start, e) + recompute
//   TTFT = max(start, e) + recompute − arrival       (= max(wait, load) + recompute alone)
ServerQueueing queueOnServers(int servers, const std::vector<double>& arrival,
                              const std::vector<std::uint32_t>& order, double* times,
                              const double* load, const std::vector<double>& loadEnd);

// A replay's requests before the servers take them: per rule (none, gpu-only, always, breakeven,
// optimal) the prefill time alone, and for the three rules that load the load part of it and the
// loads' segments. None of it depends on the number of servers, and without write queues none of
// it depends on the arrival times: the capacity search (trace_capacity.h) queues the same inputs
// at every load and number of servers.
struct QueueInputs {
    std::array<std::vector<double>, 5> times;
    std::array<std::vector<double>, 3> loads;
    std::array<SharedLoads, 3> shared;
    bool cancelled = false;
};

// One pass of the replay (at config.rateScale) that stops before the queueing.
Result<QueueInputs> replayForQueueing(const Trace& trace, const CostModel& cost,
                                      const ReplayConfig& config,
                                      const std::function<bool(double)>& progress);

} // namespace kvbe::detail
