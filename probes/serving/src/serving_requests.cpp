// One request of the serving sweep and the server routes around it: a streamed completion and
// its TTFT (with retries on 429/503), text prompts through POST /tokenize when token ids are
// refused, the /metrics hit counters, and clearing the GPU prefix cache.
#include "serving_parts.h"
#include "serving_sweep.h"

#include "kvbe/probes/stream.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace kvbe::serving::detail {

std::optional<std::int64_t> Sweep::tokenCount(const std::string& text, bool special,
                                              std::string& why) {
    HttpRequest req;
    req.method = "POST";
    req.url = m_root + "/tokenize";
    req.headers = m_headers;
    req.body =
        nlohmann::json{{"model", m_s.model}, {"prompt", text}, {"add_special_tokens", special}}
            .dump();
    req.timeoutS = std::min(30.0, m_s.timeoutS);
    const HttpResponse r = m_http.send(req, [this] { return stopping(); });
    if (r.status != 200) {
        why = "POST " + req.url + " answered " +
              (r.status ? std::to_string(r.status) + ": " + detail::errorMessage(r.body)
                        : r.transportError);
        return std::nullopt;
    }
    const auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_object() && j.contains("count") && j["count"].is_number_integer())
        return j["count"].get<std::int64_t>();
    if (j.is_object() && j.contains("tokens") && j["tokens"].is_array())
        return static_cast<std::int64_t>(j["tokens"].size());
    why = "POST " + req.url + " answered without \"count\" or \"tokens\"";
    return std::nullopt;
}

Sent Sweep::useTextPrompts(const std::string& refusal) {
    // Common English words; those the tokenizer keeps whole (with their leading space) make
    // prompts whose token count is their word count.
    static const char* const kWords[] = {
        "the",     "of",    "and",   "to",      "in",    "is",     "was",    "for",   "that",
        "on",      "as",    "with",  "by",      "at",    "from",   "his",    "an",    "were",
        "are",     "which", "this",  "be",      "or",    "had",    "not",    "but",   "one",
        "their",   "its",   "new",   "after",   "who",   "they",   "have",   "her",   "she",
        "two",     "been",  "other", "when",    "there", "all",    "into",   "time",  "may",
        "years",   "more",  "most",  "only",    "over",  "city",   "some",   "world", "would",
        "where",   "later", "up",    "such",    "used",  "many",   "can",    "state", "about",
        "out",     "known", "then",  "made",    "also",  "people", "year",   "part",  "until",
        "family",  "no",    "these", "between", "high",  "him",    "three",  "under", "team",
        "through", "both",  "film",  "while",   "being", "well",   "second", "south", "north",
        "since",   "group", "could", "first",   "game",  "house",  "water",  "music", "book",
        "day"};
    const std::string refused = m_completions + " refused token-id prompts (" + refusal + ")";
    std::string why;
    for (const char* w : kWords) {
        const std::string word = std::string(" ") + w;
        const auto n = tokenCount(word, false, why);
        if (!n)
            return {ExitCode::CannotRun, refused + " and its tokenizer cannot be asked: " + why};
        if (*n == 1) m_words.push_back(word);
    }
    if (m_words.size() < 16)
        return {ExitCode::CannotRun,
                refused + ", and its tokenizer keeps only " + std::to_string(m_words.size()) +
                    " of " + std::to_string(std::size(kWords)) +
                    " common words whole, too few to make prompts of known length"};
    const auto withSpecial = tokenCount(m_words.front(), true, why);
    if (!withSpecial)
        return {ExitCode::CannotRun, refused + " and its tokenizer cannot be asked: " + why};
    m_specialTokens = *withSpecial - 1;
    m_textPrompts = true;
    return {};
}

Sent Sweep::send(const std::vector<int>& ids) {
    nlohmann::json body = {{"model", m_s.model}, {"prompt", ids},
                           {"max_tokens", 1},    {"stream", true},
                           {"temperature", 0},   {"stream_options", {{"include_usage", true}}}};
    // llama.cpp: every request on one slot, so that its erase, save and restore act on the
    // prompt the sweep sent (tools/server/server-context.cpp reads "id_slot" from the body).
    if (isLlama()) body["id_slot"] = m_slot;
    const std::string what = std::to_string(ids.size()) + "-token prompt";
    const auto expected = static_cast<double>(ids.size()) +
                          (m_textPrompts ? static_cast<double>(m_specialTokens) : 0.0);
    if (m_textPrompts) {
        // Not timed: the prompt's length as the server's tokenizer counts it, before it is sent.
        const std::string prompt = promptText(ids);
        std::string why;
        const auto n = tokenCount(prompt, true, why);
        if (!n) return {ExitCode::Failed, why};
        if (static_cast<double>(*n) != expected)
            return {ExitCode::CannotRun, "POST " + m_root + "/tokenize counts " +
                                             std::to_string(*n) + " tokens for a text " + what +
                                             " (" + fmt(expected, 0) +
                                             " expected): its prompt lengths cannot be held exact"};
        body["prompt"] = prompt;
    }
    const std::string text = body.dump();
    double wait = m_s.retryWaitS, waited = 0;
    for (int attempt = 1;; ++attempt) {
        detail::StreamedExchange x;
        const HttpRequest req = x.request(m_completions, text, m_headers, m_s.timeoutS);
        const auto& stream = x.stream;
        const auto& raw = x.raw;
        const auto& first = x.first;
        const auto t0 = Clock::now();
        const HttpResponse r = m_http.send(req, [this] { return stopping(); });
        Sent s;
        if (r.stopped) return {ExitCode::Stopped, probes::stopMessage()};
        if (r.connectFailed)
            return {ExitCode::CannotRun,
                    "cannot reach " + m_completions + ": " + r.transportError +
                        "; is the server running and listening there (--endpoint)?"};
        if (r.timedOut)
            return {ExitCode::Failed,
                    m_completions + " did not finish a " + what + " within " +
                        fmt(m_s.timeoutS, 1) + " s (--timeout)" +
                        (first ? ", though its first token came" : ", no first token came")};
        if (r.status == 429 || r.status == 503) {
            const std::string msg = detail::errorMessage(raw);
            if (attempt >= m_s.maxTries)
                return {ExitCode::Failed,
                        m_completions + " answered " + std::to_string(r.status) + " (" +
                            (r.status == 429 ? "too many requests" : "service unavailable") + ") " +
                            std::to_string(attempt) + " times in a row for a " + what +
                            "; gave up after waiting " + fmt(waited, 1) + " s: " + msg};
            const double w = r.retryAfterS >= 0 ? std::max(r.retryAfterS, m_s.retryWaitS) : wait;
            ++m_retries;
            m_sink.note("the server answered " + std::to_string(r.status) + " (" + msg +
                        "); waiting " + fmt(w, 2) + " s before try " + std::to_string(attempt + 1) +
                        " of " + std::to_string(m_s.maxTries));
            if (!sleepFor(w)) return {ExitCode::Stopped, probes::stopMessage()};
            waited += w;
            wait *= 2;
            continue;
        }
        if (r.status == 401 || r.status == 403)
            return {ExitCode::CannotRun,
                    m_completions + " refused the request (" + std::to_string(r.status) +
                        "): " + detail::errorMessage(raw) +
                        (m_s.apiKeyEnv.empty() ? "; pass the key's variable with --api-key-env VAR"
                                               : "; check the key in $" + m_s.apiKeyEnv)};
        if (r.status == 404)
            return {ExitCode::BadInput,
                    m_completions + " answered 404: " + detail::errorMessage(raw) +
                        "; check --model '" + m_s.model +
                        "' and --endpoint (the OpenAI base URL, ending in /v1)"};
        if (r.status >= 400 && r.status < 500 && !m_textPrompts && !m_idsAccepted && !m_triedText) {
            // The first id prompt refused: perhaps the server takes text only. Tried once.
            m_triedText = true;
            const std::string refusal = detail::errorMessage(raw);
            const Sent textTry = useTextPrompts(refusal);
            if (textTry.exit != ExitCode::Ok)
                m_sink.note("text prompts instead: " + textTry.message);
            if (textTry.exit == ExitCode::Ok) {
                Sent asText = send(ids);
                if (asText.ok() || !asText.skipLength) {
                    if (asText.ok())
                        note(m_completions + " refused token-id prompts (" + refusal +
                             "); prompts are text made of " + std::to_string(m_words.size()) +
                             " words its tokenizer keeps whole, each prompt's length " +
                             "checked with POST " + m_root + "/tokenize");
                    return asText;
                }
                // Refused as text too: it was the prompt, not the ids. Back to ids.
                m_textPrompts = false;
                m_words.clear();
            }
        }
        if (r.status >= 400 && r.status < 500) {
            s.skipLength = true;
            s.exit = ExitCode::Failed;
            s.message = m_completions + " refused a " + what + " (" + std::to_string(r.status) +
                        "): " + detail::errorMessage(raw);
            return s;
        }
        if (r.status != 200)
            return {ExitCode::Failed, m_completions + " answered " + std::to_string(r.status) +
                                          " for a " + what + ": " + detail::errorMessage(raw)};
        if (!stream.error().empty())
            return {ExitCode::Failed, "the stream from " + m_completions +
                                          " reported an error for a " + what + ": " +
                                          stream.error()};
        if (!stream.done())
            return {ExitCode::Failed,
                    "the stream from " + m_completions + " stopped half-way for a " + what + " (" +
                        std::to_string(stream.bytes()) + " bytes, " +
                        (first ? "after the first token" : "before the first token") +
                        ", no [DONE]" + (r.transportError.empty() ? "" : "; " + r.transportError) +
                        ")"};
        if (!first)
            return {ExitCode::Failed,
                    "the stream from " + m_completions + " ended without a token for a " + what};
        if (stream.promptTokens() && *stream.promptTokens() != expected)
            return {ExitCode::Failed,
                    m_completions + " counted " + fmt(*stream.promptTokens(), 0) +
                        " prompt tokens for a " + what + " (usage.prompt_tokens): the " +
                        (m_textPrompts ? "text" : "ids") + " were not taken as they were sent"};
        if (!m_textPrompts) m_idsAccepted = true;
        s.ttftS = std::chrono::duration<double>(*first - t0).count();
        s.cached = stream.cachedTokens();
        s.cachedSource = stream.cachedSource();
        return s;
    }
}

Sent Sweep::post(const std::string& path, bool& notFound, std::string* body) {
    HttpRequest req;
    req.method = "POST";
    req.url = m_root + path;
    req.headers = m_headers;
    req.timeoutS = std::min(60.0, m_s.timeoutS);
    const HttpResponse r = m_http.send(req, [this] { return stopping(); });
    notFound = r.status == 404 || r.status == 405;
    if (r.stopped) return {ExitCode::Stopped, probes::stopMessage()};
    if (!r.transportError.empty())
        return {ExitCode::Failed, "POST " + req.url + ": " + r.transportError};
    if (r.status != 200 && !notFound)
        return {ExitCode::Failed, "POST " + req.url + " answered " + std::to_string(r.status) +
                                      ": " + detail::errorMessage(r.body)};
    if (body) *body = r.body;
    return {};
}

Counters Sweep::counters() {
    Counters c;
    if (!m_haveMetrics) return c;
    HttpRequest req;
    req.url = m_root + "/metrics";
    req.headers = m_headers;
    req.timeoutS = std::min(30.0, m_s.timeoutS);
    const HttpResponse r = m_http.send(req, [this] { return stopping(); });
    if (r.status != 200) return c;
    const auto hc = detail::hitCounters(r.body);
    c.hits = hc.gpu;
    c.extHits = hc.offload;
    return c;
}

namespace {
// {"success": false} (or "status": "error"), as a reset's answer that it did nothing.
bool refusedReset(const std::string& body) {
    const auto j = nlohmann::json::parse(body, nullptr, false);
    if (!j.is_object()) return false;
    if (j.contains("success") && j["success"].is_boolean()) return !j["success"].get<bool>();
    return false;
}
} // namespace

Sent Sweep::resetGpuCache() {
    std::vector<std::string> routes;
    if (!m_resetPath.empty())
        routes = {m_resetPath};
    else if (m_s.reset == "vllm")
        routes = {"/reset_prefix_cache"};
    else if (m_s.reset == "sglang")
        routes = {"/flush_cache"};
    else if (m_s.reset == "auto")
        routes = {"/reset_prefix_cache", "/flush_cache"};
    // SGLang's POST /flush_cache empties HiCache's host tier too (HiRadixCache.reset() clears
    // token_to_kv_pool_host), so an offload hit after it finds nothing: the GPU copy is
    // evicted with filler prompts instead, which moves it to the host tier.
    if (m_engine == Engine::Sglang) {
        if (m_resetPath.empty())
            note("SGLang's POST /flush_cache would also empty HiCache's host tier "
                 "(HiRadixCache.reset), so it is not used: the GPU copy is evicted with filler "
                 "prompts instead");
        routes.clear();
    }
    for (const auto& route : routes) {
        bool notFound = false;
        std::string body;
        Sent s = post(route, notFound, &body);
        if (!s.ok()) return s;
        // A server that says the reset did not happen ({"success": false}, the engine's answer
        // where an API passes it on) is waited out: blocks still held are freed within moments.
        double wait = 0.1;
        for (int attempt = 1; !notFound && refusedReset(body); ++attempt) {
            if (attempt == 6)
                return {ExitCode::Failed, "POST " + m_root + route + " answered " + body +
                                              " 6 times in a row over " + fmt(2 * wait - 0.1, 1) +
                                              " s: the server would not clear its prefix cache"};
            note("POST " + m_root + route + " answered " + body + " (try " +
                 std::to_string(attempt) + "): the cache was not cleared; waiting " + fmt(wait, 2) +
                 " s and asking again");
            ++m_resetRetries;
            if (!sleepFor(wait)) return {ExitCode::Stopped, probes::stopMessage()};
            wait *= 2;
            s = post(route, notFound, &body);
            if (!s.ok()) return s;
        }
        if (!notFound) {
            if (m_resetPath.empty())
                note("the GPU prefix cache is cleared with POST " + m_root + route);
            m_resetPath = route;
            return {};
        }
    }
    if (m_s.reset != "auto" && m_s.reset != "filler" && m_engine != Engine::Sglang)
        return {ExitCode::CannotRun, "POST " + m_root + routes.front() +
                                         " is not there (404): the server has no such reset "
                                         "endpoint; try --reset auto or filler"};
    // No reset endpoint: evict with filler traffic, sized from the KV capacity the server reports.
    if (!m_capacityTokens)
        return {ExitCode::CannotRun,
                "cannot clear the GPU prefix cache: " + m_root +
                    (m_engine == Engine::Sglang
                         ? " is SGLang, whose /flush_cache empties the host tier too,"
                     : routes.empty() ? " was given --reset filler,"
                                      : " has no reset endpoint (POST /reset_prefix_cache and "
                                        "/flush_cache answered 404),") +
                    " and its /metrics reports no KV capacity (vllm:cache_config_info "
                    "num_gpu_blocks and block_size, or sglang:max_total_num_tokens) to size "
                    "filler traffic; llama.cpp's llama-server is cleared with --reset llamacpp"};
    const std::int64_t longest = m_s.lengths.back();
    const auto count =
        static_cast<int>(std::ceil(1.25 * *m_capacityTokens / static_cast<double>(longest)));
    if (count > 2000)
        return {ExitCode::CannotRun, "evicting " + fmt(*m_capacityTokens, 0) +
                                         " tokens of GPU prefix cache would take " +
                                         std::to_string(count) +
                                         " filler requests; give the server a reset endpoint"};
    if (m_resetPath.empty()) {
        note(std::string(m_engine == Engine::Sglang ? "" : "no reset endpoint: ") +
             "the GPU prefix cache is evicted with " + std::to_string(count) +
             " filler prompts of " + std::to_string(longest) + " tokens (KV capacity " +
             fmt(*m_capacityTokens, 0) + " tokens)");
        m_resetPath = "filler";
    }
    for (int i = 0; i < count; ++i) {
        Sent s = send(fresh(longest));
        if (!s.ok()) return s;
    }
    return {};
}

} // namespace kvbe::serving::detail
