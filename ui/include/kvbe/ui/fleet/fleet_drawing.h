// What imported calibration files draw on the charts (chart_catalog.h's ImportDrawing), from the
// files and the scenario's result, and a fit's curves where there is one: the Fleet view draws it
// on every change, `kvbe --import` once on the exported chart.
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/fleet/calibration_importer.h"
#include "kvbe/ui/results/scenario_result.h"

#include <vector>

namespace kvbe {

// A fit's curves: the cost model with the fitted utilisation, the fitted tiers and the overhead
// both paths share, drawn at the scenario's lengths and cached fraction.
struct FleetFitCurves {
    const CostModel& cost;
    const std::vector<TierPath>& tiers;
    double overheadS = 0;
    std::string model; // the model it was fitted against
};

// Each file's measured prefill, py-kvcache v2 load curves and hits on the TTFT chart, and the B*
// and p* each py-kvcache v2 file's curves imply (a file without kv_bytes_per_token takes the
// scenario model's); with a fit, the fitted recompute and hit curves besides.
ImportDrawing fleetDrawing(const std::vector<ImportedCalibration>& files, const ResultPtr& result,
                           const FleetFitCurves* fit = nullptr);

} // namespace kvbe
