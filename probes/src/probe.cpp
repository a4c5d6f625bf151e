// What every probe shares: its catalog entry, failure reporting, the option values of the drive
// and host probes, and block-size formatting.
#include "kvbe/probes/probe.h"

#include "kvbe/base/units.h"
#include "kvbe/probes/stream.h"

#include <charconv>
#include <cmath>
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

Result<std::uint64_t> wholeBytes(const std::string& text, const std::string& flag) {
    auto v = parseBytes(text);
    if (!v) return Error{flag + " " + v.message()};
    if (*v != std::floor(*v) || *v < 1)
        return Error{flag + " " + text + ": expected a whole number of bytes, e.g. 1MiB"};
    return static_cast<std::uint64_t>(*v);
}

Result<std::vector<int>> intList(const std::string& text, const std::string& flag,
                                 const std::string& expected) {
    std::vector<int> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string::npos) comma = text.size();
        const std::string item = text.substr(start, comma - start);
        int v = 0;
        auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (item.empty() || ec != std::errc() || ptr != item.data() + item.size())
            return Error{flag + " '" + item + "': expected " + expected};
        out.push_back(v);
        start = comma + 1;
    }
    return out;
}

ProbeOutcome reportFailure(ProbeSink& sink, ProbeExit exit, const std::string& message) {
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
