// The pin comparison (pin_comparison.h) as CSV.
#pragma once

#include "kvbe/ui/compare/pin_comparison.h"

namespace kvbe {

// One header row (units in the names), one row per scenario; raw numbers in the C locale, Δ
// columns beside each value, "never" for a p* that never pays off, empty where there is no
// value (a missing tier, a length past the context).
QString pinComparisonCsv(const PinComparison& t);

} // namespace kvbe
