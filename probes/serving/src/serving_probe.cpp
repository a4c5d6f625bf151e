// The serving sweep. One request at a time (concurrency 1: queueing is not part of the cost
// model). Per repeat, the lengths come in a rotated order and, per length, a cold prompt, then
// for each fraction a GPU hit and an offload hit; every prompt is made of fresh random token
// ids, so nothing from an earlier run or repeat can be in any cache. Prime requests and cache
// resets are not timed. Counters are read from /metrics before and after each timed request.
#include "kvbe/serving/serving_probe.h"

#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "serving_outputs.h"
#include "serving_parts.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <thread>

namespace kvbe::serving {
namespace {

using Clock = std::chrono::steady_clock;
using probes::ExitCode;
using probes::ProbeOutcome;

struct Counters {
    std::optional<double> hits, extHits; // prefix-cache hit tokens, GPU and offload (HitCounters)
};

// What one request came to.
struct Sent {
    ExitCode exit = ExitCode::Ok;
    std::string message;
    bool skipLength = false; // a 4xx that refuses this prompt (too long): skip the length
    double ttftS = 0;
    bool ok() const { return exit == ExitCode::Ok && !skipLength; }
};

std::string fmt(double v, int decimals) {
    return probes::fixedDecimals(v, decimals);
}

std::string tokensText(std::int64_t n) {
    if (n >= 1024 && n % 1024 == 0) return std::to_string(n / 1024) + "k";
    return std::to_string(n);
}

class Sweep {
  public:
    Sweep(const ServingSettings& s, probes::ProbeSink& sink, HttpClient& http)
        : m_s(s), m_sink(sink), m_http(http), m_rng(std::random_device{}()) {
        m_root = s.endpoint;
        while (!m_root.empty() && m_root.back() == '/')
            m_root.pop_back();
        m_completions = m_root + "/completions";
        // The server's own routes (/metrics, /reset_prefix_cache) live above /v1.
        if (m_root.size() >= 3 && m_root.compare(m_root.size() - 3, 3, "/v1") == 0)
            m_root.resize(m_root.size() - 3);
        const double vocab = s.costInputs.model.vocab;
        // Ordinary ids only: the first thousand and the top of large vocabularies hold special
        // tokens.
        m_idHi = vocab > 2000 ? static_cast<int>(std::min(vocab - 1, 32000.0)) : 30000;
        m_headers = {"Content-Type: application/json", "Accept: text/event-stream"};
    }

    ProbeOutcome run();

  private:
    struct Cell {
        std::int64_t tokens = 0;
        double fraction = 0;
        std::int64_t prefix = 0; // block-aligned prefix asked for
        std::string tier;        // "" for cold
        std::vector<double> ttft;
        std::vector<double> counted; // hit tokens the server counted per accepted sample
        int queries = 0, rejected = 0;
        std::string rejectReason;
    };

    bool stopping() const { return probes::stopRequested(); }
    std::vector<int> fresh(std::int64_t n) {
        std::uniform_int_distribution<int> d(1000, m_idHi - 1);
        std::vector<int> ids(static_cast<size_t>(n));
        for (auto& i : ids)
            i = d(m_rng);
        return ids;
    }
    Sent send(const std::vector<int>& ids);
    // Token ids refused: prompts become text of words the server's tokenizer makes one token
    // of, found and checked with its POST /tokenize (vLLM's shape). Exit Ok with m_textPrompts
    // set, or the sentence why not.
    Sent useTextPrompts(const std::string& refusal);
    // The server's token count of a text (POST /tokenize), or a sentence.
    std::optional<std::int64_t> tokenCount(const std::string& text, bool special, std::string& why);
    std::string promptText(const std::vector<int>& ids) const {
        std::string text;
        for (int id : ids)
            text += m_words[static_cast<size_t>(id) % m_words.size()];
        return text;
    }
    Sent post(const std::string& path, bool& notFound);
    bool sleepFor(double s) {
        const auto until = Clock::now() + std::chrono::duration<double>(s);
        while (Clock::now() < until) {
            if (stopping()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return true;
    }
    Counters counters();
    Sent resetGpuCache();
    Sent measure(Cell& cell);
    // The steps of run(): the header line and the API key; /metrics (the counters that verify
    // hits, the KV capacity filler eviction needs); the cells to measure; the drift reference;
    // every cell, repeats interleaved; the drift; what finishSweep summarises.
    std::optional<ProbeOutcome> begin();
    std::optional<ProbeOutcome> readMetrics();
    std::vector<Cell> planCells();
    std::optional<Sent> reference(std::int64_t refN, int count, std::vector<double>& out);
    std::optional<Sent> measureAll(std::vector<Cell>& cells,
                                   std::map<std::int64_t, std::string>& skippedLengths);
    double checkDrift(std::int64_t refN, const std::vector<double>& refStart,
                      const std::vector<double>& refEnd);
    SweepData sweepData(const std::vector<Cell>& cells,
                        const std::map<std::int64_t, std::string>& skippedLengths, double driftRel,
                        std::int64_t refN) const;
    // One more request done, for the progress line.
    void step(const std::string& what);
    ProbeOutcome fail(ExitCode e, const std::string& m) {
        return probes::reportFailure(m_sink, e, m);
    }
    ProbeOutcome failSent(const Sent& s) {
        if (s.exit == ExitCode::Stopped) return fail(ExitCode::Stopped, probes::stopMessage());
        return fail(s.exit, s.message);
    }
    void note(const std::string& line) {
        m_notes.push_back(line);
        m_sink.note(line);
    }

    const ServingSettings& m_s;
    probes::ProbeSink& m_sink;
    HttpClient& m_http;
    std::mt19937_64 m_rng;
    std::string m_root, m_completions;
    std::vector<std::string> m_headers;
    int m_idHi = 30000;
    bool m_haveMetrics = false, m_haveHitCounter = false, m_haveExtCounter = false;
    std::string m_resetPath; // the reset route that worked, "" before the first reset
    std::optional<double> m_capacityTokens;
    std::vector<std::string> m_notes;
    int m_done = 0, m_total = 1; // requests sent, and to send
    int m_retries = 0;
    bool m_idsAccepted = false, m_triedText = false, m_textPrompts = false;
    std::vector<std::string> m_words; // text prompts: words of one token each, with their space
    std::int64_t m_specialTokens = 0; // what the server adds to a text prompt (a BOS)
};

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
        detail::CompletionStream stream;
        std::string raw;
        std::optional<Clock::time_point> first;
        HttpRequest req;
        req.method = "POST";
        req.url = m_completions;
        req.body = text;
        req.headers = m_headers;
        req.timeoutS = m_s.timeoutS;
        req.onBody = [&](std::string_view chunk) {
            if (raw.size() < 65536) raw.append(chunk.substr(0, 65536 - raw.size()));
            stream.feed(chunk);
            if (!first && stream.firstToken()) first = Clock::now();
            return true; // read to the end of the response, so the connection can be reused
        };
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
        return s;
    }
}

Sent Sweep::post(const std::string& path, bool& notFound) {
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
    for (const auto& route : routes) {
        bool notFound = false;
        Sent s = post(route, notFound);
        if (!s.ok()) return s;
        if (!notFound) {
            if (m_resetPath.empty())
                note("the GPU prefix cache is cleared with POST " + m_root + route);
            m_resetPath = route;
            return {};
        }
    }
    if (m_s.reset != "auto" && m_s.reset != "filler")
        return {ExitCode::CannotRun, "POST " + m_root + routes.front() +
                                         " is not there (404): the server has no such reset "
                                         "endpoint; try --reset auto or filler"};
    // No reset endpoint: evict with filler traffic, sized from the KV capacity the server reports.
    if (!m_capacityTokens)
        return {ExitCode::CannotRun, "cannot clear the GPU prefix cache: " + m_root +
                                         " has no reset endpoint (POST /reset_prefix_cache and "
                                         "/flush_cache answered 404) and its /metrics "
                                         "reports no KV capacity (vllm:cache_config_info "
                                         "num_gpu_blocks, block_size) to size filler traffic"};
    const std::int64_t longest = m_s.lengths.back();
    const auto count =
        static_cast<int>(std::ceil(1.25 * *m_capacityTokens / static_cast<double>(longest)));
    if (count > 2000)
        return {ExitCode::CannotRun, "evicting " + fmt(*m_capacityTokens, 0) +
                                         " tokens of GPU prefix cache would take " +
                                         std::to_string(count) +
                                         " filler requests; give the server a reset endpoint"};
    if (m_resetPath.empty()) {
        note("no reset endpoint: the GPU prefix cache is evicted with " + std::to_string(count) +
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

Sent Sweep::measure(Cell& cell) {
    const std::int64_t n = cell.tokens, p = cell.prefix;
    std::vector<int> prompt = fresh(n);
    if (!cell.tier.empty()) {
        // The prefix goes in first, untimed; then the same prefix with a fresh suffix.
        const std::vector<int> prefix(prompt.begin(), prompt.begin() + p);
        Sent prime = send(prefix);
        if (!prime.ok()) return prime;
        if (cell.tier != "gpu") {
            Sent r = resetGpuCache();
            if (!r.ok()) return r;
        }
    }
    const Counters before = counters();
    Sent s = send(prompt);
    if (!s.ok()) return s;
    const Counters after = counters();
    ++cell.queries;
    const std::int64_t reachable = std::min(p, (n - 1) / m_s.blockSize * m_s.blockSize);
    const double gpuHit = before.hits && after.hits ? *after.hits - *before.hits : std::nan("");
    const double extHit =
        before.extHits && after.extHits ? *after.extHits - *before.extHits : std::nan("");
    auto reject = [&](const std::string& why) {
        ++cell.rejected;
        cell.rejectReason = why;
        m_sink.note(why);
        return Sent{};
    };
    const std::string at =
        "N=" + std::to_string(n) + (cell.tier.empty() ? "" : ", p=" + std::to_string(p));
    if (cell.tier.empty()) {
        const double hit = (std::isnan(gpuHit) ? 0 : gpuHit) + (std::isnan(extHit) ? 0 : extHit);
        if (hit > m_s.blockSize)
            return reject(
                "cold prompt " + at + ": the server counted " + fmt(hit, 0) +
                " cached tokens, so it was not cold; left out (other traffic on the server?)");
        cell.ttft.push_back(s.ttftS);
        cell.counted.push_back(0);
        return s;
    }
    const double counted = cell.tier == "gpu" ? gpuHit : extHit;
    if (cell.tier != "gpu" && !std::isnan(gpuHit) && gpuHit > m_s.blockSize)
        return {ExitCode::Failed, "after clearing the GPU prefix cache (" + m_resetPath +
                                      ") the server still counted " + fmt(gpuHit, 0) +
                                      " GPU prefix-cache hit tokens for " + at +
                                      ": the reset did not clear it"};
    if (std::isnan(counted)) {
        // Unverified: the server exposes no counter for this tier. Used, and said once.
        cell.ttft.push_back(s.ttftS);
        cell.counted.push_back(static_cast<double>(reachable));
        return s;
    }
    if (counted < static_cast<double>(reachable - m_s.blockSize))
        return reject(cell.tier + " hit " + at + ": the server counted " + fmt(counted, 0) +
                      " of " + std::to_string(reachable) + " prefix tokens as " +
                      (cell.tier == "gpu" ? "GPU prefix-cache" : "offload (external)") + " hits (" +
                      fmt(s.ttftS * 1e3, 2) + " ms), so it is reported as not a hit and left out");
    cell.ttft.push_back(s.ttftS);
    cell.counted.push_back(counted);
    return s;
}

ProbeOutcome Sweep::run() {
    if (auto failed = begin()) return *failed;
    if (auto failed = readMetrics()) return *failed;
    std::vector<Cell> cells = planCells();
    const int drift = 3;
    m_done = 0;
    m_total = m_s.warmup + 2 * drift + static_cast<int>(cells.size()) * m_s.repeats;

    // Warm-up (discarded), then the reference point measured at the start and again at the end.
    const std::int64_t refN = m_s.lengths[m_s.lengths.size() / 2];
    for (int i = 0; i < m_s.warmup; ++i) {
        Sent w = send(fresh(m_s.lengths.front()));
        if (w.skipLength) return fail(ExitCode::Failed, w.message);
        if (!w.ok()) return failSent(w);
        step("warm-up " + std::to_string(i + 1) + " of " + std::to_string(m_s.warmup));
    }
    std::vector<double> refStart, refEnd;
    if (auto bad = reference(refN, drift, refStart)) {
        if (bad->skipLength) return fail(ExitCode::Failed, bad->message);
        return failSent(*bad);
    }
    std::map<std::int64_t, std::string> skippedLengths;
    if (auto bad = measureAll(cells, skippedLengths)) return failSent(*bad);
    if (auto bad = reference(refN, drift, refEnd)) return failSent(*bad);
    const double driftRel = checkDrift(refN, refStart, refEnd);
    if (skippedLengths.size() == m_s.lengths.size())
        return fail(ExitCode::Failed, "every length was refused by the server; the first: " +
                                          skippedLengths.begin()->second);
    return finishSweep(sweepData(cells, skippedLengths, driftRel, refN), m_sink);
}

std::optional<ProbeOutcome> Sweep::begin() {
    const auto& s = m_s;
    nlohmann::ordered_json params = {{"endpoint", s.endpoint},
                                     {"model", s.model},
                                     {"lengths", s.lengths},
                                     {"fractions", s.fractions},
                                     {"repeats", s.repeats},
                                     {"concurrency", s.concurrency},
                                     {"tiers", nlohmann::ordered_json::array()},
                                     {"offload_tier", s.offloadTier},
                                     {"reset", s.reset},
                                     {"block_size", s.blockSize},
                                     {"timeout_s", s.timeoutS}};
    if (s.tierGpu) params["tiers"].push_back("gpu");
    if (s.tierOffload) params["tiers"].push_back("offload");
    m_sink.begin("serving", params);
    if (const char* env = s.apiKeyEnv.empty() ? nullptr : std::getenv(s.apiKeyEnv.c_str())) {
        if (*env) m_headers.push_back(std::string("Authorization: Bearer ") + env);
    } else if (!s.apiKeyEnv.empty()) {
        return fail(ExitCode::BadInput,
                    "--api-key-env " + s.apiKeyEnv + ": the variable is not set");
    }
    return std::nullopt;
}

std::optional<ProbeOutcome> Sweep::readMetrics() {
    const auto& s = m_s;
    HttpRequest req;
    req.url = m_root + "/metrics";
    req.headers = m_headers;
    req.timeoutS = std::min(30.0, s.timeoutS);
    const HttpResponse r = m_http.send(req, [this] { return stopping(); });
    if (r.stopped) return fail(ExitCode::Stopped, probes::stopMessage());
    if (r.connectFailed)
        return fail(ExitCode::CannotRun,
                    "cannot reach " + m_root + "/metrics: " + r.transportError +
                        "; is the server running and listening there (--endpoint)?");
    if (r.status == 200) {
        m_haveMetrics = true;
        const auto hc = detail::hitCounters(r.body);
        m_haveHitCounter = hc.gpu.has_value();
        m_haveExtCounter = hc.offload.has_value();
        if (m_haveHitCounter)
            note("hits are verified against " + hc.server + "'s /metrics counters");
        if (auto info = detail::promLabels(r.body, "vllm:cache_config_info")) {
            const auto blocks = info->find("num_gpu_blocks"), block = info->find("block_size");
            if (blocks != info->end() && block != info->end())
                m_capacityTokens =
                    std::atof(blocks->second.c_str()) * std::atof(block->second.c_str());
        }
    }
    if (!m_haveHitCounter)
        note("hits are not verified: " + m_root + "/metrics " +
             (m_haveMetrics
                  ? "has neither vllm:prefix_cache_hits_total nor sglang:cached_tokens_total"
                  : "answered " + std::to_string(r.status)));
    else if (s.tierOffload && !m_haveExtCounter)
        note("offload hits are not verified: " + m_root +
             "/metrics has no vllm:external_prefix_cache_hits_total nor "
             "sglang:cached_tokens_total by cache_source");
    return std::nullopt;
}

std::vector<Sweep::Cell> Sweep::planCells() {
    const auto& s = m_s;
    std::vector<Cell> cells;
    std::vector<std::pair<std::int64_t, double>> skippedFractions;
    auto cell = [](std::int64_t tokens, double f, std::int64_t p, std::string tier) {
        Cell c;
        c.tokens = tokens;
        c.fraction = f;
        c.prefix = p;
        c.tier = std::move(tier);
        return c;
    };
    for (auto n : s.lengths) {
        cells.push_back(cell(n, 0, 0, ""));
        for (double f : s.fractions) {
            const std::int64_t p =
                static_cast<std::int64_t>(std::floor(f * static_cast<double>(n) / s.blockSize)) *
                s.blockSize;
            if (p < s.blockSize) {
                skippedFractions.emplace_back(n, f);
                continue;
            }
            if (s.tierGpu) cells.push_back(cell(n, f, p, "gpu"));
            if (s.tierOffload) cells.push_back(cell(n, f, p, s.offloadTier));
        }
    }
    for (const auto& [n, f] : skippedFractions)
        note("fraction " + fmt(f, 2) + " of " + std::to_string(n) + " tokens is less than one " +
             std::to_string(s.blockSize) + "-token block; skipped");
    return cells;
}

void Sweep::step(const std::string& what) {
    ++m_done;
    m_sink.progress(std::min(1.0, static_cast<double>(m_done) / m_total), what);
}

std::optional<Sent> Sweep::reference(std::int64_t refN, int count, std::vector<double>& out) {
    for (int i = 0; i < count; ++i) {
        Sent r = send(fresh(refN));
        if (!r.ok()) return r;
        out.push_back(r.ttftS);
        step("drift reference, " + tokensText(refN) + " tokens cold");
    }
    return std::nullopt;
}

std::optional<Sent> Sweep::measureAll(std::vector<Cell>& cells,
                                      std::map<std::int64_t, std::string>& skippedLengths) {
    const auto& s = m_s;
    const auto& lengths = s.lengths;
    for (int r = 0; r < s.repeats; ++r) {
        // Interleaved: each repeat starts at another length, so a slow drift spreads over all.
        for (size_t k = 0; k < lengths.size(); ++k) {
            const std::int64_t n = lengths[(k + static_cast<size_t>(r)) % lengths.size()];
            for (auto& cell : cells) {
                if (cell.tokens != n) continue;
                if (skippedLengths.count(n)) {
                    step("skipped " + tokensText(n));
                    continue;
                }
                Sent m = measure(cell);
                if (m.skipLength) {
                    skippedLengths[n] = m.message;
                    note("length " + std::to_string(n) + " skipped: " + m.message);
                } else if (!m.ok()) {
                    return m;
                }
                step("repeat " + std::to_string(r + 1) + "/" + std::to_string(s.repeats) + ", " +
                     tokensText(n) +
                     (cell.tier.empty() ? " cold"
                                        : " " + cell.tier + " hit, " + fmt(cell.fraction * 100, 0) +
                                              " % cached"));
            }
        }
    }
    return std::nullopt;
}

double Sweep::checkDrift(std::int64_t refN, const std::vector<double>& refStart,
                         const std::vector<double>& refEnd) {
    const double startMed = detail::quantile(refStart, 0.5), endMed = detail::quantile(refEnd, 0.5);
    const double driftRel = (endMed - startMed) / startMed;
    if (std::abs(driftRel) > m_s.driftLimit)
        note("warning: TTFT drifted during the run: the " + std::to_string(refN) +
             "-token cold point took " + fmt(startMed * 1e3, 2) + " ms at the start and " +
             fmt(endMed * 1e3, 2) + " ms at the end (" + (driftRel > 0 ? "+" : "") +
             fmt(driftRel * 100, 1) + " %, over " + fmt(m_s.driftLimit * 100, 0) +
             " %): other load on the server or thermal throttling; the fit is suspect");
    return driftRel;
}

SweepData Sweep::sweepData(const std::vector<Cell>& cells,
                           const std::map<std::int64_t, std::string>& skippedLengths,
                           double driftRel, std::int64_t refN) const {
    SweepData data;
    data.settings = &m_s;
    data.driftRelative = driftRel;
    data.referenceTokens = static_cast<double>(refN);
    data.retries = m_retries;
    data.resetMethod = m_resetPath;
    data.verified = m_haveHitCounter;
    data.offloadVerified = m_haveExtCounter;
    data.notes = m_notes;
    for (const auto& [n, why] : skippedLengths)
        data.skippedLengths[n] = why;
    for (const auto& c : cells) {
        if (skippedLengths.count(c.tokens)) continue;
        MeasuredCell m;
        m.tokens = c.tokens;
        m.fraction = c.fraction;
        m.prefix = c.prefix;
        m.tier = c.tier;
        m.ttft = c.ttft;
        m.counted = c.counted;
        m.queries = c.queries;
        m.rejected = c.rejected;
        m.rejectReason = c.rejectReason;
        data.cells.push_back(std::move(m));
    }
    return data;
}

} // namespace

std::string ServingProbe::description() const {
    return "End-to-end TTFT against an OpenAI-compatible server (vLLM, SGLang): cold, GPU-hit and "
           "offload-hit prompts, fitted";
}

Status ServingProbe::available() const {
    std::string why;
    if (!makeHttpClient(why)) return Error{why};
    return Ok{};
}

ProbeOutcome ServingProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    std::string why;
    auto http = makeHttpClient(why);
    if (!http) return probes::reportFailure(sink, ExitCode::CannotRun, why);
    Sweep sweep(m_s, sink, *http);
    return sweep.run();
}

} // namespace kvbe::serving
