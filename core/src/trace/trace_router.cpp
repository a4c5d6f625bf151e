// The routers a fleet replays (docs/routers.md; docs/workload-model.md, "Routers"): each as its
// project's source at the version named there decides, restated for block ids; and `--router`'s
// parser.
#include "kvbe/trace/fleet.h"

#include "kvbe/base/text.h"

#include "trace_fleet.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace kvbe {

namespace {

struct Param {
    std::string_view key;
    double RouterConfig::*field;
    double lo, hi; // inclusive range
};

struct RouterInfo {
    RouterKind kind;
    std::string_view name;
    std::vector<Param> params;
    bool seeded;    // takes seed=
    bool keyBlocks; // takes key_blocks=
};

const std::vector<RouterInfo>& routers() {
    using R = RouterConfig;
    static const std::vector<RouterInfo> all = {
        {RouterKind::RoundRobin, "round-robin", {}, false, false},
        {RouterKind::Random, "random", {}, true, false},
        {RouterKind::LeastLoaded, "least-loaded", {}, false, false},
        {RouterKind::Session, "session", {}, false, true},
        {RouterKind::Sglang,
         "sglang",
         {{"cache_threshold", &R::cacheThreshold, 0, 1},
          {"balance_abs_threshold", &R::balanceAbsThreshold, 0, 1e9},
          {"balance_rel_threshold", &R::balanceRelThreshold, 0, 1e9},
          {"eviction_interval", &R::evictionIntervalS, 0, 1e9},
          {"max_tree_size", &R::maxTreeSize, 0, 1e15},
          {"chars_per_token", &R::charsPerToken, 0.01, 1e3}},
         false,
         false},
        {RouterKind::LlmD,
         "llm-d",
         {{"prefix_weight", &R::prefixWeight, 0, 1e6},
          {"queue_weight", &R::queueWeight, 0, 1e6},
          {"kv_weight", &R::kvWeight, 0, 1e6},
          {"gpu_weight", &R::gpuTierWeight, 0, 1e6},
          {"cpu_weight", &R::cpuTierWeight, 0, 1e6},
          {"other_weight", &R::otherTierWeight, 0, 1e6},
          {"refresh", &R::refreshS, 1e-6, 1e6},
          {"event_lag", &R::eventLagS, 0, 1e6}},
         true,
         false},
        {RouterKind::Dynamo,
         "dynamo",
         {{"overlap_score_credit", &R::overlapScoreCredit, 0, 1},
          {"prefill_load_scale", &R::prefillLoadScale, 0, 1e6},
          {"host_cache_hit_weight", &R::hostCacheHitWeight, 0, 1e6},
          {"disk_cache_hit_weight", &R::diskCacheHitWeight, 0, 1e6},
          {"event_lag", &R::eventLagS, 0, 1e6}},
         true,
         false},
    };
    return all;
}

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

std::string keysOf(const RouterInfo& r) {
    std::vector<std::string> keys;
    for (const auto& p : r.params)
        keys.emplace_back(p.key);
    if (r.seeded) keys.emplace_back("seed");
    if (r.keyBlocks) keys.emplace_back("key_blocks");
    if (keys.empty()) return "none";
    std::string out;
    for (std::size_t i = 0; i < keys.size(); ++i)
        out += (i ? (i + 1 == keys.size() ? " or " : ", ") : "") + keys[i];
    return out;
}

} // namespace

const std::vector<std::string_view>& routerNames() {
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> n;
        for (const auto& r : routers())
            n.push_back(r.name);
        return n;
    }();
    return names;
}

std::string_view toString(RouterKind k) {
    for (const auto& r : routers())
        if (r.kind == k) return r.name;
    return "?";
}

std::vector<std::string> routerParameters(RouterKind k) {
    const RouterConfig d;
    std::vector<std::string> out;
    for (const auto& r : routers()) {
        if (r.kind != k) continue;
        for (const auto& p : r.params)
            out.push_back(std::string(p.key) + "=" + number(d.*(p.field)));
        if (r.seeded) out.push_back("seed=0");
        if (r.keyBlocks) out.push_back("key_blocks=" + std::to_string(d.keyBlocks));
    }
    return out;
}

std::string routerText(const RouterConfig& r) {
    return (r.text.empty() ? std::string(toString(r.kind)) : r.text) +
           (r.recorded ? " as routed live" : "");
}

Result<RouterConfig> parseRouter(std::string_view text) {
    const auto colon = text.find(':');
    const std::string name = lower(text.substr(0, colon));
    const RouterInfo* info = nullptr;
    for (const auto& r : routers())
        if (r.name == name) info = &r;
    if (!info) {
        std::string names;
        for (std::size_t i = 0; i < routerNames().size(); ++i)
            names += (i ? ", " : "") + std::string(routerNames()[i]);
        return Error{"'" + std::string(text) + "': unknown router '" + name +
                     "'; expected one of " + names + " (or compare)"};
    }
    RouterConfig c;
    c.kind = info->kind;
    c.text = std::string(text);
    if (colon == std::string_view::npos) return c;
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        const auto eq = item.find('=');
        const std::string key(item.substr(0, eq));
        if (eq == std::string_view::npos || key.empty())
            return Error{"'" + std::string(text) + "': '" + std::string(item) +
                         "' is not key=value; " + name + " takes " + keysOf(*info)};
        const std::string_view value = item.substr(eq + 1);
        double v = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
        if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(v))
            return Error{"'" + std::string(text) + "': " + key + "='" + std::string(value) +
                         "' is not a number"};
        bool known = false;
        for (const auto& p : info->params)
            if (p.key == key) {
                if (v < p.lo || v > p.hi)
                    return Error{"'" + std::string(text) + "': " + key + "=" + std::string(value) +
                                 " is out of range; expected " + number(p.lo) + " to " +
                                 number(p.hi)};
                c.*(p.field) = v;
                known = true;
            }
        if (!known && info->seeded && key == "seed") {
            if (v < 0 || v != std::floor(v) || v > 9.007199254740992e15)
                return Error{"'" + std::string(text) + "': seed=" + std::string(value) +
                             "; expected a whole number from 0"};
            c.seed = static_cast<std::uint64_t>(v);
            known = true;
        }
        if (!known && info->keyBlocks && key == "key_blocks") {
            if (v < 1 || v != std::floor(v) || v > 1e6)
                return Error{"'" + std::string(text) + "': key_blocks=" + std::string(value) +
                             "; expected a whole number of blocks from 1"};
            c.keyBlocks = static_cast<int>(v);
            known = true;
        }
        if (!known)
            return Error{"'" + std::string(text) + "': " + name + " has no parameter '" + key +
                         "'; it takes " + keysOf(*info)};
    }
    return c;
}

namespace detail {

int Fleet::roundRobin() {
    return static_cast<int>(m_rr++ % static_cast<std::uint64_t>(m_n));
}

// vLLM production-stack `session`: the owner of the first ring point strictly above the key's
// hash, wrapping; the key is the request's first key_blocks blocks (the id of the last of them
// names them all).
int Fleet::session(std::span<const std::uint32_t> ids) {
    if (ids.empty()) return leastLoaded();
    const std::size_t k =
        std::min<std::size_t>(ids.size(), static_cast<std::size_t>(m_rc.keyBlocks));
    const std::uint64_t h = mix64(0x5e5510ull ^ (static_cast<std::uint64_t>(ids[k - 1]) << 8));
    auto it = std::upper_bound(m_ring.begin(), m_ring.end(), std::make_pair(h, m_n));
    if (it == m_ring.end()) it = m_ring.begin();
    return it->second;
}

// SGLang's cache_aware: balance first (absolute and relative thresholds on the outstanding
// requests), else the tenant of the longest match in the router's tree when it covers more than
// the cache threshold of the prompt, else the least loaded; the prompt joins the tree under the
// chosen server. The tree is trimmed per tenant to max_tree_size every eviction_interval.
int Fleet::sglang(std::span<const std::uint32_t> ids, double now) {
    auto& tree = *m_tree;
    if (m_rc.evictionIntervalS > 0 && now >= m_nextEviction) {
        for (int c = 0; c < m_n; ++c)
            tree.trim(c, m_treeBlocks);
        m_nextEviction = (std::floor(now / m_rc.evictionIntervalS) + 1) * m_rc.evictionIntervalS;
    }
    std::uint32_t lo = UINT32_MAX, hi = 0;
    for (const std::uint32_t q : m_load) {
        lo = std::min(lo, q);
        hi = std::max(hi, q);
    }
    const bool imbalanced =
        static_cast<double>(hi - lo) > m_rc.balanceAbsThreshold &&
        static_cast<double>(hi) > static_cast<double>(lo) * m_rc.balanceRelThreshold;
    int s = -1;
    if (!imbalanced && !ids.empty()) {
        std::size_t match = 0;
        while (match < ids.size() && tree.index().any(ids[match]))
            ++match;
        const double rate = static_cast<double>(match) / static_cast<double>(ids.size());
        if (match > 0 && rate > m_rc.cacheThreshold) {
            const std::uint64_t* w = tree.index().of(ids[match - 1]);
            for (std::size_t q = 0; s < 0; ++q)
                if (w[q])
                    s = static_cast<int>(q * 64 + static_cast<std::size_t>(__builtin_ctzll(w[q])));
        }
    }
    if (s < 0) s = leastLoaded();
    // Deepest first, so that a prefix is always more recent than what extends it: trimming takes
    // leaves first, as the tree's eviction does.
    for (std::size_t j = ids.size(); j-- > 0;)
        tree.access(ids[j], s);
    return s;
}

// llm-d's precise profile: 2 × the prefix score (the run each server holds, weighted by the tier
// it is in, min-max normalised over the servers holding the first block) + the queue score +
// the KV-utilisation score, from metrics scraped every `refresh`; the best total, ties at random.
int Fleet::llmd(std::span<const std::uint32_t> full, double now) {
    const auto N = static_cast<std::size_t>(m_n);
    if (now >= m_nextScrape) {
        // As vLLM's scheduler: the requests in order join the running batch while their blocks
        // fit in the GPU's cache (the first always runs); the rest wait. The usage is the running
        // batch's blocks over the cache's (cached blocks no request holds count as free).
        const double cap = m_caps[0] == kNoLimit
                               ? 0.0
                               : static_cast<double>(std::max<std::uint64_t>(m_caps[0], 1));
        for (std::size_t s = 0; s < N; ++s) {
            double held = 0;
            std::size_t running = 0;
            for (const Booked& b : m_queue[s]) {
                const auto blocks = static_cast<double>(m_trace.blocksOf(b.request).size());
                if (running > 0 && cap > 0 && held + blocks > cap) break;
                held += blocks;
                ++running;
            }
            m_waiting[s] = static_cast<double>(m_queue[s].size() - running);
            m_usage[s] = cap > 0 ? std::min(1.0, held / cap) : 0.0;
        }
        m_nextScrape = (std::floor(now / m_rc.refreshS) + 1) * m_rc.refreshS;
    }
    const auto nf = static_cast<std::uint32_t>(full.size());
    std::vector<double>& raw = m_score;
    std::vector<char>& present = m_present;
    raw.assign(N, 0.0);
    present.assign(N, 0);
    for (std::size_t s = 0; s < N; ++s) {
        const std::uint32_t d0 = std::min((*m_seen0)[s], nf);
        raw[s] = m_rc.gpuTierWeight * d0;
        present[s] = d0 > 0;
    }
    for (std::size_t l = 0; l < m_localLevels.size(); ++l) {
        depths(l + 1, full, m_depthLevel[l], m_lagged);
        const double w = m_levelWeight[l];
        for (std::size_t s = 0; s < N; ++s) {
            const std::uint32_t before =
                l == 0 ? std::min((*m_seen0)[s], nf) : m_depthLevel[l - 1][s];
            const std::uint32_t d = std::max(before, m_depthLevel[l][s]);
            m_depthLevel[l][s] = d;
            raw[s] += w * (d - before);
            present[s] = static_cast<char>(present[s] || d > 0);
        }
    }
    double lo = 0, hi = 0;
    bool first = true;
    for (std::size_t s = 0; s < N; ++s)
        if (present[s]) {
            lo = first ? raw[s] : std::min(lo, raw[s]);
            hi = first ? raw[s] : std::max(hi, raw[s]);
            first = false;
        }
    const auto [qlo, qhi] = std::minmax_element(m_waiting.begin(), m_waiting.end());
    std::vector<int>& bestSet = m_best;
    bestSet.clear();
    double best = -1;
    for (std::size_t s = 0; s < N; ++s) {
        const double prefix = !present[s] ? 0.0 : hi == lo ? 1.0 : (raw[s] - lo) / (hi - lo);
        const double queue = *qhi == *qlo ? 1.0 : (*qhi - m_waiting[s]) / (*qhi - *qlo);
        const double kv = std::clamp(1.0 - m_usage[s], 0.0, 1.0);
        const double total =
            m_rc.prefixWeight * prefix + m_rc.queueWeight * queue + m_rc.kvWeight * kv;
        if (total > best) {
            best = total;
            bestSet.assign(1, static_cast<int>(s));
        } else if (total == best) {
            bestSet.push_back(static_cast<int>(s));
        }
    }
    return pickRandom(bestSet);
}

// Dynamo's KV router: per server the prefill blocks it would compute (its outstanding prefill
// tokens and this prompt, less the overlap credit: the GPU's run, the host tier's and the disk
// tier's beyond it at their weights) plus its decode blocks (its active blocks and this prompt's
// blocks not among them); the least, ties at random.
int Fleet::dynamo(std::size_t i, std::span<const std::uint32_t> full) {
    const auto N = static_cast<std::size_t>(m_n);
    const double isl = m_trace.inputTokens[i];
    const auto nf = static_cast<std::uint32_t>(full.size());
    for (std::size_t l = 0; l < m_localLevels.size(); ++l)
        depths(l + 1, full, m_depthLevel[l], m_lagged);
    {
        const ServerIndex* idx[1] = {&*m_active};
        depthsOf(idx, 1, full, m_depthActive);
    }
    std::vector<int>& bestSet = m_best;
    bestSet.clear();
    double best = 0;
    for (std::size_t s = 0; s < N; ++s) {
        const std::uint32_t d0 = std::min((*m_seen0)[s], nf);
        double credit = m_rc.overlapScoreCredit * d0;
        std::uint32_t before = d0;
        for (std::size_t l = 0; l < m_localLevels.size(); ++l) {
            const std::uint32_t d = std::max(before, m_depthLevel[l][s]);
            credit += (l == 0 ? m_rc.hostCacheHitWeight : m_rc.diskCacheHitWeight) * (d - before);
            before = d;
        }
        const double raw = (m_activeTokens[s] + isl) / m_b;
        const double decode =
            static_cast<double>(m_activeBlocks[s]) + static_cast<double>(nf - m_depthActive[s]);
        const double logit = m_rc.prefillLoadScale * std::max(0.0, raw - credit) + decode;
        if (bestSet.empty() || logit < best) {
            best = logit;
            bestSet.assign(1, static_cast<int>(s));
        } else if (logit == best) {
            bestSet.push_back(static_cast<int>(s));
        }
    }
    const int s = pickRandom(bestSet);
    const auto u = static_cast<std::size_t>(s);
    m_routedTokens = std::max(0.0, isl - std::min((*m_seen0)[u], nf) * m_b);
    m_activeTokens[u] += m_routedTokens;
    for (const std::uint32_t id : full) {
        auto& r = m_activeRefs[(static_cast<std::uint64_t>(s) << 32) | id];
        if (r++ == 0) {
            m_active->set(id, s, 1, true);
            ++m_activeBlocks[u];
        }
    }
    return s;
}

} // namespace detail

} // namespace kvbe
