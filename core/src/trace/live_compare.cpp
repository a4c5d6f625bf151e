// A live replay beside the model's prediction of it (kvbe/trace/live_compare.h).
#include "kvbe/trace/live_compare.h"

#include "kvbe/base/statistics.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_capacity.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

namespace kvbe {

namespace {

namespace fs = std::filesystem;

LiveFigures figures(std::vector<double>& ttft, double cached, double prompt) {
    LiveFigures f;
    if (prompt > 0) f.tokenHitRatio = cached / prompt;
    if (ttft.empty()) return f;
    std::sort(ttft.begin(), ttft.end());
    double sum = 0;
    for (double v : ttft)
        sum += v;
    f.mean = sum / static_cast<double>(ttft.size());
    f.p50 = quantileOfSorted(ttft, 0.5);
    f.p90 = quantileOfSorted(ttft, 0.9);
    f.p99 = quantileOfSorted(ttft, 0.99);
    return f;
}

} // namespace

Result<LiveReplayRun> readLiveReplay(const std::string& dir) {
    const std::string path = (fs::path(dir) / "replay.json").string();
    std::ifstream in(path);
    if (!in)
        return Error{dir + ": no replay.json there; expected the folder probe replay --out wrote"};
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("kvbe_probe") || j["kvbe_probe"] != "replay")
        return Error{path + ": not a probe replay summary (expected \"kvbe_probe\": \"replay\")"};
    for (const char* key :
         {"limit", "duration_cap_s", "rate_scale", "block_tokens", "requests", "servers", "router"})
        if (!j.contains(key))
            return Error{path + ": no \"" + key +
                         "\"; expected the replay.json probe replay writes"};
    LiveReplayRun r;
    r.dir = dir;
    try {
        if (!j["limit"].is_null()) r.limit = j["limit"].get<std::size_t>();
        if (!j["duration_cap_s"].is_null()) r.durationCapS = j["duration_cap_s"].get<double>();
        r.rateScale = j["rate_scale"].get<double>();
        r.blockTokens = j["block_tokens"].get<std::uint32_t>();
        r.requests = j["requests"].get<std::size_t>();
        if (!j["servers"].is_array()) throw nlohmann::json::type_error::create(302, "", nullptr);
        r.servers = j["servers"].size();
        r.router = j["router"].get<std::string>();
        if (j.contains("trace") && j["trace"].is_string()) r.trace = j["trace"].get<std::string>();
        if (j.contains("model") && j["model"].is_string()) r.model = j["model"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
        return Error{path + ": a field of the wrong type (limit, duration_cap_s, rate_scale, "
                            "block_tokens and requests are numbers, servers a list, router a "
                            "text)"};
    }
    if (!(r.rateScale > 0) || r.blockTokens == 0 || r.servers == 0)
        return Error{path + ": expected a rate_scale above 0, block_tokens of at least 1 and at "
                            "least one server"};
    return r;
}

Result<std::optional<ReplayConfig::LlamaCpp>> parseEngine(std::string_view text) {
    if (text.empty()) return std::optional<ReplayConfig::LlamaCpp>{};
    const std::string engine(text);
    const std::string name = engine.substr(0, engine.find(':'));
    if (name != "llama.cpp")
        return Error{"--engine " + engine + ": expected llama.cpp[:cache_ram=SIZE,similarity=F]"};
    ReplayConfig::LlamaCpp l;
    for (std::size_t at = engine.find(':'); at != std::string::npos;) {
        const std::size_t end = engine.find(',', at + 1);
        const std::string kv = engine.substr(at + 1, end == std::string::npos ? end : end - at - 1);
        const auto eq = kv.find('=');
        const std::string key = kv.substr(0, eq),
                          value = eq == std::string::npos ? "" : kv.substr(eq + 1);
        if (key == "cache_ram") {
            auto b = parseBytes(value);
            if (!b || !(*b >= 0))
                return Error{"--engine cache_ram=" + value +
                             ": expected the --cache-ram size, e.g. 16MiB (0: none)"};
            l.cacheRamBytes = *b;
        } else if (key == "similarity") {
            auto v = parseNumber(value);
            if (!v || !(*v >= 0 && *v <= 1))
                return Error{"--engine similarity=" + value +
                             ": expected 0 to 1 (llama.cpp's --slot-prompt-similarity, 0.1 by "
                             "default)"};
            l.slotSimilarity = *v;
        } else {
            return Error{"--engine " + engine + ": '" + key +
                         "' is not a key of llama.cpp; expected cache_ram or similarity"};
        }
        at = end;
    }
    return std::optional<ReplayConfig::LlamaCpp>(l);
}

void applyEngine(const std::optional<ReplayConfig::LlamaCpp>& engine, ReplayConfig& config) {
    if (!engine) return;
    config.llamaCpp = engine;
    config.fleet.enabled = true;
    if (config.instances < 1) config.instances = 1;
}

RequestResult<LiveComparison> compareLiveReplay(const LiveReplayRun& live, const Trace& loaded,
                                                const Evaluation& e, ReplayRequest request,
                                                const std::optional<ReplayConfig::LlamaCpp>& engine,
                                                Admission rule, bool asRouted) {
    const Trace trace =
        traceWithBlockTokens(traceHead(loaded, live.durationCapS, live.limit), live.blockTokens);
    if (trace.size() != live.requests)
        return RequestError{Error{"the trace gives " + std::to_string(trace.size()) +
                                  " requests with the live replay's limits, where it replayed " +
                                  std::to_string(live.requests) +
                                  ": expected the trace it replayed" +
                                  (live.trace.empty() ? std::string() : " (" + live.trace + ")")}};

    // The rows first: with asRouted the replay sends each request where the live run did.
    const std::string rowsPath = (fs::path(live.dir) / "requests.jsonl").string();
    std::ifstream rowsFile(rowsPath);
    if (!rowsFile) return RequestError{Error{live.dir + ": no requests.jsonl there"}};
    struct Row {
        std::size_t request = 0;
        std::optional<double> ttft, cached;
        std::optional<std::size_t> server; // where it went
        std::optional<double> sent, end;   // when it was sent and ended
        bool alone = false;                // it found its server idle
    };
    std::vector<Row> rows;
    auto servers = std::make_shared<std::vector<std::int32_t>>(trace.size(), -1);
    std::size_t line = 0;
    for (std::string text; std::getline(rowsFile, text);) {
        ++line;
        const auto j = nlohmann::json::parse(text, nullptr, false);
        const std::string at = rowsPath + ":" + std::to_string(line);
        if (!j.is_object() || !j.contains("request") || !j["request"].is_number_unsigned() ||
            !j.contains("ttft_s") || !j.contains("prompt_tokens"))
            return RequestError{
                Error{at + ": expected a row with request, prompt_tokens and ttft_s"}};
        Row r;
        r.request = j["request"].get<std::size_t>();
        if (r.request >= trace.size())
            return RequestError{Error{at + ": request " + std::to_string(r.request) +
                                      " is not among the " + std::to_string(trace.size()) +
                                      " replayed"}};
        if (j["ttft_s"].is_number()) r.ttft = j["ttft_s"].get<double>();
        if (j.contains("cached_tokens") && j["cached_tokens"].is_number())
            r.cached = j["cached_tokens"].get<double>();
        if (j.contains("server") && j["server"].is_number_unsigned() &&
            j["server"].get<std::size_t>() < live.servers)
            r.server = j["server"].get<std::size_t>();
        if (j.contains("sent_s") && j["sent_s"].is_number()) r.sent = j["sent_s"].get<double>();
        if (j.contains("end_s") && j["end_s"].is_number()) r.end = j["end_s"].get<double>();
        if (asRouted) {
            if (!r.server)
                return RequestError{Error{at + ": expected the server the request went to, 0 to " +
                                          std::to_string(live.servers - 1) +
                                          " (--as-routed replays each request there)"}};
            (*servers)[r.request] = static_cast<std::int32_t>(*r.server);
        }
        rows.push_back(r);
    }
    if (asRouted)
        for (std::size_t i = 0; i < servers->size(); ++i)
            if ((*servers)[i] < 0)
                return RequestError{Error{rowsPath + ": request " + std::to_string(i) +
                                          " has no row, so where it went is not known "
                                          "(--as-routed replays each request where it went)"}};

    // Which requests found their server idle live: none sent before them on it was still open.
    {
        std::vector<Row*> sent;
        for (Row& r : rows)
            if (r.server && r.sent && r.end) sent.push_back(&r);
        std::sort(sent.begin(), sent.end(), [](const Row* a, const Row* b) {
            return *a->server != *b->server ? *a->server < *b->server : *a->sent < *b->sent;
        });
        double open = 0;
        for (std::size_t k = 0; k < sent.size(); ++k) {
            if (k == 0 || *sent[k]->server != *sent[k - 1]->server) open = 0;
            sent[k]->alone = *sent[k]->sent >= open;
            open = std::max(open, *sent[k]->end);
        }
    }

    request.instances = static_cast<int>(live.servers);
    request.router = live.router;
    request.fleet = true;
    request.rateScale = live.rateScale;
    auto setup = replaySetup(request, e, trace.summary.blockTokens);
    if (!setup) return setup.error();
    ReplayConfig config = std::move(setup->config);
    applyEngine(engine, config);
    if (asRouted) config.fleet.router.recorded = std::move(servers);
    RequestTimes times;
    auto r = replayTrace(trace, e.cost, config, &times);
    if (!r) return RequestError{Error{r.message()}};
    const bool always = rule == Admission::Always, breakeven = rule == Admission::Breakeven;
    const std::vector<double>& aloneTtft = always      ? times.always
                                           : breakeven ? times.breakeven
                                                       : times.optimal;
    const std::vector<double>& predictedTtft = always      ? times.queuedAlways
                                               : breakeven ? times.queuedBreakeven
                                                           : times.queuedOptimal;
    // A request's predicted cached tokens: its hit run's, at most its prompt less one (an engine
    // computes a prompt's last token whatever it holds: vLLM, SGLang and llama.cpp alike, so a
    // whole prompt found reports n - 1 tokens cached).
    auto cachedOf = [&](std::size_t i) {
        return std::min(static_cast<double>(trace.inputTokens[i]) - 1,
                        static_cast<double>(times.hitBlocks[i]) * live.blockTokens);
    };

    LiveComparison out;
    out.live = live;
    out.rule = rule;
    out.asRouted = asRouted;
    {
        std::vector<double> p[2], m[2]; // [0]: no cached token, [1]: some
        for (const Row& row : rows) {
            const std::size_t i = row.request;
            if (!row.ttft || !row.alone || !row.cached) continue;
            if (predictedTtft[i] > aloneTtft[i] * (1 + 1e-9) + 1e-12) continue; // it waited
            if (std::abs(cachedOf(i) - *row.cached) >= live.blockTokens) continue;
            const int hit = *row.cached > 0 ? 1 : 0;
            p[hit].push_back(aloneTtft[i]);
            m[hit].push_back(*row.ttft);
        }
        LiveServiceCheck* check[2] = {&out.aloneCold, &out.aloneHit};
        for (int k = 0; k < 2; ++k) {
            check[k]->requests = p[k].size();
            if (p[k].empty()) continue;
            std::sort(p[k].begin(), p[k].end());
            std::sort(m[k].begin(), m[k].end());
            check[k]->predictedMedian = quantileOfSorted(p[k], 0.5);
            check[k]->measuredMedian = quantileOfSorted(m[k], 0.5);
        }
    }

    std::vector<double>& mt = out.measuredSorted;
    std::vector<double>& pt = out.predictedSorted;
    double mc = 0, pc = 0, prompt = 0, ape = 0;
    for (const Row& row : rows) {
        if (!row.ttft) {
            ++out.failed;
            continue;
        }
        const std::size_t i = row.request;
        const double m = *row.ttft, q = predictedTtft[i];
        mt.push_back(m);
        pt.push_back(q);
        if (m > 0) ape += std::abs(q - m) / m;
        if (row.cached) {
            mc += *row.cached;
            pc += cachedOf(i);
            prompt += static_cast<double>(trace.inputTokens[i]);
        }
    }
    if (mt.empty())
        return RequestError{
            Error{rowsPath + ": no request completed, so there is nothing to compare"}};
    out.compared = mt.size();
    out.mape = ape / static_cast<double>(mt.size());
    out.measured = figures(mt, mc, prompt);
    out.predicted = figures(pt, pc, prompt);
    return out;
}

std::vector<std::array<std::string, 4>> liveComparisonRows(const LiveComparison& c) {
    std::vector<std::array<std::string, 4>> rows;
    const LiveFigures &p = c.predicted, &m = c.measured;
    if (p.tokenHitRatio && m.tokenHitRatio) {
        const double ph = *p.tokenHitRatio, mh = *m.tokenHitRatio;
        rows.push_back({"token hit ratio", formatFixed(100 * ph, 1) + " %",
                        formatFixed(100 * mh, 1) + " %",
                        (ph >= mh ? "+" : "") + formatFixed(100 * (ph - mh), 1) + " points"});
    } else {
        rows.push_back({"token hit ratio", "not compared", "not reported", ""});
    }
    auto row = [&](const char* name, double pv, double mv) {
        rows.push_back(
            {name, formatSeconds(pv), formatSeconds(mv),
             mv > 0 ? (pv >= mv ? "+" : "") + formatFixed(100 * (pv / mv - 1), 1) + " %" : "n/a"});
    };
    row("TTFT mean", p.mean, m.mean);
    row("TTFT p50", p.p50, m.p50);
    row("TTFT p90", p.p90, m.p90);
    row("TTFT p99", p.p99, m.p99);
    // The engine's speed against the calibration's (LiveServiceCheck): the median TTFT of the
    // requests served alone, with no cached token and with some.
    for (const auto& [a, what] :
         {std::pair{&c.aloneCold, "no cached token"}, std::pair{&c.aloneHit, "cached tokens"}}) {
        const std::string name =
            "alone, " + std::string(what) + " (" + std::to_string(a->requests) + "), median";
        if (a->ratio())
            row(name.c_str(), a->predictedMedian, a->measuredMedian);
        else
            rows.push_back(
                {name, a->requests ? formatSeconds(a->predictedMedian) : "none",
                 a->requests ? formatSeconds(a->measuredMedian) : "none",
                 "fewer than " + std::to_string(LiveServiceCheck::kMinRequests) + ": not told"});
    }
    return rows;
}

std::string servedAloneSentence() {
    return "Alone: the requests that found their server idle, live and in the model, with the "
           "same cached tokens (to a block); live, their TTFT is the service alone. Fewer than " +
           std::to_string(LiveServiceCheck::kMinRequests) + " of a kind are not told.";
}

} // namespace kvbe
