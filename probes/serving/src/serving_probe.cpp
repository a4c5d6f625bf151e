// The serving sweep. One request at a time (concurrency 1: queueing is not part of the cost
// model). Per repeat, the lengths come in a rotated order and, per length, a cold prompt, then
// for each fraction a GPU hit and an offload hit; every prompt is made of fresh random token
// ids, so nothing from an earlier run or repeat can be in any cache. Prime requests and cache
// resets are not timed. Counters are read from /metrics before and after each timed request.
#include "kvbe/serving/serving_probe.h"

#include "kvbe/probes/stream.h"
#include "serving_outputs.h"
#include "serving_parts.h"
#include "serving_sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace kvbe::serving {
namespace detail {

Sent Sweep::measureOnce(Cell& cell, bool& notCleared) {
    const std::int64_t n = cell.tokens, p = cell.prefix;
    std::vector<int> prompt = fresh(n);
    double extraS = 0; // what the hit pays outside the timed completion (a slot restore)
    if (isLlama()) {
        // An empty slot first, so that no timed request pays for moving the slot's last
        // prompt into the host-RAM prompt cache (llama.cpp does that when a slot is reused).
        Sent e = slotAction("erase", "", nullptr);
        if (!e.ok()) return e;
    }
    if (!cell.tier.empty()) {
        // The prefix goes in first, untimed; then the same prefix with a fresh suffix.
        const std::vector<int> prefix(prompt.begin(), prompt.begin() + p);
        Sent prime = send(prefix);
        if (!prime.ok()) return prime;
        if (cell.tier != "gpu") {
            // After a reset that did not take, each reset waits a little after the prime (an
            // offload store of the prime may still hold its blocks).
            if (!isLlama() && m_resetDelayS > 0 && !sleepFor(m_resetDelayS))
                return {ExitCode::Stopped, probes::stopMessage()};
            Sent r = isLlama() ? llamaTierSetup(cell, extraS) : resetGpuCache();
            if (!r.ok()) return r;
        }
    }
    if (!pauseBeforeTimed()) return {ExitCode::Stopped, probes::stopMessage()};
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
        // The response's own count first; else the /metrics deltas.
        const double hit =
            s.cached ? *s.cached
                     : (std::isnan(gpuHit) ? 0 : gpuHit) + (std::isnan(extHit) ? 0 : extHit);
        if (hit > m_s.blockSize)
            return reject("cold prompt " + at + ": the server " +
                          (s.cached ? "answered that it reused " : "counted ") + fmt(hit, 0) +
                          " cached tokens" + (s.cached ? " (" + s.cachedSource + ")" : "") +
                          ", so it was not cold; left out (other traffic on the server?)");
        cell.ttft.push_back(s.ttftS);
        cell.counted.push_back(0);
        return s;
    }
    // A hit is checked against the response first: a "hit" the server answered with a full
    // recompute (cached 0) is caught here whatever /metrics says or lacks.
    if (s.cached && *s.cached < static_cast<double>(reachable - m_s.blockSize))
        return reject(cell.tier + " hit " + at + ": the response says the server reused " +
                      fmt(*s.cached, 0) + " of " + std::to_string(reachable) + " prefix tokens (" +
                      s.cachedSource + ", " + fmt(s.ttftS * 1e3, 2) +
                      " ms): a recompute, so it is reported as not a hit and left out");
    const double metric = cell.tier == "gpu" ? gpuHit : extHit;
    if (cell.tier != "gpu" && !std::isnan(gpuHit) && gpuHit > m_s.blockSize) {
        // vLLM refuses a reset while blocks are held (an offload store still in flight right
        // after a request): its API answers 200 all the same. measure() waits and tries again.
        notCleared = true;
        --cell.queries;
        return {ExitCode::Failed, "after clearing the GPU prefix cache (" + m_resetPath +
                                      ") the server still counted " + fmt(gpuHit, 0) +
                                      " GPU prefix-cache hit tokens for " + at +
                                      ": the reset did not clear it"};
    }
    if (!std::isnan(metric) && metric < static_cast<double>(reachable - m_s.blockSize))
        return reject(cell.tier + " hit " + at + ": the server counted " + fmt(metric, 0) + " of " +
                      std::to_string(reachable) + " prefix tokens as " +
                      (cell.tier == "gpu" ? "GPU prefix-cache" : "offload (external)") + " hits (" +
                      fmt(s.ttftS * 1e3, 2) + " ms), so it is reported as not a hit and left out");
    if (!s.cached && std::isnan(metric)) {
        // Nothing verifies it: neither the response nor a /metrics counter for this tier.
        if (!m_s.allowUnverified) {
            cell.unverifiedTtft.push_back(s.ttftS + extraS);
            return s;
        }
        cell.usedUnverified = true;
        cell.ttft.push_back(s.ttftS + extraS);
        cell.counted.push_back(static_cast<double>(reachable));
        return s;
    }
    if (s.cached) m_verifiedBy.insert("the response's " + s.cachedSource);
    if (!std::isnan(metric)) m_verifiedBy.insert("/metrics");
    cell.ttft.push_back(s.ttftS + extraS);
    cell.counted.push_back(!std::isnan(metric) ? metric : *s.cached);
    return s;
}

Sent Sweep::measure(Cell& cell) {
    constexpr int kTries = 6;
    for (int attempt = 1;; ++attempt) {
        bool notCleared = false;
        Sent s = measureOnce(cell, notCleared);
        if (!notCleared) return s;
        if (attempt == kTries)
            return {s.exit, s.message + ", " + std::to_string(kTries) + " times in a row, with " +
                                fmt(m_resetDelayS, 2) +
                                " s between the prefix and the reset at the end (blocks "
                                "still held on the server?)"};
        // vLLM's scheduler refuses a reset while blocks are held (block_pool.py: "Failed to
        // reset prefix cache because some blocks (N) are not freed yet"), e.g. by an offload
        // store of the prefix still in flight, and its API answers 200 all the same.
        m_resetDelayS = m_resetDelayS > 0 ? 2 * m_resetDelayS : 0.1;
        ++m_resetRetries;
        note(s.message + " (try " + std::to_string(attempt) + " of " + std::to_string(kTries) +
             "): a server refuses a reset while blocks are still held, e.g. by an offload store "
             "in flight, and vLLM's API answers 200 all the same; from now on the sweep waits " +
             fmt(m_resetDelayS, 2) +
             " s between the prefix and the reset, and measures this point again");
    }
}

ProbeOutcome Sweep::run() {
    if (auto failed = begin()) return *failed;
    if (auto failed = readMetrics()) return *failed;
    if (auto failed = detectEngine()) return *failed;
    std::vector<Cell> cells = planCells();
    // Reference samples at the ends (5: the fewest for which the rank test can tell drift from
    // noise at 1 %), and after each repeat.
    const int drift = 5, between = 2;
    m_done = 0;
    m_total = m_s.warmup + 2 * drift + between * (m_s.repeats - 1) + 2 * m_s.repeats +
              static_cast<int>(cells.size()) * m_s.repeats;

    // Warm-up (discarded) at the reference length, so that its first sample does not carry the
    // first touch of a prompt that long; then the reference point at the start and at the end.
    const std::int64_t refN = m_s.lengths[m_s.lengths.size() / 2];
    for (int i = 0; i < m_s.warmup; ++i) {
        Sent w = send(fresh(refN));
        if (w.skipLength) return fail(ExitCode::Failed, w.message);
        if (!w.ok()) return failSent(w);
        step("warm-up " + std::to_string(i + 1) + " of " + std::to_string(m_s.warmup));
    }
    // The reference point is measured at the start, between repeats and at the end, so that the
    // drift is read from the run's whole course, not two moments of it.
    std::vector<double> refs;
    if (auto bad = reference(refN, drift, refs)) {
        if (bad->skipLength) return fail(ExitCode::Failed, bad->message);
        return failSent(*bad);
    }
    std::map<std::int64_t, std::string> skippedLengths;
    if (auto bad = measureAll(cells, skippedLengths, refN, between, refs)) return failSent(*bad);
    if (auto bad = reference(refN, drift, refs)) return failSent(*bad);
    const double driftRel = checkDrift(refN, refs);
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
                                     {"timeout_s", s.timeoutS},
                                     {"pause_s", s.pauseS}};
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
        if (hc.server == "vLLM") m_engine = Engine::Vllm;
        if (hc.server == "SGLang") m_engine = Engine::Sglang;
        m_haveHitCounter = hc.gpu.has_value();
        m_haveExtCounter = hc.offload.has_value();
        if (m_haveHitCounter)
            note("hits are checked against " + hc.server + "'s /metrics counters" +
                 (hc.server == "SGLang" && !hc.labelled
                      ? " (sglang:cached_tokens_total has no series before the first cached "
                        "token; read again after every request)"
                      : ""));
        // SGLang's KV pool in tokens (metrics/collector.py: sglang:max_total_num_tokens).
        if (const auto pool = detail::promSum(r.body, "sglang:max_total_num_tokens");
            pool && *pool > 0)
            m_capacityTokens = *pool;
        if (auto info = detail::promLabels(r.body, "vllm:cache_config_info")) {
            const auto blocks = info->find("num_gpu_blocks"), block = info->find("block_size");
            if (blocks != info->end() && block != info->end())
                m_capacityTokens =
                    std::atof(blocks->second.c_str()) * std::atof(block->second.c_str());
        }
    }
    // Whether hits are verified is known only from the responses: every timed request is
    // checked against its own response first (timings.cache_n, usage's cached_tokens), then
    // against these counters; what verified them is said at the end.
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
            for (const auto& tier : m_offloadTiers)
                cells.push_back(cell(n, f, p, tier));
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
        if (isLlama())
            if (Sent e = slotAction("erase", "", nullptr); !e.ok()) return e;
        if (!pauseBeforeTimed()) return Sent{ExitCode::Stopped, probes::stopMessage()};
        Sent r = send(fresh(refN));
        if (!r.ok()) return r;
        out.push_back(r.ttftS);
        step("drift reference, " + tokensText(refN) + " tokens cold");
    }
    return std::nullopt;
}

std::optional<Sent> Sweep::measureAll(std::vector<Cell>& cells,
                                      std::map<std::int64_t, std::string>& skippedLengths,
                                      std::int64_t refN, int between, std::vector<double>& refs) {
    const auto& s = m_s;
    const auto& lengths = s.lengths;
    for (int r = 0; r < s.repeats; ++r) {
        if (r > 0)
            if (auto bad = reference(refN, between, refs)) return bad;
        // The per-request floor: two one-block cold prompts per repeat (llama.cpp: after an
        // erase, as every timed request).
        for (int i = 0; i < 2; ++i) {
            if (isLlama())
                if (Sent e = slotAction("erase", "", nullptr); !e.ok()) return e;
            if (!pauseBeforeTimed()) return Sent{ExitCode::Stopped, probes::stopMessage()};
            Sent f = send(fresh(s.blockSize));
            if (!f.ok()) return f;
            m_floor.push_back(f.ttftS);
            step("per-request floor, " + std::to_string(s.blockSize) + " tokens cold");
        }
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

double Sweep::checkDrift(std::int64_t refN, const std::vector<double>& refs) {
    // The first third of the reference samples against the last third (at least 5 each), each
    // by its median, or its fastest with --fit-on fastest (one-sided noise). A move past
    // --drift-limit is drift only when the rank test says the last samples are not the first
    // ones' distribution (p < 1 %): a noisy but steady server moves its medians too.
    const size_t k = std::max<size_t>(5, refs.size() / 3);
    const std::vector<double> head(refs.begin(),
                                   refs.begin() + static_cast<long>(std::min(k, refs.size())));
    const std::vector<double> tail(refs.end() - static_cast<long>(std::min(k, refs.size())),
                                   refs.end());
    auto stat = [this](const std::vector<double>& v) {
        return m_s.fitOnFastest ? *std::min_element(v.begin(), v.end()) : detail::quantile(v, 0.5);
    };
    const double startMed = stat(head), endMed = stat(tail);
    const double driftRel = (endMed - startMed) / startMed;
    const double med = detail::quantile(refs, 0.5);
    m_refSpread = (detail::quantile(refs, 0.9) - detail::quantile(refs, 0.1)) / med;
    m_refSamples = static_cast<int>(refs.size());
    m_driftP = rankSumPValue(head, tail);
    m_drifted = std::abs(driftRel) > m_s.driftLimit && m_driftP < kDriftSignificance;
    const std::string moved =
        "the " + std::to_string(refN) + "-token cold point took " + fmt(startMed * 1e3, 2) +
        " ms in its first " + std::to_string(k) + " samples and " + fmt(endMed * 1e3, 2) +
        " ms in its last " + std::to_string(k) + " (" + (driftRel > 0 ? "+" : "") +
        fmt(driftRel * 100, 1) + " %, over --drift-limit " + fmt(m_s.driftLimit * 100, 0) +
        " %; rank test p = " + fmt(m_driftP, 3) + ")";
    if (m_drifted)
        note("warning: TTFT drifted during the run: " + moved +
             ": other load on the server or thermal throttling; the fit is suspect");
    else if (std::abs(driftRel) > m_s.driftLimit)
        note("the reference point moved, within its own spread: " + moved +
             "; a rank test cannot tell the first samples from the last at 1 %, so this is "
             "noise (spread " +
             fmt(m_refSpread * 100, 1) + " %), not drift");
    return driftRel;
}

SweepData Sweep::sweepData(const std::vector<Cell>& cells,
                           const std::map<std::int64_t, std::string>& skippedLengths,
                           double driftRel, std::int64_t refN) const {
    SweepData data;
    data.settings = &m_s;
    data.driftRelative = driftRel;
    data.drifted = m_drifted;
    data.driftP = m_driftP;
    data.referenceTokens = static_cast<double>(refN);
    data.retries = m_retries;
    data.resetRetries = m_resetRetries;
    data.referenceSpread = m_refSpread;
    data.referenceSamples = m_refSamples;
    data.floorSamples = m_floor;
    data.floorTokens = m_s.blockSize;
    data.resetMethod = m_resetPath;
    data.offloadTiers = m_offloadTiers;
    data.verifiedBy.assign(m_verifiedBy.begin(), m_verifiedBy.end());
    data.engine = m_engine == Engine::LlamaCpp ? "llama.cpp"
                  : m_engine == Engine::Vllm   ? "vLLM"
                  : m_engine == Engine::Sglang ? "SGLang"
                                               : "";
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
        m.unverifiedTtft = c.unverifiedTtft;
        m.usedUnverified = c.usedUnverified;
        m.restoreBytes = c.restoreBytes;
        m.restoreMs = c.restoreMs;
        m.restoreWallS = c.restoreWallS;
        data.cells.push_back(std::move(m));
    }
    return data;
}

} // namespace detail

Status ServingProbe::available() const {
    std::string why;
    if (!makeHttpClient(why)) return Error{why};
    return Ok{};
}

probes::ProbeOutcome ServingProbe::run(const probes::ProbeOptions&, probes::ProbeSink& sink) {
    std::string why;
    auto http = makeHttpClient(why);
    if (!http) return probes::reportFailure(sink, probes::ExitCode::CannotRun, why);
    detail::Sweep sweep(m_s, sink, *http);
    return sweep.run();
}

} // namespace kvbe::serving
