// kvbe-serving-standin: /metrics in vLLM's, SGLang's or llama.cpp's names (standin.h).
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

} // namespace standin
