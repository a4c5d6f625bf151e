// probe replay's settings from its flags (kvbe/serving/replay_probe.h); each bad value a sentence
// naming its flag and what was expected.
#include "kvbe/serving/replay_probe.h"

#include "kvbe/base/units.h"

#include <cstdlib>

namespace kvbe::serving {

Result<probes::ProbeOptions> ReplayProbe::configure(const ProbeArgs& a) {
    ReplaySettings s;
    s.trace = a.text("--trace");
    std::string list = a.text("--endpoint");
    for (std::size_t start = 0; start <= list.size();) {
        std::size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        const std::string e = list.substr(start, comma - start);
        if (e.rfind("http://", 0) != 0 && e.rfind("https://", 0) != 0)
            return Error{
                "--endpoint " + e +
                ": expected an http:// or https:// base URL, e.g. http://127.0.0.1:8000/v1"};
        s.endpoints.push_back(e);
        start = comma + 1;
    }
    s.model = a.text("--model");
    s.outDir = a.text("--out");
    s.routerText = a.text("--router");
    auto router = parseRouter(s.routerText);
    if (!router) return Error{"--router " + router.message()};
    s.router = *router;
    auto scale = a.number("--rate-scale");
    if (!scale) return scale.error();
    if (!(*scale > 0))
        return Error{"--rate-scale " + a.text("--rate-scale") + ": expected above 0"};
    s.rateScale = *scale;
    if (a.given("--limit")) {
        auto v = a.count("--limit");
        if (!v) return v.error();
        if (*v < 1) return Error{"--limit " + a.text("--limit") + ": expected at least 1 request"};
        s.limit = static_cast<std::size_t>(*v);
    }
    if (a.given("--duration-cap")) {
        auto v = parseSeconds(a.text("--duration-cap"));
        if (!v || !(*v > 0))
            return Error{"--duration-cap " + a.text("--duration-cap") +
                         ": expected a time above 0, e.g. 10min"};
        s.durationCapS = *v;
    }
    if (a.given("--block-tokens")) {
        auto v = a.count("--block-tokens");
        if (!v) return v.error();
        if (*v < 1 || *v > (1 << 20))
            return Error{"--block-tokens " + a.text("--block-tokens") + ": expected 1 to 1048576"};
        s.blockTokens = static_cast<std::uint32_t>(*v);
    }
    const std::string out = a.text("--output-tokens");
    if (out == "trace") {
        s.outputTokens = 0;
    } else {
        auto v = a.count("--output-tokens");
        if (!v || *v < 1)
            return Error{"--output-tokens " + out +
                         ": expected a number of tokens (1 or more) or "
                         "trace"};
        s.outputTokens = *v;
    }
    auto vocab = a.count("--vocab");
    if (!vocab) return vocab.error();
    if (*vocab < 1000)
        return Error{"--vocab " + a.text("--vocab") +
                     ": expected the model's vocabulary size, "
                     "1000 or more"};
    s.vocab = *vocab;
    auto inFlight = a.count("--max-in-flight");
    if (!inFlight) return inFlight.error();
    if (*inFlight < 1 || *inFlight > 4096)
        return Error{"--max-in-flight " + a.text("--max-in-flight") + ": expected 1 to 4096"};
    s.maxInFlight = *inFlight;
    s.apiKeyEnv = a.text("--api-key-env");
    if (!s.apiKeyEnv.empty() && !std::getenv(s.apiKeyEnv.c_str()))
        return Error{"--api-key-env " + s.apiKeyEnv + ": the variable is not set"};
    auto timeout = parseSeconds(a.text("--timeout"));
    if (!timeout || !(*timeout > 0))
        return Error{"--timeout " + a.text("--timeout") + ": expected a time above 0, e.g. 300s"};
    s.timeoutS = *timeout;
    m_s = std::move(s);
    return probes::ProbeOptions{};
}

} // namespace kvbe::serving
