#include "kvbe/trace/trace_sample.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace kvbe {

namespace {

// splitmix64's finaliser: a well-mixed 64-bit hash of the subtree's id and the salt.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

bool kept(std::uint64_t id, std::uint64_t salt, double rate) {
    if (rate >= 1) return true;
    const double u = static_cast<double>(mix(id ^ mix(salt)) >> 11) * 0x1.0p-53;
    return u < rate;
}

} // namespace

std::uint64_t defaultTrunkMinRequests(std::size_t requests) {
    return std::max<std::uint64_t>(64, requests / 1000);
}

double TraceSample::capacity(double bytes, double blockBytes) const {
    if (!std::isfinite(bytes)) return bytes;
    const double trunk = static_cast<double>(trunkBlocks) * blockBytes;
    return rate * bytes + (1 - rate) * std::min(bytes, trunk);
}

TraceSample sampleTrace(const Trace& t, double rate, std::uint64_t salt,
                        std::uint64_t trunkMinRequests) {
    TraceSample s;
    s.rate = std::clamp(rate, 0.0, 1.0);
    s.salt = salt;
    s.trunkMinRequests = trunkMinRequests ? trunkMinRequests : defaultTrunkMinRequests(t.size());
    // Requests per block: a request holds a block once (prefix ids are distinct along a prompt).
    std::vector<std::uint32_t> uses(t.distinctBlocks, 0);
    for (const std::uint32_t b : t.blocks)
        if (uses[b] < UINT32_MAX) ++uses[b];
    for (const auto u : uses)
        if (u >= s.trunkMinRequests) ++s.trunkBlocks;

    Trace& out = s.trace;
    out.summary = t.summary;
    std::vector<std::uint32_t> renamed(t.distinctBlocks, UINT32_MAX);
    std::vector<std::uint8_t> rootSeen(t.distinctBlocks, 0);
    out.blockOffset.push_back(0);
    for (std::size_t i = 0; i < t.size(); ++i) {
        const auto blocks = t.blocksOf(i);
        // The subtree: the first block outside the trunk. Its id space is the blocks'; a
        // request of its own is numbered past them.
        std::uint64_t root = t.distinctBlocks + static_cast<std::uint64_t>(i);
        for (const std::uint32_t b : blocks)
            if (uses[b] < s.trunkMinRequests) {
                root = b;
                break;
            }
        const bool own = root >= t.distinctBlocks;
        if (own || !rootSeen[root]) {
            ++s.subtrees;
            if (!own) rootSeen[root] = 1;
        }
        if (!kept(root, salt, s.rate)) continue;
        if (own || rootSeen[root] == 1) {
            ++s.subtreesKept;
            if (!own) rootSeen[root] = 2;
        }
        out.arrivalS.push_back(t.arrivalS[i]);
        out.inputTokens.push_back(t.inputTokens[i]);
        out.outputTokens.push_back(t.outputTokens[i]);
        for (const std::uint32_t b : blocks) {
            if (renamed[b] == UINT32_MAX) renamed[b] = out.distinctBlocks++;
            out.blocks.push_back(renamed[b]);
        }
        out.blockOffset.push_back(out.blocks.size());
    }
    out.summary.requests = out.size();
    return s;
}

SampleChoice chooseSampling(const SampleMode& m, std::size_t n) {
    SampleChoice c;
    const double rate = m.rate > 0
                            ? std::min(1.0, m.rate)
                            : (n > 0 ? std::min(1.0, double(m.sampleRequests) / double(n)) : 1.0);
    if (m.exact)
        c.whyFull = "--exact";
    else if (n < m.exactBelow)
        c.whyFull = "below " + std::to_string(m.exactBelow) + " requests";
    else if (rate > 0.5)
        c.whyFull = "a sample would hold more than half";
    c.rate = c.sampled() ? rate : 1;
    return c;
}

std::string SampleChoice::fullText(const std::string& what) const {
    if (sampled()) return "";
    if (whyFull == "--exact") return "--exact: " + what;
    return what + " (" + whyFull + ")";
}

TraceSample sampleAtFullLoad(const Trace& trace, double rate, std::uint64_t salt) {
    TraceSample t = sampleTrace(trace, rate, salt);
    for (double& a : t.trace.arrivalS)
        a *= t.rate;
    return t;
}

ReplayConfig sampledConfig(const ReplayConfig& config, const TraceSample& sample) {
    ReplayConfig c = config;
    c.gpuCapacityBytes = sample.capacity(config.gpuCapacityBytes, config.blockBytes);
    for (auto& t : c.tiers)
        t.capacityBytes = sample.capacity(t.capacityBytes, config.blockBytes);
    return c;
}

} // namespace kvbe
