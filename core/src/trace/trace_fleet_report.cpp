// A fleet's replay as reports say it (kvbe/trace/fleet_report.h).
#include "kvbe/trace/fleet_report.h"

#include "kvbe/base/units.h"

#include "trace_report_text.h"

#include <algorithm>

namespace kvbe {

using namespace detail;

namespace {

std::string placementText(const ReplayConfig& c, const ReplayResult& r) {
    std::string out;
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        out += (k > 1 ? ", " : "; ") + t.name +
               (t.pooled                  ? " pooled"
                : c.fleet.nodeServers > 1 ? " on each node"
                                          : " on each server");
    }
    return out;
}

} // namespace

std::string fleetSentence(const ReplayConfig& c, const ReplayResult& r) {
    if (!r.fleet) return "";
    const FleetReport& f = *r.fleet;
    std::string s = std::to_string(f.servers) + " servers";
    if (f.nodes != f.servers) s += " on " + std::to_string(f.nodes) + " nodes";
    s += ", each with its own GPU cache, behind " + f.router + placementText(c, r) +
         ": requests per server, the busiest against the mean " + formatFixed(f.requestSkew, 2) +
         ", busy time " + formatFixed(f.busySkew, 2) + "; " + pct(f.routedAwayShare) +
         " of requests routed away from the server whose GPU held most of their prefix\n";
    return s;
}

json fleetJson(const ReplayResult& r) {
    if (!r.fleet) return nullptr;
    const FleetReport& f = *r.fleet;
    json tiers = json::array();
    for (const auto& t : r.tiers)
        tiers.push_back({{"name", t.name}, {"copies", t.copies}, {"pooled", t.pooled}});
    return {{"router", f.router},
            {"servers", f.servers},
            {"nodes", f.nodes},
            {"requests_per_server", f.requests},
            {"busy_s_per_server", f.busyS},
            {"request_skew", f.requestSkew},
            {"busy_skew", f.busySkew},
            {"routed_away", f.routedAway},
            {"routed_away_share", f.routedAwayShare},
            {"tiers", tiers}};
}

Result<std::vector<RouterRun>> compareRouters(const Trace& trace, const CostModel& cost,
                                              const ReplayConfig& config, std::string_view rule,
                                              const std::function<bool(double)>& progress) {
    if (!config.isFleet())
        return Error{"comparing routers needs a fleet: expected 2 or more servers"};
    std::vector<RouterRun> runs;
    const auto& names = routerNames();
    for (std::size_t n = 0; n < names.size(); ++n) {
        ReplayConfig c = config;
        auto router = parseRouter(names[n]);
        if (!router) return router.error();
        c.fleet.router = *router;
        c.reportRules = {std::string(rule), "gpu-only"};
        const double share = 1.0 / static_cast<double>(names.size());
        auto r = replayTrace(trace, cost, c, nullptr, [&](double f) {
            return !progress || progress((static_cast<double>(n) + f) * share);
        });
        if (!r) return r.error();
        if (r->cancelled) break;
        runs.push_back({std::string(names[n]), std::move(*r)});
    }
    return runs;
}

std::string routerCompareTable(const ReplayConfig& c, const std::vector<RouterRun>& runs,
                               std::string_view rule) {
    if (runs.empty()) return "";
    const ReplayResult& first = runs.front().result;
    std::string out = std::to_string(c.instances) + " servers";
    if (first.fleet && first.fleet->nodes != c.instances)
        out += " on " + std::to_string(first.fleet->nodes) + " nodes";
    out += ", GPU cache " + formatBytes(c.gpuCapacityBytes) + " each" + placementText(c, first) +
           "; TTFT under " + std::string(rule) + ", queued on each server\n";
    // A column per tier, as wide as its name.
    std::vector<int> width;
    for (const auto& t : first.tiers)
        width.push_back(std::max(7, static_cast<int>(t.name.size())));
    appendf(out, "%-13s", "hits:");
    for (std::size_t k = 0; k < first.tiers.size(); ++k)
        appendf(out, " %*s", width[k], first.tiers[k].name.c_str());
    appendf(out, " %8s %10s %10s %8s %8s %8s\n", "any tier", "TTFT mean", "TTFT p99", "req max",
            "busy max", "away");
    for (const auto& run : runs) {
        const ReplayResult& r = run.result;
        appendf(out, "%-13s", run.router.c_str());
        for (std::size_t k = 0; k < r.tiers.size() && k < width.size(); ++k)
            appendf(out, " %*s", width[k], pct(r.tiers[k].hits.tokenWeighted).c_str());
        const RuleResult* ru = r.rule(rule);
        const std::string mean = ru ? formatSeconds(ru->ttft.mean) : "-";
        const std::string p99 = ru ? formatSeconds(ru->ttft.p99) : "-";
        const FleetReport f = r.fleet ? *r.fleet : FleetReport{};
        appendf(out, " %8s %10s %10s %7sx %7sx %8s\n", pct(r.anyTier.tokenWeighted).c_str(),
                mean.c_str(), p99.c_str(), formatFixed(f.requestSkew, 2).c_str(),
                formatFixed(f.busySkew, 2).c_str(), pct(f.routedAwayShare).c_str());
    }
    out += "hits: token-weighted, each block counted in the fastest tier holding it; req max, "
           "busy max: the busiest server against the mean; away: requests sent off the server "
           "whose GPU held most of their prefix\n";
    return out;
}

json routerCompareJson(const ReplayConfig& c, const std::vector<RouterRun>& runs,
                       std::string_view rule) {
    json rows = json::array();
    for (const auto& run : runs) {
        const ReplayResult& r = run.result;
        json tiers = json::array();
        for (const auto& t : r.tiers)
            tiers.push_back({{"name", t.name}, {"hits", ratiosJson(t.hits)}});
        const RuleResult* ru = r.rule(rule);
        json ttft = nullptr;
        if (ru)
            ttft = {{"mean", ru->ttft.mean},
                    {"p50", ru->ttft.p50},
                    {"p90", ru->ttft.p90},
                    {"p99", ru->ttft.p99}};
        rows.push_back({{"router", run.router},
                        {"hits_any_tier", ratiosJson(r.anyTier)},
                        {"tiers", tiers},
                        {"ttft_s", ttft},
                        {"fleet", fleetJson(r)}});
    }
    return {{"kvbe_router_compare", 1},
            {"servers", c.instances},
            {"node_servers", c.fleet.nodeServers},
            {"gpu_cache_bytes", c.gpuCapacityBytes},
            {"rule", std::string(rule)},
            {"routers", rows}};
}

} // namespace kvbe
