// What every probe shares: its catalog entry, failure reporting and block-size formatting.
#include "kvbe/probes/probe.h"

#include "kvbe/probes/stream.h"

#include <cstdio>
#include <stdexcept>

namespace kvbe::probes {

const ProbeDescription& Probe::catalogEntry() const {
    const ProbeDescription* d = findProbe(key());
    // A probe missing from the catalog is a programming error the CLI tests catch.
    if (!d) throw std::logic_error("probe " + key() + " is not in the probe catalog");
    return *d;
}

std::string Probe::description() const {
    return std::string(catalogEntry().description);
}

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

} // namespace kvbe::probes
