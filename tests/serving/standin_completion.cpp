// kvbe-serving-standin: one streamed completion, its prefix cache lookup and its time model, and
// the tokenizer (standin.h).
#include "standin.h"

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <csignal>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <list>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace standin {

// Completion i's share of --jitter, in [0, 1): a hash of i, the same every run (noise with no
// trend, as a busy shared machine gives).
double jitterOf(int index) {
    std::uint64_t z = static_cast<std::uint64_t>(index) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

double flops(double nNew, double nPast) {
    const auto& c = g_cfg;
    return 2 * c.params * nNew +
           2 * c.layers * c.heads * c.headDim * ((nPast + nNew) * (nPast + nNew) - nPast * nPast);
}

void touch(std::uint64_t h) {
    auto it = g_gpu.find(h);
    if (it != g_gpu.end()) g_lru.erase(it->second);
    g_lru.push_front(h);
    g_gpu[h] = g_lru.begin();
    while (static_cast<long>(g_gpu.size()) * g_cfg.block > g_cfg.gpuCapacityTokens) {
        g_gpu.erase(g_lru.back());
        g_lru.pop_back();
    }
}

// The stand-in's tokenizer: one token per whitespace-separated word, its id a hash of the word.
std::vector<std::int64_t> tokenize(const std::string& text) {
    std::vector<std::int64_t> ids;
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
            ++i;
        size_t j = i;
        while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j])))
            ++j;
        if (j > i)
            ids.push_back(1000 + static_cast<std::int64_t>(
                                     std::hash<std::string>{}(text.substr(i, j - i)) % 30000));
        i = j;
    }
    return ids;
}

void completion(int fd, const nlohmann::json& req, Clock::time_point arrival) {
    const auto& c = g_cfg;
    int index;
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        index = ++g_completions;
    }
    if (index <= c.fail429) {
        logLine("completion #" + std::to_string(index) + " outcome=429");
        sendResponse(fd, 429, "Too Many Requests", "application/json",
                     vllmError("too many requests in the queue", "RateLimitError", 429),
                     "Retry-After: 0\r\n");
        return;
    }
    if (index <= c.fail429 + c.fail503) {
        logLine("completion #" + std::to_string(index) + " outcome=503");
        sendResponse(fd, 503, "Service Unavailable", "application/json",
                     vllmError("the engine is loading", "ServiceUnavailableError", 503));
        return;
    }
    if (!c.llamacpp && (!req.contains("model") || req["model"] != c.model)) {
        sendResponse(
            fd, 404, "Not Found", "application/json",
            vllmError("The model `" + req.value("model", std::string()) + "` does not exist.",
                      "NotFoundError", 404));
        return;
    }
    std::vector<std::int64_t> ids;
    if (req.contains("prompt") && req["prompt"].is_string()) {
        ids = tokenize(req["prompt"].get<std::string>());
    } else if (c.refuseIds) {
        sendResponse(
            fd, 400, "Bad Request", "application/json",
            vllmError("prompt: Input should be a valid string (this server takes no token ids)",
                      "BadRequestError", 400));
        return;
    } else if (!req.contains("prompt") || !req["prompt"].is_array() || req["prompt"].empty()) {
        sendResponse(fd, 400, "Bad Request", "application/json",
                     vllmError("prompt must be a list of token ids here", "BadRequestError", 400));
        return;
    }
    for (const auto& v : req.contains("prompt") && req["prompt"].is_array()
                             ? req["prompt"]
                             : nlohmann::json::array()) {
        if (!v.is_number_integer()) {
            sendResponse(fd, 400, "Bad Request", "application/json",
                         vllmError("prompt ids must be integers", "BadRequestError", 400));
            return;
        }
        ids.push_back(v.get<std::int64_t>());
    }
    const auto n = static_cast<long>(ids.size());
    if (n + 1 > c.maxModelLen) {
        sendResponse(fd, 400, "Bad Request", "application/json",
                     vllmError("This model's maximum context length is " +
                                   std::to_string(c.maxModelLen) +
                                   " tokens. However, you requested " + std::to_string(n + 1) +
                                   " tokens (" + std::to_string(n) +
                                   " in the messages, 1 in the completion). Please reduce the "
                                   "length of the messages or completion.",
                               "BadRequestError", 400));
        return;
    }
    // Block hashes, chained like vLLM's; the last token is always computed, so at most
    // (N − 1) / block blocks can hit.
    std::vector<std::uint64_t> hashes;
    std::uint64_t h = 1469598103934665603ull;
    for (long b = 0; (b + 1) * c.block <= n; ++b) {
        for (long i = b * c.block; i < (b + 1) * c.block; ++i)
            h = (h ^ static_cast<std::uint64_t>(ids[static_cast<size_t>(i)])) * 1099511628211ull;
        hashes.push_back(h);
    }
    const long maxHit = (n - 1) / c.block;
    long gpuBlocks = 0, offBlocks = 0;
    double seconds = 0;
    long cacheN = 0; // the prompt tokens reused, as the response reports them
    if (c.llamacpp) {
        std::lock_guard<std::mutex> lock(g_mutex);
        auto lcp = [&](const std::vector<std::int64_t>& a) {
            size_t i = 0;
            while (i < a.size() && i < ids.size() && a[i] == ids[i])
                ++i;
            return i;
        };
        double load = 0;
        // llama.cpp's get_available_slot with the slot pinned: a slot holding a prompt that
        // keeps less than half of itself is saved to the prompt cache, and the cached prompt
        // that keeps most (at least a quarter of itself) is loaded; an empty slot looks nowhere.
        if (!g_slot.empty() && static_cast<double>(lcp(g_slot)) / dsize(g_slot) < 0.5 &&
            c.cacheRamMiB > 0) {
            double fKeep = static_cast<double>(lcp(g_slot)) / dsize(g_slot);
            double fSim = static_cast<double>(lcp(g_slot)) / dsize(ids);
            g_ram.push_front(g_slot);
            double bytes = 0;
            for (auto it = g_ram.begin(); it != g_ram.end();) {
                bytes += dsize(*it) * c.kvBytesPerToken;
                if (bytes > static_cast<double>(c.cacheRamMiB) * 1048576.0 && it != g_ram.begin())
                    it = g_ram.erase(it);
                else
                    ++it;
            }
            auto best = g_ram.end();
            for (auto it = std::next(g_ram.begin()); it != g_ram.end(); ++it) {
                const double l = static_cast<double>(lcp(*it));
                if (l / dsize(*it) < 0.25) continue;
                if (l / dsize(*it) > fKeep && l / dsize(ids) > fSim) {
                    fKeep = l / dsize(*it);
                    fSim = l / dsize(ids);
                    best = it;
                }
            }
            if (best != g_ram.end()) {
                g_slot = *best;
                load = c.ramTFixedS + dsize(*best) * c.kvBytesPerToken / c.ramBps;
                g_ram.erase(best);
            } else {
                g_slot.clear();
            }
        }
        cacheN = static_cast<long>(lcp(g_slot));
        if (cacheN == n) --cacheN; // at least one token is computed
        g_queries += static_cast<double>(n);
        g_cachedTotal += static_cast<double>(cacheN);
        seconds = c.overheadS + load +
                  flops(static_cast<double>(n - cacheN), static_cast<double>(cacheN)) /
                      (c.peakFlops * c.utilisation);
        seconds *= (1 + c.drift * (index - 1)) * (1 + c.jitter * jitterOf(index));
        g_slot = ids;
        gpuBlocks = cacheN / c.block;
    } else {
        std::lock_guard<std::mutex> lock(g_mutex);
        while (gpuBlocks < maxHit && g_gpu.count(hashes[static_cast<size_t>(gpuBlocks)]))
            ++gpuBlocks;
        if (c.offload)
            while (gpuBlocks + offBlocks < maxHit &&
                   g_offload.count(hashes[static_cast<size_t>(gpuBlocks + offBlocks)]))
                ++offBlocks;
        const double gpuTokens = static_cast<double>(gpuBlocks * c.block),
                     offTokens = static_cast<double>(offBlocks * c.block);
        g_queries += static_cast<double>(n);
        g_hits += gpuTokens;
        if (c.offload) {
            g_extQueries += static_cast<double>(n) - gpuTokens;
            if (c.countOffload) g_extHits += offTokens;
        }
        const double hit = gpuTokens + offTokens;
        seconds =
            c.overheadS + (gpuBlocks > 0 ? c.gpuTFixedS : 0) +
            (offBlocks > 0 ? c.offloadTFixedS + offTokens * c.kvBytesPerToken / c.offloadBps : 0) +
            flops(static_cast<double>(n) - hit, hit) / (c.peakFlops * c.utilisation);
        seconds *= (1 + c.drift * (index - 1)) * (1 + c.jitter * jitterOf(index));
        for (auto hh : hashes) {
            touch(hh);
            if (c.offload) g_offload.insert(hh);
        }
        cacheN = (gpuBlocks + offBlocks) * c.block;
    }
    const std::string id = "cmpl-standin-" + std::to_string(index);
    const std::string what = "completion #" + std::to_string(index) +
                             " tokens=" + std::to_string(n) +
                             " gpu_hit=" + std::to_string(gpuBlocks * c.block) +
                             " offload_hit=" + std::to_string(offBlocks * c.block);
    ++g_running;
    struct Done {
        ~Done() { --g_running; }
    } done;
    if (!sendAll(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; "
                     "charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n"))
        return;
    if (index == c.hangAt) {
        waitUntil(fd, arrival + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(c.lifetimeS)));
        logLine(what + " outcome=hung");
        return;
    }
    if (!waitUntil(fd, arrival + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(seconds)))) {
        logLine(what + " outcome=aborted");
        return;
    }
    auto event = [&](const nlohmann::json& j) { return chunk(fd, "data: " + j.dump() + "\n\n"); };
    const nlohmann::json first = {{"id", id},
                                  {"object", "text_completion"},
                                  {"created", 0},
                                  {"model", c.model},
                                  {"choices",
                                   {{{"index", 0},
                                     {"text", " the"},
                                     {"logprobs", nullptr},
                                     {"finish_reason", nullptr},
                                     {"stop_reason", nullptr}}}},
                                  {"usage", nullptr}};
    if (!event(first)) return;
    if (index == c.truncateAt) {
        logLine(what + " outcome=truncated");
        ::shutdown(fd, SHUT_RDWR);
        return;
    }
    const nlohmann::json fin = {{"id", id},
                                {"object", "text_completion"},
                                {"created", 0},
                                {"model", c.model},
                                {"choices",
                                 {{{"index", 0},
                                   {"text", ""},
                                   {"logprobs", nullptr},
                                   {"finish_reason", "length"},
                                   {"stop_reason", nullptr}}}},
                                {"usage", nullptr}};
    nlohmann::json usage = {
        {"id", id},
        {"object", "text_completion"},
        {"created", 0},
        {"model", c.model},
        {"choices", nlohmann::json::array()},
        {"usage", {{"prompt_tokens", n}, {"total_tokens", n + 1}, {"completion_tokens", 1}}}};
    if (c.reportCached || c.llamacpp)
        usage["usage"]["prompt_tokens_details"] = {{"cached_tokens", cacheN}};
    bool sent;
    if (c.llamacpp) {
        // llama.cpp sends one last chunk: the finish, the usage and its slot's timings.
        nlohmann::json last = fin;
        last["usage"] = usage["usage"];
        last["timings"] = {{"cache_n", cacheN},
                           {"prompt_n", n - cacheN},
                           {"prompt_ms", seconds * 1e3},
                           {"predicted_n", 1}};
        sent = event(last);
    } else {
        sent = event(fin) && event(usage);
    }
    {
        std::lock_guard<std::mutex> lock(g_mutex);
        g_lastDone = Clock::now();
    }
    if (sent && chunk(fd, "data: [DONE]\n\n") && sendAll(fd, "0\r\n\r\n"))
        logLine(what + " ms=" + std::to_string(seconds * 1e3) + " outcome=done");
}

} // namespace standin
