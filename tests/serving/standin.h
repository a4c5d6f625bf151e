// kvbe-serving-standin's parts (standin_server.cpp says what it is and is not): its settings,
// its state (the caches and counters, under g_mutex) and the functions each file gives the
// others. standin_io.cpp: socket writes, waits and log lines; standin_completion.cpp: a
// completion and its time model; standin_metrics.cpp: /metrics in vLLM's, SGLang's or llama.cpp's
// names; standin_server.cpp: the requests, the slots and main().
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace standin {

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
    double jitter = 0;              // ... and is multiplied by 1 + jitter × (a hash in [0, 1))
    double lifetimeS = 120;
};

inline Config g_cfg;
inline std::mutex g_mutex;             // the caches and counters
inline std::list<std::uint64_t> g_lru; // GPU blocks, most recent first
inline std::unordered_map<std::uint64_t, std::list<std::uint64_t>::iterator> g_gpu;
inline std::unordered_set<std::uint64_t> g_offload;
inline double g_queries = 0, g_hits = 0, g_extQueries = 0, g_extHits = 0;
inline int g_completions = 0;
inline std::atomic<int> g_running{0};
inline Clock::time_point g_lastDone{};
// llama.cpp mode: the slot's prompt, the host-RAM prompt cache, the slot files.
inline std::vector<std::int64_t> g_slot;
inline std::list<std::vector<std::int64_t>> g_ram;
inline std::unordered_map<std::string, std::vector<std::int64_t>> g_files;
inline double g_cachedTotal = 0;

// standin_io.cpp
double dsize(const std::vector<std::int64_t>& v);
void logLine(const std::string& s);
bool sendAll(int fd, const std::string& data);
bool sendResponse(int fd, int status, const std::string& reason, const std::string& type,
                  const std::string& body, const std::string& extra = "");
std::string vllmError(const std::string& message, const std::string& type, int code);
bool chunk(int fd, const std::string& data);
bool clientGone(int fd);
bool waitUntil(int fd, Clock::time_point until);

// standin_completion.cpp
std::vector<std::int64_t> tokenize(const std::string& text);
void completion(int fd, const nlohmann::json& req, Clock::time_point arrival);

// standin_metrics.cpp
std::string metricsText();

} // namespace standin
