#include "serving_parts.h"

#include "kvbe/base/csv.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kvbe::serving::detail {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// Calls f(name, labels, value) for every sample line of a Prometheus text body.
template <class F> void eachSample(std::string_view text, F f) {
    size_t start = 0;
    while (start < text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view line = trim(text.substr(start, end - start));
        start = end + 1;
        if (line.empty() || line.front() == '#') continue;
        size_t nameEnd = line.find_first_of("{ \t");
        if (nameEnd == std::string_view::npos) continue;
        const std::string_view name = line.substr(0, nameEnd);
        std::string_view labels;
        std::string_view rest = line.substr(nameEnd);
        if (rest.front() == '{') {
            // Label values may hold '}' inside quotes: find the brace that closes the set.
            bool quoted = false;
            size_t close = std::string_view::npos;
            for (size_t i = 1; i < rest.size(); ++i) {
                if (rest[i] == '\\' && quoted) {
                    ++i;
                    continue;
                }
                if (rest[i] == '"')
                    quoted = !quoted;
                else if (rest[i] == '}' && !quoted) {
                    close = i;
                    break;
                }
            }
            if (close == std::string_view::npos) continue;
            labels = rest.substr(1, close - 1);
            rest = rest.substr(close + 1);
        }
        rest = trim(rest);
        const size_t sp = rest.find_first_of(" \t");
        const std::string value(rest.substr(0, sp));
        char* endp = nullptr;
        const double v = std::strtod(value.c_str(), &endp);
        if (value.empty() || endp != value.c_str() + value.size()) continue;
        f(name, labels, v);
    }
}

} // namespace

std::optional<double> promSum(std::string_view text, std::string_view name) {
    std::optional<double> sum;
    eachSample(text, [&](std::string_view n, std::string_view, double v) {
        if (n == name) sum = sum.value_or(0) + v;
    });
    return sum;
}

namespace {

std::map<std::string, std::string> parseLabels(std::string_view labels) {
    std::map<std::string, std::string> m;
    size_t i = 0;
    while (i < labels.size()) {
        const size_t eq = labels.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= labels.size() || labels[eq + 1] != '"') break;
        const std::string key(trim(labels.substr(i, eq - i)));
        std::string value;
        size_t j = eq + 2;
        for (; j < labels.size() && labels[j] != '"'; ++j) {
            if (labels[j] == '\\' && j + 1 < labels.size()) ++j;
            value += labels[j];
        }
        m[key] = value;
        i = labels.find(',', j);
        if (i == std::string_view::npos) break;
        ++i;
    }
    return m;
}

} // namespace

std::optional<std::map<std::string, std::string>> promLabels(std::string_view text,
                                                             std::string_view name) {
    std::optional<std::map<std::string, std::string>> out;
    eachSample(text, [&](std::string_view n, std::string_view labels, double) {
        if (!out && n == name) out = parseLabels(labels);
    });
    return out;
}

HitCounters hitCounters(std::string_view text) {
    HitCounters c;
    c.gpu = promSum(text, "vllm:prefix_cache_hits_total");
    if (c.gpu) {
        c.server = "vLLM";
        c.offload = promSum(text, "vllm:external_prefix_cache_hits_total");
        return c;
    }
    // SGLang (python/sglang/srt/metrics/collector.py): one counter, by cache_source where split:
    // device (GPU), host and storage_<Backend> (HiCache's tiers), and "total" where the
    // scheduler could not split a request's count: that one holds GPU hits too, so it counts
    // as neither tier (a "hit" it alone reports is not verified as an offload hit).
    bool sglang = false;
    eachSample(text, [&](std::string_view n, std::string_view labels, double v) {
        if (n.substr(0, 7) == "sglang:") sglang = true;
        if (n != "sglang:cached_tokens_total") return;
        const auto m = parseLabels(labels);
        const auto source = m.find("cache_source");
        c.labelled = c.labelled || source != m.end();
        if (source == m.end() || source->second == "device")
            c.gpu = c.gpu.value_or(0) + v;
        else if (source->second == "host" || source->second.rfind("storage", 0) == 0)
            c.offload = c.offload.value_or(0) + v;
    });
    if (!sglang) return c;
    c.server = "SGLang";
    // A labelled counter has no series until its first cached token (prometheus_client adds a
    // label set when it is first incremented): on a fresh server there is nothing yet, which
    // reads 0, not "no counter". SGLang's own names (sglang:prompt_tokens_total) say it is one.
    if (!c.gpu && !c.offload) c.labelled = true;
    if (c.labelled) {
        c.gpu = c.gpu.value_or(0);
        c.offload = c.offload.value_or(0);
    }
    return c;
}

bool CompletionStream::feed(std::string_view chunk) {
    m_bytes += chunk.size();
    m_pending.append(chunk);
    size_t start = 0;
    while (!m_done && m_error.empty()) {
        const size_t nl = m_pending.find('\n', start);
        if (nl == std::string::npos) break;
        line(std::string_view(m_pending).substr(start, nl - start));
        start = nl + 1;
    }
    m_pending.erase(0, start);
    return !m_done && m_error.empty();
}

void CompletionStream::line(std::string_view l) {
    l = trim(l);
    if (l.empty() || l.front() == ':') return; // SSE comments keep connections alive
    constexpr std::string_view kData = "data:";
    if (l.substr(0, kData.size()) != kData) return;
    const std::string_view payload = trim(l.substr(kData.size()));
    if (payload == "[DONE]") {
        m_done = true;
        return;
    }
    const auto j = nlohmann::json::parse(payload, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        m_error = "a stream line that is not JSON: " + std::string(payload.substr(0, 200));
        return;
    }
    if (j.contains("error") || (j.contains("object") && j["object"] == "error")) {
        m_error = errorMessage(payload);
        return;
    }
    if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
        const auto& c = j["choices"][0];
        // The first token is the first choice with text, or any finish (a token that decodes
        // to nothing still ends prefill).
        if ((c.contains("text") && c["text"].is_string() &&
             !c["text"].get<std::string>().empty()) ||
            (c.contains("finish_reason") && !c["finish_reason"].is_null()))
            m_firstToken = true;
    }
    if (j.contains("usage") && j["usage"].is_object()) {
        const auto& u = j["usage"];
        if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number())
            m_promptTokens = u["prompt_tokens"].get<double>();
        if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
            const auto& d = u["prompt_tokens_details"];
            if (d.contains("cached_tokens") && d["cached_tokens"].is_number())
                m_cachedTokens = d["cached_tokens"].get<double>();
        }
    }
    // llama.cpp's server adds its slot's timings to the last chunk (tools/server/server-task.cpp,
    // server_slot_stats::to_json): cache_n reused (its prompt_n, computed, is not read).
    if (j.contains("timings") && j["timings"].is_object()) {
        const auto& t = j["timings"];
        if (t.contains("cache_n") && t["cache_n"].is_number())
            m_cacheN = t["cache_n"].get<double>();
    }
}

std::string errorMessage(std::string_view body) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_object()) {
        if (j.contains("error") && j["error"].is_object() && j["error"].contains("message") &&
            j["error"]["message"].is_string())
            return j["error"]["message"].get<std::string>();
        if (j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
        if (j.contains("message") && j["message"].is_string())
            return j["message"].get<std::string>();
        if (j.contains("detail"))
            return j["detail"].is_string() ? j["detail"].get<std::string>() : j["detail"].dump();
    }
    std::string s(trim(body));
    if (s.size() > 300) s = s.substr(0, 300) + "…";
    return s.empty() ? "(no message in the body)" : s;
}

namespace {
std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}
} // namespace

std::string paretoCsv(const std::vector<CsvRow>& rows) {
    std::string out =
        "curve,server_config,doc_size,prefix_len,prefix_frac,concurrency,n_queries,n_successful,"
        "ttft_mean_s,ttft_median_s,ttft_p05_s,ttft_p95_s,ttft_p99_s,gpu_transfer_csv,error\n";
    for (const auto& r : rows) {
        out += r.curve + "," + csvField(r.serverConfig) + "," + num(r.docSize) + "," +
               num(r.prefixLen) + "," + num(r.prefixFrac) + "," + std::to_string(r.concurrency) +
               "," + std::to_string(r.queries) + "," + std::to_string(r.successful) + ",";
        if (r.ttfts.empty() || !r.error.empty()) {
            out += ",,,,,," + csvField(r.error) + "\n";
            continue;
        }
        double sum = 0;
        for (double t : r.ttfts)
            sum += t;
        out += num(sum / static_cast<double>(r.ttfts.size())) + "," + num(quantile(r.ttfts, 0.5)) +
               "," + num(quantile(r.ttfts, 0.05)) + "," + num(quantile(r.ttfts, 0.95)) + "," +
               num(quantile(r.ttfts, 0.99)) + ",,\n";
    }
    return out;
}

double blockCeil(double tokens, int block) {
    const double b = std::max(1, block);
    return std::ceil(tokens / b - 1e-9) * b;
}

HttpRequest StreamedExchange::request(const std::string& url, std::string body,
                                      const std::vector<std::string>& headers, double timeoutS) {
    HttpRequest req;
    req.method = "POST";
    req.url = url;
    req.body = std::move(body);
    req.headers = headers;
    req.timeoutS = timeoutS;
    req.onBody = [this](std::string_view chunk) {
        if (raw.size() < 65536) raw.append(chunk.substr(0, 65536 - raw.size()));
        stream.feed(chunk);
        if (!first && stream.firstToken()) first = std::chrono::steady_clock::now();
        return true;
    };
    return req;
}

} // namespace kvbe::serving::detail
