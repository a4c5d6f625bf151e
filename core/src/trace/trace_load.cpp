// The latency target and the load of a capacity search (trace_capacity.h): the target's parser
// and statistic, a trace's prefix by arrival time, its request rate and the check that it has
// arrival times at all.
#include "kvbe/trace/trace_capacity.h"

#include "kvbe/base/text.h"

#include "kvbe/base/statistics.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <numeric>

namespace kvbe {

const char* const kCapacityTtftNote =
    "TTFT = the wait for a prefill server + the load of the cached prefix (from the request's "
    "arrival, overlapping the wait, behind the loads queued before it on each tier's link) + "
    "the recompute of the rest; decode is not modelled (the servers do prefill only)";

namespace {

// "2", "2.5", "99.9", "120": the fewest decimals that read back as the number.
std::string shortNumber(double v) {
    char buf[64];
    for (int decimals = 0; decimals <= 9; ++decimals) {
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        if (std::strtod(buf, nullptr) == v) return buf;
    }
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

} // namespace

std::string LatencyTarget::statistic() const {
    return mean ? "mean" : "p" + shortNumber(percentile);
}

std::string LatencyTarget::text() const {
    const std::string value =
        seconds < 1 ? shortNumber(seconds * 1e3) + " ms" : shortNumber(seconds) + " s";
    return statistic() + " ≤ " + value;
}

Result<LatencyTarget> parseLatencyTarget(std::string_view text) {
    const std::string quoted = "'" + std::string(text) + "'";
    const auto eq = text.find('=');
    if (eq == std::string_view::npos)
        return Error{quoted + ": expected STATISTIC=DURATION, e.g. p99=2s, p90=500ms or mean=1s"};
    const std::string stat = lower(text.substr(0, eq));
    const std::string_view value = text.substr(eq + 1);
    LatencyTarget t;
    if (stat == "mean") {
        t.mean = true;
    } else {
        double p = 0;
        const char* b = stat.data() + 1;
        const char* e = stat.data() + stat.size();
        const auto [end, ec] = std::from_chars(b, e, p);
        if (stat.size() < 2 || stat[0] != 'p' || ec != std::errc() || end != e)
            return Error{quoted + ": the statistic '" + std::string(text.substr(0, eq)) +
                         "' is neither mean nor a percentile; expected mean, p50, p90, p99 or "
                         "any pNN with 0 < NN < 100"};
        if (!(p > 0 && p < 100))
            return Error{quoted + ": percentile " + std::string(stat.substr(1)) +
                         " is outside 0–100; expected a percentile above 0 and below 100, e.g. "
                         "p99"};
        t.percentile = p;
    }
    // A bare number is refused: "2" could be seconds or milliseconds.
    if (std::none_of(value.begin(), value.end(),
                     [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }))
        return Error{quoted + ": the value '" + std::string(value) +
                     "' has no unit; expected a duration with its unit, e.g. 2s or 500ms"};
    auto s = parseSeconds(value);
    if (!s) return Error{quoted + ": " + s.message()};
    t.seconds = *s;
    return t;
}

double latencyStatistic(const LatencyTarget& target, std::span<double> ttfts) {
    if (ttfts.empty()) return 0;
    if (target.mean)
        return std::accumulate(ttfts.begin(), ttfts.end(), 0.0) / static_cast<double>(ttfts.size());
    return quantileInPlace(ttfts, target.percentile / 100);
}

Trace tracePrefix(const Trace& trace, double seconds) {
    return traceHead(trace, seconds, SIZE_MAX);
}

Trace traceHead(const Trace& trace, double seconds, std::size_t count) {
    Trace out;
    out.summary = trace.summary;
    std::vector<std::uint32_t> renamed(trace.distinctBlocks, UINT32_MAX);
    out.blockOffset.push_back(0);
    for (std::size_t i = 0; i < trace.size() && out.size() < count; ++i) {
        if (!(trace.arrivalS[i] < seconds)) continue;
        out.arrivalS.push_back(trace.arrivalS[i]);
        out.inputTokens.push_back(trace.inputTokens[i]);
        out.outputTokens.push_back(trace.outputTokens[i]);
        for (const std::uint32_t id : trace.blocksOf(i)) {
            if (renamed[id] == UINT32_MAX) renamed[id] = out.distinctBlocks++;
            out.blocks.push_back(renamed[id]);
        }
        out.blockOffset.push_back(out.blocks.size());
    }
    out.summary.requests = out.size();
    return out;
}

Trace traceWithBlockTokens(const Trace& trace, std::uint32_t blockTokens) {
    Trace out = trace;
    const std::uint32_t was = trace.summary.blockTokens;
    if (blockTokens == 0 || was == 0 || blockTokens == was) return out;
    out.summary.blockTokens = blockTokens;
    const double f = static_cast<double>(blockTokens) / was;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto blocks = static_cast<double>(trace.blocksOf(i).size());
        const double scaled = std::round(trace.inputTokens[i] * f);
        // The same blocks, each of blockTokens: at least one token in the last.
        out.inputTokens[i] = static_cast<std::uint32_t>(
            std::clamp(scaled, blocks > 0 ? (blocks - 1) * blockTokens + 1 : 1.0,
                       std::max(1.0, blocks * blockTokens)));
    }
    return out;
}

double traceRequestRate(const Trace& trace) {
    if (trace.size() == 0) return 0;
    const auto [lo, hi] = std::minmax_element(trace.arrivalS.begin(), trace.arrivalS.end());
    return *hi > *lo ? static_cast<double>(trace.size()) / (*hi - *lo) : 0;
}

Status checkArrivals(const Trace& trace, const std::string& source) {
    if (trace.size() == 0)
        return Error{source + ": the trace has no requests, so it has no load to scale or queue"};
    if (traceRequestRate(trace) > 0) return Ok{};
    return Error{source + ": every request arrives at the same time (" +
                 std::to_string(trace.size()) +
                 (trace.size() == 1 ? " request" : " requests, all at one timestamp") +
                 "), so the trace has no arrival times to scale; a capacity search needs "
                 "requests spread over time"};
}

} // namespace kvbe
