// libFuzzer target: the config.json reader. Whatever the bytes, the reader returns a model or a
// sentence; a model it accepts must give finite, non-negative numbers to the cost model.
#include "kvbe/config_reader.h"
#include "kvbe/cost_model.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
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
