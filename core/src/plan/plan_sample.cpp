#include "kvbe/plan/plan_sample.h"

#include "kvbe/base/text_table.h"
#include "kvbe/trace/trace_sample.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <string>
#include <tuple>

namespace kvbe {

namespace {

// A configuration by its sizes, K, pool link and router (a pool of 512 GiB and 512 GiB on each
// node are two; so are GPU-only caching behind two routers).
using Key = std::tuple<double, std::string, std::int64_t, int, std::string, std::string>;

Key keyOf(const PlanPoint& p) {
    return {p.dramBytes, p.drive, p.drives, p.storeAfter, p.link, p.router};
}

// A fleet's router on a sample (docs/workload-model.md, "A fleet's plan from a sample"): the
// sample arrives as fast as the whole trace, so each server's load, and what a router reads of
// it, is the whole trace's; what scales is what holds blocks. SGLang's tree is a cache of the
// prefixes it routed, so its size scales as a cache's (the trunk whole, the rest at the rate),
// and its eviction period, in the sample's time, by the rate (the sample's R·T seconds stand for
// T of the whole). The others read loads and the caches (already scaled) alone.
RouterConfig sampledRouter(RouterConfig r, const TraceSample& t, double rate, double blockBytes,
                           double blockTokens) {
    if (r.kind != RouterKind::Sglang || !(blockTokens > 0)) return r;
    const double charsPerBlock = blockTokens * r.charsPerToken;
    const double bytes = r.maxTreeSize / charsPerBlock * blockBytes;
    r.maxTreeSize =
        std::max(1.0, std::floor(t.capacity(bytes, blockBytes) / blockBytes * charsPerBlock));
    r.evictionIntervalS *= rate;
    return r;
}

double relative(double a, double b) {
    const double m = std::max(std::abs(a), std::abs(b));
    return m > 0 ? std::abs(a - b) / m : 0;
}

// The error bound: the largest difference between the two samples' estimates of each figure
// over the grid (the same grid, in the same order). GPU-hours and life are compared where they
// matter: GPU-hours above 1 % of the grid's largest, lives up to 4 times the limit.
void sampleErrors(const PlanResult& a, const PlanResult& b, double lifeLimit, PlanSampling& e) {
    double most = 0;
    for (const auto& p : a.points)
        most = std::max(most, std::abs(p.gpuHoursSavedPerDay));
    for (std::size_t i = 0; i < a.points.size() && i < b.points.size(); ++i) {
        const PlanPoint& p = a.points[i];
        const PlanPoint& q = b.points[i];
        e.hitsError = std::max(e.hitsError, std::abs(p.hitsTokenWeighted - q.hitsTokenWeighted));
        e.ttftMeanError = std::max(e.ttftMeanError, relative(p.ttftMeanS, q.ttftMeanS));
        e.ttftP99Error = std::max(e.ttftP99Error, relative(p.ttftP99S, q.ttftP99S));
        if (std::max(std::abs(p.gpuHoursSavedPerDay), std::abs(q.gpuHoursSavedPerDay)) >
            0.01 * most)
            e.gpuHoursError =
                std::max(e.gpuHoursError, relative(p.gpuHoursSavedPerDay, q.gpuHoursSavedPerDay));
        if (p.shortestLifeYears && q.shortestLifeYears &&
            std::min(*p.shortestLifeYears, *q.shortestLifeYears) < 4 * lifeLimit)
            e.lifeError =
                std::max(e.lifeError, relative(*p.shortestLifeYears, *q.shortestLifeYears));
    }
}

// The configurations one sample says could be recommended: within the budget (capital cost is
// exact) and the life limit less the error margin; of those, the steps of the front (each
// cheaper than every point at least as good within the error: more GPU-hours saved or a lower
// mean TTFT by more than the margin) and the best few by net value.
void shortlist(const PlanResult& r, const PlanLimits& l, const PlanSampling& e, std::size_t byNet,
               std::set<Key>& out) {
    const double lifeMargin = std::max(0.05, 2 * e.lifeError);
    const double hMargin = std::max(0.01, 2 * e.gpuHoursError);
    const double tMargin = std::max(0.01, 2 * e.ttftMeanError);
    std::vector<const PlanPoint*> c;
    for (const auto& p : r.points) {
        if (!p.offload()) continue;
        if (l.budgetUsd && p.capexUsd > *l.budgetUsd) continue;
        if (p.shortestLifeYears && *p.shortestLifeYears < l.lifeYears * (1 - lifeMargin)) continue;
        c.push_back(&p);
    }
    std::stable_sort(c.begin(), c.end(), [](const PlanPoint* a, const PlanPoint* b) {
        return a->capexUsd < b->capexUsd;
    });
    std::vector<const PlanPoint*> steps;
    for (const PlanPoint* p : c) {
        const bool covered = std::any_of(steps.begin(), steps.end(), [&](const PlanPoint* q) {
            return q->gpuHoursSavedPerDay >= p->gpuHoursSavedPerDay * (1 - hMargin) &&
                   q->ttftMeanS <= p->ttftMeanS * (1 + tMargin);
        });
        if (!covered) steps.push_back(p);
    }
    for (const PlanPoint* p : steps)
        out.insert(keyOf(*p));
    std::stable_sort(c.begin(), c.end(), [](const PlanPoint* a, const PlanPoint* b) {
        return a->netUsdOverLife > b->netUsdOverLife;
    });
    for (std::size_t i = 0; i < c.size() && i < byNet; ++i)
        out.insert(keyOf(*c[i]));
}

} // namespace

RequestResult<PlanResult> planTraceSampled(const PlanSetup& s, const PlanSampleOptions& o,
                                           const std::function<bool(double)>& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t n = s.trace ? s.trace->size() : 0;
    const SampleChoice choice = chooseSampling(o, n);
    const double rate = choice.rate;
    const std::string reason = choice.fullText("every configuration replayed in full");
    auto report = [&o](const PlanProgress& p) {
        if (o.stages) o.stages(p);
    };
    // A stage's progress from lo to hi of the whole; reported as it starts.
    auto stage = [&](double lo, double hi, PlanProgress p) {
        p.rate = reason.empty() ? rate : 1;
        p.done = lo;
        report(p);
        return [lo, hi, p, &progress, &report](double f) mutable {
            // Never back: a drive-count round adds configurations, and planTrace's share with
            // them drops.
            p.stageDone = std::max(p.stageDone, f);
            p.done = lo + (hi - lo) * p.stageDone;
            report(p);
            return !progress || progress(p.done);
        };
    };
    if (!reason.empty()) {
        auto r = planTrace(s, stage(0, 1, {PlanStage::Full}));
        if (r) r->sampling.reason = reason;
        return r;
    }

    // 1. The drive counts, as a full plan grows them: only the points their needs come from
    // are replayed (in full), nothing else.
    PlanSetup counts = s;
    counts.select = [](const PlanPoint&, std::size_t) { return false; };
    auto g = planTrace(counts, stage(0, 0.1, {PlanStage::DriveCounts}));
    if (!g || g->cancelled) return g;

    // 2. The grid at those counts on two samples with different salts.
    PlanSetup fixed = s;
    fixed.grid.drives = g->drives;
    fixed.grid.extendDrives = false;
    const double blockBytes = s.base.blockBytes;
    PlanSampling info;
    info.sampled = true;
    info.rate = rate;
    PlanResult sampled[2];
    for (int k = 0; k < 2; ++k) {
        PlanProgress drawing{PlanStage::Sampling, k + 1, rate};
        drawing.done = 0.1 + 0.25 * k;
        report(drawing);
        // Its arrivals R times closer together: the sample arrives as fast as the whole trace,
        // so each link and write queue sees the full trace's rate at its own bandwidth (a load
        // takes as long as in the full trace; see plan.cpp, pointConfig).
        TraceSample t = sampleAtFullLoad(*s.trace, rate, std::uint64_t(k + 1));
        info.sampleRequests[k] = t.trace.size();
        info.trunkBlocks = t.trunkBlocks;
        info.trunkMinRequests = t.trunkMinRequests;
        PlanSetup x = fixed;
        x.trace = &t.trace;
        x.sampleRate = rate;
        x.sampleCapacity = [&t, blockBytes](double c) { return t.capacity(c, blockBytes); };
        x.base.gpuCapacityBytes = t.capacity(s.base.gpuCapacityBytes, blockBytes);
        if (s.base.isFleet())
            x.base.fleet.router = sampledRouter(s.base.fleet.router, t, rate, blockBytes,
                                                double(s.trace->summary.blockTokens));
        else
            x.base.instances = 0; // servers are counted in full (stage 3) only
        x.limits.sloP99S.reset(); // its p99 is without queueing for servers
        auto r = planTrace(x, stage(0.1 + 0.25 * k, 0.35 + 0.25 * k,
                                    {PlanStage::Sample, k + 1, rate, g->points.size()}));
        if (!r)
            return RequestError{r.error().field, "the sample (rate " + formatFixed(rate, 4) +
                                                     "): " + r.error().message};
        if (r->cancelled) return r;
        sampled[k] = std::move(*r);
        for (auto& p : sampled[k].points)
            p.sampled = true; // estimates, all of them
    }
    sampleErrors(sampled[0], sampled[1], s.limits.lifeYears, info);
    info.sampleSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // 3. The shortlist in full, with its servers counted; the rest keeps the first sample's
    // figures.
    std::set<Key> keys;
    for (const auto& r : sampled)
        shortlist(r, s.limits, info, o.shortlistByNet, keys);
    if (keys.size() > o.shortlistMax) { // the cheapest first
        std::vector<std::pair<double, Key>> byCost;
        for (const auto& p : sampled[0].points)
            if (keys.count(keyOf(p))) byCost.emplace_back(p.capexUsd, keyOf(p));
        std::stable_sort(byCost.begin(), byCost.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        keys.clear();
        for (std::size_t i = 0; i < o.shortlistMax && i < byCost.size(); ++i)
            keys.insert(byCost[i].second);
    }
    PlanSetup full = fixed;
    full.select = [&keys](const PlanPoint& p, std::size_t) {
        return (p.dramBytes <= 0 && p.drives <= 0) || keys.count(keyOf(p)) > 0; // GPU-only too
    };
    full.given = &sampled[0].points;
    const auto t1 = std::chrono::steady_clock::now();
    auto res = planTrace(full, stage(0.6, 0.95, {PlanStage::Shortlist, 0, rate, keys.size() + 1}));
    if (!res || res->cancelled) return res;
    // 4. The recommendation's neighbours and its sizes storing every block, in full too, so
    // that its sentence compares it with full replays only (GPU-only caching again, for its
    // servers); the rest as stage 3 left it.
    if (res->recommended) {
        const std::size_t r = *res->recommended;
        PlanGrid grid = fixed.grid;
        std::set<Key> more;
        for (std::size_t i = 0; i < res->points.size(); ++i) {
            const PlanPoint& p = res->points[i];
            const PlanPoint& rec = res->points[r];
            const bool sibling = p.storeAfter == 1 && p.dramBytes == rec.dramBytes &&
                                 p.drive == rec.drive && p.drives == rec.drives &&
                                 p.link == rec.link;
            if (p.sampled && (sibling || planNeighbours(grid, res->coords[i], res->coords[r])))
                more.insert(keyOf(p));
        }
        if (!more.empty()) {
            const std::vector<PlanPoint> stage3 = res->points;
            PlanSetup again = fixed;
            again.select = [&more](const PlanPoint& p, std::size_t) {
                return (p.dramBytes <= 0 && p.drives <= 0) || more.count(keyOf(p)) > 0;
            };
            again.given = &stage3;
            const std::size_t before = res->replays;
            res =
                planTrace(again, stage(0.95, 1, {PlanStage::Shortlist, 0, rate, more.size() + 1}));
            if (!res || res->cancelled) return res;
            res->replays += before;
            for (const auto& k : more)
                keys.insert(k);
        }
    }
    info.fullSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    info.shortlisted = keys.size() + 1;
    info.reason = "sampled: the grid on two samples, the shortlist replayed in full";
    res->driveNeeds = g->driveNeeds; // stage 1's, from full replays (stage 3 replays no needs)
    res->replays += g->replays + sampled[0].replays + sampled[1].replays;
    res->sampling = info;
    res->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

} // namespace kvbe
