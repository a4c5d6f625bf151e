// libFuzzer target: the scenario loader. Accepted scenarios must survive a save/load round trip
// unchanged; rejected ones must say why.
#include "kvbe/scenario.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const kvbe::Presets presets = [] {
        auto p = kvbe::Presets::loadBuiltin();
        if (!p) std::abort();
        return *p;
    }();
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto s = kvbe::scenarioFromJson(text, "fuzz.kvbe.json", presets);
    if (!s) {
        if (s.message().empty()) std::abort();
        return 0;
    }
    const auto saved = kvbe::scenarioToJson(*s);
    auto back = kvbe::scenarioFromJson(saved, "fuzz-roundtrip.kvbe.json", presets);
    if (!back || !(*back == *s)) std::abort();
    // Evaluate only models that are presets: a fuzzed path could name any file on the machine.
    if (presets.findModel(s->model)) {
        auto e = kvbe::evaluate(*s, presets);
        (void)e;
    }
    return 0;
}
