// The router's settings for a fleet plan's recommended configuration (docs/serving-settings.md,
// "Routers"): SGLang's router flags, llm-d's EPP configuration, Dynamo's frontend flags and
// vLLM production-stack's router flags. Internal to kvbe_core: servingSettings calls it.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/plan/serving_settings.h"

#include <string>

namespace kvbe::plan_detail {

// The settings of `stack`'s router (one of the router stacks) for point p of the fleet plan s.
// Fails with a sentence where the plan is not a fleet, or where the stack ships no router that
// decides as the point's router does (naming the --emit that does, where one does).
// `modelName`: the served model's name, for llm-d's tokenizer.
Result<std::string> routerSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                   const std::string& modelName);

} // namespace kvbe::plan_detail
