#include "plan_text.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace kvbe::plan_detail {

std::string usd(double v) {
    return (v < 0 ? "-$" : "$") + formatTokens(std::abs(v));
}

std::string gib(double bytes) {
    const double g = bytes / double(1ull << 30);
    if (g >= 1024 && std::fmod(g, 1024) == 0) return formatFixed(g / 1024, 0) + " TiB";
    return formatFixed(g, g == std::floor(g) ? 0 : 1) + " GiB";
}

namespace {

std::string years(double y) {
    return formatFixed(y, y == std::floor(y) ? 0 : 1) + (y == 1 ? " year" : " years");
}

std::string servers(int n) {
    return std::to_string(n) + (n == 1 ? " server" : " servers");
}

// What a neighbour changes against the recommended point, in money over the life.
std::string versus(const PlanPoint& rec, const PlanPoint& n, double life) {
    const double dCapex = n.capexUsd - rec.capexUsd;
    if (n.valueNotComputed)
        return dCapex >= 0 ? usd(dCapex) + " more up front; its value not computed (sampled)"
                           : usd(-dCapex) + " less up front; its value not computed (sampled)";
    const double dValue = (n.valuePerMonthUsd - rec.valuePerMonthUsd) * 12 * life;
    if (dCapex >= 0)
        return usd(dCapex) + " more up front for " +
               (dValue >= 0 ? usd(dValue) + " more" : usd(-dValue) + " less") + " value over " +
               years(life);
    return usd(-dCapex) + " less up front but " +
           (dValue <= 0 ? usd(-dValue) + " less" : usd(dValue) + " more") + " value over " +
           years(life);
}

// "life: drives last 1.54 years, …" as "the life limit (drives last 1.54 years, …)".
std::string limitText(const std::string& fail) {
    const auto colon = fail.find(": ");
    if (colon == std::string::npos) return fail;
    return "the " + fail.substr(0, colon) + " limit (" + fail.substr(colon + 2) + ")";
}

} // namespace

std::string whySentence(const PlanSetup& s, const PlanResult& res,
                        const std::vector<std::size_t>& near) {
    const PlanPoint& r = res.points[*res.recommended];
    const double life = s.limits.lifeYears;
    const double price = s.prices.gpuPerHour.at(s.gpuKey).usd;
    // A fleet's tiers are on every node: "On each of the 4 nodes, 1 x nvme-gen5: $9,000".
    std::string w = planPurchaseText(r);
    if (!w.empty()) w[0] = char(std::toupper(static_cast<unsigned char>(w[0])));
    w += (r.otherRouter ? " (no new hardware: the fleet's servers behind " + r.router +
                              " instead of " + res.fleetRouter + ")"
                        : "") +
         ": " + usd(r.capexUsd) + " up front" +
         (r.offload() && r.nodes > 1 ? " for the " + std::to_string(r.nodes) + " nodes" : "");
    // GPU-only caching behind the fleet's router, named as the table names it.
    const std::string gpuOnlyName = describePlanPoint(res.points.front());
    if (r.offload() || r.otherRouter) {
        if (r.valueFromGpusSaved)
            w += ", holds p99 TTFT within " + formatFixed(*s.limits.sloP99S, 3) + " s on " +
                 servers(*r.serversAtSlo) + " where " + gpuOnlyName + " needs " +
                 servers(*res.gpuOnlyServers) + ": " + std::to_string(*r.gpusSaved) +
                 (*r.gpusSaved == 1 ? " GPU" : " GPUs") + " saved (" + usd(r.valuePerMonthUsd) +
                 " a month at $" + formatFixed(price, 2) + " per GPU-hour), and saves " +
                 formatFixed(r.gpuHoursSavedPerDay, 1) + " GPU-hours of prefill a day";
        else
            // Without servers counted, the value is prefill time, not servers: say so, since
            // trace capacity (and the window's Capacity chart) counts whole servers.
            w += ", saves " + formatFixed(r.gpuHoursSavedPerDay, 1) +
                 " GPU-hours of prefill a day (" + usd(r.valuePerMonthUsd) + " a month at $" +
                 formatFixed(price, 2) + " per GPU-hour, valued as prefill time a smaller fleet " +
                 "could drop" +
                 (s.limits.sloP99S ? "" : ": with no p99 limit, servers are not counted") + ")";
        if (r.paybackMonths) w += ", pays back in " + formatFixed(*r.paybackMonths, 1) + " months";
        w += " and nets " + usd(r.netUsdOverLife) + " over " + years(life);
        if (r.shortestLifeYears)
            w += "; its drives reach their rated endurance in " + formatLife(*r.shortestLifeYears);
        w += ".";
        // Store admission on drives needs a stack that gates them (LMCache stores every chunk).
        if (r.drives > 0 && r.lifeIfEveryBlockStored)
            w += " Storing every block, as LMCache does, its drives would last " +
                 formatLife(*r.lifeIfEveryBlockStored) + ".";
    } else {
        const bool othersMeetLimits =
            std::any_of(res.points.begin(), res.points.end(),
                        [&](const PlanPoint& p) { return p.offload() && p.fails.empty(); });
        w += othersMeetLimits ? ": no configuration of the grid within the limits saves more "
                                "than it costs over " +
                                    years(life) + " at these prices."
                              : ": every configuration with an offload tier fails a limit.";
    }
    const PlanPoint* bestOk = nullptr;
    const PlanPoint* bestFailing = nullptr;
    for (std::size_t i : near) {
        const PlanPoint& n = res.points[i];
        if (n.fails.empty()) {
            if (!bestOk || n.netUsdOverLife > bestOk->netUsdOverLife) bestOk = &n;
        } else if (n.netUsdOverLife > r.netUsdOverLife &&
                   (!bestFailing || n.netUsdOverLife > bestFailing->netUsdOverLife)) {
            bestFailing = &n;
        }
    }
    if (bestOk)
        w += " It nets " + usd(r.netUsdOverLife - bestOk->netUsdOverLife) +
             " more than its best neighbour, " + describePlanPoint(*bestOk) + " (" +
             versus(r, *bestOk, life) + ").";
    if (bestFailing)
        w += " " + describePlanPoint(*bestFailing) + " would net " +
             usd(bestFailing->netUsdOverLife - r.netUsdOverLife) + " more but fails " +
             limitText(bestFailing->fails.front()) + ".";
    // Without a latency limit: what the p99 bar (the best router alone) turned down.
    const PlanPoint* slower = nullptr;
    for (const auto& p : res.points)
        if (p.overP99Bar && p.fails.size() == 1 && p.netUsdOverLife > r.netUsdOverLife &&
            &p != bestFailing && (!slower || p.netUsdOverLife > slower->netUsdOverLife))
            slower = &p;
    if (slower)
        w += " " + describePlanPoint(*slower) + " would net " +
             usd(slower->netUsdOverLife - r.netUsdOverLife) + " more, but its p99 TTFT is " +
             formatFixed(slower->ttftP99S, 3) + " s against " + formatFixed(r.ttftP99S, 3) +
             " s: without a latency limit, nothing slower at p99 than the best router alone is "
             "recommended.";
    return w;
}

std::string unmetSentence(const PlanSetup& s, const PlanResult& res) {
    const auto& l = s.limits;
    struct Limit {
        const char* name;
        bool on;
        // How far a point is from meeting it (<= 0: met), and the words for that.
        double (*gap)(const PlanLimits&, const PlanPoint&);
    };
    const Limit limits[] = {
        {"life", true,
         [](const PlanLimits& lim, const PlanPoint& p) {
             return p.shortestLifeYears ? lim.lifeYears - *p.shortestLifeYears : -1;
         }},
        {"latency", bool(l.sloP99S),
         [](const PlanLimits& lim, const PlanPoint& p) { return p.ttftP99S - *lim.sloP99S; }},
        {"budget", bool(l.budgetUsd),
         [](const PlanLimits& lim, const PlanPoint& p) { return p.capexUsd - *lim.budgetUsd; }},
    };
    std::string out = "No configuration of the grid meets every limit.";
    for (const auto& lim : limits) {
        if (!lim.on) continue;
        const PlanPoint* best = nullptr;
        double bestGap = 0;
        for (const auto& p : res.points) {
            bool othersMet = true;
            for (const auto& o : limits)
                if (&o != &lim && o.on && o.gap(l, p) > 0) othersMet = false;
            if (!othersMet) continue;
            const double g = lim.gap(l, p);
            if (!best || g < bestGap) {
                best = &p;
                bestGap = g;
            }
        }
        if (!best || bestGap <= 0) continue;
        out += std::string(" Within the other limits, the ") + lim.name + " limit fails by ";
        if (std::string(lim.name) == "life")
            out += formatFixed(bestGap, 2) + " years at best (" + describePlanPoint(*best) +
                   ": drives last " + formatLife(*best->shortestLifeYears) + " of " +
                   years(l.lifeYears) + ").";
        else if (std::string(lim.name) == "latency")
            out += formatFixed(bestGap, 3) + " s at best (" + describePlanPoint(*best) +
                   ": p99 TTFT " + formatFixed(best->ttftP99S, 3) + " s against " +
                   formatFixed(*l.sloP99S, 3) + " s).";
        else
            out += usd(bestGap) + " at best (" + describePlanPoint(*best) + ": " +
                   usd(best->capexUsd) + " against " + usd(*l.budgetUsd) + ").";
    }
    return out;
}

} // namespace kvbe::plan_detail
