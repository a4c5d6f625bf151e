// A plan's last step (kvbe/plan/plan.h, finishPlan): each point's value against GPU-only
// caching, the limits it fails, the two Pareto fronts, the recommendation and its sentence. One
// run and a merge of shards (kvbe/plan/plan_shard.h) both end here.
#include "kvbe/plan/plan.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include "plan_pool.h"
#include "plan_text.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

using plan_detail::usd;

namespace {

constexpr double kDaysPerMonth = kDaysPerYear / 12;

using Coord = PlanCoord;

// The GPUs saved against GPU-only caching (where both counts are known) and the value: those
// GPUs at the price per hour, or without them the GPU-hours saved; the payback and the net.
void valuePoint(const PlanSetup& s, const PlanResult& res, PlanPoint& p) {
    const double price = s.prices.gpuPerHour.at(s.gpuKey).usd;
    p.valueNotComputed = res.serversSearched && p.sampled && !p.serversAtSlo;
    if (p.valueNotComputed) {
        // Its GPUs saved are unknown; the GPU-hours instead would price it on another basis
        // than its neighbours replayed in full.
        p.valuePerMonthUsd = 0;
        p.netUsdOverLife = 0;
        return;
    }
    if (res.serversSearched && p.serversAtSlo && res.gpuOnlyServers) {
        p.gpusSaved = (*res.gpuOnlyServers - *p.serversAtSlo) * s.gpusPerInstance;
        p.valueFromGpusSaved = true;
        p.valuePerMonthUsd = *p.gpusSaved * 24 * kDaysPerMonth * price;
    } else {
        if (res.serversSearched && p.serversAtSlo)
            p.serversNote = "GPU-only caching holds p99 at no count up to " +
                            std::to_string(s.maxServers) +
                            " servers, so the GPUs saved are not "
                            "counted";
        p.valuePerMonthUsd = p.gpuHoursSavedPerDay * kDaysPerMonth * price;
    }
    if (p.valuePerMonthUsd > 0 && p.capexUsd > 0) p.paybackMonths = p.capexUsd / p.valuePerMonthUsd;
    p.netUsdOverLife = p.valuePerMonthUsd * 12 * s.limits.lifeYears - p.capexUsd;
}

// countDecides: the servers are searched and the point's p99 is that of the servers given, which
// queue (a fleet, or prefill servers): another count can hold the limit, so the search's count
// decides it, and a sampled point's (not searched) is not known. Without queueing the p99 is no
// wait at all, the least of any count, and decides it alone.
void checkLimits(const PlanLimits& l, PlanPoint& p, bool countDecides) {
    if (p.shortestLifeYears && *p.shortestLifeYears < l.lifeYears)
        p.fails.push_back("life: drives last " + formatLife(*p.shortestLifeYears) + ", " +
                          formatFixed(l.lifeYears - *p.shortestLifeYears, 2) + " years short of " +
                          formatFixed(l.lifeYears, 1));
    p.latencyNotComputed = countDecides && p.sampled && !p.serversAtSlo;
    if (countDecides) {
        if (!p.serversAtSlo && !p.sampled) p.fails.push_back("latency: " + p.serversNote);
    } else if (l.sloP99S && p.ttftP99S > *l.sloP99S)
        p.fails.push_back("latency: p99 TTFT " + formatFixed(p.ttftP99S, 3) + " s, " +
                          formatFixed(p.ttftP99S - *l.sloP99S, 3) + " s over " +
                          formatFixed(*l.sloP99S, 3) + " s");
    else if (l.sloP99S && !p.serversAtSlo && !p.sampled) // the search ran and found no count
        p.fails.push_back("latency: " + p.serversNote);
    if (l.budgetUsd && p.capexUsd > *l.budgetUsd)
        p.fails.push_back("budget: " + usd(p.capexUsd) + ", " + usd(p.capexUsd - *l.budgetUsd) +
                          " over " + usd(*l.budgetUsd));
}

// The points no cheaper (or equally cheap) point beats on `better`, by capital cost.
template <class Better>
void markFront(std::vector<PlanPoint>& pts, Better better, bool PlanPoint::*flag) {
    std::vector<std::size_t> order(pts.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (pts[a].capexUsd != pts[b].capexUsd) return pts[a].capexUsd < pts[b].capexUsd;
        return better(pts[a], pts[b]);
    });
    const PlanPoint* best = nullptr;
    for (std::size_t i : order)
        if (!best || better(pts[i], *best)) {
            pts[i].*flag = true;
            best = &pts[i];
        }
}

// One step apart in one coordinate of the grid (DRAM size, drive count or K), or the same sizes
// with the other drive. GPU-only caching neighbours the single smallest tiers at the first K.
bool neighbours(const PlanGrid& g, const Coord& a, const Coord& b);

} // namespace

bool planNeighbours(const PlanGrid& g, const PlanCoord& a, const PlanCoord& b) {
    return neighbours(g, a, b);
}

namespace {

bool neighbours(const PlanGrid& g, const Coord& a, const Coord& b) {
    if (a.k < 0 || b.k < 0) {
        const Coord& o = a.k < 0 ? b : a;
        if (o.k != 0) return false;
        auto firstAbove = [](const auto& v) {
            for (std::size_t i = 0; i < v.size(); ++i)
                if (v[i] > 0) return int(i);
            return -1;
        };
        const bool noDram = g.dramBytes[std::size_t(o.dram)] <= 0;
        return (o.drive < 0 && o.dram == firstAbove(g.dramBytes)) ||
               (noDram && o.count == firstAbove(g.drives));
    }
    const int steps = std::abs(a.dram - b.dram) + std::abs(a.count - b.count) + std::abs(a.k - b.k);
    // The same sizes placed otherwise (on each node, or pooled over another link) neighbour.
    if (a.link != b.link) return steps == 0 && a.drive == b.drive;
    if (a.drive == b.drive || a.drive < 0 || b.drive < 0) return steps == 1;
    return steps == 0;
}

} // namespace

void finishPlan(const PlanSetup& s, const PlanGrid& grid, std::vector<PlanPoint> points,
                PlanResult& res) {
    res.points.clear();
    res.latencyByCount = res.serversSearched && (s.base.isFleet() || s.base.instances > 0);
    // Another router's GPU-only caching saves what its GPU hits save beyond the fleet's router's
    // (points[0], GPU-only caching behind the fleet's router).
    const double fleetGpuOnly = points.empty() ? 0 : points.front().gpuOnlyHoursPerDay;
    for (auto& p : points)
        if (p.otherRouter) p.gpuHoursSavedPerDay = p.gpuOnlyHoursPerDay - fleetGpuOnly;
    for (auto& p : points) {
        // Idempotent: a shard's points (kvbe/plan/plan_shard.h) were finished once already.
        p.fails.clear();
        p.overP99Bar = false;
        p.onTtftFront = p.onGpuHoursFront = false;
        p.lifeIfEveryBlockStored.reset();
        p.gpusSaved.reset();
        p.valueFromGpusSaved = false;
        p.valueNotComputed = false;
        p.paybackMonths.reset();
        if (p.serversAtSlo) p.serversNote.clear();
        plan_detail::pricePoint(s, p); // for the nodes of its searched count, now known
        valuePoint(s, res, p);
        checkLimits(s.limits, p, res.latencyByCount);
        res.points.push_back(std::move(p));
    }
    // Without a latency limit the best GPU-only row's p99 is the bar: a router costs nothing, so
    // nothing slower at p99 than the fleet behind the best router alone is recommended.
    if (!s.limits.sloP99S) {
        const PlanPoint* bar = nullptr;
        for (const auto& p : res.points)
            if (!p.offload() && !p.sampled && (!bar || p.ttftP99S < bar->ttftP99S)) bar = &p;
        const double barP99 = bar ? bar->ttftP99S : 0;
        const std::string barName = bar ? describePlanPoint(*bar) : "";
        if (bar)
            for (auto& p : res.points)
                if (!p.sampled && p.ttftP99S > barP99 * (1 + 1e-9)) {
                    p.overP99Bar = true;
                    p.fails.push_back("latency: p99 TTFT " + formatFixed(p.ttftP99S, 3) + " s, " +
                                      formatFixed(p.ttftP99S - barP99, 3) + " s over " + barName +
                                      " (" + formatFixed(barP99, 3) +
                                      " s, the bar without a limit)");
                }
    }
    const std::vector<PlanCoord>& at = res.coords;
    res.recommended.reset();
    res.front.clear();
    for (auto& p : res.points) {
        if (p.storeAfter <= 1 || !p.shortestLifeYears) continue;
        for (const auto& q : res.points)
            if (q.storeAfter == 1 && q.dramBytes == p.dramBytes && q.drive == p.drive &&
                q.drives == p.drives)
                p.lifeIfEveryBlockStored = q.shortestLifeYears;
    }
    markFront(
        res.points,
        [](const PlanPoint& a, const PlanPoint& b) { return a.ttftMeanS < b.ttftMeanS; },
        &PlanPoint::onTtftFront);
    markFront(
        res.points,
        [](const PlanPoint& a, const PlanPoint& b) {
            return a.gpuHoursSavedPerDay > b.gpuHoursSavedPerDay;
        },
        &PlanPoint::onGpuHoursFront);
    for (std::size_t i = 0; i < res.points.size(); ++i)
        if (res.points[i].onTtftFront || res.points[i].onGpuHoursFront) res.front.push_back(i);
    std::stable_sort(res.front.begin(), res.front.end(), [&](std::size_t a, std::size_t b) {
        return res.points[a].capexUsd < res.points[b].capexUsd;
    });

    for (std::size_t i = 0; i < res.points.size(); ++i) {
        const PlanPoint& p = res.points[i];
        if (!p.fails.empty() || p.sampled) continue;
        if (!res.recommended) {
            res.recommended = i;
            continue;
        }
        const PlanPoint& r = res.points[*res.recommended];
        if (p.netUsdOverLife > r.netUsdOverLife + 1e-6 ||
            (std::abs(p.netUsdOverLife - r.netUsdOverLife) <= 1e-6 && p.capexUsd < r.capexUsd))
            res.recommended = i;
    }
    std::vector<std::size_t> near;
    if (res.recommended)
        for (std::size_t i = 0; i < res.points.size(); ++i)
            if (i != *res.recommended && neighbours(grid, at[i], at[*res.recommended]))
                near.push_back(i);
    res.why = res.recommended ? plan_detail::whySentence(s, res, near) : "";
    res.unmet = res.recommended ? "" : plan_detail::unmetSentence(s, res);
}

} // namespace kvbe
