// The `kvbe-cli trace sweep` report (kvbe/trace/trace_report.h): hit ratios and mean TTFT at
// every capacity of the swept tier, as JSON, CSV and a table.
#include "kvbe/trace/trace_report.h"

#include "trace_report_text.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/replay_request.h"

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
        if (x.run && pts.size() <= x.run->hitsBound.size())
            pts.back()["hits_error_bound"] = x.run->hitsBound[pts.size() - 1];
    }
    j["points"] = pts;
    if (x.run) {
        const TraceSampling& m = x.run->sampling;
        j["sampling"] = {
            {"mode", m.sampled ? "sampled" : "full"},
            {"text", m.mode},
            {"rate", m.rate},
            {"sample_requests",
             m.sampled ? json{m.sampleRequests[0], m.sampleRequests[1]} : json(nullptr)},
            {"trunk_blocks", m.sampled ? json(m.trunkBlocks) : json(nullptr)},
            {"trunk_min_requests", m.sampled ? json(m.trunkMinRequests) : json(nullptr)},
            {"error_bound", m.sampled ? json{{"hits_token_weighted", x.run->hitsError},
                                             {"ttft_mean_always_relative", x.run->ttftError}}
                                      : json(nullptr)}};
    }
    return j;
}

std::string traceSweepCsv(const TraceSweepReport& x) {
    std::string out = "capacity_tokens,capacity_bytes,hits_token_weighted,hits_block_weighted,"
                      "hits_per_request,ttft_mean_none_s,ttft_mean_gpu_only_s,ttft_mean_always_s,"
                      "ttft_saved_vs_none,ttft_saved_vs_gpu_only" +
                      std::string(x.run ? ",mode,sample_rate,hits_error_bound" : "") + "\n";
    auto mode = [&x](std::size_t g) -> std::string {
        if (!x.run) return "";
        const auto& b = x.run->hitsBound;
        return std::string(x.run->sampling.sampled ? ",sampled," : ",full,") +
               formatFixed(x.run->sampling.rate, 6) + "," +
               formatFixed(g < b.size() ? b[g] : 0.0, 6);
    };
    std::size_t g = 0;
    for (const auto& p : x.sweep->points)
        out += formatFixed(p.capacityTokens, 0) + "," + formatFixed(p.capacityBytes, 0) + "," +
               formatFixed(p.anyTier.tokenWeighted, 6) + "," +
               formatFixed(p.anyTier.blockWeighted, 6) + "," +
               formatFixed(p.anyTier.perRequest, 6) + "," + formatFixed(p.meanTtftNone, 9) + "," +
               formatFixed(p.meanTtftGpuOnly, 9) + "," + formatFixed(p.meanTtftAlways, 9) + "," +
               formatFixed(p.ttftSavedVsNone, 6) + "," + formatFixed(p.ttftSavedVsGpuOnly, 6) +
               mode(g++) + "\n";
    return out;
}

std::string traceSweepTable(const TraceSweepReport& x) {
    const SweepResult& s = *x.sweep;
    std::string out =
        "sweep of " + s.tierName + (x.singleCache ? " (single cache)" : "") + " over " +
        std::to_string(s.points.size()) +
        (x.config && x.config->isFleet() ? " capacities, a replay at each, "
                                         : " capacities, one pass (LRU stack distances), ") +
        std::to_string(x.trace->size()) + " requests\n";
    if (x.run) {
        const TraceSampling& m = x.run->sampling;
        if (m.sampled)
            out += "mode: sampled at rate " + valueText(m.rate) + " (" + m.mode +
                   "); error bound up to " + formatFixed(x.run->hitsError * 100, 2) +
                   " points of hit ratio (per capacity: ± column), " +
                   formatFixed(x.run->ttftError * 100, 2) +
                   " % of mean TTFT; without --sample-rate every request is swept\n";
        else
            out += "mode: full, " + m.mode + "\n";
    }
    const bool sampled = x.run && x.run->sampling.sampled;
    appendf(out, "%14s %12s  %-26s %12s %12s %12s%s\n", "tokens", "bytes", "hits: tok / blk / req",
            "TTFT ms", "saved/none", "saved/GPU", sampled ? "   ± hits" : "");
    std::size_t g = 0;
    for (const auto& p : s.points) {
        const auto& b = x.run ? x.run->hitsBound : std::vector<double>{};
        const std::string bound =
            sampled && g < b.size() ? "   " + formatFixed(b[g] * 100, 1) + " pt" : "";
        ++g;
        const std::string hits = pct(p.anyTier.tokenWeighted) + " / " +
                                 pct(p.anyTier.blockWeighted) + " / " + pct(p.anyTier.perRequest);
        appendf(out, "%14s %12s  %-26s %12s %12s %12s%s\n",
                formatFixed(p.capacityTokens, 0).c_str(), formatBytes(p.capacityBytes).c_str(),
                hits.c_str(), ms(p.meanTtftAlways).c_str(), pct(p.ttftSavedVsNone).c_str(),
                pct(p.ttftSavedVsGpuOnly).c_str(), bound.c_str());
    }
    return out;
}

} // namespace kvbe
