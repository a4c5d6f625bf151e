// Measurements of one node, from our own calibration files or imported from other tools, and
// the py-kvcache break-even file a serving stack gates loads with. Format: docs/calibration-format.md.
#pragma once

#include "kvbe/model_spec.h"
#include "kvbe/result.h"

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
    double seconds = 0;  // cold TTFT or prefill time
    bool operator==(const PrefillSample&) const = default;
};

struct HitSample {
    double tokens = 0;   // N
    double prefix = 0;   // p, the cached part
    std::string tier;
    double seconds = 0;  // TTFT with the prefix loaded from the tier
    bool operator==(const HitSample&) const = default;
};

struct TransferSample {
    double bytes = 0;
    double seconds = 0;
    bool operator==(const TransferSample&) const = default;
};

struct TierMeasurement {
    std::string name;
    std::vector<TransferSample> reads;   // (bytes, seconds) per load
    std::optional<double> readBps;       // a measured bandwidth without per-size samples (fio)
    std::optional<double> writeBps;
    bool operator==(const TierMeasurement&) const = default;
};

struct FittedTier {
    double bandwidthBps = 0;
    double tFixedS = 0;
    // Bytes moved per useful byte: the probe's bandwidth over the rate the hits saw (≥ 1; 1 when
    // the hits were as fast as the probe, or there was no probe bandwidth to hold them against).
    double amplification = 1;
    bool operator==(const FittedTier&) const = default;
};

struct FittedParameters {
    std::optional<double> utilisation;
    std::optional<double> rampHalfTokens;
    double overheadS = 0;  // scheduling cost both paths share (not part of the cost model)
    std::map<std::string, FittedTier> tiers;
    double rmsRelativeResidual = 0;
    bool operator==(const FittedParameters&) const = default;
};

struct Calibration {
    std::string source;     // file it was read from
    std::string format;     // kvbe, py-kvcache-v1, py-kvcache-v2, pareto-csv, fio, nvbandwidth
    std::string host;
    std::string date;       // ISO 8601
    std::string gpuName;
    std::map<std::string, double> gpuClocksMHz;
    std::string model;      // model id as the file names it
    std::optional<KvDtype> kvDtype;
    std::optional<double> kvBytesPerToken;
    std::vector<PrefillSample> prefill;
    std::vector<HitSample> hits;
    std::vector<TierMeasurement> tiers;
    std::optional<FittedParameters> fitted;
    std::map<std::string, double> breakevenPrefix;  // p* per tier, tokens
    std::optional<double> safetyMarginTokens;       // py-kvcache
    std::vector<std::string> warnings;              // what the reader had to assume or drop

    bool operator==(const Calibration& o) const {
        return host == o.host && date == o.date && gpuName == o.gpuName && gpuClocksMHz == o.gpuClocksMHz &&
               model == o.model && kvDtype == o.kvDtype && kvBytesPerToken == o.kvBytesPerToken &&
               prefill == o.prefill && hits == o.hits && tiers == o.tiers && fitted == o.fitted &&
               breakevenPrefix == o.breakevenPrefix && safetyMarginTokens == o.safetyMarginTokens;
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
std::vector<std::string> mismatchWarnings(const Calibration& c, const ModelSpec& model, KvDtype kvDtype);

// The py-kvcache v1 break-even file.
struct PyKvcacheThresholds {
    std::string modelName;
    KvDtype kvDtype = KvDtype::BF16;
    std::optional<double> ssdTokens;   // none: never pays within the context
    std::optional<double> memTokens;
    double safetyMarginTokens = 0;
};
std::string pyKvcacheV1Json(const PyKvcacheThresholds& t);

} // namespace kvbe
