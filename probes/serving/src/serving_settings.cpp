// probe serving's settings from its flags: the sweep (lengths, fractions, tiers, repeats), the
// request policy (timeout, retries, warm-up), the outputs, and the fit's model geometry and GPU
// peak, taken from the scenario the scenario flags describe, with --config for the geometry.
#include "kvbe/serving/serving_probe.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/scenario/scenario_flags.h"

#include <algorithm>
#include <cstdlib>

namespace kvbe::serving {
namespace {

// Each comma-separated item of a flag's value, in order.
template <class Fn> Status forEachItem(const std::string& text, Fn fn) {
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        if (auto st = fn(text.substr(start, comma - start)); !st) return st;
        start = comma + 1;
    }
    return Ok{};
}

// A whole number within [low, high]; the error names the flag and the range.
Result<int> countIn(const ProbeArgs& a, std::string_view flag, int low, int high,
                    const std::string& unit = "") {
    auto v = a.count(flag);
    if (!v) return v.error();
    if (*v < low || *v > high)
        return Error{std::string(flag) + " " + std::to_string(*v) + ": expected " +
                     std::to_string(low) + " to " + std::to_string(high) + unit};
    return *v;
}

Status readSweep(const ProbeArgs& a, ServingSettings& s) {
    s.endpoint = a.text("--endpoint");
    if (s.endpoint.rfind("http://", 0) != 0 && s.endpoint.rfind("https://", 0) != 0)
        return Error{"--endpoint " + s.endpoint +
                     ": expected an http:// or https:// base URL, e.g. http://127.0.0.1:8000/v1"};
    s.model = a.text("--model");
    auto lengths = parseTokenList(a.text("--lengths"));
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
    auto fractions = parseFractionList(a.text("--fractions"), false);
    if (!fractions) return Error{"--fractions " + fractions.message()};
    s.fractions = *fractions;
    s.tierGpu = s.tierOffload = false;
    auto tiers = forEachItem(a.text("--tiers"), [&s](const std::string& item) -> Status {
        if (item == "gpu")
            s.tierGpu = true;
        else if (item == "offload")
            s.tierOffload = true;
        else
            return Error{"--tiers '" + item + "': expected gpu, offload or both (gpu,offload)"};
        return Ok{};
    });
    if (!tiers) return tiers;
    auto repeats = countIn(a, "--repeats", 1, 100);
    if (!repeats) return repeats.error();
    s.repeats = *repeats;
    auto concurrency = a.count("--concurrency");
    if (!concurrency) return concurrency.error();
    if (*concurrency != 1)
        return Error{"--concurrency " + std::to_string(*concurrency) +
                     ": only 1 is measured (queueing is not part of the cost model, and counters "
                     "cannot be told apart)"};
    return Ok{};
}

Status readRequests(const ProbeArgs& a, ServingSettings& s) {
    s.apiKeyEnv = a.text("--api-key-env");
    const std::string timeoutText = a.text("--timeout");
    auto timeout = parseSeconds(timeoutText);
    if (!timeout || *timeout <= 0)
        return Error{"--timeout " +
                     (timeout ? timeoutText + ": expected a positive time" : timeout.message())};
    s.timeoutS = *timeout;
    const std::string waitText = a.text("--retry-wait");
    auto wait = parseSeconds(waitText);
    if (!wait || *wait < 0)
        return Error{"--retry-wait " +
                     (wait ? waitText + ": expected a time of 0 or more" : wait.message())};
    s.retryWaitS = *wait;
    const std::string pauseText = a.text("--pause");
    auto pause = parseSecondsOrZero(pauseText); // 0: no pause
    if (!pause || *pause > 60)
        return Error{"--pause " +
                     (pause ? pauseText + ": expected a time from 0 to 60s" : pause.message())};
    s.pauseS = *pause;
    auto tries = countIn(a, "--tries", 1, 20);
    if (!tries) return tries.error();
    s.maxTries = *tries;
    auto block = countIn(a, "--block-size", 1, 4096, " tokens");
    if (!block) return block.error();
    s.blockSize = *block;
    auto warmup = countIn(a, "--warmup", 0, 100);
    if (!warmup) return warmup.error();
    s.warmup = *warmup;
    s.outDir = a.text("--out");
    s.offloadTier = a.text("--offload-tier");
    s.reset = a.text("--reset");
    s.fitOnFastest = a.text("--fit-on") == "fastest";
    s.allowUnverified = a.on("--allow-unverified-hits");
    const std::string driftText = a.text("--drift-limit");
    char* end = nullptr;
    const double drift = std::strtod(driftText.c_str(), &end);
    if (driftText.empty() || end != driftText.c_str() + driftText.size() || !(drift > 0) ||
        drift > 10)
        return Error{"--drift-limit " + driftText +
                     ": expected a fraction above 0, e.g. 0.10 for 10 %"};
    s.driftLimit = drift;
    return Ok{};
}

// The fit's model geometry, GPU peak and nominal tiers: the scenario the scenario flags describe
// (kvbe/scenario/scenario_flags.h, read as every command reads them), its model --config, else
// the served --model.
Status readFit(const ProbeArgs& a, ServingSettings& s) {
    ScenarioFlags flags;
    for (const auto& spec : scenarioFlagSpecs()) {
        if (spec.flag == "--model") continue;
        if (spec.text) flags.*spec.text = a.text(spec.flag);
        if (spec.on) flags.*spec.on = a.on(spec.flag);
        if (spec.list && a.given(spec.flag)) {
            auto items = forEachItem(a.text(spec.flag), [&](const std::string& item) -> Status {
                (flags.*spec.list).push_back(item);
                return Ok{};
            });
            if (!items) return items;
        }
    }
    const std::string config = a.text("--config");
    flags.model = config.empty() ? s.model : config;
    auto scenario = scenarioFromFlags(flags);
    if (!scenario) return scenario.error();
    auto eval = evaluate(scenario->scenario, scenario->presets);
    if (!eval)
        return Error{
            scenario->where + eval.message() +
            (config.empty()
                 ? " (the model geometry comes from --model; give --config with a preset id, "
                   "config.json or folder when the served name is not one)"
                 : "")};
    s.costInputs = eval->cost.inputs();
    s.nominalTiers = eval->tiers;
    s.modelRef = eval->model.id;
    // The calibration names the GPU only where the user gave one: the default scenario's GPU
    // is the model's assumption, not the machine the sweep ran against.
    s.gpuGiven = a.given("--gpu") || a.given("--scenario");
    s.gpuName = s.gpuGiven && eval->gpu ? eval->gpu->name : std::string();
    return Ok{};
}

} // namespace

Result<probes::ProbeOptions> ServingProbe::configure(const ProbeArgs& a) {
    ServingSettings s;
    for (auto read : {readSweep, readRequests, readFit})
        if (auto st = read(a, s); !st) return st.error();
    m_s = std::move(s);
    return probes::ProbeOptions{};
}

} // namespace kvbe::serving
