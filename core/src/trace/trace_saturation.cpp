#include "kvbe/trace/trace_saturation.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kvbe {

namespace {

std::string pct(double v) {
    return formatFixed(v * 100, v < 0.1 && v > 0 ? 1 : 0) + " %";
}

std::string count(std::uint64_t n) {
    return formatTokens(static_cast<double>(n));
}

} // namespace

std::vector<TierSaturation> tierSaturation(const ReplayResult& r, std::string_view rule) {
    std::vector<TierSaturation> out;
    const RuleResult* ru = r.rule(rule);
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const TierReport& t = r.tiers[k];
        TierSaturation s;
        s.name = t.name;
        s.readBps = t.readBps;
        const LinkUse& asked = t.readOffered;
        s.askedMeanBps = asked.meanShare * t.readBps;
        s.askedPeakBps = asked.peakShare * t.readBps;
        s.binsOver = asked.binsOver;
        s.bins = asked.share.size();
        s.binsOverShare = s.bins ? double(s.binsOver) / double(s.bins) : 0;
        s.carriedMeanShare = asked.meanShare > 1 ? 1 / asked.meanShare : 1;
        s.carriedPeakShare = asked.peakShare > 1 ? 1 / asked.peakShare : 1;
        s.bandwidthMultiple =
            asked.peakShare > 1 ? static_cast<int>(std::ceil(asked.peakShare - 1e-9)) : 1;
        s.servedShare = 1;
        if (ru && k < ru->tiers.size()) {
            const RuleTierUse& u = ru->tiers[k];
            if (u.tokensOffered > 0) s.servedShare = u.tokensServed / u.tokensOffered;
            if (!u.read.share.empty()) {
                s.readBusyMean = u.read.meanShare;
                s.readBusyPeak = u.read.peakShare;
            }
            s.blocksDeclinedForBacklog = u.blocksDeclinedForBacklog;
            s.requestsDeclinedForBacklog = u.requestsDeclinedForBacklog;
        }
        if (!t.write.share.empty()) {
            s.writeBusyMean = t.write.meanShare;
            s.writeBusyPeak = t.write.peakShare;
        }
        s.writesDropped = t.writesDropped;
        // Declines for the backlog count once they are 1 % of the tier's hit blocks: bursts of
        // arrivals back a link up for a moment on any trace.
        const double hitBlocks = t.hits.blockWeighted * static_cast<double>(r.blocks);
        s.saturated =
            s.binsOver > 0 || double(s.blocksDeclinedForBacklog) >= 0.01 * std::max(1.0, hitBlocks);
        out.push_back(std::move(s));
    }
    return out;
}

std::string saturationSentence(const ReplayResult& r, std::string_view rule, bool queued,
                               const std::vector<bool>& drives) {
    const auto tiers = tierSaturation(r, rule);
    if (tiers.empty()) return "";
    const std::string minutes =
        r.binS == 60 ? "minutes" : "bins of " + formatFixed(r.binS / 60, 0) + " minutes";
    const std::string minute = r.binS == 60 ? "minute" : "bin";
    std::ostringstream s;
    bool any = false;
    for (std::size_t i = 0; i < tiers.size(); ++i) {
        const TierSaturation& t = tiers[i];
        if (!t.saturated) continue;
        if (any) s << " ";
        any = true;
        if (t.binsOver > 0)
            s << t.name << " is saturated in " << pct(t.binsOverShare) << " of the " << minutes
              << ": its hits ask up to " << formatBandwidth(t.askedPeakBps) << " of reads ("
              << formatBandwidth(t.askedMeanBps) << " on average) from "
              << formatBandwidth(t.readBps) << ", so its bandwidth carries at most "
              << pct(t.carriedPeakShare) << " of them in the busiest " << minute << " and "
              << pct(t.carriedMeanShare) << " over the trace; ";
        else
            s << t.name << "'s reads back up in bursts shorter than a " << minute
              << ": its hits ask at most " << formatBandwidth(t.askedPeakBps) << " in a " << minute
              << " (" << formatBandwidth(t.askedMeanBps) << " on average) from "
              << formatBandwidth(t.readBps) << "; ";
        if (queued) {
            s << rule << " loaded " << pct(t.servedShare) << " of the hit tokens it offers";
            if (t.blocksDeclinedForBacklog > 0)
                s << " and declined " << count(t.blocksDeclinedForBacklog) << " blocks ("
                  << count(t.requestsDeclinedForBacklog) << " requests) for the backlog";
            if (t.readBusyPeak)
                s << ", its reads keeping the link busy " << pct(*t.readBusyMean)
                  << " of the time (" << pct(*t.readBusyPeak) << " in the busiest " << minute
                  << ")";
        } else {
            s << "without prefill servers (--instances) the replay does not queue loads, so "
                 "every rule loads as if the link were idle";
        }
        const bool drive = i < drives.size() && drives[i];
        const std::string times = std::to_string(t.bandwidthMultiple);
        if (t.bandwidthMultiple > 1)
            s << "; " << times << "x its bandwidth ("
              << (drive ? "as " + times + " drives striped, " : std::string())
              << "or a faster tier in front of it) would carry the busiest " << minute << ".";
        else
            s << ".";
    }
    if (any) return s.str();
    // None saturated: the busiest minute of the tier nearest its bandwidth.
    const auto most =
        std::max_element(tiers.begin(), tiers.end(), [](const auto& a, const auto& b) {
            return a.askedPeakBps / a.readBps < b.askedPeakBps / b.readBps;
        });
    s << "No tier is saturated: the busiest " << minute << " asks " << most->name << " for "
      << formatBandwidth(most->askedPeakBps) << " of reads, "
      << pct(most->askedPeakBps / most->readBps) << " of its " << formatBandwidth(most->readBps);
    std::string bursts;
    for (const auto& t : tiers)
        if (t.blocksDeclinedForBacklog > 0)
            bursts += (bursts.empty() ? "" : ", ") + count(t.blocksDeclinedForBacklog) +
                      " blocks of " + t.name;
    if (!bursts.empty()) s << "; " << rule << " declined " << bursts << " for short backlogs";
    s << ".";
    return s.str();
}

} // namespace kvbe
