// The pieces of the serving probe that do not talk to a server: the Prometheus text reader,
// the server-sent-events reader of a streamed completion, and the output files.
#pragma once

#include "kvbe/base/statistics.h"
#include "kvbe/serving/http_client.h"

#include <chrono>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe::serving::detail {

// The sum over every series of metric `name` (all label sets) in Prometheus text; none when the
// text has no sample of that name.
std::optional<double> promSum(std::string_view text, std::string_view name);
// The labels of the first series of `name` ("vllm:cache_config_info"), none when absent.
std::optional<std::map<std::string, std::string>> promLabels(std::string_view text,
                                                             std::string_view name);

// A server's prefix-cache hit counters in /metrics, in tokens, by the names each server uses:
// - vLLM: vllm:prefix_cache_hits_total (GPU) and vllm:external_prefix_cache_hits_total (a KV
//   connector such as LMCache, or native CPU offload);
// - SGLang: sglang:cached_tokens_total, "Number of cached prompt tokens" (since SGLang split it
//   with a cache_source label: device = GPU, host and storage = HiCache's tiers; without the
//   label every cached token counts as GPU and offload hits have no counter).
// None where the server exposes no counter for that tier.
struct HitCounters {
    std::string server; // "vLLM", "SGLang", "" when neither's counters are there
    std::optional<double> gpu, offload;
    bool labelled = false; // SGLang: cached_tokens_total split by cache_source
};
HitCounters hitCounters(std::string_view metricsText);

// Reads a streamed /v1/completions body: `data: {json}` lines, `data: [DONE]`, or an error
// object (vLLM sends {"error": {...}} or {"object":"error","message":...} inside the stream).
class CompletionStream {
  public:
    // Returns false once the stream has ended ([DONE] or an error).
    bool feed(std::string_view chunk);
    bool firstToken() const { return m_firstToken; }
    bool done() const { return m_done; }
    const std::string& error() const { return m_error; }
    std::optional<double> promptTokens() const { return m_promptTokens; }
    // The prompt tokens the server says it reused for this request, from the response itself:
    // llama.cpp's timings.cache_n (with timings.prompt_n, the tokens it computed), else OpenAI's
    // usage.prompt_tokens_details.cached_tokens (vLLM with --enable-prompt-tokens-details,
    // llama.cpp, SGLang). None where the response carries neither.
    std::optional<double> cachedTokens() const { return m_cacheN ? m_cacheN : m_cachedTokens; }
    // Where cachedTokens() came from: "timings.cache_n" or
    // "usage.prompt_tokens_details.cached_tokens"; "" when none.
    std::string cachedSource() const {
        return m_cacheN ? "timings.cache_n"
                        : (m_cachedTokens ? "usage.prompt_tokens_details.cached_tokens" : "");
    }
    size_t bytes() const { return m_bytes; }

  private:
    void line(std::string_view l);
    std::string m_pending;
    bool m_firstToken = false, m_done = false;
    std::string m_error;
    std::optional<double> m_promptTokens, m_cachedTokens, m_cacheN;
    size_t m_bytes = 0;
};

// One streamed completion's exchange: the request, and what it keeps as the body arrives (the
// first 64 KiB, for an error's message; the stream read; the time of the first token). It reads
// to the end of the response, so the connection can be reused. Not to be moved once request()
// has been called: the request's reader writes into it.
struct StreamedExchange {
    CompletionStream stream;
    std::string raw;
    std::optional<std::chrono::steady_clock::time_point> first;
    HttpRequest request(const std::string& url, std::string body,
                        const std::vector<std::string>& headers, double timeoutS);
};

// The message of an OpenAI/vLLM/SGLang error body ({"error":{"message"}}, {"message"},
// {"detail"}), else the body itself cut to 300 characters.
std::string errorMessage(std::string_view body);

// Quantile q in [0, 1] of the samples (kvbe/base/statistics.h).
using kvbe::quantile;

struct CsvRow {
    std::string curve; // cold_prefill or cache_hit
    std::string serverConfig;
    double docSize = 0, prefixLen = 0, prefixFrac = 0;
    int concurrency = 1;
    int queries = 0, successful = 0;
    std::vector<double> ttfts; // seconds; empty when the row failed
    std::string error;
};
std::string paretoCsv(const std::vector<CsvRow>& rows);

// A threshold as py-kvcache stores it: whole tokens rounded up to the block.
double blockCeil(double tokens, int block);

} // namespace kvbe::serving::detail
