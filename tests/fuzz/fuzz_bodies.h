// The bodies of the fuzz targets, shared with the regression test that replays every input the
// fuzzers ever failed on (tests/fuzz/regressions/). A violated property aborts.
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/probe/probe_protocol.h"
#include "kvbe/scenario/scenario.h"

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
            if (auto b = cm->breakevenBandwidth(n); b && !(std::isfinite(*b) && *b > 0))
                std::abort();
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
    // What a v2 file's curves imply: B* positive and finite where given, p* a whole block.
    if (kvbe::calibrationFormatOf(c->format) == kvbe::CalibrationFormat::PyKvcacheV2) {
        auto implied = kvbe::pyKvcacheImplied(*c, 131072.0);
        if (!implied) std::abort();
        for (const auto& t : implied->tiers) {
            if (!(t.tFixedS >= 0) || !std::isfinite(t.tFixedS)) std::abort();
            if (t.bandwidthBps && !(*t.bandwidthBps > 0 && std::isfinite(*t.bandwidthBps)))
                std::abort();
            if (!(t.pStarTokens >= 0) || std::fmod(t.pStarTokens, kvbe::kPyKvcacheBlockTokens) != 0)
                std::abort();
            for (const auto& p : t.points)
                if (p.breakevenBps && !(*p.breakevenBps > 0 && std::isfinite(*p.breakevenBps)))
                    std::abort();
        }
    }
    return 0;
}

// The probe-stream reader: bytes arrive in arbitrary chunks (the first input byte picks the chunk
// size); whatever they are, the reader gives events or a sentence, and once it has refused the
// stream, or seen its end, nothing more is accepted silently.
inline int fuzzProbeStream(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const size_t chunk = 1 + data[0] % 64;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
    kvbe::ProbeStreamReader reader;
    for (size_t pos = 0; pos < text.size(); pos += chunk) {
        auto events = reader.feed(text.substr(pos, chunk));
        if (!events) {
            if (events.message().empty()) std::abort();
            return 0;
        }
        for (const auto& e : *events)
            if (e.kind != kvbe::ProbeEvent::Kind::Header && !reader.sawHeader()) std::abort();
    }
    auto end = reader.finish();
    if (!end && end.message().empty()) std::abort();
    if (end && !reader.finished()) std::abort();
    return 0;
}

} // namespace kvbe::fuzz
