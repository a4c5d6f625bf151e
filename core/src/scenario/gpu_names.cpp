#include "kvbe/scenario/gpu_names.h"

#include "kvbe/base/embedded.h"
#include "kvbe/base/json_fields.h"
#include "kvbe/base/json_text.h"
#include "kvbe/base/text.h"

#include <sstream>
#include <tuple>

namespace kvbe {
using nlohmann::json;

Result<std::vector<GpuDeviceName>> parseGpuDeviceNames(std::string_view text,
                                                       const std::string& source) {
    auto j = parseJsonText(text, source);
    if (!j) return j.error();
    try {
        const FieldReader r(*j, source, FieldNaming::Bare);
        if (!j->is_object() || !j->contains("gpus") || !(*j)["gpus"].is_object())
            r.failWith("expected an object with a \"gpus\" object");
        const std::string expected = "words of the device's name, e.g. \"h100 nvl\"";
        std::vector<GpuDeviceName> out;
        for (const auto& [key, g] : (*j)["gpus"].items()) {
            if (!g.is_object() || !g.contains("device_names")) continue;
            const std::string at = "gpus." + key + ".device_names";
            const json& names = r.array(g, "device_names", at);
            for (std::size_t i = 0; i < names.size(); ++i) {
                const std::string field = at + "[" + std::to_string(i) + "]";
                if (!names[i].is_string()) r.fail(field, expected, &names[i]);
                GpuDeviceName n{key, {}};
                std::istringstream words(lower(names[i].get<std::string>()));
                for (std::string w; words >> w;)
                    n.words.push_back(w);
                if (n.words.empty()) r.fail(field, expected, &names[i]);
                out.push_back(std::move(n));
            }
        }
        return out;
    } catch (const FieldError& e) {
        return Error{e.message};
    }
}

const std::vector<GpuDeviceName>& builtinGpuDeviceNames() {
    // A broken shipped file fails Presets::loadBuiltin, which reads the same text; here it
    // leaves no device matched.
    static const std::vector<GpuDeviceName> names = [] {
        const auto text = embeddedText("gpus.json");
        if (!text) return std::vector<GpuDeviceName>{};
        auto parsed = parseGpuDeviceNames(*text, "resources/gpus.json");
        return parsed ? *parsed : std::vector<GpuDeviceName>{};
    }();
    return names;
}

std::optional<std::string> matchGpuPreset(std::string_view deviceName,
                                          const std::vector<GpuDeviceName>& names) {
    const std::string device = lower(deviceName);
    const GpuDeviceName* best = nullptr;
    const auto rank = [](const GpuDeviceName& n) {
        std::size_t letters = 0;
        for (const auto& w : n.words)
            letters += w.size();
        return std::make_tuple(n.words.size(), letters);
    };
    for (const auto& n : names) {
        bool all = true;
        for (const auto& w : n.words)
            all = all && device.find(w) != std::string::npos;
        // Strictly better only: among equals the first, in preset-key order, stays.
        if (all && (!best || rank(n) > rank(*best))) best = &n;
    }
    if (!best) return std::nullopt;
    return best->preset;
}

} // namespace kvbe
