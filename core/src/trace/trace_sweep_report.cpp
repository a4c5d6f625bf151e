// The `kvbe-cli trace sweep` report (kvbe/trace/trace_report.h): hit ratios and mean TTFT at
// every capacity of the swept tier, as JSON, CSV and a table.
#include "kvbe/trace/trace_report.h"

#include "trace_report_text.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

namespace kvbe {
using detail::appendf;
using detail::ms;
using detail::pct;
using detail::ratiosJson;
using detail::traceJson;
using nlohmann::json;

// ------------------------------------------------------------------------------- sweep

json traceSweepJson(const TraceSweepReport& x) {
    json j = {{"kvbe_trace_sweep", 1}, {"trace", traceJson(*x.trace, x.file)}};
    j["scenario"] = x.scenario;
    j["tier"] = x.sweep->tierName;
    j["single_cache"] = x.singleCache;
    json names = json::array({"gpu"});
    for (const auto& t : x.config->tiers)
        names.push_back(t.name);
    j["tiers"] = names;
    json pts = json::array();
    for (const auto& p : x.sweep->points) {
        json per = json::array();
        for (const auto& h : p.tiers)
            per.push_back(ratiosJson(h));
        pts.push_back({{"capacity_tokens", jsonCount(p.capacityTokens)},
                       {"capacity_bytes", jsonCount(p.capacityBytes)},
                       {"hits_any_tier", ratiosJson(p.anyTier)},
                       {"hits_per_tier", per},
                       {"ttft_mean_s",
                        {{"none", p.meanTtftNone},
                         {"gpu_only", p.meanTtftGpuOnly},
                         {"always", p.meanTtftAlways}}},
                       {"ttft_saved_vs_none", p.ttftSavedVsNone},
                       {"ttft_saved_vs_gpu_only", p.ttftSavedVsGpuOnly}});
    }
    j["points"] = pts;
    return j;
}

std::string traceSweepCsv(const TraceSweepReport& x) {
    std::string out = "capacity_tokens,capacity_bytes,hits_token_weighted,hits_block_weighted,"
                      "hits_per_request,ttft_mean_none_s,ttft_mean_gpu_only_s,ttft_mean_always_s,"
                      "ttft_saved_vs_none,ttft_saved_vs_gpu_only\n";
    for (const auto& p : x.sweep->points)
        out += formatFixed(p.capacityTokens, 0) + "," + formatFixed(p.capacityBytes, 0) + "," +
               formatFixed(p.anyTier.tokenWeighted, 6) + "," +
               formatFixed(p.anyTier.blockWeighted, 6) + "," +
               formatFixed(p.anyTier.perRequest, 6) + "," + formatFixed(p.meanTtftNone, 9) + "," +
               formatFixed(p.meanTtftGpuOnly, 9) + "," + formatFixed(p.meanTtftAlways, 9) + "," +
               formatFixed(p.ttftSavedVsNone, 6) + "," + formatFixed(p.ttftSavedVsGpuOnly, 6) +
               "\n";
    return out;
}

std::string traceSweepTable(const TraceSweepReport& x) {
    const SweepResult& s = *x.sweep;
    std::string out = "sweep of " + s.tierName + (x.singleCache ? " (single cache)" : "") +
                      " over " + std::to_string(s.points.size()) +
                      " capacities, one pass (LRU stack distances), " +
                      std::to_string(x.trace->size()) + " requests\n";
    appendf(out, "%14s %12s  %-26s %12s %12s %12s\n", "tokens", "bytes", "hits: tok / blk / req",
            "TTFT ms", "saved/none", "saved/GPU");
    for (const auto& p : s.points) {
        const std::string hits = pct(p.anyTier.tokenWeighted) + " / " +
                                 pct(p.anyTier.blockWeighted) + " / " + pct(p.anyTier.perRequest);
        appendf(out, "%14s %12s  %-26s %12s %12s %12s\n", formatFixed(p.capacityTokens, 0).c_str(),
                formatBytes(p.capacityBytes).c_str(), hits.c_str(), ms(p.meanTtftAlways).c_str(),
                pct(p.ttftSavedVsNone).c_str(), pct(p.ttftSavedVsGpuOnly).c_str());
    }
    return out;
}

} // namespace kvbe
