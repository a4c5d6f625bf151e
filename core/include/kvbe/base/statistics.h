// Small statistics over samples that the probes and the fits share.
#pragma once

#include <vector>

namespace kvbe {

// The median: the middle sample, or the mean of the two middle ones; 0 for no samples.
double median(std::vector<double> samples);

} // namespace kvbe
