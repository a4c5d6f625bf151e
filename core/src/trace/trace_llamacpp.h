// llama.cpp's llama-server as the replay's servers (ReplayConfig::llamaCpp; docs/trace.md,
// "Replaying against live servers"): one slot a server, holding its last prompt, and a host-RAM
// prompt cache of whole prompts. The rules are llama.cpp's tools/server (server-context.cpp's
// slot choice and prompt_save/prompt_load, server-task.cpp's server_prompt_cache alloc, load and
// update), in blocks: a prompt is its block ids and its token count. Internal to kvbe_core.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

namespace kvbe::detail {

// The bytes a prompt cache entry holds beyond its KV, per token: llama_kv_cache::state_write_meta
// writes each cell's position, its count of sequences and its one sequence id (4 bytes each), so a
// 256-token prompt of 16,384 KV bytes a token is 4.003 MiB, as the server logs it, and a 16 MiB
// cache holds three such prompts, not four.
inline constexpr double kLlamaCellMetaBytes = 12;

class LlamaCppServers {
  public:
    // limitTokens: the RAM cache's size in tokens (0: no cache); blockTokens: a block's tokens.
    LlamaCppServers(int servers, double limitTokens, double similarity, std::uint32_t blockTokens)
        : m_servers(static_cast<std::size_t>(servers)), m_limit(limitTokens),
          m_similarity(similarity), m_b(blockTokens) {}

    // A request of `tokens` tokens over the blocks `ids` at server s: its hit run in blocks,
    // each block's tier in tierOf (0: kept in the slot, 1: in a prompt loaded from the RAM
    // cache), and the slot then holds the request.
    std::size_t request(int s, std::span<const std::uint32_t> ids, double tokens,
                        std::uint8_t* tierOf) {
        Server& v = m_servers[static_cast<std::size_t>(s)];
        const Prompt in{{ids.begin(), ids.end()}, tokens};
        const double common = lcp(v.slot, in);
        // The slot is chosen by similarity (and then saved when the request keeps less than half
        // of it), or, too dissimilar, as the least recently used (and then always saved).
        const bool similar = v.slot.tokens > 0 && common / in.tokens > m_similarity;
        const bool update = m_limit > 0 && (!similar || common / v.slot.tokens < 0.5);
        bool loaded = false;
        if (update) {
            save(v);
            loaded = load(v, in);
            trim(v);
        }
        const double kept = lcp(v.slot, in);
        auto run = static_cast<std::size_t>(kept / m_b);
        run = std::min(run, ids.size());
        std::fill(tierOf, tierOf + run, static_cast<std::uint8_t>(loaded ? 1 : 0));
        v.slot = in;
        return run;
    }

  private:
    struct Prompt {
        std::vector<std::uint32_t> ids;
        double tokens = 0;
    };
    struct Server {
        Prompt slot;
        std::deque<Prompt> cache; // oldest first
    };

    // The tokens two prompts share from the start: their common blocks, within both lengths.
    double lcp(const Prompt& a, const Prompt& b) const {
        std::size_t n = 0;
        while (n < a.ids.size() && n < b.ids.size() && a.ids[n] == b.ids[n])
            ++n;
        return std::min({static_cast<double>(n) * m_b, a.tokens, b.tokens});
    }
    static double size(const std::deque<Prompt>& c) {
        double t = 0;
        for (const auto& p : c)
            t += p.tokens;
        return t;
    }
    // prompt_save and server_prompt_cache::alloc: nothing when a cached prompt holds the slot's
    // whole, else the cached prompts the slot holds whole go, the oldest go until it fits, and
    // it joins the cache (not one larger than the cache).
    void save(Server& v) const {
        const Prompt& p = v.slot;
        if (p.tokens <= 0) return;
        for (const auto& c : v.cache)
            if (lcp(c, p) >= p.tokens) return;
        if (p.tokens > m_limit) return;
        v.cache.erase(std::remove_if(v.cache.begin(), v.cache.end(),
                                     [&](const Prompt& c) { return lcp(c, p) >= c.tokens; }),
                      v.cache.end());
        while (!v.cache.empty() && size(v.cache) + p.tokens > m_limit)
            v.cache.pop_front();
        v.cache.push_back(p);
    }
    // server_prompt_cache::load: the cached prompt that keeps at least a quarter of itself and
    // beats the slot on both the share of itself kept and the share of the request covered
    // replaces the slot's prompt and leaves the cache.
    bool load(Server& v, const Prompt& in) const {
        const double base = lcp(v.slot, in);
        double keepBest = v.slot.tokens > 0 ? base / v.slot.tokens : -1;
        double simBest = base / in.tokens;
        auto best = v.cache.end();
        for (auto it = v.cache.begin(); it != v.cache.end(); ++it) {
            const double l = lcp(*it, in);
            const double keep = l / it->tokens, sim = l / in.tokens;
            if (keep < 0.25) continue;
            if (keepBest < keep && simBest < sim) {
                keepBest = keep;
                simBest = sim;
                best = it;
            }
        }
        if (best == v.cache.end()) return false;
        v.slot = std::move(*best);
        v.cache.erase(best);
        return true;
    }
    // server_prompt_cache::update: the oldest go while the cache is over its size.
    void trim(Server& v) const {
        while (!v.cache.empty() && size(v.cache) > m_limit)
            v.cache.pop_front();
    }

    std::vector<Server> m_servers;
    double m_limit, m_similarity;
    double m_b;
};

} // namespace kvbe::detail
