// kvbe-serving-standin: a STAND-IN for an OpenAI-compatible serving stack, for the tests of
// `kvbe-cli probe serving` and for trying the probe without a GPU. It is not vLLM and runs no
// model: it speaks the streaming /v1/completions protocol the way vLLM does (SSE `data:` lines,
// a usage chunk, `data: [DONE]`, vLLM's error bodies), keeps a GPU prefix cache of 16-token
// blocks and an offload tier, and answers after a configurable time model:
//
//   TTFT = overhead + [GPU hit] gpu_t_fixed + [offload hit] offload_t_fixed + kv_bytes(h_off) / B
//        + F(N − h, h) / (peak · u),     F = the simple FLOP model of docs/cost-model.md
//
// It serves /metrics with vLLM's counter names (prefix_cache_hits_total in tokens, the external
// connector's hits, cache_config_info), POST /reset_prefix_cache and SGLang's POST /flush_cache.
// With --sglang it is SGLang-shaped instead: /metrics has SGLang's names
// (sglang:prompt_tokens_total, sglang:cached_tokens_total by cache_source device/host,
// sglang:cache_hit_rate; names as in SGLang's python/sglang/srt/metrics/collector.py) and only POST
// /flush_cache resets. Prompts may be text: its tokenizer makes one token of each
// whitespace-separated word, and POST /tokenize answers as vLLM's does ({"model", "prompt",
// "add_special_tokens"} in,
// {"count", "max_model_len", "tokens"} out). With --refuse-ids it takes only text prompts.
//
// Modes that play what the real engines do (each named in docs/serving-settings.md with the source
// it was read from):
// - --report-cached: responses carry usage.prompt_tokens_details.cached_tokens (vLLM with
//   --enable-prompt-tokens-details).
// - --reset-busy-ms X: a reset within X ms of a completion's end does nothing (vLLM's scheduler
//   refuses while an offload store still holds blocks); the API answers a bare 200 as vLLM's
//   does, or {"success": false} with --reset-says.
// - --sglang: POST /flush_cache empties the offload (HiCache host) tier too, as
//   HiRadixCache.reset() does; sglang:cached_tokens_total has a series per cache_source only
//   once that source has counted a token; sglang:max_total_num_tokens gives the KV pool.
//   --sglang-total counts offload hits under cache_source="total" (the fallback label).
// - --llamacpp: llama.cpp's llama-server (tools/server at commit de3ff81): GET /props and
//   /slots, POST /slots/{id}?action=erase|save|restore (restore answers n_read and
//   timings.restore_ms), one slot whose prompt is moved to a host-RAM prompt cache when a
//   prompt with little in common replaces it (--cache-ram-mib), timings.cache_n/prompt_n and
//   usage.prompt_tokens_details.cached_tokens in the last chunk, any model name accepted, no
//   /reset_prefix_cache nor /flush_cache. Its tiers' times: --ram-gbps/--ram-tfixed-ms (a
//   prompt-cache load), --disk-gbps/--disk-tfixed-ms (a restore).
// It listens on 127.0.0.1 only, and exits by itself after --lifetime seconds.
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

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
    std::string model = "standin/llama-3.2-3b";
    double peakFlops = 2000e12, utilisation = 0.5, overheadS = 0.002;
    // Llama 3.2 3B as docs/cost-model.md gives it: P, L, Hq, d, KV bytes per token (BF16).
    double params = 3.21e9, layers = 28, heads = 24, headDim = 128, kvBytesPerToken = 114688;
    double gpuTFixedS = 0.004, offloadTFixedS = 0.008, offloadBps = 50e9;
    bool offload = true, countOffload = true, reset = true, metrics = true, sglang = false,
         refuseIds = false, reportCached = false, resetSays = false, sglangTotal = false,
         llamacpp = false, slotSavePath = true;
    double resetBusyS = 0;
    double ramBps = 10e9, ramTFixedS = 0.002, diskBps = 2e9, diskTFixedS = 0.005;
    long cacheRamMiB = 8192;
    long gpuCapacityTokens = 1L << 30;
    int block = 16;
    long maxModelLen = 1L << 20;
    std::string apiKey;
    int fail429 = 0, fail503 = 0;   // the first K completions are refused
    int truncateAt = 0, hangAt = 0; // the K-th completion (1-based) is cut or never answered
    double drift = 0;               // the time model grows by this fraction per completion
    double lifetimeS = 120;
};

Config g_cfg;
std::mutex g_mutex;             // the caches and counters
std::list<std::uint64_t> g_lru; // GPU blocks, most recent first
std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> g_gpu;
std::unordered_set<std::uint64_t> g_offload;
double g_queries = 0, g_hits = 0, g_extQueries = 0, g_extHits = 0;
int g_completions = 0;
std::atomic<int> g_running{0};
Clock::time_point g_lastDone{};
// llama.cpp mode: the slot's prompt, the host-RAM prompt cache, the slot files.
std::vector<std::int64_t> g_slot;
std::list<std::vector<std::int64_t>> g_ram;
std::unordered_map<std::string, std::vector<std::int64_t>> g_files;
double g_cachedTotal = 0;

double dsize(const std::vector<std::int64_t>& v) {
    return static_cast<double>(v.size());
}

void logLine(const std::string& s) {
    std::lock_guard<std::mutex> lock(g_mutex);
    std::cerr << "standin: " << s << std::endl;
}

bool sendAll(int fd, const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
        const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
        if (n <= 0) return false;
        off += static_cast<size_t>(n);
    }
    return true;
}

bool sendResponse(int fd, int status, const std::string& reason, const std::string& type,
                  const std::string& body, const std::string& extra = "") {
    return sendAll(fd, "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\nContent-Type: " +
                           type + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" +
                           extra + "\r\n" + body);
}

std::string vllmError(const std::string& message, const std::string& type, int code) {
    return nlohmann::json{{"object", "error"},
                          {"message", message},
                          {"type", type},
                          {"param", nullptr},
                          {"code", code}}
        .dump();
}

bool chunk(int fd, const std::string& data) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return sendAll(fd, size + data + "\r\n");
}

// True when the client closed the connection (it stopped waiting).
bool clientGone(int fd) {
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) return true;
    char c;
    return ::recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

// Waits until `until` in one sleep that a client leaving ends early (ppoll on the socket): no
// periodic wake-ups, so the answer's time does not depend on how busy the machine is between.
bool waitUntil(int fd, Clock::time_point until) {
    for (;;) {
        const auto left = until - Clock::now();
        if (left <= Clock::duration::zero()) return true;
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
        timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
        pollfd p{fd, POLLRDHUP, 0};
        const int r = ::ppoll(&p, 1, &ts, nullptr);
        if (r > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return false;
        if (r > 0 && clientGone(fd)) return false;
        if (r > 0)
            std::this_thread::sleep_for(
                std::chrono::milliseconds(1)); // a pipelined request: not ours to read
    }
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
        seconds *= 1 + c.drift * (index - 1);
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
        seconds *= 1 + c.drift * (index - 1);
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

std::string sglangMetricsText() {
    std::lock_guard<std::mutex> lock(g_mutex);
    const std::string model = "model_name=\"" + g_cfg.model + "\"";
    char buf[1024];
    std::string out;
    std::snprintf(buf, sizeof buf,
                  "# HELP sglang:prompt_tokens_total Number of prefill tokens processed.\n"
                  "# TYPE sglang:prompt_tokens_total counter\nsglang:prompt_tokens_total{%s} %.1f\n"
                  "# HELP sglang:max_total_num_tokens Maximum total number of tokens in the KV "
                  "cache pool.\n# TYPE sglang:max_total_num_tokens gauge\n"
                  "sglang:max_total_num_tokens{%s} %ld\n"
                  "# HELP sglang:cached_tokens_total Number of cached prompt tokens.\n"
                  "# TYPE sglang:cached_tokens_total counter\n",
                  model.c_str(), g_queries, model.c_str(), g_cfg.gpuCapacityTokens);
    out += buf;
    // A labelled prometheus_client counter has a series only once it was incremented.
    if (g_hits > 0) {
        std::snprintf(buf, sizeof buf,
                      "sglang:cached_tokens_total{%s,cache_source=\"device\"} %.1f\n",
                      model.c_str(), g_hits);
        out += buf;
    }
    if (g_extHits > 0) {
        std::snprintf(buf, sizeof buf, "sglang:cached_tokens_total{%s,cache_source=\"%s\"} %.1f\n",
                      model.c_str(), g_cfg.sglangTotal ? "total" : "host", g_extHits);
        out += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "# HELP sglang:cache_hit_rate The cache hit rate\n"
                  "# TYPE sglang:cache_hit_rate gauge\nsglang:cache_hit_rate{%s} %.6f\n",
                  model.c_str(), g_queries > 0 ? (g_hits + g_extHits) / g_queries : 0.0);
    return out + buf;
}

// llama.cpp's /metrics (server-task.cpp, the llamacpp: names); none of vLLM's or SGLang's.
std::string llamaMetricsText() {
    std::lock_guard<std::mutex> lock(g_mutex);
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
                  "# TYPE llamacpp:prompt_tokens_total counter\nllamacpp:prompt_tokens_total %.0f\n"
                  "# HELP llamacpp:prompt_tokens_cached_total Number of prompt tokens reused.\n"
                  "# TYPE llamacpp:prompt_tokens_cached_total counter\n"
                  "llamacpp:prompt_tokens_cached_total %.0f\n",
                  g_queries, g_cachedTotal);
    return buf;
}

std::string metricsText() {
    if (g_cfg.sglang) return sglangMetricsText();
    if (g_cfg.llamacpp) return llamaMetricsText();
    std::lock_guard<std::mutex> lock(g_mutex);
    const std::string labels = "{engine=\"0\",model_name=\"" + g_cfg.model + "\"}";
    char buf[2048];
    std::snprintf(
        buf, sizeof buf,
        "# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of "
        "queried tokens.\n"
        "# TYPE vllm:prefix_cache_queries_total counter\nvllm:prefix_cache_queries_total%s %.1f\n"
        "# TYPE vllm:prefix_cache_hits_total counter\nvllm:prefix_cache_hits_total%s %.1f\n",
        labels.c_str(), g_queries, labels.c_str(), g_hits);
    std::string out = buf;
    {
        // Exposed with --no-offload too: a connector that is configured and never finds anything.
        std::snprintf(buf, sizeof buf,
                      "# TYPE vllm:external_prefix_cache_queries_total "
                      "counter\nvllm:external_prefix_cache_queries_total%s %.1f\n"
                      "# TYPE vllm:external_prefix_cache_hits_total "
                      "counter\nvllm:external_prefix_cache_hits_total%s %.1f\n",
                      labels.c_str(), g_extQueries, labels.c_str(), g_extHits);
        out += buf;
    }
    std::snprintf(buf, sizeof buf,
                  "# TYPE vllm:cache_config_info "
                  "gauge\nvllm:cache_config_info{block_size=\"%d\",num_gpu_blocks=\"%ld\"} 1.0\n"
                  "# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running%s %d\n",
                  g_cfg.block, g_cfg.gpuCapacityTokens / g_cfg.block, labels.c_str(),
                  g_running.load());
    return out + buf;
}

void slotAction(int fd, const std::string& path, const std::string& body);

void serve(int fd) {
    std::string buf;
    char tmp[65536];
    for (;;) {
        size_t headerEnd;
        while ((headerEnd = buf.find("\r\n\r\n")) == std::string::npos) {
            const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
            if (n <= 0) return ::close(fd), void();
            buf.append(tmp, static_cast<size_t>(n));
        }
        // The time model runs from the moment the request's head is in: reading and parsing the
        // body (tens of kB of ids, longer for longer prompts) happens inside the modelled time
        // instead of adding a per-token cost the model does not have.
        const auto arrival = Clock::now();
        const std::string head = buf.substr(0, headerEnd);
        size_t length = 0;
        std::string auth;
        size_t pos = head.find("\r\n");
        while (pos != std::string::npos && pos < head.size()) {
            const size_t next = head.find("\r\n", pos + 2);
            std::string line =
                head.substr(pos + 2, (next == std::string::npos ? head.size() : next) - pos - 2);
            const size_t colon = line.find(':');
            if (colon != std::string::npos) {
                std::string name = line.substr(0, colon);
                for (auto& ch : name)
                    ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                std::string value = line.substr(colon + 1);
                while (!value.empty() && value.front() == ' ')
                    value.erase(0, 1);
                if (name == "content-length") length = std::strtoul(value.c_str(), nullptr, 10);
                if (name == "authorization") auth = value;
            }
            pos = next;
        }
        while (buf.size() < headerEnd + 4 + length) {
            const ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
            if (n <= 0) return ::close(fd), void();
            buf.append(tmp, static_cast<size_t>(n));
        }
        const std::string body = buf.substr(headerEnd + 4, length);
        buf.erase(0, headerEnd + 4 + length);
        const std::string requestLine = head.substr(0, head.find("\r\n"));
        const std::string method = requestLine.substr(0, requestLine.find(' '));
        std::string path = requestLine.substr(method.size() + 1);
        path = path.substr(0, path.find(' '));
        if (!g_cfg.apiKey.empty() && auth != "Bearer " + g_cfg.apiKey && path != "/metrics") {
            sendResponse(fd, 401, "Unauthorized", "application/json",
                         "{\"error\": \"Unauthorized\"}");
            continue;
        }
        if (method == "POST" && path == "/v1/completions") {
            const auto req = nlohmann::json::parse(body, nullptr, false);
            if (req.is_discarded() || !req.is_object()) {
                sendResponse(fd, 400, "Bad Request", "application/json",
                             vllmError("the body is not JSON", "BadRequestError", 400));
                continue;
            }
            completion(fd, req, arrival);
            if (clientGone(fd)) return ::close(fd), void();
        } else if (method == "POST" && path == "/tokenize") {
            const auto req = nlohmann::json::parse(body, nullptr, false);
            if (req.is_discarded() || !req.is_object() || !req.contains("prompt") ||
                !req["prompt"].is_string()) {
                sendResponse(fd, 400, "Bad Request", "application/json",
                             vllmError("prompt: a string is expected", "BadRequestError", 400));
                continue;
            }
            const auto ids = tokenize(req["prompt"].get<std::string>());
            const nlohmann::json out = {
                {"count", ids.size()}, {"max_model_len", g_cfg.maxModelLen}, {"tokens", ids}};
            sendResponse(fd, 200, "OK", "application/json", out.dump());
        } else if (method == "GET" && path == "/metrics" && g_cfg.metrics) {
            sendResponse(fd, 200, "OK", "text/plain; version=0.0.4", metricsText());
        } else if (method == "POST" && !g_cfg.llamacpp &&
                   ((path == "/reset_prefix_cache" && !g_cfg.sglang) || path == "/flush_cache") &&
                   g_cfg.reset) {
            bool busy;
            {
                std::lock_guard<std::mutex> lock(g_mutex);
                // vLLM's scheduler refuses while blocks are held (an offload store in flight).
                busy = g_cfg.resetBusyS > 0 &&
                       Clock::now() - g_lastDone < std::chrono::duration<double>(g_cfg.resetBusyS);
                if (!busy) {
                    g_gpu.clear();
                    g_lru.clear();
                    // SGLang's HiRadixCache.reset() clears the host pool as well.
                    if (g_cfg.sglang) g_offload.clear();
                }
            }
            logLine(std::string("reset ") + (busy ? "refused (busy)" : "done"));
            sendResponse(fd, 200, "OK", "application/json",
                         g_cfg.resetSays ? nlohmann::json{{"success", !busy}}.dump() : "");
        } else if (g_cfg.llamacpp && method == "GET" && path == "/props") {
            sendResponse(
                fd, 200, "OK", "application/json",
                nlohmann::json{{"default_generation_settings", {{"n_ctx", g_cfg.maxModelLen}}},
                               {"total_slots", 1},
                               {"model_alias", g_cfg.model},
                               {"model_path", "/standin/" + g_cfg.model + ".gguf"},
                               {"build_info", "kvbe-serving-standin, not llama.cpp"}}
                    .dump());
        } else if (g_cfg.llamacpp && method == "GET" && path == "/slots") {
            std::lock_guard<std::mutex> lock(g_mutex);
            sendResponse(fd, 200, "OK", "application/json",
                         nlohmann::json::array(
                             {{{"id", 0}, {"n_ctx", g_cfg.maxModelLen}, {"is_processing", false}}})
                             .dump());
        } else if (g_cfg.llamacpp && method == "POST" && path.rfind("/slots/", 0) == 0) {
            slotAction(fd, path, body);
        } else if (method == "GET" && path == "/v1/models") {
            sendResponse(fd, 200, "OK", "application/json",
                         nlohmann::json{{"object", "list"},
                                        {"data", {{{"id", g_cfg.model}, {"object", "model"}}}}}
                             .dump());
        } else {
            sendResponse(fd, 404, "Not Found", "application/json", "{\"detail\":\"Not Found\"}");
        }
    }
}

// llama.cpp's POST /slots/{id}?action=erase|save|restore on the one slot, with its answers.
void slotAction(int fd, const std::string& path, const std::string& body) {
    const auto& c = g_cfg;
    auto error = [&](int status, const std::string& message, const std::string& type) {
        sendResponse(
            fd, status, status == 501 ? "Not Implemented" : "Bad Request", "application/json",
            nlohmann::json{{"error", {{"code", status}, {"message", message}, {"type", type}}}}
                .dump());
    };
    if (!c.slotSavePath)
        return error(501,
                     "This server does not support slots action. Start it with `--slot-save-path`",
                     "not_supported_error");
    const size_t q = path.find("?action=");
    const std::string id = path.substr(7, q == std::string::npos ? std::string::npos : q - 7);
    const std::string action = q == std::string::npos ? "" : path.substr(q + 8);
    if (id != "0") return error(400, "Invalid slot ID", "invalid_request_error");
    const auto req = nlohmann::json::parse(body.empty() ? "{}" : body, nullptr, false);
    const std::string file =
        req.is_object() && req.contains("filename") && req["filename"].is_string()
            ? req["filename"].get<std::string>()
            : "";
    std::unique_lock<std::mutex> lock(g_mutex);
    if (action == "erase") {
        const auto n = g_slot.size();
        g_slot.clear();
        lock.unlock();
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0}, {"n_erased", n}}.dump());
    } else if (action == "save" && !file.empty()) {
        g_files[file] = g_slot;
        const double bytes = dsize(g_slot) * (c.kvBytesPerToken + 4) + 16;
        lock.unlock();
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0},
                                    {"filename", file},
                                    {"n_saved", g_files[file].size()},
                                    {"n_written", bytes},
                                    {"timings", {{"save_ms", 1.0}}}}
                         .dump());
    } else if (action == "restore" && !file.empty()) {
        const auto it = g_files.find(file);
        if (it == g_files.end()) {
            g_slot.clear();
            lock.unlock();
            return error(400, "Unable to restore slot: failed to open " + file,
                         "invalid_request_error");
        }
        g_slot = it->second;
        const double bytes = static_cast<double>(g_slot.size()) * (c.kvBytesPerToken + 4) + 16;
        const auto tokens = g_slot.size();
        lock.unlock();
        const double seconds = c.diskTFixedS + bytes / c.diskBps;
        waitUntil(fd, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(seconds)));
        sendResponse(fd, 200, "OK", "application/json",
                     nlohmann::json{{"id_slot", 0},
                                    {"filename", file},
                                    {"n_restored", tokens},
                                    {"n_read", bytes},
                                    {"timings", {{"restore_ms", seconds * 1e3}}}}
                         .dump());
    } else {
        lock.unlock();
        error(400, "Invalid action", "invalid_request_error");
    }
}

bool flag(int& i, int argc, char** argv, const char* name, std::string& out) {
    if (std::strcmp(argv[i], name) != 0 || i + 1 >= argc) return false;
    out = argv[++i];
    return true;
}

} // namespace

int main(int argc, char** argv) {
    auto& c = g_cfg;
    for (int i = 1; i < argc; ++i) {
        std::string v;
        const std::string a = argv[i];
        if (a == "--no-offload")
            c.offload = false;
        else if (a == "--uncounted-offload")
            c.countOffload = false;
        else if (a == "--no-reset")
            c.reset = false;
        else if (a == "--no-metrics")
            c.metrics = false;
        else if (a == "--sglang")
            c.sglang = true;
        else if (a == "--refuse-ids")
            c.refuseIds = true;
        else if (a == "--report-cached")
            c.reportCached = true;
        else if (a == "--reset-says")
            c.resetSays = true;
        else if (a == "--sglang-total")
            c.sglangTotal = true;
        else if (a == "--llamacpp")
            c.llamacpp = true;
        else if (a == "--no-slot-save-path")
            c.slotSavePath = false;
        else if (flag(i, argc, argv, "--reset-busy-ms", v))
            c.resetBusyS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--ram-gbps", v))
            c.ramBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--ram-tfixed-ms", v))
            c.ramTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--disk-gbps", v))
            c.diskBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--disk-tfixed-ms", v))
            c.diskTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--cache-ram-mib", v))
            c.cacheRamMiB = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--model", v))
            c.model = v;
        else if (flag(i, argc, argv, "--peak-tflops", v))
            c.peakFlops = std::atof(v.c_str()) * 1e12;
        else if (flag(i, argc, argv, "--utilisation", v))
            c.utilisation = std::atof(v.c_str());
        else if (flag(i, argc, argv, "--overhead-ms", v))
            c.overheadS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--gpu-tfixed-ms", v))
            c.gpuTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--offload-tfixed-ms", v))
            c.offloadTFixedS = std::atof(v.c_str()) * 1e-3;
        else if (flag(i, argc, argv, "--offload-gbps", v))
            c.offloadBps = std::atof(v.c_str()) * 1e9;
        else if (flag(i, argc, argv, "--gpu-capacity-tokens", v))
            c.gpuCapacityTokens = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--max-model-len", v))
            c.maxModelLen = std::atol(v.c_str());
        else if (flag(i, argc, argv, "--api-key", v))
            c.apiKey = v;
        else if (flag(i, argc, argv, "--fail-429", v))
            c.fail429 = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--fail-503", v))
            c.fail503 = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--truncate-at", v))
            c.truncateAt = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--hang-at", v))
            c.hangAt = std::atoi(v.c_str());
        else if (flag(i, argc, argv, "--drift", v))
            c.drift = std::atof(v.c_str());
        else if (flag(i, argc, argv, "--lifetime", v))
            c.lifetimeS = std::atof(v.c_str());
        else {
            std::cerr << "kvbe-serving-standin: unknown option " << a << "\n";
            return 2;
        }
    }
    std::signal(SIGPIPE, SIG_IGN);
    const int srv = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(srv, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); // 127.0.0.1 only
    addr.sin_port = 0;
    if (::bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(srv, 16) != 0) {
        std::perror("kvbe-serving-standin: bind 127.0.0.1");
        return 1;
    }
    socklen_t len = sizeof addr;
    ::getsockname(srv, reinterpret_cast<sockaddr*>(&addr), &len);
    std::cout << "kvbe-serving-standin listening on http://127.0.0.1:" << ntohs(addr.sin_port)
              << "/v1" << std::endl;
    const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(c.lifetimeS));
    while (Clock::now() < end) {
        pollfd p{srv, POLLIN, 0};
        if (::poll(&p, 1, 100) <= 0) continue;
        const int fd = ::accept(srv, nullptr, nullptr);
        if (fd < 0) continue;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::thread(serve, fd).detach();
    }
    logLine("lifetime over; exiting");
    std::_Exit(0);
}
