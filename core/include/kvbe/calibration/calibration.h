// Measurements of one node, from our own calibration files or imported from other tools, and
// the py-kvcache break-even file a serving stack gates loads with. Format:
// docs/calibration-format.md.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/fixed_cost.h"
#include "kvbe/model/model_spec.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

inline constexpr int kCalibrationVersion = 1;

struct PrefillSample {
    double tokens = 0;
    double seconds = 0; // cold TTFT or prefill time
    bool operator==(const PrefillSample&) const = default;
};

struct HitSample {
    double tokens = 0; // N
    double prefix = 0; // p, the cached part
    std::string tier;
    double seconds = 0; // TTFT with the prefix loaded from the tier
    bool operator==(const HitSample&) const = default;
};

struct TransferSample {
    double bytes = 0;
    double seconds = 0;
    bool operator==(const TransferSample&) const = default;
};

struct TierMeasurement {
    std::string name;
    std::vector<TransferSample> reads; // (bytes, seconds) per load
    std::optional<double> readBps;     // a measured bandwidth without per-size samples (fio)
    std::optional<double> writeBps;
    bool operator==(const TierMeasurement&) const = default;
};

// A py-kvcache v2 curve: seconds as a function of prefix tokens.
struct CurveKnots {
    double floorS = 0;
    std::vector<std::pair<double, double>> knots; // (tokens, seconds), sorted by tokens
    bool operator==(const CurveKnots&) const = default;
};

// A py-kvcache v2 golden point: the three curves' values at one length, measured.
struct GoldenPoint {
    double tokens = 0;
    double f = 0;    // recompute
    double gSsd = 0; // load from the SSD
    double gMem = 0; // load from host memory
    bool operator==(const GoldenPoint&) const = default;
};

struct FittedTier {
    double bandwidthBps = 0;
    double tFixedS = 0; // the fixed cost per hit of the model fitted (one with `layers` layers)
    // Bytes moved per useful byte: the probe's bandwidth over the rate the hits saw (≥ 1; 1 when
    // the hits were as fast as the probe, or there was no probe bandwidth to hold them against).
    double amplification = 1;
    // The per-layer part of tFixedS and the KV/state layers it was fitted at: on a model with L
    // such layers a hit costs t0() + L · tLayerS. tLayerS 0: the same fixed cost on every model.
    double tLayerS = 0;
    int layers = 0;
    double t0() const { return std::max(0.0, tFixedS - layers * tLayerS); } // rounding aside
    bool operator==(const FittedTier&) const = default;
};

struct FittedParameters {
    std::optional<double> utilisation;
    std::optional<double> rampHalfTokens;
    double overheadS = 0; // scheduling cost both paths share (not part of the cost model)
    std::map<std::string, FittedTier> tiers;
    double rmsRelativeResidual = 0;
    std::vector<FittedModel> fittedOn; // the models the fit was made on
    bool operator==(const FittedParameters&) const = default;
};

struct Calibration {
    std::string source; // file it was read from
    std::string format; // kvbe, py-kvcache-v1, py-kvcache-v2, pareto-csv, fio, nvbandwidth
    std::string host;
    std::string date; // ISO 8601
    std::string gpuName;
    std::map<std::string, double> gpuClocksMHz;
    std::string model;              // model id as the file names it
    std::optional<KvDtype> kvDtype; // none: not given, or "auto" for a model kvbe does not know
    std::string kvDtypeText; // as the file wrote it ("auto", "fp8_e4m3", ...); "" when absent
    std::optional<double> kvBytesPerToken;
    std::string ssdModel;                          // py-kvcache v2 ssd_model
    std::map<std::string, CurveKnots> curves;      // py-kvcache v2: f, g_ssd, g_mem
    std::vector<GoldenPoint> golden;               // py-kvcache v2
    std::map<std::string, std::string> provenance; // py-kvcache v2, free-form; values as text
    std::vector<PrefillSample> prefill;
    std::vector<HitSample> hits;
    std::vector<TierMeasurement> tiers;
    std::optional<FittedParameters> fitted;
    std::map<std::string, double> breakevenPrefix; // p* per tier, tokens
    std::optional<double> safetyMarginTokens;      // py-kvcache
    std::vector<std::string> warnings;             // what the reader had to assume or drop

    bool operator==(const Calibration& o) const {
        return host == o.host && date == o.date && gpuName == o.gpuName &&
               gpuClocksMHz == o.gpuClocksMHz && model == o.model && kvDtype == o.kvDtype &&
               kvBytesPerToken == o.kvBytesPerToken && prefill == o.prefill && hits == o.hits &&
               tiers == o.tiers && fitted == o.fitted && breakevenPrefix == o.breakevenPrefix &&
               safetyMarginTokens == o.safetyMarginTokens && curves == o.curves &&
               golden == o.golden;
    }
};

// Reads any supported format; the format is recognised from the content, not the name.
Result<Calibration> parseCalibration(std::string_view text, const std::string& source);
Result<Calibration> readCalibration(const std::filesystem::path& path);
// Files, and every file directly inside folders, that parse; the rest give their errors.
struct CalibrationSet {
    std::vector<Calibration> calibrations;
    std::vector<std::string> errors;
};
CalibrationSet readCalibrations(const std::vector<std::filesystem::path>& paths);

std::string calibrationToJson(const Calibration& c);
Status saveCalibration(const std::filesystem::path& path, const Calibration& c);

// Warnings when a calibration was made for another model or KV dtype than the scenario's.
std::vector<std::string> mismatchWarnings(const Calibration& c, const ModelSpec& model,
                                          KvDtype kvDtype);

// py-kvcache's gate for a calibration read from its files: the thresholds with the safety margin
// folded in where a gate is on (threshold + margin if the threshold is non-zero, else 0 = off).
// "ssd" and "mem"; a threshold the file leaves out is 0.
std::map<std::string, double> pyKvcacheGate(const Calibration& c);

// py-kvcache's block size and its rule for a threshold from curves: the smallest block-aligned
// length n from which f(m) > g(m) holds for every measured m >= n (the knots of both curves,
// each interpolated linearly at the other's knots, within the range both cover). 0 where f > g
// everywhere (gate off); one block past the last knot where f <= g there.
inline constexpr double kPyKvcacheBlockTokens = 16;
double pyKvcacheRuleThreshold(const CurveKnots& f, const CurveKnots& g);
// A curve's value at a length, linear between knots and held flat past either end (as the rule
// reads the curves); the floor where there are no knots.
double interpolateKnots(const CurveKnots& c, double tokens);

// The py-kvcache v1 break-even file.
struct PyKvcacheThresholds {
    std::string modelName;
    std::string kvDtype = "auto"; // vLLM's kv_cache_dtype string, as the serving stack compares it
    std::optional<double> ssdTokens; // none: never pays within the context
    std::optional<double> memTokens;
    double safetyMarginTokens = 0;
    // A tier that never pays gets a threshold one block past this, so the gate never loads from it
    // (py-kvcache reads a missing or 0 threshold as "gate off": always load).
    double contextTokens = 0;
    bool writeSsd = true; // false: leave the field out (gate off), where no tier stands for it
    bool writeMem = true;
};
std::string pyKvcacheV1Json(const PyKvcacheThresholds& t);
// The threshold written for a tier: whole tokens, rounded up; past the context where it never pays.
long long pyKvcacheThresholdTokens(std::optional<double> tokens, double contextTokens);

// The py-kvcache v2 curves file: v1's fields plus the curves, golden points and provenance.
struct PyKvcacheV2 {
    PyKvcacheThresholds thresholds; // computed from the curves by pyKvcacheRuleThreshold
    double kvBytesPerToken = 0;
    std::string gpuModel, ssdModel;
    CurveKnots f, gSsd, gMem;
    std::vector<GoldenPoint> golden;
    std::map<std::string, std::string> provenance;
};
std::string pyKvcacheV2Json(const PyKvcacheV2& v);

// vLLM's kv_cache_dtype string for a KV dtype: "auto" where it is the model's own dtype (when
// that is known); none where vLLM has no such KV cache dtype (int8, fp32 other than the model's).
std::optional<std::string> vllmKvCacheDtype(KvDtype kv, std::optional<KvDtype> modelDtype);

} // namespace kvbe
