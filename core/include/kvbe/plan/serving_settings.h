// The serving stack's settings for a planned configuration (docs/serving-settings.md): vLLM's
// offload flags, an LMCache configuration file and py-kvcache's thresholds file. Each key was
// checked against that project's source; the page records which version.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <string_view>

namespace kvbe {

enum class ServingStack { Vllm, LMCache, PyKvcache };
std::optional<ServingStack> parseServingStack(std::string_view s); // vllm, lmcache, pykvcache

// The settings for point p of a plan for scenario e on a trace with `distinctBlocks` distinct
// blocks of `blockTokens` tokens. `servedModel`: the name the serving stack serves the model
// under (py-kvcache refuses a thresholds file whose model_name differs); "" keeps the
// scenario's model id.
Result<std::string> servingSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                    const Evaluation& e, const Presets& presets,
                                    std::uint32_t blockTokens, std::uint64_t distinctBlocks,
                                    const std::string& servedModel = "");

} // namespace kvbe
