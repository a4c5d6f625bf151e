// What the CUDA probes share from elsewhere: reporting a failure and fixed decimals (probe.h),
// the median (kvbe/statistics.h).
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"
#include "kvbe/statistics.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace kvbe::gpu {

using probes::fixedDecimals;
using probes::reportFailure;

using kvbe::median; // kvbe/statistics.h

} // namespace kvbe::gpu
