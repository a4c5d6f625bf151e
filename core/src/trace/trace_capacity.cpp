// The capacity searches (trace_capacity.h). One cache pass gives every rule's prefill times and
// loads (detail::replayForQueueing); where nothing in the cache depends on time (no write
// queues) that one pass serves every load and every number of servers, and each evaluation is
// only the shared loads at the load's arrivals and the queueing on the servers. With write
// queues each load gets its own pass (the queues drain in the scaled time), kept while it is
// reused. The rules' searches and the curve's points are independent and run on threads.
#include "kvbe/trace/trace_capacity.h"

#include "trace_loads.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

namespace kvbe {

const RuleLoadHeld* CapacityResult::loadHeldOf(std::string_view rule) const {
    for (const auto& r : loadHeld)
        if (r.rule == rule) return &r;
    return nullptr;
}

const RuleServers* CapacityResult::serversOf(std::string_view rule) const {
    for (const auto& r : servers)
        if (r.rule == rule) return &r;
    return nullptr;
}

namespace {

using detail::QueueInputs;
using Pass = std::shared_ptr<const QueueInputs>;

// Thrown inside a task to stop it: cancelled, or a pass failed.
struct Stop {};

// Runs fn(0 … count − 1) on up to `threads` threads while the calling thread waits, calling
// tick() every 50 ms, whenever a task ends and once at the end; tick returning false sets
// `cancel`, and tasks not yet started are skipped.
void runTasks(std::size_t count, int threads, const std::function<void(std::size_t)>& fn,
              const std::function<bool()>& tick, std::atomic<bool>& cancel) {
    std::atomic<std::size_t> next{0};
    std::mutex m;
    std::condition_variable cv;
    std::size_t done = 0;
    auto worker = [&] {
        for (std::size_t i; (i = next++) < count;) {
            if (!cancel) fn(i);
            {
                const std::lock_guard lock(m);
                ++done;
            }
            cv.notify_one();
        }
    };
    std::vector<std::thread> pool;
    const std::size_t n = std::min<std::size_t>(count, static_cast<std::size_t>(threads));
    for (std::size_t k = 0; k < n; ++k)
        pool.emplace_back(worker);
    {
        std::unique_lock lock(m);
        while (done < count) {
            cv.wait_for(lock, std::chrono::milliseconds(50));
            lock.unlock();
            if (tick && !tick()) cancel = true;
            lock.lock();
        }
    }
    if (tick && !tick()) cancel = true;
    for (auto& t : pool)
        t.join();
}

class Search {
  public:
    Search(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
           const CapacityRequest& request)
        : m_trace(trace), m_cost(cost), m_config(config), m_req(request), m_order(trace.size()) {
        m_config.instances = 1;
        // The rules whose queueing inputs each pass keeps (QueueInputs): the load search and the
        // curve queue every rule; the servers search alone only those it is asked for.
        for (std::size_t r = 0; r < kCapacityRules.size(); ++r)
            if (request.instances > 0 || request.serversRules.empty() ||
                std::find(request.serversRules.begin(), request.serversRules.end(),
                          kCapacityRules[r]) != request.serversRules.end())
                m_rules |= 1u << (r + 1); // after `none`

        m_timeDependent =
            m_config.writeQueue && std::any_of(m_config.tiers.begin(), m_config.tiers.end(),
                                               [](const SimTier& t) { return t.writeBps > 0; });
        // Arrival order (ties in trace order) is the same at every load.
        std::iota(m_order.begin(), m_order.end(), 0u);
        const auto& a = trace.arrivalS;
        std::stable_sort(m_order.begin(), m_order.end(),
                         [&](std::uint32_t x, std::uint32_t y) { return a[x] < a[y]; });
    }

    std::atomic<bool> cancel{false};
    std::atomic<int> passes{0}, evaluations{0};

    // Runs fn, turning a Stop or an exception into the search's end (the first error kept).
    void guarded(const std::function<void()>& fn) {
        try {
            fn();
        } catch (const Stop&) {
        } catch (const std::exception& e) {
            fail(std::string("capacity search: ") + e.what());
        }
    }
    std::optional<std::string> error() {
        const std::lock_guard lock(m_mutex);
        return m_error;
    }

    // The cache pass at load S: the same one for every load where nothing depends on time.
    Pass pass(double S) {
        const double key = m_timeDependent ? S : 1.0;
        std::promise<Pass> promise;
        std::shared_future<Pass> future;
        bool mine = false;
        {
            const std::lock_guard lock(m_mutex);
            auto it = std::find_if(m_passes.begin(), m_passes.end(),
                                   [&](const auto& p) { return p.first == key; });
            if (it != m_passes.end()) {
                future = it->second;
                std::rotate(it, it + 1, m_passes.end()); // the most recently used last
            } else {
                future = promise.get_future().share();
                m_passes.emplace_back(key, future);
                // The passes kept for reuse: all that the threads may be working on, and a few.
                if (m_passes.size() > 8) m_passes.erase(m_passes.begin());
                mine = true;
            }
        }
        if (mine) {
            ReplayConfig c = m_config;
            c.rateScale = key;
            auto r = detail::replayForQueueing(m_trace, m_cost, c, m_rules,
                                               [this](double) { return !cancel.load(); });
            ++passes;
            if (!r) {
                fail(r.message());
                promise.set_value(nullptr);
            } else if (r->cancelled) {
                promise.set_value(nullptr);
            } else {
                promise.set_value(std::make_shared<const QueueInputs>(std::move(*r)));
            }
        }
        Pass p = future.get();
        if (!p) throw Stop{};
        return p;
    }

    // The arrivals at load S: the trace's own at S = 1, not copied (80 MB at 10^7 requests).
    class Arrivals {
      public:
        Arrivals(const std::vector<double>& trace, double S) : m_own(S == 1 ? &trace : nullptr) {
            if (m_own) return;
            m_scaled = trace;
            for (double& x : m_scaled)
                x /= S;
        }
        const std::vector<double>& get() const { return m_own ? *m_own : m_scaled; }

      private:
        const std::vector<double>* m_own;
        std::vector<double> m_scaled;
    };
    Arrivals arrivals(double S) const { return {m_trace.arrivalS, S}; }

    // When rule r's loads end at these arrivals: empty for GPU-only, which loads nothing, and
    // for the load-aware rule, whose loads depend on the servers (kLoadAware).
    static constexpr std::size_t kLoadAware = 3;
    std::vector<double> loadEnds(const QueueInputs& in, const std::vector<double>& arrival,
                                 std::size_t r) const {
        if (r == 0 || r == kLoadAware) return {};
        return in.fifo[r - 1].loadEnds(arrival, m_order, m_config.tiers);
    }

    // Rule r's statistic (r: kCapacityRules) on N servers.
    double statistic(const QueueInputs& in, const std::vector<double>& arrival, std::size_t r,
                     int servers, const std::vector<double>& loadEnd) {
        if (cancel) throw Stop{};
        // The rule's prefill times (after `none`), which the queueing turns into TTFTs; the
        // load-aware rule's come from its runs alone (its column is not kept).
        std::vector<double> t =
            r == kLoadAware ? std::vector<double>(in.requests)
                            : std::vector<double>(in.times(r + 1), in.times(r + 1) + in.requests);
        if (r == kLoadAware) {
            const detail::LoadAwareInputs li{&m_trace,        &m_cost,
                                             &m_config.tiers, double(m_trace.summary.blockTokens),
                                             &in.runs,        &in.staticCut};
            detail::queueLoadAware(servers, arrival, m_order, li, t.data());
        } else {
            detail::queueOnServers(servers, arrival, m_order, t.data(),
                                   r == 0 ? nullptr : in.loads(r - 1), loadEnd);
        }
        ++evaluations;
        return latencyStatistic(m_req.target, t);
    }

    double statisticAt(std::size_t r, double S, int servers) {
        const Pass in = pass(S);
        const Arrivals at = arrivals(S);
        const auto& arrival = at.get();
        return statistic(*in, arrival, r, servers, loadEnds(*in, arrival, r));
    }

    bool holds(double v) const { return v <= m_req.target.seconds; }

    // The largest load rule r holds on N servers: bracket by doubling or halving from S = 1,
    // then bisect in log.
    RuleLoadHeld loadHeld(std::size_t r, int servers) {
        RuleLoadHeld out;
        out.rule = std::string(kCapacityRules[r]);
        auto eval = [&](double S) {
            const double v = statisticAt(r, S, servers);
            out.evaluated.push_back({S, v});
            return v;
        };
        const double minS = m_req.minRateScale, maxS = m_req.maxRateScale;
        // From the guess, if given, in steps that square as they go; else from S = 1, doubling.
        const double from = r < m_req.loadFrom.size() ? m_req.loadFrom[r] : 0;
        double S = std::clamp(from > 0 ? from : 1.0, minS, maxS);
        double f = from > 0 ? std::max(1 + m_req.precision, m_req.loadStep) : 2;
        auto next = [&f, from] {
            const double g = f;
            if (from > 0) f = std::min(f * f, 2.0);
            return g;
        };
        double v = eval(S);
        LoadPoint lo{0, 0}, hi{0, 0};
        if (holds(v)) {
            lo = {S, v};
            while (hi.rateScale == 0) {
                if (S >= maxS) {
                    out.outcome = RuleLoadHeld::Outcome::HoldsAtMaximum;
                    out.rateScale = lo.rateScale;
                    out.statistic = lo.statistic;
                    return out;
                }
                S = std::min(S * next(), maxS);
                v = eval(S);
                (holds(v) ? lo : hi) = {S, v};
            }
        } else {
            hi = {S, v};
            while (lo.rateScale == 0) {
                if (S <= minS) {
                    out.outcome = RuleLoadHeld::Outcome::NeverHolds;
                    out.failsAt = hi.rateScale;
                    out.statisticFails = hi.statistic;
                    return out;
                }
                S = std::max(S / next(), minS);
                v = eval(S);
                (holds(v) ? lo : hi) = {S, v};
            }
        }
        while (hi.rateScale > lo.rateScale * (1 + m_req.precision)) {
            S = std::sqrt(lo.rateScale * hi.rateScale);
            v = eval(S);
            (holds(v) ? lo : hi) = {S, v};
        }
        out.rateScale = lo.rateScale;
        out.statistic = lo.statistic;
        out.failsAt = hi.rateScale;
        out.statisticFails = hi.statistic;
        return out;
    }

    // The fewest servers rule r needs at load S: doubling, then bisection (the statistic never
    // rises with more servers: first come first served, each request starts no later).
    RuleServers servers(std::size_t r, double S) {
        RuleServers out;
        out.rule = std::string(kCapacityRules[r]);
        const Pass in = pass(S);
        const Arrivals arrivalsAtS = arrivals(S);
        const auto& arrival = arrivalsAtS.get();
        const auto ends = loadEnds(*in, arrival, r);
        auto at = [&](int n) { return statistic(*in, arrival, r, n, ends); };
        const int everyone = static_cast<int>(std::min<std::size_t>(m_trace.size(), INT_MAX));
        const int maxN = m_req.maxInstances;
        out.statisticUnlimited = at(everyone);
        if (!holds(out.statisticUnlimited)) {
            out.statistic = maxN >= everyone ? out.statisticUnlimited : at(maxN);
            return out;
        }
        int good = 0, bad = 0;
        double vGood = 0, vBad = 0;
        if (const int from = r < m_req.serversFrom.size() ? m_req.serversFrom[r] : 0; from > 1)
            startFrom(std::min(from, maxN), at, good, vGood, bad, vBad);
        if (bad >= maxN) {
            out.statistic = vBad;
            return out;
        }
        for (int n = bad > 0 ? (bad > maxN / 2 ? maxN : 2 * bad) : 1; good == 0;
             n = n > maxN / 2 ? maxN : n * 2) {
            const double v = at(n);
            if (holds(v)) {
                good = n;
                vGood = v;
            } else {
                bad = n;
                vBad = v;
                if (n >= maxN) {
                    out.statistic = v;
                    return out;
                }
            }
        }
        while (good - bad > 1) {
            const int mid = bad + (good - bad) / 2;
            const double v = at(mid);
            if (holds(v)) {
                good = mid;
                vGood = v;
            } else {
                bad = mid;
                vBad = v;
            }
        }
        out.servers = good;
        out.statistic = vGood;
        if (bad > 0) out.statisticOneFewer = vBad;
        return out;
    }

  private:
    // From a guess: if it holds, down from it (guess − 1, − 2, − 4 …) to the first that fails
    // (or none: `bad` stays 0); if it fails, `bad` is set and the doubling goes on above it.
    template <class At>
    void startFrom(int from, At& at, int& good, double& vGood, int& bad, double& vBad) {
        const double v = at(from);
        if (!holds(v)) {
            bad = from;
            vBad = v;
            return;
        }
        good = from;
        vGood = v;
        for (int step = 1; good - step >= 1; step *= 2) {
            const double w = at(good - step);
            if (!holds(w)) {
                bad = good - step;
                vBad = w;
                return;
            }
            good -= step;
            vGood = w;
        }
    }

    void fail(const std::string& message) {
        const std::lock_guard lock(m_mutex);
        if (!m_error) m_error = message;
        cancel = true;
    }

    const Trace& m_trace;
    const CostModel& m_cost;
    ReplayConfig m_config;
    const CapacityRequest& m_req;
    std::vector<std::uint32_t> m_order;
    bool m_timeDependent = false;
    unsigned m_rules = 0; // QueueInputs kept: bits 1 << (kCapacityRules index + 1)
    std::mutex m_mutex;
    std::vector<std::pair<double, std::shared_future<Pass>>> m_passes;
    std::optional<std::string> m_error;
};

Status checkRequest(const CapacityRequest& q) {
    if (!(q.target.seconds > 0) || !std::isfinite(q.target.seconds))
        return Error{"latency target: expected a duration above 0"};
    if (!q.target.mean && !(q.target.percentile > 0 && q.target.percentile < 100))
        return Error{"latency target: expected a percentile above 0 and below 100"};
    if (q.instances < 0) return Error{"servers: expected 1 or more"};
    if (!(q.rateScale > 0) || !std::isfinite(q.rateScale))
        return Error{"rate scale: expected a number above 0 (2 doubles the request rate)"};
    if (q.maxInstances < 1) return Error{"most servers: expected 1 or more"};
    if (!(q.minRateScale > 0) || !(q.maxRateScale >= q.minRateScale) ||
        !std::isfinite(q.maxRateScale))
        return Error{"rate scale range: expected 0 < lowest <= highest"};
    if (!(q.precision > 0)) return Error{"precision: expected a share above 0"};
    return Ok{};
}

// The evaluated loads in order, once each, where the statistic falls as the load rises, and
// where the target holds again above the load found to fail.
void findFalls(RuleLoadHeld& r, double target) {
    auto& e = r.evaluated;
    std::sort(e.begin(), e.end(),
              [](const LoadPoint& a, const LoadPoint& b) { return a.rateScale < b.rateScale; });
    e.erase(std::unique(
                e.begin(), e.end(),
                [](const LoadPoint& a, const LoadPoint& b) { return a.rateScale == b.rateScale; }),
            e.end());
    for (std::size_t i = 1; i < e.size(); ++i)
        if (e[i].statistic < e[i - 1].statistic * (1 - 1e-9)) r.falls.emplace_back(e[i - 1], e[i]);
    for (const auto& p : e)
        if (r.failsAt > 0 && p.rateScale > r.failsAt && p.statistic <= target) r.holdsAgain = p;
}

} // namespace

CapacityResult capacityResultFor(const Trace& trace, const CapacityRequest& request) {
    CapacityResult res;
    res.target = request.target;
    res.requests = trace.size();
    res.requestsPerS = traceRequestRate(trace);
    const auto [first, last] = std::minmax_element(trace.arrivalS.begin(), trace.arrivalS.end());
    res.durationS = *last - *first;
    res.instances = request.instances;
    res.serversSearched = request.serversNeeded;
    res.rateScale = request.rateScale;
    res.maxInstances = request.maxInstances;
    return res;
}

Result<CapacityResult> traceCapacity(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& request,
                                     const std::function<bool(double)>& progress) {
    if (auto ok = checkArrivals(trace, "the trace"); !ok) return ok.error();
    if (auto ok = checkRequest(request); !ok) return ok.error();
    if (config.fleet.enabled) return fleetCapacity(trace, cost, config, request, progress);
    CapacityResult res = capacityResultFor(trace, request);

    Search search(trace, cost, config, request);
    const int threads = request.threads > 0
                            ? request.threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // The share done, from the evaluations expected: about 22 a rule for a load, 2·log2 of the
    // bound for servers, 4 a curve point.
    const double bound =
        std::log2(std::max(2.0, std::min(double(request.maxInstances), double(trace.size()))));
    const double expected = (request.instances > 0 ? 4 * 22.0 + 4.0 * request.curvePoints : 0) +
                            (request.serversNeeded ? 4 * (1 + 2 * bound) : 0);
    auto tick = [&] {
        return !progress || progress(std::min(0.99, double(search.evaluations.load()) / expected));
    };

    // The first pass alone: it checks the configuration before the threads start.
    runTasks(
        1, 1,
        [&](std::size_t) {
            search.guarded([&] { search.pass(request.serversNeeded ? request.rateScale : 1.0); });
        },
        tick, search.cancel);

    // Each rule's load and servers searches, all independent.
    std::vector<RuleLoadHeld> held(request.instances > 0 ? kCapacityRules.size() : 0);
    std::vector<RuleServers> servers(request.serversNeeded ? kCapacityRules.size() : 0);
    runTasks(
        held.size() + servers.size(), threads,
        [&](std::size_t i) {
            search.guarded([&] {
                if (i < held.size())
                    held[i] = search.loadHeld(i, request.instances);
                else if (const std::size_t r = i - held.size();
                         request.serversRules.empty() ||
                         std::find(request.serversRules.begin(), request.serversRules.end(),
                                   kCapacityRules[r]) != request.serversRules.end())
                    servers[r] = search.servers(r, request.rateScale);
                else
                    servers[r].rule = std::string(kCapacityRules[r]);
            });
        },
        tick, search.cancel);

    // The curve: from half the lowest load held (or the trace's own) to twice the highest.
    if (request.instances > 0 && !search.cancel) {
        double lo = 1, hi = 1;
        for (const auto& h : held)
            if (h.rateScale > 0) {
                lo = std::min(lo, h.rateScale);
                hi = std::max(hi, h.rateScale);
            }
        lo = std::max(request.minRateScale, lo / 2);
        hi = std::min(request.maxRateScale, hi * 2);
        res.curveRateScale = logGrid(lo, hi, std::max(2, request.curvePoints));
        const std::size_t points = res.curveRateScale.size();
        res.curveStatistic.assign(kCapacityRules.size(), std::vector<double>(points, 0));
        runTasks(
            points, threads,
            [&](std::size_t p) {
                search.guarded([&] {
                    const double S = res.curveRateScale[p];
                    const Pass in = search.pass(S);
                    const auto at = search.arrivals(S);
                    const auto& arrival = at.get();
                    for (std::size_t r = 0; r < kCapacityRules.size(); ++r)
                        res.curveStatistic[r][p] = search.statistic(
                            *in, arrival, r, request.instances, search.loadEnds(*in, arrival, r));
                });
            },
            tick, search.cancel);
    }

    if (auto e = search.error()) return Error{*e};
    res.passes = search.passes;
    res.evaluations = search.evaluations;
    if (search.cancel) {
        res.cancelled = true;
        return res;
    }
    for (std::size_t r = 0; r < held.size(); ++r) {
        for (std::size_t p = 0; p < res.curveRateScale.size(); ++p)
            held[r].evaluated.push_back({res.curveRateScale[p], res.curveStatistic[r][p]});
        findFalls(held[r], request.target.seconds);
        const RuleLoadHeld& g = held.front();
        using O = RuleLoadHeld::Outcome;
        if (held[r].outcome == O::Found && g.outcome == O::Found)
            held[r].vsGpuOnly = held[r].rateScale / g.rateScale;
    }
    res.loadHeld = std::move(held);
    res.servers = std::move(servers);
    if (progress) progress(1.0);
    return res;
}

Result<std::vector<RuleServers>> serversNeeded(const Trace& trace, const CostModel& cost,
                                               const ReplayConfig& config,
                                               const LatencyTarget& target, double rateScale,
                                               int maxInstances,
                                               const std::function<bool(double)>& progress) {
    CapacityRequest q;
    q.target = target;
    q.rateScale = rateScale;
    q.maxInstances = maxInstances;
    auto r = traceCapacity(trace, cost, config, q, progress);
    if (!r) return r.error();
    return std::move(r->servers);
}

} // namespace kvbe
