// probe replay (kvbe/serving/replay_probe.h): its settings, the prompts, and the replay itself: a
// sender that routes each request at its arrival time and hands it to a pool of workers, each
// with its own HTTP client, that stream the completion, time its first token and write its row.
#include "kvbe/serving/replay_probe.h"

#include "serving_parts.h"

#include "kvbe/base/statistics.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "kvbe/serving/http_client.h"
#include "kvbe/trace/live_router.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace kvbe::serving {

std::vector<std::int64_t> promptTokens(std::span<const std::uint32_t> ids, std::uint32_t tokens,
                                       std::uint32_t blockTokens, int vocab) {
    const std::uint64_t range = static_cast<std::uint64_t>(std::max(vocab - 100, 1));
    std::vector<std::int64_t> out;
    out.reserve(tokens);
    for (std::size_t j = 0; j < ids.size() && out.size() < tokens; ++j) {
        const std::uint64_t b = ids[j];
        for (std::uint32_t k = 0; k < blockTokens && out.size() < tokens; ++k) {
            std::uint64_t v;
            if (k == 0)
                v = b % range;
            else if (k == 1)
                v = (b / range) % range;
            else {
                std::uint64_t z = (b << 24) ^ k ^ 0x7f4a7c15ull;
                z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
                z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
                v = (z ^ (z >> 31)) % range;
            }
            out.push_back(static_cast<std::int64_t>(100 + v));
        }
    }
    return out;
}

namespace {

using Clock = std::chrono::steady_clock;
using probes::ExitCode;
using probes::ProbeOutcome;

std::string trimmedBase(std::string url) {
    while (!url.empty() && url.back() == '/')
        url.pop_back();
    return url;
}

// One request's row of requests.jsonl.
struct Row {
    std::size_t request = 0;
    int server = -1; // where it was sent
    int booked = -1; // where the router sent it (differs when that server was down)
    double arrivalS = 0, sentS = 0, endS = 0;
    std::uint32_t promptTokens = 0;
    std::optional<double> engineTokens, cachedTokens, ttftS;
    std::string cachedSource, error;
};

struct Server {
    std::string base, completions;
    std::uint64_t requests = 0, completed = 0, failed = 0;
    std::string down; // why it was taken out ("" while up)
    std::vector<std::pair<double, double>> busy;
    int inFlight = 0;
};

nlohmann::ordered_json ttftJson(std::vector<double> t) {
    if (t.empty()) return nullptr;
    std::sort(t.begin(), t.end());
    double sum = 0;
    for (double v : t)
        sum += v;
    return {{"mean", sum / static_cast<double>(t.size())},
            {"p50", quantileOfSorted(t, 0.5)},
            {"p90", quantileOfSorted(t, 0.9)},
            {"p99", quantileOfSorted(t, 0.99)}};
}

// The share of [0, span] that one server had a request open.
double busyShare(std::vector<std::pair<double, double>> v, double span) {
    if (v.empty() || !(span > 0)) return 0;
    std::sort(v.begin(), v.end());
    double covered = 0, lo = v[0].first, hi = v[0].second;
    for (const auto& [a, b] : v) {
        if (a > hi) {
            covered += hi - lo;
            lo = a;
            hi = b;
        } else {
            hi = std::max(hi, b);
        }
    }
    covered += hi - lo;
    return std::min(1.0, covered / span);
}

class Live {
  public:
    Live(const ReplaySettings& s, const Trace& t, LiveRouter& router, probes::ProbeSink& sink)
        : m_s(s), m_t(t), m_router(router), m_sink(sink) {
        for (const auto& e : s.endpoints) {
            Server v;
            v.base = trimmedBase(e);
            v.completions = v.base + "/completions";
            m_servers.push_back(std::move(v));
        }
        if (const char* env = s.apiKeyEnv.empty() ? nullptr : std::getenv(s.apiKeyEnv.c_str()))
            if (*env) m_headers.push_back(std::string("Authorization: Bearer ") + env);
    }

    ProbeOutcome run();

  private:
    struct Job {
        std::size_t request;
        int server, booked;
        double arrivalS;
    };
    double now() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
    void work();
    Row send(HttpClient& http, const Job& job);
    void finish(Row row);
    int reroute(int booked) const;
    void reportProgress(std::size_t sent);
    nlohmann::ordered_json summary(double span) const;

    const ReplaySettings& m_s;
    const Trace& m_t;
    LiveRouter& m_router;
    probes::ProbeSink& m_sink;
    std::vector<std::string> m_headers;
    std::vector<Server> m_servers;
    Clock::time_point m_start;
    std::ofstream m_rows;

    std::mutex m_mu; // everything below
    std::condition_variable m_cv;
    std::deque<Job> m_jobs;
    bool m_closed = false;
    int m_idle = 0;
    std::uint64_t m_done = 0, m_failed = 0, m_rerouted = 0, m_late = 0;
    double m_cached = 0, m_prompt = 0, m_verifiedPrompt = 0, m_maxLateS = 0;
    std::vector<double> m_ttft;
    std::string m_clientError;
};

int Live::reroute(int booked) const {
    int best = -1;
    for (int s = 0; s < static_cast<int>(m_servers.size()); ++s) {
        const Server& v = m_servers[static_cast<std::size_t>(s)];
        if (!v.down.empty()) continue;
        if (best < 0 || v.inFlight < m_servers[static_cast<std::size_t>(best)].inFlight) best = s;
    }
    return best < 0 ? booked : best;
}

Row Live::send(HttpClient& http, const Job& job) {
    Row row;
    row.request = job.request;
    row.server = job.server;
    row.booked = job.booked;
    row.arrivalS = job.arrivalS;
    const auto ids = m_t.blocksOf(job.request);
    const std::uint32_t tokens = m_t.inputTokens[job.request];
    const auto prompt = promptTokens(ids, tokens, m_t.summary.blockTokens, m_s.vocab);
    row.promptTokens = static_cast<std::uint32_t>(prompt.size());
    const int maxTokens =
        m_s.outputTokens > 0
            ? m_s.outputTokens
            : static_cast<int>(std::max<std::uint32_t>(1, m_t.outputTokens[job.request]));
    nlohmann::json body = {
        {"model", m_s.model}, {"prompt", prompt}, {"max_tokens", maxTokens},
        {"stream", true},     {"temperature", 0}, {"stream_options", {{"include_usage", true}}}};
    detail::StreamedExchange x;
    const HttpRequest req = x.request(m_servers[static_cast<std::size_t>(job.server)].completions,
                                      body.dump(), m_headers, m_s.timeoutS);
    const auto& stream = x.stream;
    const auto& raw = x.raw;
    const auto& first = x.first;
    const auto t0 = Clock::now();
    row.sentS = std::chrono::duration<double>(t0 - m_start).count();
    const HttpResponse r = http.send(req, [] { return probes::stopRequested(); });
    row.endS = now();
    if (first) row.ttftS = std::chrono::duration<double>(*first - t0).count();
    row.engineTokens = stream.promptTokens();
    row.cachedTokens = stream.cachedTokens();
    row.cachedSource = stream.cachedSource();
    if (r.stopped)
        row.error = "stopped";
    else if (r.connectFailed)
        row.error = "cannot reach " + req.url + ": " + r.transportError;
    else if (r.timedOut)
        row.error = "no answer within " + formatFixed(m_s.timeoutS, 0) + " s (--timeout)";
    else if (!r.transportError.empty())
        row.error = "the connection failed: " + r.transportError;
    else if (r.status != 200)
        row.error = "answered " + std::to_string(r.status) + ": " + detail::errorMessage(raw);
    else if (!stream.error().empty())
        row.error = "the stream ended with an error: " + stream.error();
    else if (!first)
        row.error = "the stream ended without a token";
    if (!row.error.empty()) row.ttftS.reset();
    return row;
}

void Live::work() {
    std::string why;
    auto http = makeHttpClient(why);
    for (;;) {
        Job job;
        {
            std::unique_lock lock(m_mu);
            ++m_idle;
            m_cv.wait(lock, [&] { return m_closed || !m_jobs.empty(); });
            --m_idle;
            if (m_jobs.empty()) return;
            job = m_jobs.front();
            m_jobs.pop_front();
            const double late = now() - job.arrivalS;
            if (late > 0.05) {
                ++m_late;
                m_maxLateS = std::max(m_maxLateS, late);
            }
        }
        Row row;
        if (!http) {
            row.request = job.request;
            row.server = job.server;
            row.booked = job.booked;
            row.arrivalS = job.arrivalS;
            row.error = why;
        } else {
            row = send(*http, job);
        }
        finish(std::move(row));
    }
}

void Live::finish(Row row) {
    nlohmann::ordered_json j = {{"request", row.request},
                                {"arrival_s", row.arrivalS},
                                {"sent_s", row.sentS},
                                {"server", row.server},
                                {"endpoint", m_servers[static_cast<std::size_t>(row.server)].base},
                                {"prompt_tokens", row.promptTokens}};
    if (row.booked != row.server) j["routed_to"] = row.booked;
    j["engine_prompt_tokens"] = row.engineTokens ? nlohmann::ordered_json(*row.engineTokens)
                                                 : nlohmann::ordered_json(nullptr);
    j["cached_tokens"] = row.cachedTokens ? nlohmann::ordered_json(*row.cachedTokens)
                                          : nlohmann::ordered_json(nullptr);
    j["cached_source"] = row.cachedSource;
    j["ttft_s"] = row.ttftS ? nlohmann::ordered_json(*row.ttftS) : nlohmann::ordered_json(nullptr);
    j["end_s"] = row.endS;
    j["error"] =
        row.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(row.error);
    std::lock_guard lock(m_mu);
    Server& v = m_servers[static_cast<std::size_t>(row.server)];
    --v.inFlight;
    m_router.finished(row.request, row.booked);
    if (row.sentS > 0) v.busy.emplace_back(row.sentS, row.endS);
    if (row.error.empty()) {
        ++v.completed;
        ++m_done;
        m_ttft.push_back(*row.ttftS);
        m_prompt += row.promptTokens;
        if (row.cachedTokens) {
            m_cached += *row.cachedTokens;
            m_verifiedPrompt += row.promptTokens;
        }
    } else if (row.error != "stopped") {
        ++v.failed;
        ++m_failed;
        // Nothing listens, or the connection broke: the server is out of the replay.
        if (v.down.empty() && row.error.rfind("answered", 0) != 0 &&
            row.error.rfind("no answer", 0) != 0 && row.error.rfind("the stream", 0) != 0)
            v.down = row.error + " (at " + formatFixed(row.endS, 1) + " s)";
    }
    m_rows << j.dump() << "\n";
    m_rows.flush();
}

void Live::reportProgress(std::size_t sent) {
    std::vector<double> t;
    std::uint64_t done = 0, failed = 0;
    {
        std::lock_guard lock(m_mu);
        t = m_ttft;
        done = m_done;
        failed = m_failed;
    }
    std::string msg = "sent " + std::to_string(sent) + " of " + std::to_string(m_t.size()) +
                      ", done " + std::to_string(done) + ", failed " + std::to_string(failed) +
                      ", in flight " + std::to_string(sent - done - failed);
    if (!t.empty()) {
        std::sort(t.begin(), t.end());
        msg += "; TTFT p50 " + formatSeconds(quantileOfSorted(t, 0.5)) + ", p90 " +
               formatSeconds(quantileOfSorted(t, 0.9)) + ", p99 " +
               formatSeconds(quantileOfSorted(t, 0.99));
    }
    m_sink.progress(static_cast<double>(done + failed) / static_cast<double>(m_t.size()), msg);
}

nlohmann::ordered_json Live::summary(double span) const {
    nlohmann::ordered_json servers = nlohmann::ordered_json::array();
    for (const Server& v : m_servers)
        servers.push_back({{"endpoint", v.base},
                           {"requests", v.requests},
                           {"completed", v.completed},
                           {"failed", v.failed},
                           {"down", v.down.empty() ? nlohmann::ordered_json(nullptr)
                                                   : nlohmann::ordered_json(v.down)},
                           {"busy_share", busyShare(v.busy, span)}});
    nlohmann::ordered_json measured = {
        {"requests", m_done},
        {"prompt_tokens", m_prompt},
        {"cached_tokens", m_cached},
        {"token_hit_ratio", m_verifiedPrompt > 0
                                ? nlohmann::ordered_json(m_cached / m_verifiedPrompt)
                                : nlohmann::ordered_json(nullptr)},
        {"ttft_s", ttftJson(m_ttft)}};
    nlohmann::ordered_json j = {
        {"kvbe_probe", "replay"},
        {"trace", m_s.trace},
        {"requests", m_t.size()},
        {"limit", m_s.limit ? nlohmann::ordered_json(*m_s.limit) : nlohmann::ordered_json(nullptr)},
        {"duration_cap_s", m_s.durationCapS ? nlohmann::ordered_json(*m_s.durationCapS)
                                            : nlohmann::ordered_json(nullptr)},
        {"rate_scale", m_s.rateScale},
        {"block_tokens", m_t.summary.blockTokens},
        {"output_tokens", m_s.outputTokens > 0 ? nlohmann::ordered_json(m_s.outputTokens)
                                               : nlohmann::ordered_json("trace")},
        {"vocab", m_s.vocab},
        {"router", m_s.routerText},
        {"model", m_s.model},
        {"span_s", span},
        {"completed", m_done},
        {"failed", m_failed},
        {"rerouted", m_rerouted},
        {"sent_late", m_late},
        {"max_late_s", m_maxLateS},
        {"servers", servers},
        {"measured", measured}};
    return j;
}

ProbeOutcome Live::run() {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(m_s.outDir, ec);
    const fs::path rowsPath = fs::path(m_s.outDir) / "requests.jsonl";
    m_rows.open(rowsPath, std::ios::trunc);
    if (!m_rows)
        return probes::reportFailure(m_sink, ExitCode::CannotRun,
                                     "--out " + m_s.outDir + ": cannot write " + rowsPath.string());
    nlohmann::ordered_json params = {{"trace", m_s.trace},
                                     {"endpoints", m_s.endpoints},
                                     {"model", m_s.model},
                                     {"router", m_s.routerText},
                                     {"rate_scale", m_s.rateScale},
                                     {"requests", m_t.size()},
                                     {"block_tokens", m_t.summary.blockTokens}};
    m_sink.begin("replay", params);
    const std::size_t n = m_t.size();
    const int workers = static_cast<int>(std::min<std::size_t>(
        static_cast<std::size_t>(std::max(1, m_s.maxInFlight)), std::max<std::size_t>(n, 1)));
    std::vector<std::thread> pool;
    m_start = Clock::now();
    for (int w = 0; w < workers; ++w)
        pool.emplace_back([this] { work(); });
    auto lastProgress = Clock::now();
    std::size_t sent = 0;
    bool allDown = false;
    for (; sent < n && !probes::stopRequested(); ++sent) {
        const double due = m_t.arrivalS[sent] / m_s.rateScale;
        // Open loop: wait for the arrival, whatever the servers are doing.
        while (!probes::stopRequested() && now() < due) {
            const double left = due - now();
            std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.05)));
            if (Clock::now() - lastProgress > std::chrono::seconds(1)) {
                reportProgress(sent);
                lastProgress = Clock::now();
            }
        }
        if (probes::stopRequested()) break;
        std::lock_guard lock(m_mu);
        const int booked = m_router.route(sent, due);
        int s = booked;
        if (!m_servers[static_cast<std::size_t>(s)].down.empty()) {
            s = reroute(booked);
            if (!m_servers[static_cast<std::size_t>(s)].down.empty()) {
                allDown = true;
                m_router.finished(sent, booked);
                break;
            }
            ++m_rerouted;
        }
        ++m_servers[static_cast<std::size_t>(s)].requests;
        ++m_servers[static_cast<std::size_t>(s)].inFlight;
        m_jobs.push_back({sent, s, booked, due});
        m_cv.notify_one();
    }
    {
        std::lock_guard lock(m_mu);
        m_closed = true;
    }
    m_cv.notify_all();
    // Wait for the requests in flight, reporting as they finish.
    std::thread waiter([&] {
        for (auto& t : pool)
            t.join();
    });
    for (;;) {
        {
            std::lock_guard lock(m_mu);
            if (m_done + m_failed >= sent && m_jobs.empty()) break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (Clock::now() - lastProgress > std::chrono::seconds(1)) {
            reportProgress(sent);
            lastProgress = Clock::now();
        }
        if (probes::stopRequested()) break;
    }
    waiter.join();
    reportProgress(sent);
    const double span = now();
    const nlohmann::ordered_json sum = summary(span);
    {
        std::ofstream out(fs::path(m_s.outDir) / "replay.json", std::ios::trunc);
        out << sum.dump(2) << "\n";
    }
    if (probes::stopRequested())
        return probes::reportFailure(m_sink, ExitCode::Stopped,
                                     probes::stopMessage() + " after " + std::to_string(sent) +
                                         " of " + std::to_string(n) +
                                         " requests; the rows of "
                                         "those that finished are in " +
                                         rowsPath.string());
    TextTable table;
    table.title = "Replay of " + std::to_string(n) + " requests, " + m_s.routerText + ", " +
                  std::to_string(m_servers.size()) +
                  (m_servers.size() == 1 ? " server" : " servers");
    table.columns = {"server",        "requests", "done", "failed", "busy",
                     "cached tokens", "TTFT p50", "p90",  "p99"};
    for (std::size_t k = 0; k < m_servers.size(); ++k) {
        const Server& v = m_servers[k];
        std::vector<double> t;
        double c = 0, p = 0;
        std::ifstream in(rowsPath);
        for (std::string line; std::getline(in, line);) {
            const auto r = nlohmann::json::parse(line, nullptr, false);
            if (!r.is_object() || r["server"] != static_cast<int>(k) || !r["ttft_s"].is_number())
                continue;
            t.push_back(r["ttft_s"].get<double>());
            if (r["cached_tokens"].is_number()) {
                c += r["cached_tokens"].get<double>();
                p += r["prompt_tokens"].get<double>();
            }
        }
        std::sort(t.begin(), t.end());
        auto q = [&](double f) {
            return t.empty() ? "n/a" : formatSeconds(quantileOfSorted(t, f));
        };
        table.rows.push_back(
            {v.base, std::to_string(v.requests), std::to_string(v.completed),
             std::to_string(v.failed), formatFixed(100 * busyShare(v.busy, span), 0) + " %",
             p > 0 ? formatFixed(100 * c / p, 1) + " %" : "not reported", q(0.5), q(0.9), q(0.99)});
    }
    for (const Server& v : m_servers)
        if (!v.down.empty()) {
            table.footnotes.push_back(v.base + " left the replay: " + v.down);
            m_sink.note(v.base + " left the replay: " + v.down);
        }
    if (m_late > 0)
        table.footnotes.push_back(std::to_string(m_late) +
                                  " requests went out more than 50 ms "
                                  "late (at most " +
                                  formatSeconds(m_maxLateS) + "): --max-in-flight were open");
    table.footnotes.push_back("Rows: " + rowsPath.string() +
                              "; summary: " + (fs::path(m_s.outDir) / "replay.json").string());
    m_sink.table(table);
    m_sink.result(sum);
    if (allDown)
        return probes::reportFailure(m_sink, ExitCode::Failed,
                                     "every server left the replay; " + std::to_string(n - sent) +
                                         " requests were not sent");
    if (m_done == 0) return probes::reportFailure(m_sink, ExitCode::Failed, "no request completed");
    if (m_failed > 0)
        return probes::reportFailure(
            m_sink, ExitCode::Failed,
            std::to_string(m_failed) + " of " + std::to_string(sent) +
                " requests failed (each row names why); the others completed and are in " +
                rowsPath.string());
    return {};
}

} // namespace

Status ReplayProbe::available() const {
    std::string why;
    if (!makeHttpClient(why)) return Error{why};
    return Ok{};
}

probes::ProbeOutcome ReplayProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    auto loaded = loadTrace(m_s.trace, {});
    if (!loaded) return probes::reportFailure(sink, ExitCode::BadInput, loaded.message());
    if (!loaded->summary.hasBlocks())
        return probes::reportFailure(sink, ExitCode::BadInput,
                                     m_s.trace + ": the trace has no block ids, so its prompts' "
                                                 "shared prefixes are unknown");
    Trace trace =
        traceHead(*loaded, m_s.durationCapS.value_or(std::numeric_limits<double>::infinity()),
                  m_s.limit.value_or(SIZE_MAX));
    if (m_s.blockTokens) trace = traceWithBlockTokens(trace, m_s.blockTokens);
    if (trace.size() == 0)
        return probes::reportFailure(sink, ExitCode::BadInput,
                                     m_s.trace + ": no request within --duration-cap");
    auto router = LiveRouter::make(trace, m_s.router, static_cast<int>(m_s.endpoints.size()));
    if (!router) return probes::reportFailure(sink, ExitCode::BadInput, router.message());
    Live live(m_s, trace, **router, sink);
    return live.run();
}

} // namespace kvbe::serving
