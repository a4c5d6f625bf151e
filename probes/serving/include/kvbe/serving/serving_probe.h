// probe serving: an end-to-end TTFT sweep against an OpenAI-compatible server (vLLM, SGLang),
// the recipe of the article: cold prompts at several lengths (recompute), the same prompts with
// the prefix in the GPU prefix cache and in the offload tier, at several cached fractions; every
// hit checked against the server's own /metrics counters; then the cost-model fit, a
// calibration file, a pareto-measure CSV and the py-kvcache thresholds (v1 and v2).
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/probes/probe.h"
#include "kvbe/serving/http_client.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kvbe::serving {

struct ServingSettings {
    std::string endpoint; // OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1
    std::string model;    // served model name, as the server knows it
    std::vector<std::int64_t> lengths{1024, 4096, 8192, 16384, 32768, 65536};
    std::vector<double> fractions{0.1, 0.5, 0.9, 1.0};
    int repeats = 3;
    bool tierGpu = true;     // --tiers gpu
    bool tierOffload = true; // --tiers offload
    int concurrency = 1;
    std::string apiKeyEnv;            // name of the environment variable holding the API key
    double timeoutS = 120;            // per request
    std::string outDir;               // where the four files go ("" = none written)
    std::string offloadTier = "dram"; // the offload tier's name in the outputs: dram or nvme
    std::string reset = "auto";       // auto, llamacpp, vllm, sglang, filler
    bool allowUnverified = false;     // --allow-unverified-hits: fit hits nothing verified
    int blockSize = 16;               // prefix-cache block in tokens (vLLM's default)
    double retryWaitS = 1;            // first wait after a 429/503, doubled each try
    int maxTries = 5;
    int warmup = 2; // cold requests sent first and not measured
    // Idle time before each timed request (--pause): a server that has idled a while runs its
    // next request slower on some machines (llama.cpp on a shared CPU, docs/trace.md), and a
    // replay at moderate load sends most requests to an idle server.
    double pauseS = 0;
    // Above this spread of the repeated reference point (relative to its median) the sweep
    // writes no thresholds (--drift-limit).
    double driftLimit = 0.10;
    // What the fit takes of each cell's samples: the median (default), or the fastest, for a
    // server whose noise is one-sided (a loopback stand-in on a busy machine: nothing makes a
    // request faster than its time model, everything else makes it slower).
    bool fitOnFastest = false;
    // The fit: model geometry and GPU peak (the scenario's, with --config/--gpu/--peak-tflops).
    CostInputs costInputs;
    std::vector<TierPath> nominalTiers;
    std::string modelRef; // what the calibration names as its model
    std::string gpuName;  // the GPU the user gave (--gpu, or the --scenario's); "" when none
    bool gpuGiven = false;
};

class ServingProbe : public probes::Probe {
  public:
    explicit ServingProbe(ServingSettings settings = {}) : m_s(std::move(settings)) {}
    std::string key() const override { return "serving"; }
    // The settings from the flags (serving_settings.cpp), with the model geometry and GPU peak
    // for the fit taken from the scenario.
    Result<probes::ProbeOptions> configure(const ProbeArgs& args) override;
    Status available() const override;
    // A stop closes the connection within 10 ms; the grace is there for a hung resolver.
    std::chrono::milliseconds stopGrace() const override { return std::chrono::milliseconds(1500); }
    probes::ProbeOutcome run(const probes::ProbeOptions& options, probes::ProbeSink& sink) override;

  private:
    ServingSettings m_s;
};

} // namespace kvbe::serving
