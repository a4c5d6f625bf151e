// What the serving sweep measured, and what becomes of it: the stream's points, the fit, the
// tables for people, and the four files (pareto-measure CSV, calibration, py-kvcache v1 and v2).
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"
#include "kvbe/serving/serving_probe.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kvbe::serving {

struct MeasuredCell {
    std::int64_t tokens = 0;
    double fraction = 0;
    std::int64_t prefix = 0;     // block-aligned prefix asked for
    std::string tier;            // "" for a cold prompt
    std::vector<double> ttft;    // accepted samples, seconds
    std::vector<double> counted; // hit tokens the server counted, per accepted sample
    int queries = 0, rejected = 0;
    std::string rejectReason;
    std::vector<double> unverifiedTtft; // hits nothing verified: reported, never fitted
    bool usedUnverified = false;        // --allow-unverified-hits put unverified hits in ttft
    std::vector<double> restoreBytes, restoreMs; // llama.cpp slot restores, as it reports them
    std::vector<double> restoreWallS;            // the same restores on the client's clock
};

struct SweepData {
    const ServingSettings* settings = nullptr;
    std::vector<MeasuredCell> cells;
    std::map<std::int64_t, std::string> skippedLengths;
    double driftRelative = 0;
    // Past --drift-limit and the rank test's p under 1 % (serving_probe.cpp, checkDrift).
    bool drifted = false;
    double driftP = 1;
    double referenceSpread = 0; // (p90 − p10) / median of the reference point's samples
    // The per-request floor: TTFTs of one-block cold prompts, interleaved through the run; what
    // every request pays, cold or hit, before the model's compute.
    std::vector<double> floorSamples;
    std::int64_t floorTokens = 0;
    int referenceSamples = 0;
    double referenceTokens = 0;
    int retries = 0;
    int resetRetries = 0; // samples measured again, or resets asked again, after one did not take
    std::string resetMethod;
    std::string engine;                    // "llama.cpp", "vLLM", "SGLang", "" when not known
    std::vector<std::string> offloadTiers; // measured, in order
    std::vector<std::string> verifiedBy;   // what verified the accepted hits
    std::vector<std::string> notes;
};

// Points, fit, tables, files and the result line; the outcome of the whole probe.
probes::ProbeOutcome finishSweep(const SweepData& data, probes::ProbeSink& sink);

} // namespace kvbe::serving
