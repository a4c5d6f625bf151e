// probe replay: a request trace replayed against live OpenAI-compatible servers, open loop (each
// request at its arrival time, whatever the servers are doing), routed by the replay's routers
// (kvbe/trace/live_router.h), each block id of the trace a fixed run of token ids. Every request's
// TTFT and the cached tokens its server reports go to DIR/requests.jsonl as it completes, and the
// summary to DIR/replay.json, which `trace replay --compare DIR` reads (docs/trace.md,
// "Replaying against live servers").
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/trace/fleet.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace kvbe::serving {

struct ReplaySettings {
    std::string trace;
    std::vector<std::string> endpoints; // base URLs, as given
    std::string model;
    std::string outDir;
    RouterConfig router;
    std::string routerText = "round-robin";
    double rateScale = 1;
    std::optional<std::size_t> limit;
    std::optional<double> durationCapS;
    std::uint32_t blockTokens = 0; // 0: the trace's
    int outputTokens = 1;          // 0: the trace's output lengths
    int vocab = 32000;
    int maxInFlight = 256;
    std::string apiKeyEnv;
    double timeoutS = 300;
};

// The token ids of a prompt of `tokens` tokens over the blocks `ids`, blockTokens each: block id
// b is always the same run (its first two tokens spell b, so runs of different ids differ in
// their first two tokens; the rest are a hash of b and the position), drawn from [100, vocab).
std::vector<std::int64_t> promptTokens(std::span<const std::uint32_t> ids, std::uint32_t tokens,
                                       std::uint32_t blockTokens, int vocab);

class ReplayProbe : public probes::Probe {
  public:
    explicit ReplayProbe(ReplaySettings settings = {}) : m_s(std::move(settings)) {}
    std::string key() const override { return "replay"; }
    Result<probes::ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(2000); }
    probes::ProbeOutcome run(const probes::ProbeOptions& options, probes::ProbeSink& sink) override;

  private:
    ReplaySettings m_s;
};

} // namespace kvbe::serving
