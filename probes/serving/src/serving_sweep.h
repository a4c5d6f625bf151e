// The serving sweep, shared by its two halves: serving_requests.cpp sends one request (a
// prompt and its TTFT, the tokenizer, /metrics, the cache reset) and serving_probe.cpp runs the
// sweep of them (the plan, the checks of each hit, the drift, the summary).
#pragma once

#include "kvbe/probes/stop_signal.h"
#include "kvbe/serving/serving_probe.h"
#include "serving_outputs.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace kvbe::serving::detail {

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
    // The prompt tokens the response says were reused (CompletionStream::cachedTokens), and the
    // field it came from; none where the response does not say.
    std::optional<double> cached{};
    std::string cachedSource{};
    bool ok() const { return exit == ExitCode::Ok && !skipLength; }
};

// The rank test's level below which a move of the reference point is drift, not noise.
inline constexpr double kDriftSignificance = 0.01;

inline std::string fmt(double v, int decimals) {
    return probes::fixedDecimals(v, decimals);
}

inline std::string tokensText(std::int64_t n) {
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
        std::vector<double> unverifiedTtft; // hits nothing could verify, kept out of the fit
        bool usedUnverified = false;        // --allow-unverified-hits took some into ttft
        std::vector<double> restoreBytes, restoreMs; // llama.cpp slot restores, as it reports
        std::vector<double> restoreWallS;            // and as the client timed them
    };
    // The server behind the endpoint, as far as its routes tell (detectEngine).
    enum class Engine { Unknown, Vllm, Sglang, LlamaCpp };

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
    Sent post(const std::string& path, bool& notFound, std::string* body = nullptr);
    bool sleepFor(double s) {
        const auto until = Clock::now() + std::chrono::duration<double>(s);
        while (Clock::now() < until) {
            if (stopping()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return true;
    }
    // --pause before a timed request (false: stopped while it waited).
    bool pauseBeforeTimed() { return m_s.pauseS <= 0 || sleepFor(m_s.pauseS); }
    Counters counters();
    Sent resetGpuCache();
    // GET /props (llama.cpp) or /slots, the served model's name against /v1/models; sets
    // m_engine, m_slot and the offload tiers to measure.
    std::optional<ProbeOutcome> detectEngine();
    // llama.cpp: POST /slots/{id}?action=erase|save|restore; `reply` gets the answer's JSON.
    Sent slotAction(const std::string& action, const std::string& filename, nlohmann::json* reply);
    // llama.cpp: the setup of a timed request in `tier`, after its prefix was primed: the
    // host-RAM prompt cache (dram) or a slot file (nvme). `extraS` is time the hit pays outside
    // the timed completion (the slot restore).
    Sent llamaTierSetup(Cell& cell, double& extraS);
    bool isLlama() const { return m_engine == Engine::LlamaCpp; }
    // One sample of the cell; a reset that did not take (the GPU still hit after it) is waited
    // out and the sample measured again, a few times, and said.
    Sent measure(Cell& cell);
    Sent measureOnce(Cell& cell, bool& notCleared);
    // The steps of run(): the header line and the API key; /metrics (the counters that verify
    // hits, the KV capacity filler eviction needs); the cells to measure; the drift reference;
    // every cell, repeats interleaved; the drift; what finishSweep summarises.
    std::optional<ProbeOutcome> begin();
    std::optional<ProbeOutcome> readMetrics();
    std::vector<Cell> planCells();
    std::optional<Sent> reference(std::int64_t refN, int count, std::vector<double>& out);
    std::optional<Sent> measureAll(std::vector<Cell>& cells,
                                   std::map<std::int64_t, std::string>& skippedLengths,
                                   std::int64_t refN, int between, std::vector<double>& refs);
    double checkDrift(std::int64_t refN, const std::vector<double>& refs);
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
    Engine m_engine = Engine::Unknown;
    int m_slot = 0;                          // llama.cpp: the slot every request is pinned to
    std::vector<std::string> m_offloadTiers; // the offload tiers measured (planCells)
    std::set<std::string> m_verifiedBy;      // what verified the hits that were accepted
    std::string m_slotFile;                  // llama.cpp: the slot file saved and restored
    std::optional<double> m_capacityTokens;
    std::vector<std::string> m_notes;
    int m_done = 0, m_total = 1; // requests sent, and to send
    int m_retries = 0;
    int m_resetRetries = 0;   // samples measured again after a reset that did not take
    double m_resetDelayS = 0; // wait between a prefix and its reset, learnt from such resets
    double m_refSpread = 0;   // (p90 − p10) / median of the reference samples
    int m_refSamples = 0;
    double m_driftP = 1;         // the rank test's p between the first and last reference samples
    bool m_drifted = false;      // past --drift-limit and p under kDriftSignificance
    std::vector<double> m_floor; // one-block cold prompts, for the per-request floor
    bool m_idsAccepted = false, m_triedText = false, m_textPrompts = false;
    std::vector<std::string> m_words; // text prompts: words of one token each, with their space
    std::int64_t m_specialTokens = 0; // what the server adds to a text prompt (a BOS)
};

} // namespace kvbe::serving::detail
