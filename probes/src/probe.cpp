// The probe registry and block-size formatting.
#include "kvbe/probes/probe.h"

#include "kvbe/probes/stream.h"

#include "kvbe/probes/memcpy_probe.h"
#include "kvbe/probes/nvme_probe.h"

#include <cstdio>

namespace kvbe::probes {

ProbeOutcome reportFailure(ProbeSink& sink, ExitCode exit, const std::string& message) {
    sink.error(message);
    return {exit, message};
}

std::string fixedDecimals(double v, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

std::string formatBlock(std::uint64_t bytes) {
    struct Unit {
        std::uint64_t size;
        const char* name;
    };
    for (Unit u :
         {Unit{kGiB * 1024, "TiB"}, Unit{kGiB, "GiB"}, Unit{kMiB, "MiB"}, Unit{kKiB, "KiB"}}) {
        if (bytes < u.size) continue;
        char text[64];
        if (bytes % u.size == 0)
            std::snprintf(text, sizeof text, "%llu %s",
                          static_cast<unsigned long long>(bytes / u.size), u.name);
        else
            std::snprintf(text, sizeof text, "%.3g %s",
                          static_cast<double>(bytes) / static_cast<double>(u.size), u.name);
        return text;
    }
    return std::to_string(bytes) + " B";
}

std::vector<std::unique_ptr<Probe>> makeProbes() {
    std::vector<std::unique_ptr<Probe>> probes;
    probes.push_back(std::make_unique<NvmeProbe>(false));
    probes.push_back(std::make_unique<NvmeProbe>(true));
    probes.push_back(std::make_unique<MemcpyProbe>());
    return probes;
}

std::unique_ptr<Probe> makeProbe(std::string_view key) {
    for (auto& p : makeProbes())
        if (p->key() == key) return std::move(p);
    return nullptr;
}

} // namespace kvbe::probes
