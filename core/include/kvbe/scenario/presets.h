// The presets shipped in resources/ (compiled into the binary): models, GPUs, tiers, and the
// default scenario. Loaded once by whoever needs them and passed around as a value.
#pragma once

#include "kvbe/base/embedded.h"
#include "kvbe/base/json_fields.h"
#include "kvbe/base/result.h"
#include "kvbe/model/model_spec.h"
#include "kvbe/scenario/hardware.h"

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kvbe {

struct ModelPreset {
    std::string id;   // "meta-llama/Llama-3.2-3B"
    std::string file; // "models/meta-llama__Llama-3.2-3B.json"
    ModelSpec spec;
};

class Presets {
  public:
    // Parses the embedded resources. Fails only if a shipped file is broken (a build error).
    static Result<Presets> loadBuiltin();

    const std::vector<ModelPreset>& models() const { return m_models; }
    const std::map<std::string, GpuSpec>& gpus() const { return m_gpus; }
    const std::map<std::string, TierSpec>& tiers() const { return m_tiers; }
    std::string_view defaultScenarioText() const { return m_defaultScenario; }
    // The other scenarios of resources/scenarios/ and the references of resources/published/,
    // as (path relative to resources/, text), in path order.
    const std::vector<std::pair<std::string, std::string>>& scenarioTexts() const {
        return m_scenarios;
    }
    const std::vector<std::pair<std::string, std::string>>& publishedTexts() const {
        return m_published;
    }

    // Case-insensitive id match; also accepts "org__name" and the name without the org.
    const ModelPreset* findModel(std::string_view id) const;
    const GpuSpec* findGpu(std::string_view key) const;
    const TierSpec* findTier(std::string_view key) const;

    std::string gpuKeys() const; // "a100-80gb-sxm, b200, ..." for messages
    std::string tierKeys() const;
    std::string modelIds() const;

  private:
    std::vector<ModelPreset> m_models;
    std::map<std::string, GpuSpec> m_gpus;
    std::map<std::string, TierSpec> m_tiers;
    std::string m_defaultScenario;
    std::vector<std::pair<std::string, std::string>> m_scenarios;
    std::vector<std::pair<std::string, std::string>> m_published;
};

// Reads GPU and tier preset files (the format of resources/gpus.json and tiers.json).
Result<std::map<std::string, GpuSpec>> parseGpuPresets(std::string_view json,
                                                       const std::string& source);
Result<std::map<std::string, TierSpec>> parseTierPresets(std::string_view json,
                                                         const std::string& source);

// The drive fields of a tier preset or a scenario tier at obj (drive_model, drive_writes_per_day,
// warranty_years, drive_capacity_TB; each optional); `at` names obj in messages.
DriveRating readDriveRating(const FieldReader& r, const nlohmann::json& obj, const std::string& at);

// Resolves what a user typed after --model: an existing file or folder, a preset id, or an id
// in the local Hugging Face cache, in that order.
Result<ModelSpec> resolveModel(const std::string& ref, const Presets& presets);

} // namespace kvbe
