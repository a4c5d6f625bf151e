// The `kvbe-cli calc` report, as JSON (the scripting contract), CSV and a table for people.
#pragma once

#include "kvbe/base/csv.h" // csvField, for the CSV of the calc table
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvbe {

struct CalcRow {
    double tokens = 0;
    bool pastContext = false; // longer than the model's context: an extrapolation, flagged
    double kvBytes = 0;
    double tRecompute = 0;
    std::optional<double> breakevenBandwidth;
    struct PerTier {
        double tHit = 0;
        double speedup = 0;
        std::optional<double> minFraction;
        std::optional<double> breakevenBandwidth; // with the tier's t_fixed
    };
    std::vector<PerTier> tiers;
};

struct CalcReport {
    const Evaluation* eval = nullptr;
    double fraction = 0;
    std::vector<std::optional<double>> breakevenPrefix; // per tier
    std::vector<CalcRow> rows;
};

CalcReport makeCalcReport(const Evaluation& eval, const std::vector<double>& lengths,
                          double fraction);

nlohmann::json calcJson(const CalcReport& r);
std::string calcCsv(const CalcReport& r);
std::string calcTable(const CalcReport& r);

// Listings of the presets.
nlohmann::json modelsJson(const Presets& p);
std::string modelsTable(const Presets& p);
nlohmann::json gpusJson(const Presets& p);
std::string gpusTable(const Presets& p);
nlohmann::json tiersJson(const Presets& p);
std::string tiersTable(const Presets& p);

} // namespace kvbe
