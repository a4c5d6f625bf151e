#include "kvbe/trace/trace_report.h"

#include "trace_report_text.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/statistics.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/fleet_report.h"
#include "kvbe/trace/trace_endurance.h"
#include "kvbe/trace/trace_saturation.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <sstream>

namespace kvbe {
using detail::appendf;
using detail::ms;
using detail::pct;
using detail::ratiosJson;
using detail::traceJson;
using nlohmann::json;

namespace {

std::string duration(double s) {
    return s >= 120 ? formatFixed(s / 60, 1) + " min" : formatFixed(s, 1) + " s";
}
std::string capacityText(double bytes) {
    return std::isfinite(bytes) ? formatBytes(bytes) : "unlimited";
}

json optionalJson(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

json optionalCount(const std::optional<double>& v) {
    return v ? jsonCount(*v) : json(nullptr);
}

// An offload tier's writes and endurance, and with store admission what it gives up.
void addTierWrites(json& tj, const TierReport& t, const SimTier& sim, const ReplayResult& r,
                   const ReplayResult* storeAll, std::size_t k) {
    const TierEndurance e = tierEndurance(t, sim.drive, r.durationS);
    tj["bytes_offered"] = jsonCount(t.bytesWritten);
    tj["blocks_stored"] = t.blocksStored;
    tj["bytes_stored"] = jsonCount(t.bytesStored);
    tj["bytes_offered_per_day"] = optionalJson(e.bytesOfferedPerDay);
    tj["bytes_stored_per_day"] = optionalJson(e.bytesStoredPerDay);
    tj["drive"] = {{"model", sim.drive.model},
                   {"rated_drive_writes_per_day", optionalJson(sim.drive.writesPerDay)},
                   {"warranty_years", optionalJson(sim.drive.warrantyYears)},
                   {"capacity_bytes", optionalCount(sim.drive.capacityBytes)}};
    tj["drives"] = e.drives ? json(*e.drives) : json(nullptr);
    tj["installed_bytes"] = e.drives ? jsonCount(e.installedBytes) : json(nullptr);
    tj["drive_writes_per_day"] = optionalJson(e.driveWritesPerDay);
    tj["years_to_rated_endurance"] = optionalJson(e.yearsToRatedEndurance);
    tj["endurance_note"] = e.note;
    tj["endurance_warning"] = e.warning;
    if (storeAll) {
        const TierReport& a = storeAll->tiers[k];
        tj["if_every_block_stored"] = {{"hits", ratiosJson(a.hits)},
                                       {"blocks_written", a.blocksWritten},
                                       {"bytes_written", jsonCount(a.bytesWritten)}};
        tj["hits_given_up_token_weighted"] = a.hits.tokenWeighted - t.hits.tokenWeighted;
    }
}

json shareJson(const LinkUse& u) {
    if (u.share.empty()) return nullptr;
    return {{"mean_share", u.meanShare}, {"busiest_minute_share", u.peakShare}};
}

// An offload tier's links: the reads its hits ask against its bandwidth, and its writes' busy
// share.
void addTierLinks(json& tj, const TierReport& t) {
    const LinkUse& a = t.readOffered;
    tj["read_Bps"] = t.readBps;
    tj["reads_asked"] = {{"mean_Bps", a.meanShare * t.readBps},
                         {"busiest_minute_Bps", a.peakShare * t.readBps},
                         {"mean_share", a.meanShare},
                         {"busiest_minute_share", a.peakShare},
                         {"minutes_over_bandwidth", a.binsOver},
                         {"minutes", a.share.size()}};
    tj["write_busy"] = shareJson(t.write);
}

// Each drive-built offload tier (a rating or a drive capacity): the remedy the sentence names.
std::vector<bool> driveTiers(const ReplayConfig& c) {
    std::vector<bool> d;
    for (const auto& t : c.tiers)
        d.push_back(t.drive.capacityBytes.has_value() || t.drive.writesPerDay.has_value());
    return d;
}

} // namespace

// ------------------------------------------------------------------------------- inspect

Result<TraceInspectReport> makeTraceInspectReport(const Trace& t, const std::string& file,
                                                  const Evaluation& eval) {
    TraceInspectReport r;
    r.trace = &t;
    r.file = file;
    r.scenario = eval.scenario.name;
    // One copy of the lengths, sorted (sums of whole numbers below 2^53 are exact in any order).
    std::vector<double> sorted(t.inputTokens.begin(), t.inputTokens.end());
    std::sort(sorted.begin(), sorted.end());
    double sumIn = 0, sumOut = 0;
    for (double v : sorted)
        sumIn += v;
    for (auto v : t.outputTokens)
        sumOut += v;
    for (double a : t.arrivalS)
        r.durationS = std::max(r.durationS, a);
    const double n = double(t.size());
    r.inputMean = n > 0 ? sumIn / n : 0;
    r.inputP50 = quantileOfSorted(sorted, 0.5);
    r.inputP90 = quantileOfSorted(sorted, 0.9);
    r.inputP99 = quantileOfSorted(sorted, 0.99);
    r.inputMax = sorted.empty() ? 0 : sorted.back();
    r.outputMean = n > 0 ? sumOut / n : 0;
    if (t.summary.hasBlocks()) {
        ReplayConfig c;
        c.blockBytes = 1;
        // The hits only: one rule's times kept, not five (8 bytes a request each).
        c.reportRules = {"none"};
        auto u = replayTrace(t, eval.cost, c);
        if (!u) return u.error();
        r.unlimited = std::move(*u);
    }
    for (std::size_t i = 0; i < eval.tiers.size() && i < eval.scenario.tiers.size(); ++i) {
        const auto& tc = eval.scenario.tiers[i];
        TraceInspectReport::Tier a{tc.preset.empty() ? tc.name : tc.preset,
                                   wholeBreakevenPrefix(eval.cost.breakevenPrefix(eval.tiers[i])),
                                   0};
        if (a.pStar) {
            const auto k = static_cast<std::size_t>(
                sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), *a.pStar));
            a.shareAtOrAbove = n > 0 ? double(k) / n : 0;
        }
        r.tiers.push_back(a);
    }
    return r;
}

json traceInspectJson(const TraceInspectReport& r) {
    json j = {{"kvbe_trace_inspect", 1}, {"trace", traceJson(*r.trace, r.file)}};
    j["duration_s"] = r.durationS;
    j["input_tokens"] = {{"mean", r.inputMean},
                         {"p50", r.inputP50},
                         {"p90", r.inputP90},
                         {"p99", r.inputP99},
                         {"max", jsonCount(r.inputMax)}};
    j["output_tokens_mean"] = r.outputMean;
    j["unlimited_capacity_hits"] = r.unlimited ? ratiosJson(r.unlimited->anyTier) : json(nullptr);
    j["scenario"] = r.scenario;
    json tiers = json::array();
    for (const auto& a : r.tiers)
        tiers.push_back(
            {{"tier", a.name},
             {"p_star_tokens", a.pStar ? json(*a.pStar) : json(nullptr)},
             {"share_of_requests_at_or_above", a.pStar ? json(a.shareAtOrAbove) : json(nullptr)}});
    j["tiers"] = tiers;
    return j;
}

std::string traceInspectTable(const TraceInspectReport& r) {
    const Trace& t = *r.trace;
    std::ostringstream s;
    s << "trace      " << r.file << " (" << toString(t.summary.format);
    if (t.summary.hasBlocks()) s << ", " << t.summary.blockTokens << "-token blocks";
    s << ")\n";
    s << "requests   " << t.size() << " over " << duration(r.durationS) << "\n";
    s << "input      mean " << formatFixed(r.inputMean, 0) << " tokens; p50 "
      << formatFixed(r.inputP50, 0) << ", p90 " << formatFixed(r.inputP90, 0) << ", p99 "
      << formatFixed(r.inputP99, 0) << "\n";
    s << "output     mean " << formatFixed(r.outputMean, 0) << " tokens\n";
    if (r.unlimited) {
        s << "blocks     " << r.unlimited->blocks << " (" << t.distinctBlocks << " distinct)\n";
        s << "unlimited-capacity prefix hits: " << pct(r.unlimited->anyTier.tokenWeighted)
          << " token-weighted, " << pct(r.unlimited->anyTier.blockWeighted) << " block-weighted, "
          << pct(r.unlimited->anyTier.perRequest) << " per-request\n";
    } else {
        s << "no block ids: lengths and arrivals only (no hit ratios)\n";
    }
    s << "scenario   " << r.scenario << "\n";
    for (const auto& a : r.tiers) {
        s << "  " << a.name << ": p* ";
        if (a.pStar)
            s << formatFixed(*a.pStar, 0) << " tokens, " << pct(a.shareAtOrAbove)
              << " of requests at or above it\n";
        else
            s << "never (loading does not pay up to the context limit)\n";
    }
    return s.str();
}

// ------------------------------------------------------------------------------- replay

json traceReplayJson(const TraceReplayReport& x) {
    const ReplayConfig& cfg = *x.config;
    const ReplayResult& r = *x.result;
    json j = {{"kvbe_trace_replay", 1}, {"trace", traceJson(*x.trace, x.file)}};
    j["scenario"] = x.scenario;
    j["config"] = {{"policy", std::string(toString(cfg.policy))},
                   {"placement", std::string(toString(cfg.placement))},
                   {"admission", std::string(toString(x.admission))},
                   {"block_bytes", jsonCount(cfg.blockBytes)},
                   {"write_queue", cfg.writeQueue},
                   {"instances", cfg.instances},
                   {"store_after", cfg.storeAfter},
                   {"rate_scale", cfg.rateScale}};
    j["fleet"] = fleetJson(r);
    j["requests"] = r.requests;
    j["tokens"] = r.tokens;
    j["blocks"] = r.blocks;
    j["duration_s"] = r.durationS;
    j["hits_any_tier"] = ratiosJson(r.anyTier);
    j["hits_any_tier_if_writes_kept_up"] =
        x.writesKeptUp ? ratiosJson(x.writesKeptUp->anyTier) : ratiosJson(r.anyTier);
    j["hits_any_tier_if_every_block_stored"] =
        x.storeAll ? ratiosJson(x.storeAll->anyTier) : ratiosJson(r.anyTier);
    json tiers = json::array();
    for (std::size_t k = 0; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        const double buffer = k > 0 ? cfg.tiers[k - 1].writeBufferBytes : 0;
        tiers.push_back(
            {{"name", t.name},
             {"capacity_bytes", jsonCount(t.capacityBytes)}, // null: unlimited
             {"p_star_tokens", t.pStarTokens ? json(*t.pStarTokens) : json(nullptr)},
             {"hits", ratiosJson(t.hits)},
             {"blocks_written", t.blocksWritten},
             {"bytes_written", jsonCount(t.bytesWritten)},
             {"write_Bps",
              {{"p50", t.writeRateP50}, {"p99", t.writeRateP99}, {"max", t.writeRateMax}}},
             {"tier_write_Bps", t.writeBps > 0 ? json(t.writeBps) : json(nullptr)},
             {"windows_over_write_bandwidth", t.windowsOverWriteBw},
             {"write_buffer_bytes", k > 0 ? jsonCount(buffer) : json(nullptr)},
             {"shared_link", k > 0 && cfg.tiers[k - 1].sharedLink},
             {"writes_dropped", t.writesDropped},
             {"lookups_late", t.lookupsLate},
             {"lookups_of_dropped_copies", t.lookupsDropped},
             {"max_write_backlog_s", t.maxBacklogS}});
        if (k > 0) {
            addTierWrites(tiers.back(), t, cfg.tiers[k - 1], r, x.storeAll, k);
            addTierLinks(tiers.back(), t);
        } else
            tiers.back()["drive_writes_per_day"] = tiers.back()["years_to_rated_endurance"] =
                nullptr;
    }
    j["tiers"] = tiers;
    j["windows"] = r.windows;
    j["link_bin_s"] = r.binS;
    json rules = json::array();
    for (const auto& ru : r.rules) {
        json use = json::array();
        for (std::size_t k = 1; k < ru.tiers.size(); ++k) {
            const RuleTierUse& u = ru.tiers[k];
            use.push_back(
                {{"name", r.tiers[k].name},
                 {"hit_tokens_offered", u.tokensOffered},
                 {"hit_tokens_served", u.tokensServed},
                 {"served_share",
                  u.tokensOffered > 0 ? json(u.tokensServed / u.tokensOffered) : json(nullptr)},
                 {"read_busy", shareJson(u.read)},
                 {"blocks_declined_for_backlog", u.blocksDeclinedForBacklog},
                 {"requests_declined_for_backlog", u.requestsDeclinedForBacklog}});
        }
        rules.push_back({{"rule", ru.name},
                         {"ttft_s",
                          {{"mean", ru.ttft.mean},
                           {"p50", ru.ttft.p50},
                           {"p90", ru.ttft.p90},
                           {"p99", ru.ttft.p99}}},
                         {"share_faster_than_gpu_only", ru.gainShare},
                         {"share_slower_than_gpu_only", ru.lossShare},
                         {"gpu_prefill_s_saved", ru.gpuSecondsSaved},
                         {"declined_requests", ru.declinedRequests},
                         {"declined_blocks", ru.declinedBlocks},
                         {"declined_load_s", ru.declinedLoadS},
                         {"declined_net_s", ru.declinedNetS},
                         {"mean_wait_s", ru.meanWaitS},
                         {"hidden_load_s", ru.hiddenLoadS},
                         {"shared_load_s", ru.sharedLoadS},
                         {"tiers", use}});
    }
    j["rules"] = rules;
    json sat = json::array();
    for (const auto& t : tierSaturation(r, toString(x.admission)))
        sat.push_back({{"name", t.name},
                       {"saturated", t.saturated},
                       {"minutes_over_bandwidth_share", t.binsOverShare},
                       {"carried_share_busiest_minute", t.carriedPeakShare},
                       {"carried_share_mean", t.carriedMeanShare},
                       {"bandwidth_multiple_for_busiest_minute", t.bandwidthMultiple}});
    j["saturation"] = {{"rule", std::string(toString(x.admission))},
                       {"tiers", sat},
                       {"sentence", saturationSentence(r, toString(x.admission), cfg.instances > 0,
                                                       driveTiers(cfg))}};
    return j;
}

std::string traceReplayCsv(const TraceReplayReport& x) {
    const ReplayResult& r = *x.result;
    std::string out = "section,name,metric,value\n";
    auto row = [&out](const std::string& a, const std::string& b, const std::string& c, double v) {
        out += a + "," + b + "," + c + "," + formatFixed(v, 9) + "\n";
    };
    row("trace", "all", "requests", double(r.requests));
    row("trace", "all", "tokens", double(r.tokens));
    row("trace", "all", "blocks", double(r.blocks));
    row("hits", "any", "token_weighted", r.anyTier.tokenWeighted);
    row("hits", "any", "block_weighted", r.anyTier.blockWeighted);
    row("hits", "any", "per_request", r.anyTier.perRequest);
    for (std::size_t k = 0; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        row("tier", t.name, "capacity_bytes",
            std::isfinite(t.capacityBytes) ? t.capacityBytes : -1);
        if (t.pStarTokens) row("tier", t.name, "p_star_tokens", *t.pStarTokens);
        row("tier", t.name, "hits_token_weighted", t.hits.tokenWeighted);
        row("tier", t.name, "hits_block_weighted", t.hits.blockWeighted);
        row("tier", t.name, "hits_per_request", t.hits.perRequest);
        row("tier", t.name, "bytes_written", t.bytesWritten);
        row("tier", t.name, "write_Bps_p50", t.writeRateP50);
        row("tier", t.name, "write_Bps_p99", t.writeRateP99);
        row("tier", t.name, "writes_dropped", double(t.writesDropped));
        row("tier", t.name, "lookups_late", double(t.lookupsLate));
        row("tier", t.name, "lookups_of_dropped_copies", double(t.lookupsDropped));
        if (k == 0) continue;
        row("tier", t.name, "bytes_stored", t.bytesStored);
        row("tier", t.name, "read_Bps", t.readBps);
        row("tier", t.name, "reads_asked_mean_Bps", t.readOffered.meanShare * t.readBps);
        row("tier", t.name, "reads_asked_busiest_minute_Bps", t.readOffered.peakShare * t.readBps);
        row("tier", t.name, "minutes_over_read_bandwidth", double(t.readOffered.binsOver));
        if (!t.write.share.empty()) {
            row("tier", t.name, "write_busy_mean_share", t.write.meanShare);
            row("tier", t.name, "write_busy_busiest_minute_share", t.write.peakShare);
        }
        const TierEndurance e = tierEndurance(t, x.config->tiers[k - 1].drive, r.durationS);
        if (e.bytesStoredPerDay) row("tier", t.name, "bytes_stored_per_day", *e.bytesStoredPerDay);
        if (e.drives) row("tier", t.name, "drives", double(*e.drives));
        if (e.driveWritesPerDay) row("tier", t.name, "drive_writes_per_day", *e.driveWritesPerDay);
        if (e.yearsToRatedEndurance)
            row("tier", t.name, "years_to_rated_endurance", *e.yearsToRatedEndurance);
        if (x.storeAll)
            row("tier", t.name, "hits_given_up_token_weighted",
                x.storeAll->tiers[k].hits.tokenWeighted - t.hits.tokenWeighted);
    }
    for (const auto& ru : r.rules) {
        row("rule", ru.name, "ttft_mean_s", ru.ttft.mean);
        row("rule", ru.name, "ttft_p50_s", ru.ttft.p50);
        row("rule", ru.name, "ttft_p90_s", ru.ttft.p90);
        row("rule", ru.name, "ttft_p99_s", ru.ttft.p99);
        row("rule", ru.name, "share_faster_than_gpu_only", ru.gainShare);
        row("rule", ru.name, "gpu_prefill_s_saved", ru.gpuSecondsSaved);
        row("rule", ru.name, "declined_requests", double(ru.declinedRequests));
        row("rule", ru.name, "declined_load_s", ru.declinedLoadS);
        for (std::size_t k = 1; k < ru.tiers.size(); ++k) {
            const RuleTierUse& u = ru.tiers[k];
            const std::string tier = r.tiers[k].name;
            row("rule", ru.name, tier + "_hit_tokens_served", u.tokensServed);
            if (!u.read.share.empty()) {
                row("rule", ru.name, tier + "_read_busy_mean_share", u.read.meanShare);
                row("rule", ru.name, tier + "_read_busy_busiest_minute_share", u.read.peakShare);
            }
            if (u.blocksDeclinedForBacklog)
                row("rule", ru.name, tier + "_blocks_declined_for_backlog",
                    double(u.blocksDeclinedForBacklog));
        }
        if (x.config->instances > 0) {
            row("rule", ru.name, "mean_wait_s", ru.meanWaitS);
            row("rule", ru.name, "hidden_load_s", ru.hiddenLoadS);
            row("rule", ru.name, "shared_load_s", ru.sharedLoadS);
        }
    }
    return out;
}

namespace {

// The one-sentence answer: the share of requests that gain against GPU-only caching, the TTFT
// change, the GPU time saved and the write bandwidth each tier needs.
std::string replaySentence(const TraceReplayReport& x) {
    const ReplayResult& r = *x.result;
    const RuleResult& chosen = *r.rule(toString(x.admission));
    const RuleResult& gpuOnly = *r.rule("gpu-only");
    std::ostringstream s;
    s << "\nWith ";
    for (std::size_t k = 1; k < r.tiers.size(); ++k)
        s << (k > 1 ? (k + 1 == r.tiers.size() ? " and " : ", ") : "")
          << capacityText(r.tiers[k].capacityBytes) << " of " << r.tiers[k].name;
    if (r.tiers.size() == 1) s << "the GPU alone";
    s << " (" << toString(x.admission) << "), " << pct(chosen.gainShare)
      << " of requests are faster than with GPU-only "
      << "caching, mean TTFT " << (chosen.ttft.mean <= gpuOnly.ttft.mean ? "-" : "+")
      << pct(std::abs(1 - chosen.ttft.mean / gpuOnly.ttft.mean)) << ", "
      << formatFixed(chosen.gpuSecondsSaved - gpuOnly.gpuSecondsSaved, 1)
      << " GPU prefill seconds saved beyond GPU-only";
    for (std::size_t k = 1; k < r.tiers.size(); ++k)
        s << "; " << r.tiers[k].name << " needs " << formatBandwidth(r.tiers[k].writeRateP99)
          << " of writes (p99 minute)";
    s << ".\n";
    return s.str();
}

// Per offload tier: the writes offered and stored per day, the drives, the drive writes per day
// they take against their rating, the years to rated endurance; a warning where that is shorter
// than the warranty.
std::string enduranceTable(const TraceReplayReport& x) {
    const ReplayResult& r = *x.result;
    std::string out;
    appendf(out, "%-12s %14s %14s %22s %16s %20s\n", r.fleet ? "endurance/copy" : "endurance",
            "offered/day", "stored/day", "drives", "DWPD needed/rated", "to rated endurance");
    std::string warnings;
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        const DriveRating& d = x.config->tiers[k - 1].drive;
        const TierEndurance e = tierEndurance(t, d, r.durationS);
        auto perDay = [](const std::optional<double>& v) {
            return v ? formatBytes(*v) : std::string("-");
        };
        const std::string drives = e.drives && d.capacityBytes
                                       ? std::to_string(*e.drives) + " x " +
                                             formatFixed(*d.capacityBytes / 1e12, 2) + " TB"
                                       : "-";
        const std::string dwpd =
            (e.driveWritesPerDay ? formatFixed(*e.driveWritesPerDay, 2) : std::string("-")) +
            " / " + (d.writesPerDay ? formatFixed(*d.writesPerDay, 1) : std::string("-"));
        const bool anyRating = d.writesPerDay || d.warrantyYears || d.capacityBytes;
        const std::string life = e.yearsToRatedEndurance ? formatLife(*e.yearsToRatedEndurance)
                                 : !anyRating || e.note.empty() ? "-"
                                                                : e.note;
        appendf(out, "%-12s %14s %14s %22s %16s %20s\n", t.name.c_str(),
                perDay(e.bytesOfferedPerDay).c_str(), perDay(e.bytesStoredPerDay).c_str(),
                drives.c_str(), dwpd.c_str(), life.c_str());
        if (!e.warning.empty()) warnings += "warning: " + e.warning + "\n";
    }
    return out + warnings + "\n";
}

// Per offload tier: the reads its hits ask against its bandwidth, and under the report's rule the
// busy share of its links, the hits served and those declined for the backlog.
std::string linksTable(const TraceReplayReport& x) {
    const ReplayResult& r = *x.result;
    const std::string rule(toString(x.admission));
    std::string out;
    auto share = [](const std::optional<double>& mean, const std::optional<double>& peak) {
        if (!mean) return std::string("-");
        return pct(*mean) + " / " + pct(*peak);
    };
    appendf(out, "%-12s %30s %10s %17s %8s %24s %17s\n", "links", "reads asked: mean / max vs B",
            "min over B", "read busy: mean/max", "served", "declined for backlog",
            "write busy: mean/max");
    for (const auto& t : tierSaturation(r, rule)) {
        const std::string asked = formatBandwidth(t.askedMeanBps) + " / " +
                                  formatBandwidth(t.askedPeakBps) + " vs " +
                                  formatBandwidth(t.readBps);
        const std::string declined =
            t.blocksDeclinedForBacklog
                ? formatTokens(double(t.blocksDeclinedForBacklog)) + " blk, " +
                      formatTokens(double(t.requestsDeclinedForBacklog)) + " req"
                : "-";
        appendf(out, "%-12s %30s %10s %17s %8s %24s %17s\n", t.name.c_str(), asked.c_str(),
                pct(t.binsOverShare).c_str(), share(t.readBusyMean, t.readBusyPeak).c_str(),
                pct(t.servedShare).c_str(), declined.c_str(),
                share(t.writeBusyMean, t.writeBusyPeak).c_str());
    }
    out += "(" + rule + "; busy: the share of each " +
           (r.binS == 60 ? std::string("minute") : formatFixed(r.binS / 60, 0) + "-minute bin") +
           " the link spent moving data; reads asked: every hit loaded" +
           (x.config->instances > 0 ? "" : "; loads are queued only with --instances") + ")\n\n";
    return out;
}

// With store admission: the writes and hits against storing every block.
std::string admissionLines(const TraceReplayReport& x) {
    const ReplayResult& r = *x.result;
    const ReplayResult& a = *x.storeAll;
    auto signedPoints = [](double d) {
        return (d < 0 ? "-" : "+") + formatFixed(std::abs(d) * 100, 1) + " points";
    };
    std::string out = "store after " + std::to_string(x.config->storeAfter) +
                      " sightings, against storing every block: hits " +
                      pct(a.anyTier.tokenWeighted) + " -> " + pct(r.anyTier.tokenWeighted) +
                      " token-weighted, any tier (" +
                      signedPoints(r.anyTier.tokenWeighted - a.anyTier.tokenWeighted) + ")\n";
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        const auto& all = a.tiers[k];
        const double ratio = t.bytesWritten > 0 ? all.bytesWritten / t.bytesWritten : 0;
        out += "  " + t.name + ": writes " + formatBytes(all.bytesWritten) + " -> " +
               formatBytes(t.bytesWritten) +
               (ratio > 0 ? " (" + formatFixed(ratio, 1) + "x less)" : std::string()) + ", hits " +
               pct(all.hits.tokenWeighted) + " -> " + pct(t.hits.tokenWeighted) + " (" +
               signedPoints(t.hits.tokenWeighted - all.hits.tokenWeighted) + ")\n";
    }
    return out + "\n";
}

} // namespace

std::string traceReplayTable(const TraceReplayReport& x) {
    const ReplayConfig& cfg = *x.config;
    const ReplayResult& r = *x.result;
    std::ostringstream head;
    head << "trace     " << x.file << ": " << r.requests << " requests, "
         << formatTokens(double(r.tokens)) << " tokens, " << r.blocks << " blocks of "
         << x.trace->summary.blockTokens << " tokens (" << r.distinctBlocks << " distinct), "
         << duration(r.durationS) << "\n";
    head << "scenario  " << x.scenario << "; one block = " << formatBytes(cfg.blockBytes) << "; "
         << toString(cfg.policy) << ", " << toString(cfg.placement);
    if (cfg.storeAfter > 1)
        head << ", offload tiers store a block at its " << sightingText(cfg.storeAfter);
    if (cfg.rateScale != 1) head << "; load x" << cfg.rateScale << " (arrival times divided by it)";
    head << "\n\n";
    std::string out = head.str();
    appendf(out, "%-12s %12s %10s  %-26s %12s %22s\n", "tier", "capacity", "p* tokens",
            "hits: tok / blk / req", "written", "writes p50/p99 vs W");
    for (const auto& t : r.tiers) {
        const bool gpu = &t == &r.tiers.front();
        const std::string hits = pct(t.hits.tokenWeighted) + " / " + pct(t.hits.blockWeighted) +
                                 " / " + pct(t.hits.perRequest);
        std::string writes = "-";
        if (!gpu)
            writes = formatBandwidth(t.writeRateP50) + " / " + formatBandwidth(t.writeRateP99) +
                     (t.writeBps > 0 ? " vs " + formatBandwidth(t.writeBps) : "");
        const std::string pStar =
            t.pStarTokens ? formatFixed(*t.pStarTokens, 0) : (gpu ? "-" : "never");
        const std::string written = gpu ? "-" : formatBytes(t.bytesWritten);
        appendf(out, "%-12s %12s %10s  %-26s %12s %22s\n", t.name.c_str(),
                capacityText(t.capacityBytes).c_str(), pStar.c_str(), hits.c_str(), written.c_str(),
                writes.c_str());
    }
    appendf(out, "%-12s %12s %10s  %-26s\n\n", "any tier", "", "",
            (pct(r.anyTier.tokenWeighted) + " / " + pct(r.anyTier.blockWeighted) + " / " +
             pct(r.anyTier.perRequest))
                .c_str());
    if (x.queued) {
        appendf(out, "%-12s %14s %14s %16s %14s\n", "write queue", "writes dropped", "lookups late",
                "dropped copies", "max backlog");
        for (std::size_t k = 1; k < r.tiers.size(); ++k) {
            const auto& t = r.tiers[k];
            if (!(t.writeBps > 0)) {
                appendf(out, "%-12s %14s\n", t.name.c_str(),
                        "(write bandwidth unknown: not queued)");
                continue;
            }
            appendf(out, "%-12s %14llu %14llu %16llu %14s\n", t.name.c_str(),
                    (unsigned long long)t.writesDropped, (unsigned long long)t.lookupsLate,
                    (unsigned long long)t.lookupsDropped, formatSeconds(t.maxBacklogS).c_str());
        }
        if (x.writesKeptUp)
            out += "hits lost to the write backlog: " + pct(x.writesKeptUp->anyTier.tokenWeighted) +
                   " -> " + pct(r.anyTier.tokenWeighted) + " token-weighted (buffer " +
                   formatBytes(cfg.tiers.empty() ? 0 : cfg.tiers.front().writeBufferBytes) +
                   " a tier)\n";
        else
            out += "every write completed before its block was looked up again\n";
        out += "\n";
    }
    if (r.tiers.size() > 1) out += enduranceTable(x);
    if (x.storeAll) out += admissionLines(x);
    out += fleetSentence(cfg, r);
    if (cfg.instances > 0)
        out += "TTFT below: " + std::to_string(cfg.instances) + " prefill server" +
               (cfg.instances > 1 ? "s, each its own queue" : "") +
               ", first come first served; loads start at arrival, overlap the wait and queue on "
               "each tier's link behind the loads before them; optimal decides each request "
               "from the wait and the links' backlog at its arrival\n";
    appendf(out, "%-10s %35s %14s %14s %12s %22s%s\n", "rule", "TTFT ms: mean / p50 / p90 / p99",
            "faster vs GPU", "slower vs GPU", "GPU s saved", "declined: req / load s",
            cfg.instances > 0 ? "   wait ms / hidden / shared load s" : "");
    for (const auto& ru : r.rules) {
        const std::string t = ms(ru.ttft.mean) + " / " + ms(ru.ttft.p50) + " / " + ms(ru.ttft.p90) +
                              " / " + ms(ru.ttft.p99);
        const std::string d =
            (ru.name == "breakeven" || ru.name == "optimal")
                ? std::to_string(ru.declinedRequests) + " / " + formatFixed(ru.declinedLoadS, 3)
                : "-";
        const std::string q = cfg.instances > 0 ? "   " + ms(ru.meanWaitS) + " / " +
                                                      formatFixed(ru.hiddenLoadS, 2) + " / " +
                                                      formatFixed(ru.sharedLoadS, 2)
                                                : "";
        appendf(out, "%-10s %35s %14s %14s %12s %22s%s\n", ru.name.c_str(), t.c_str(),
                pct(ru.gainShare).c_str(), pct(ru.lossShare).c_str(),
                formatFixed(ru.gpuSecondsSaved, 2).c_str(), d.c_str(), q.c_str());
    }
    if (r.tiers.size() > 1) out = out + "\n" + linksTable(x);
    std::string sentence = replaySentence(x);
    if (r.tiers.size() > 1)
        sentence +=
            saturationSentence(r, toString(x.admission), cfg.instances > 0, driveTiers(cfg)) + "\n";
    return out + sentence;
}

} // namespace kvbe
