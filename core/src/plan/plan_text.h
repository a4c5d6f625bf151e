// The plan's words and numbers: money, sizes, and the sentences that say why a configuration was
// recommended or which limit none could meet. Internal to kvbe_core.
#pragma once

#include "kvbe/plan/plan.h"

#include <string>
#include <vector>

namespace kvbe::plan_detail {

std::string usd(double v);     // "$12,345", "-$1,200"
std::string gib(double bytes); // "512 GiB", "2 TiB"

// Why the recommended point was chosen over its neighbours (`near`: their indices).
std::string whySentence(const PlanSetup& s, const PlanResult& r,
                        const std::vector<std::size_t>& near);
// When no point meets the limits: for each limit, the nearest any point within the other limits
// comes to it.
std::string unmetSentence(const PlanSetup& s, const PlanResult& r);

} // namespace kvbe::plan_detail
