// The bodies of the fuzz targets, shared with the regression test that replays every input the
// fuzzers ever failed on (tests/fuzz/regressions/). A violated property aborts.
#pragma once

#include "kvbe/calibration.h"
#include "kvbe/config_reader.h"
#include "kvbe/cost_model.h"
#include "kvbe/scenario.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace kvbe::fuzz {

// The config.json reader: whatever the bytes, a model or a sentence; a model it accepts must
// give finite, non-negative numbers to the cost model.
inline int fuzzConfigReader(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto m = kvbe::parseModelConfig(text, "fuzz/config.json", "fuzz");
    if (!m) {
        if (m.message().empty()) std::abort();
        return 0;
    }
    kvbe::CostInputs in;
    in.model = *m;
    in.peakFlops = 989e12;
    in.utilisation = 0.5;
    for (auto fm : {kvbe::FlopModel::Simple, kvbe::FlopModel::Detailed}) {
        in.flopModel = fm;
        auto cm = kvbe::CostModel::create(in);
        if (!cm) continue;
        const kvbe::TierPath tier{"t", 6e9, 1e-3};
        for (double n : {1.0, 1000.0, 100000.0}) {
            const double kv = cm->kvBytes(n), t = cm->tMiss(n);
            if (!(kv >= 0) || !(t >= 0)) std::abort();
            if (auto b = cm->breakevenBandwidth(n); b && !(std::isfinite(*b) && *b > 0)) std::abort();
            if (auto f = cm->minCachedFraction(tier, n); f && !(*f >= 0 && *f <= 1)) std::abort();
        }
    }
    return 0;
}

// The scenario loader: accepted scenarios survive a save/load round trip unchanged; rejected
// ones say why.
inline int fuzzScenario(const uint8_t* data, size_t size) {
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

// The calibration importers: every format a file can be recognised as. What one accepts must
// save in our format and read back the same.
inline int fuzzCalibration(const uint8_t* data, size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto c = kvbe::parseCalibration(text, "fuzz-calibration");
    if (!c) {
        if (c.message().empty()) std::abort();
        return 0;
    }
    const auto saved = kvbe::calibrationToJson(*c);
    auto back = kvbe::parseCalibration(saved, "fuzz-calibration-roundtrip");
    if (!back || !(*back == *c)) std::abort();
    return 0;
}

} // namespace kvbe::fuzz
