// The serving stack's settings for a planned configuration (docs/serving-settings.md): vLLM's
// offload flags, an LMCache configuration file and py-kvcache's thresholds file; for a fleet,
// its router's: SGLang's router flags, llm-d's EPP configuration, Dynamo's frontend flags and
// vLLM production-stack's router flags. Each key was checked against that project's source; the
// page records which version.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

enum class ServingStack { Vllm, LMCache, PyKvcache, Sglang, LlmD, Dynamo, ProductionStack };
// vllm, lmcache, pykvcache; the routers' sglang, llm-d, dynamo, production-stack.
std::optional<ServingStack> parseServingStack(std::string_view s);
// Every name parseServingStack takes, in the order --emit's help lists them.
const std::vector<std::string>& servingStackNames();

// The settings for point p of a plan for scenario e on a trace with `distinctBlocks` distinct
// blocks of `blockTokens` tokens. `servedModel`: the name the serving stack serves the model
// under (py-kvcache refuses a thresholds file whose model_name differs, llm-d's tokenizer loads
// it); "" keeps the scenario's model id. A router's settings need a fleet plan (s.base.isFleet())
// and a router of that stack's; otherwise they fail with a sentence naming what would do.
Result<std::string> servingSettings(ServingStack stack, const PlanPoint& p, const PlanSetup& s,
                                    const Evaluation& e, const Presets& presets,
                                    std::uint32_t blockTokens, std::uint64_t distinctBlocks,
                                    const std::string& servedModel = "");

} // namespace kvbe
