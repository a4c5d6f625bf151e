// kvbe-cli probe serving: the end-to-end TTFT sweep against an OpenAI-compatible server
// (kvbe/serving/serving_probe.h), with the flags turned into settings and the model geometry
// and GPU peak taken from the scenario (for the fit).
#include "commands.h"
#include "probe_watchdog.h"
#include "scenario_flags.h"

#include "kvbe/base/units.h"
#include "kvbe/probes/stream.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/serving/serving_probe.h"

#include <cmath>
#include <iostream>
#include <memory>

namespace kvbe::cli {
namespace {

struct ServingFlags {
    std::string endpoint, model, lengths = "1k,4k,8k,16k,32k,64k", fractions = "0.1,0.5,0.9,1",
                                 tiers = "gpu,offload";
    std::string apiKeyEnv, timeout = "120s", out, offloadTier = "dram", reset = "auto",
                           retryWait = "1s";
    std::string config, format = "table", fitOn = "median";
    int repeats = 3, concurrency = 1, blockSize = 16, tries = 5, warmup = 2;
    ScenarioFlags scenario; // its model: --config, else --model
};

Result<serving::ServingSettings> toSettings(const ServingFlags& f) {
    serving::ServingSettings s;
    s.endpoint = f.endpoint;
    if (f.endpoint.rfind("http://", 0) != 0 && f.endpoint.rfind("https://", 0) != 0)
        return Error{"--endpoint " + f.endpoint +
                     ": expected an http:// or https:// base URL, e.g. http://127.0.0.1:8000/v1"};
    s.model = f.model;
    auto lengths = parseTokenList(f.lengths);
    if (!lengths) return Error{"--lengths " + lengths.message()};
    s.lengths.clear();
    for (double n : *lengths) {
        if (n < 32)
            return Error{"--lengths: " + formatTokens(n) +
                         " tokens is too short; expected at least 32"};
        s.lengths.push_back(static_cast<std::int64_t>(n));
    }
    std::sort(s.lengths.begin(), s.lengths.end());
    s.lengths.erase(std::unique(s.lengths.begin(), s.lengths.end()), s.lengths.end());
    auto fractions = parseFractionList(f.fractions, false);
    if (!fractions) return Error{"--fractions " + fractions.message()};
    s.fractions = *fractions;
    s.tierGpu = s.tierOffload = false;
    size_t start = 0;
    while (start <= f.tiers.size()) {
        size_t comma = f.tiers.find(',', start);
        if (comma == std::string::npos) comma = f.tiers.size();
        const std::string item = f.tiers.substr(start, comma - start);
        if (item == "gpu")
            s.tierGpu = true;
        else if (item == "offload")
            s.tierOffload = true;
        else
            return Error{"--tiers '" + item + "': expected gpu, offload or both (gpu,offload)"};
        start = comma + 1;
    }
    if (f.repeats < 1 || f.repeats > 100)
        return Error{"--repeats " + std::to_string(f.repeats) + ": expected 1 to 100"};
    s.repeats = f.repeats;
    if (f.concurrency != 1)
        return Error{"--concurrency " + std::to_string(f.concurrency) +
                     ": only 1 is measured (queueing is not part of the cost model, and counters "
                     "cannot be told apart)"};
    s.apiKeyEnv = f.apiKeyEnv;
    auto timeout = parseSeconds(f.timeout);
    if (!timeout || *timeout <= 0)
        return Error{"--timeout " +
                     (timeout ? f.timeout + ": expected a positive time" : timeout.message())};
    s.timeoutS = *timeout;
    auto wait = parseSeconds(f.retryWait);
    if (!wait || *wait < 0)
        return Error{"--retry-wait " +
                     (wait ? f.retryWait + ": expected a time of 0 or more" : wait.message())};
    s.retryWaitS = *wait;
    if (f.tries < 1 || f.tries > 20)
        return Error{"--tries " + std::to_string(f.tries) + ": expected 1 to 20"};
    s.maxTries = f.tries;
    if (f.blockSize < 1 || f.blockSize > 4096)
        return Error{"--block-size " + std::to_string(f.blockSize) + ": expected 1 to 4096 tokens"};
    s.blockSize = f.blockSize;
    if (f.warmup < 0 || f.warmup > 100)
        return Error{"--warmup " + std::to_string(f.warmup) + ": expected 0 to 100"};
    s.warmup = f.warmup;
    s.outDir = f.out;
    s.offloadTier = f.offloadTier;
    s.reset = f.reset;
    s.fitOnFastest = f.fitOn == "fastest";

    // The fit's model geometry, GPU peak and nominal tiers: the scenario's, with the overrides.
    ScenarioFlags flags = f.scenario;
    flags.model = f.config.empty() ? f.model : f.config;
    auto scenario = scenarioFromFlags(flags);
    if (!scenario) return scenario.error();
    auto eval = evaluate(scenario->scenario, scenario->presets);
    if (!eval)
        return Error{
            scenario->where + eval.message() +
            (f.config.empty()
                 ? " (the model geometry comes from --model; give --config with a preset id, "
                   "config.json or folder when the served name is not one)"
                 : "")};
    s.costInputs = eval->cost.inputs();
    s.nominalTiers = eval->tiers;
    s.modelRef = eval->model.id;
    s.gpuName = eval->gpu ? eval->gpu->name : std::string();
    return s;
}

ExitCode runServing(const ServingFlags& flags) {
    auto settings = toSettings(flags);
    if (!settings) {
        std::cerr << "kvbe-cli: " << settings.message() << "\n";
        if (flags.format == "jsonl")
            probes::JsonlSink(std::cout, "serving").error(settings.message());
        return ExitCode::BadInput;
    }
    serving::ServingProbe probe(*settings);
    auto sink = makeProbeSink(flags.format, "serving");
    // A stop closes the connection within 10 ms; the watchdog is there for a hung resolver.
    return runProbeWithWatchdog(probe, probes::ProbeOptions{}, *sink,
                                std::chrono::milliseconds(1500));
}

} // namespace

void addServingProbeCommand(CLI::App& probe, Command& run) {
    auto f = std::make_shared<ServingFlags>();
    auto* cmd = probe.add_subcommand("serving", serving::ServingProbe({}).description());
    cmd->add_option("--endpoint", f->endpoint,
                    "OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
        ->required();
    cmd->add_option("--model", f->model,
                    "Served model name (as in /v1/models); also the model geometry unless --config")
        ->required();
    cmd->add_option("--lengths", f->lengths,
                    "Prompt lengths in tokens (default 1k,4k,8k,16k,32k,64k)");
    cmd->add_option("--fractions", f->fractions,
                    "Cached fractions of each prompt (default 0.1,0.5,0.9,1)");
    cmd->add_option("--repeats", f->repeats, "Samples per length, fraction and state (default 3)");
    cmd->add_option("--tiers", f->tiers, "gpu, offload or gpu,offload (default)");
    cmd->add_option("--concurrency", f->concurrency, "Requests in flight; only 1 is measured");
    cmd->add_option("--api-key-env", f->apiKeyEnv,
                    "Environment variable holding the API key (sent as a Bearer token)");
    cmd->add_option("--timeout", f->timeout, "Per request (default 120s)");
    cmd->add_option(
        "--out", f->out,
        "Folder for serving.csv, calibration.json, pykvcache-v1.json, pykvcache-v2.json");
    cmd->add_option("--offload-tier", f->offloadTier,
                    "What the offload tier is: dram (CPU offload) or nvme (disk); "
                    "names the tier and picks py-kvcache's mem or ssd threshold")
        ->check(CLI::IsMember({"dram", "nvme"}));
    cmd->add_option(
           "--reset", f->reset,
           "Clearing the GPU prefix cache: auto (vLLM's POST /reset_prefix_cache, else SGLang's "
           "POST /flush_cache, else filler), vllm, sglang, filler")
        ->check(CLI::IsMember({"auto", "vllm", "sglang", "filler"}));
    cmd->add_option("--block-size", f->blockSize,
                    "Prefix-cache block in tokens (default 16, vLLM's)");
    cmd->add_option("--retry-wait", f->retryWait,
                    "First wait after 429/503, doubled per try (default 1s; Retry-After wins)");
    cmd->add_option("--tries", f->tries, "Tries per request on 429/503 (default 5)");
    cmd->add_option("--warmup", f->warmup, "Cold requests sent first and not measured (default 2)");
    cmd->add_option("--fit-on", f->fitOn,
                    "What the fit takes of each point's repeats: median (default) or fastest "
                    "(for one-sided noise, e.g. the loopback stand-in on a busy machine)")
        ->check(CLI::IsMember({"median", "fastest"}));
    cmd->add_option(
        "--config", f->config,
        "Model geometry for the fit: preset id, config.json or folder (default: --model)");
    addScenarioFlags(cmd, f->scenario, false);
    addProbeFormatOption(cmd, f->format);
    cmd->footer("\nSends traffic only to --endpoint. Prompts are token ids (/v1/completions, "
                "stream, max_tokens 1); a server that refuses ids\n"
                "gets text whose length its POST /tokenize confirms, and the probe says so.\n"
                "Memory: the prompts of one request (a few MB at 64k tokens).\n" +
                probes::exitCodeHelp());
    cmd->callback([f, &run] { run = [f] { return runServing(*f); }; });
}

} // namespace kvbe::cli
