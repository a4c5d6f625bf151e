// Capacity at a latency target on a fleet (docs/workload-model.md, "The fleet"): each server has
// its own GPU cache behind the router, so a server added moves the hit ratio and the router's
// choices, and no replay's inputs serve another load or count of servers. Each evaluation is a
// whole replay of the fleet, which gives every rule's statistic at once; the searches are the
// same as on servers sharing one cache (trace_capacity.cpp): doubling, then bisection.
#include "kvbe/trace/trace_capacity.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace kvbe {

namespace {

class FleetSearch {
  public:
    FleetSearch(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                const CapacityRequest& q, const std::function<bool(double)>& progress)
        : m_trace(trace), m_cost(cost), m_config(config), m_q(q), m_progress(progress) {}

    // Every rule's statistic at load S on n servers (kCapacityRules order); none when cancelled.
    std::optional<std::array<double, 4>> at(double S, int n) {
        const auto key = std::pair(n, S);
        if (auto it = m_seen.find(key); it != m_seen.end()) return it->second;
        if (m_progress && !m_progress(std::min(0.99, double(m_seen.size()) / m_expected)))
            return std::nullopt;
        ReplayConfig c = m_config;
        c.rateScale = S;
        c.instances = n;
        RequestTimes times;
        auto r = replayTrace(m_trace, m_cost, c, &times);
        if (!r) {
            m_error = r.message();
            return std::nullopt;
        }
        ++evaluations;
        if (S == m_q.rateScale && !r->tiers.empty())
            gpuHits[n] = r->tiers.front().hits.tokenWeighted;
        std::array<double, 4> out{};
        std::vector<double>* cols[4] = {&times.queuedGpuOnly, &times.queuedAlways,
                                        &times.queuedBreakeven, &times.queuedOptimal};
        for (std::size_t k = 0; k < 4; ++k)
            out[k] = latencyStatistic(m_q.target, *cols[k]);
        m_seen[key] = out;
        return out;
    }

    bool holds(double v) const { return v <= m_q.target.seconds; }
    const std::string& error() const { return m_error; }
    int evaluations = 0;
    double m_expected = 60;
    std::map<int, double> gpuHits; // at the servers search's load, by count of servers

  private:
    const Trace& m_trace;
    const CostModel& m_cost;
    const ReplayConfig& m_config;
    const CapacityRequest& m_q;
    const std::function<bool(double)>& m_progress;
    std::map<std::pair<int, double>, std::array<double, 4>> m_seen;
    std::string m_error;
};

} // namespace

Result<CapacityResult> fleetCapacity(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& q,
                                     const std::function<bool(double)>& progress) {
    CapacityResult res = capacityResultFor(trace, q);
    FleetSearch search(trace, cost, config, q, progress);
    auto cancelled = [&]() -> Result<CapacityResult> {
        if (!search.error().empty()) return Error{search.error()};
        res.cancelled = true;
        return res;
    };

    if (q.instances > 0) {
        for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
            RuleLoadHeld h;
            h.rule = std::string(kCapacityRules[k]);
            auto stat = [&](double S) -> std::optional<double> {
                auto v = search.at(S, q.instances);
                if (!v) return std::nullopt;
                h.evaluated.push_back({S, (*v)[k]});
                return (*v)[k];
            };
            // Double (or halve) from S = 1 to a bracket, then bisect in log space.
            double lo = 0, hi = 0, vlo = 0, vhi = 0;
            auto v1 = stat(1);
            if (!v1) return cancelled();
            if (search.holds(*v1)) {
                lo = 1, vlo = *v1;
                for (double S = 2; S <= q.maxRateScale; S *= 2) {
                    auto v = stat(S);
                    if (!v) return cancelled();
                    if (!search.holds(*v)) {
                        hi = S, vhi = *v;
                        break;
                    }
                    lo = S, vlo = *v;
                }
            } else {
                hi = 1, vhi = *v1;
                for (double S = 0.5; S >= q.minRateScale; S /= 2) {
                    auto v = stat(S);
                    if (!v) return cancelled();
                    if (search.holds(*v)) {
                        lo = S, vlo = *v;
                        break;
                    }
                    hi = S, vhi = *v;
                }
            }
            if (lo > 0 && hi > 0)
                while (hi / lo - 1 > q.precision) {
                    const double mid = std::sqrt(lo * hi);
                    auto v = stat(mid);
                    if (!v) return cancelled();
                    if (search.holds(*v))
                        lo = mid, vlo = *v;
                    else
                        hi = mid, vhi = *v;
                }
            using O = RuleLoadHeld::Outcome;
            h.outcome = hi == 0 ? O::HoldsAtMaximum : lo == 0 ? O::NeverHolds : O::Found;
            h.rateScale = lo;
            h.statistic = vlo;
            h.failsAt = hi;
            h.statisticFails = vhi;
            std::sort(
                h.evaluated.begin(), h.evaluated.end(),
                [](const LoadPoint& a, const LoadPoint& b) { return a.rateScale < b.rateScale; });
            for (std::size_t i = 1; i < h.evaluated.size(); ++i)
                if (h.evaluated[i].statistic < h.evaluated[i - 1].statistic)
                    h.falls.emplace_back(h.evaluated[i - 1], h.evaluated[i]);
            res.loadHeld.push_back(std::move(h));
        }
        const RuleLoadHeld& g = res.loadHeld.front();
        for (auto& h : res.loadHeld)
            if (h.rateScale > 0 && g.rateScale > 0) h.vsGpuOnly = h.rateScale / g.rateScale;
        // The curve: every rule on one log grid around the loads found.
        double a = 1, b = 1;
        for (const auto& h : res.loadHeld) {
            if (h.rateScale > 0) a = std::min(a, h.rateScale);
            if (h.failsAt > 0) b = std::max(b, h.failsAt);
        }
        res.curveRateScale = logGrid(a / 2, b * 2, std::max(2, q.curvePoints));
        res.curveStatistic.assign(kCapacityRules.size(), {});
        for (const double S : res.curveRateScale) {
            auto v = search.at(S, q.instances);
            if (!v) return cancelled();
            for (std::size_t k = 0; k < kCapacityRules.size(); ++k)
                res.curveStatistic[k].push_back((*v)[k]);
        }
    }

    if (q.serversNeeded) {
        // A floor no fleet gets below: every prefix hit free on the GPU (one unlimited cache
        // holds every block a fleet's caches could) and no wait. Where it misses the target, no
        // number of servers is enough, for any rule.
        ReplayConfig free = everyHitFreeNoWait(config);
        free.rateScale = q.rateScale;
        RequestTimes freeTimes;
        auto f = replayTrace(trace, cost, free, &freeTimes);
        if (!f) return f.error();
        const double floor = latencyStatistic(q.target, freeTimes.gpuOnly);
        for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
            RuleServers s;
            s.rule = std::string(kCapacityRules[k]);
            // Double from one server to a count that holds, then bisect (more servers hold a
            // statistic no higher, as far as the router and the caches let it).
            int bad = 0, good = 0;
            double vgood = 0;
            for (int n = 1;; n = std::min(q.maxInstances, n * 2)) {
                auto v = search.at(q.rateScale, n);
                if (!v) return cancelled();
                if (search.holds((*v)[k])) {
                    good = n, vgood = (*v)[k];
                    break;
                }
                bad = n;
                s.statistic = (*v)[k];
                if (n >= q.maxInstances) break;
            }
            while (good > 0 && good - bad > 1) {
                const int mid = bad + (good - bad) / 2;
                auto v = search.at(q.rateScale, mid);
                if (!v) return cancelled();
                if (search.holds((*v)[k]))
                    good = mid, vgood = (*v)[k];
                else
                    bad = mid;
            }
            if (good > 0) {
                s.servers = good;
                s.statistic = vgood;
                if (good > 1) {
                    auto v = search.at(q.rateScale, good - 1);
                    if (!v) return cancelled();
                    s.statisticOneFewer = (*v)[k];
                }
            }
            // A server for every request is no bound on a fleet (each server adds a cache and
            // moves the router's choices); every hit free with no wait is.
            s.statisticUnlimited = floor;
            res.servers.push_back(std::move(s));
        }
    }
    res.evaluations = search.evaluations;
    res.passes = search.evaluations;
    if (q.serversNeeded) res.fleetGpuHits.assign(search.gpuHits.begin(), search.gpuHits.end());
    if (progress) progress(1.0);
    return res;
}

} // namespace kvbe
