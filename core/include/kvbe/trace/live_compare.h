// A live replay beside the model's prediction of it (docs/trace.md, "Replaying against live
// servers"): what `kvbe-cli probe replay` wrote to a folder (replay.json, requests.jsonl), the same
// requests replayed through the model on the same servers, router and load, and both TTFT
// distributions with the token hit ratio, mean, p50, p90, p99 and the per-request error. The
// CLI's `trace replay --compare DIR` and the Workload view's live chart both show this one
// computation.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// What a live replay's replay.json says a prediction must repeat.
struct LiveReplayRun {
    std::string dir;
    std::string trace; // the trace file it replayed, as it was named
    std::size_t limit = std::numeric_limits<std::size_t>::max(); // --limit (max: none)
    double durationCapS = std::numeric_limits<double>::infinity();
    double rateScale = 1;
    std::uint32_t blockTokens = 0;
    std::size_t requests = 0, servers = 0;
    std::string router; // as --router takes it
    std::string model;
};

// Reads DIR/replay.json; a missing folder, file or field is a sentence naming the file and what
// was expected.
Result<LiveReplayRun> readLiveReplay(const std::string& dir);

// "llama.cpp[:cache_ram=SIZE,similarity=F]": the engine's own cache (trace_sim.h,
// ReplayConfig::llamaCpp) replayed on top of the fleet. Empty: none.
Result<std::optional<ReplayConfig::LlamaCpp>> parseEngine(std::string_view text);
// Sets the engine on a replay's configuration (a fleet of at least one server).
void applyEngine(const std::optional<ReplayConfig::LlamaCpp>& engine, ReplayConfig& config);

struct LiveFigures {
    std::optional<double> tokenHitRatio; // none: the engine reported no cached tokens
    double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

// How fast the engine served against the model's service times, on the requests where both are
// the service alone: those that found their server idle live (no other request open on it when
// sent) and in the model (no wait), with the same cached tokens to less than a block. Live, such
// a request's TTFT is its service; the model's is the calibration's price of the same work. Told
// apart for requests with no cached token and with some: an engine can be priced right for one
// and not the other (docs/trace.md, "Replaying against live servers").
struct LiveServiceCheck {
    static constexpr std::size_t kMinRequests = 5; // fewer: the engine's speed is not told
    std::size_t requests = 0;
    double predictedMedian = 0, measuredMedian = 0; // seconds
    // measured over predicted median; none: fewer than kMinRequests such requests
    std::optional<double> ratio() const {
        if (requests < kMinRequests || !(predictedMedian > 0)) return std::nullopt;
        return measuredMedian / predictedMedian;
    }
};

struct LiveComparison {
    LiveReplayRun live;
    Admission rule = Admission::Always;
    bool asRouted = false; // each request replayed on the server the live run sent it to
    std::size_t compared = 0, failed = 0; // requests completed live, and failed
    LiveFigures measured, predicted;
    double mape = 0; // mean over the compared requests of |predicted − measured| / measured
    // The service checks: requests with no cached token, and with some.
    LiveServiceCheck aloneCold, aloneHit;
    // The compared requests' TTFT, seconds, ascending.
    std::vector<double> measuredSorted, predictedSorted;
};

// Replays the requests the live run sent (its --limit, --duration-cap and --block-tokens of
// `loaded`) through the model: `request` as the flags or controls give it, with the live run's
// servers, router and load, the engine's cache where given, and `rule` for what it loads (an
// engine loads every cached block it finds: Always). asRouted: each request goes to the server
// the live run sent it to (requests.jsonl's `server`), not where the model's router would send
// it, so that what is left of the error is the servers' and the caches', not the router's
// (RouterConfig::recorded). Fails naming the request's field, or with a sentence naming the file
// and line of requests.jsonl it could not read (with asRouted, a row without its server or a
// request without a row), or the trace that does not match.
RequestResult<LiveComparison> compareLiveReplay(const LiveReplayRun& live, const Trace& loaded,
                                                const Evaluation& e, ReplayRequest request,
                                                const std::optional<ReplayConfig::LlamaCpp>& engine,
                                                Admission rule, bool asRouted = false);

// The comparison as rows of figure, predicted, measured and error, in words ("token hit ratio",
// "37.4 %", "37.4 %", "+0.0 points"; "TTFT mean", "41.2 ms", …): the CLI's table and the window's
// both print these.
std::vector<std::array<std::string, 4>> liveComparisonRows(const LiveComparison& c);
// What the "alone" rows are, in one sentence under them (the CLI's table and the window's).
std::string servedAloneSentence();

} // namespace kvbe
