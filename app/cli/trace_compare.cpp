// trace replay TRACE --compare DIR: the model's prediction of a live replay (what `probe replay`
// wrote to DIR) beside what the servers did, request for request: the same requests (its
// --limit, --duration-cap and --block-tokens), the same servers, router and load, the scenario
// the flags describe (a calibration's fit adopted with --scenario). docs/trace.md, "Replaying
// against live servers".
#include "commands.h"
#include "trace_options.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/statistics.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sim.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>

namespace kvbe::cli {
namespace {

namespace fs = std::filesystem;

struct Figures {
    double hitRatio = 0, mean = 0, p50 = 0, p90 = 0, p99 = 0;
};

Figures figures(std::vector<double> ttft, double cached, double prompt) {
    Figures f;
    f.hitRatio = prompt > 0 ? cached / prompt : 0;
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

nlohmann::ordered_json figuresJson(const Figures& f) {
    return {{"token_hit_ratio", f.hitRatio},
            {"ttft_s", {{"mean", f.mean}, {"p50", f.p50}, {"p90", f.p90}, {"p99", f.p99}}}};
}

// A field of replay.json, or a sentence naming the file and the field.
Result<nlohmann::json> field(const nlohmann::json& j, const std::string& file, const char* key) {
    if (!j.contains(key))
        return Error{file + ": no \"" + key + "\"; expected the replay.json probe replay writes"};
    return j[key];
}

} // namespace

Result<Setup> adoptCalibration(const std::string& file, const Setup& setup) {
    auto c = readCalibration(file);
    if (!c) return Error{"--calibration " + c.message()};
    for (const auto& w : mismatchWarnings(*c, setup.eval.model, setup.eval.cost.inputs().kvDtype))
        std::cerr << "kvbe-cli: warning: " << w << "\n";
    auto fit = fitCalibration(*c, setup.eval.cost.inputs(), setup.eval.tiers);
    if (!fit) return Error{"--calibration " + file + ": " + fit.message()};
    Scenario s = adoptFit(setup.eval.scenario, fit->params);
    s.name += " (fit of " + fs::path(file).filename().string() + " adopted)";
    auto e = evaluate(s, setup.presets);
    if (!e) return Error{"--calibration " + file + ": " + e.message()};
    return Setup{std::move(*e), setup.capacities, setup.presets};
}

Status applyEngine(const std::string& engine, ReplayConfig& config) {
    if (engine.empty()) return Ok{};
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
                             ": expected the --cache-ram size, e.g. "
                             "16MiB (0: none)"};
            l.cacheRamBytes = *b;
        } else if (key == "similarity") {
            auto v = parseNumber(value);
            if (!v || !(*v >= 0 && *v <= 1))
                return Error{"--engine similarity=" + value +
                             ": expected 0 to 1 (llama.cpp's "
                             "--slot-prompt-similarity, 0.1 by default)"};
            l.slotSimilarity = *v;
        } else {
            return Error{"--engine " + engine + ": '" + key +
                         "' is not a key of llama.cpp; "
                         "expected cache_ram or similarity"};
        }
        at = end;
    }
    config.llamaCpp = l;
    config.fleet.enabled = true;
    if (config.instances < 1) config.instances = 1;
    return Ok{};
}

ExitCode runLiveCompare(const TraceOptions& o, const Setup& setup, const Trace& loaded) {
    const std::string summaryPath = (fs::path(o.compareDir) / "replay.json").string();
    const std::string rowsPath = (fs::path(o.compareDir) / "requests.jsonl").string();
    std::ifstream in(summaryPath);
    if (!in)
        return fail("--compare " + o.compareDir +
                    ": no replay.json there; expected the folder "
                    "probe replay --out wrote");
    const auto live = nlohmann::json::parse(in, nullptr, false);
    if (!live.is_object() || live.value("kvbe_probe", "") != "replay")
        return fail(summaryPath + ": not a probe replay summary (expected \"kvbe_probe\": "
                                  "\"replay\")");
    std::size_t limit = SIZE_MAX, requests = 0, servers = 0;
    double cap = std::numeric_limits<double>::infinity(), scale = 1;
    std::uint32_t blockTokens = 0;
    std::string router;
    for (const char* key :
         {"limit", "duration_cap_s", "rate_scale", "block_tokens", "requests", "servers", "router"})
        if (auto v = field(live, summaryPath, key); !v) return fail(v.message());
    try {
        if (!live["limit"].is_null()) limit = live["limit"].get<std::size_t>();
        if (!live["duration_cap_s"].is_null()) cap = live["duration_cap_s"].get<double>();
        scale = live["rate_scale"].get<double>();
        blockTokens = live["block_tokens"].get<std::uint32_t>();
        requests = live["requests"].get<std::size_t>();
        servers = live["servers"].size();
        router = live["router"].get<std::string>();
    } catch (const nlohmann::json::exception&) {
        return fail(summaryPath + ": a field of the wrong type (limit, duration_cap_s, rate_scale, "
                                  "block_tokens and requests are numbers, router a text)");
    }
    // The flags may repeat what the live replay did, not change it.
    if (o.replay.instances > 0 && static_cast<std::size_t>(o.replay.instances) != servers)
        return fail("--servers " + std::to_string(o.replay.instances) + ": the live replay in " +
                    o.compareDir + " had " + std::to_string(servers) + " servers");
    if (!o.replay.router.empty() && o.replay.router != router)
        return fail("--router " + o.replay.router + ": the live replay in " + o.compareDir +
                    " routed with " + router);
    if (o.replay.rateScale != 1 && o.replay.rateScale != scale)
        return fail("--rate-scale " + valueText(o.replay.rateScale) + ": the live replay in " +
                    o.compareDir + " ran at " + valueText(scale));
    if (o.durationCapS)
        return fail("--duration-cap: --compare replays the requests the live replay in " +
                    o.compareDir + " sent; leave it out");
    Trace trace = traceWithBlockTokens(traceHead(loaded, cap, limit), blockTokens);
    if (trace.size() != requests)
        return fail(o.file + " gives " + std::to_string(trace.size()) +
                    " requests with the live replay's limits, where it replayed " +
                    std::to_string(requests) + ": expected the trace it replayed");

    TraceOptions p = o;
    p.replay.instances = static_cast<int>(servers);
    p.replay.router = router;
    p.replay.fleet = true;
    p.replay.rateScale = scale;
    auto cfg = replayConfig(p, setup, trace.summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    if (auto st = applyEngine(o.engine, *cfg); !st) return fail(st.message());
    RequestTimes times;
    auto r = replayTrace(trace, setup.eval.cost, *cfg, &times);
    if (!r) return fail(r.message());
    // An engine loads every cached block it finds: `always`, unless --admission says otherwise.
    const Admission rule = o.admissionGiven ? o.admission : Admission::Always;
    const std::vector<double>& predictedTtft = rule == Admission::Always ? times.queuedAlways
                                               : rule == Admission::Breakeven
                                                   ? times.queuedBreakeven
                                                   : times.queuedOptimal;

    std::ifstream rows(rowsPath);
    if (!rows) return fail("--compare " + o.compareDir + ": no requests.jsonl there");
    std::vector<double> mt, pt;
    double mc = 0, pc = 0, prompt = 0, ape = 0;
    std::size_t line = 0, failed = 0;
    for (std::string text; std::getline(rows, text);) {
        ++line;
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (!j.is_object() || !j.contains("request") || !j["request"].is_number_unsigned() ||
            !j.contains("ttft_s") || !j.contains("prompt_tokens"))
            return fail(rowsPath + ":" + std::to_string(line) +
                        ": expected a row with request, prompt_tokens and ttft_s");
        const auto i = j["request"].get<std::size_t>();
        if (i >= trace.size())
            return fail(rowsPath + ":" + std::to_string(line) + ": request " + std::to_string(i) +
                        " is not among the " + std::to_string(trace.size()) + " replayed");
        if (!j["ttft_s"].is_number()) {
            ++failed;
            continue;
        }
        const double m = j["ttft_s"].get<double>(), q = predictedTtft[i];
        mt.push_back(m);
        pt.push_back(q);
        if (m > 0) ape += std::abs(q - m) / m;
        if (j.contains("cached_tokens") && j["cached_tokens"].is_number()) {
            const double n = trace.inputTokens[i];
            mc += j["cached_tokens"].get<double>();
            // An engine computes a prompt's last token whatever it holds (vLLM, SGLang and
            // llama.cpp alike): a whole prompt found reports n - 1 tokens cached.
            pc += std::min(n - 1, static_cast<double>(times.hitBlocks[i]) * blockTokens);
            prompt += n;
        }
    }
    if (mt.empty())
        return fail(rowsPath + ": no request completed, so there is nothing to compare");
    const Figures measured = figures(mt, mc, prompt), predicted = figures(pt, pc, prompt);
    const double mape = ape / static_cast<double>(mt.size());

    if (o.output == "json") {
        nlohmann::ordered_json j = {{"live", o.compareDir},
                                    {"requests", requests},
                                    {"compared", mt.size()},
                                    {"failed", failed},
                                    {"servers", servers},
                                    {"router", router},
                                    {"rate_scale", scale},
                                    {"block_tokens", blockTokens},
                                    {"rule", toString(rule)},
                                    {"scenario", setup.eval.scenario.name},
                                    {"engine", o.engine.empty() ? nlohmann::ordered_json(nullptr)
                                                                : nlohmann::ordered_json(o.engine)},
                                    {"measured", figuresJson(measured)},
                                    {"predicted", figuresJson(predicted)},
                                    {"ttft_mape", mape}};
        if (prompt == 0) {
            j["measured"]["token_hit_ratio"] = nullptr;
            j["predicted"]["token_hit_ratio"] = nullptr;
        }
        std::cout << dumpJson(j, 2) << "\n";
        return ExitCode::Ok;
    }
    TextTable t;
    t.title = "Predicted against measured: " + std::to_string(mt.size()) + " of " +
              std::to_string(requests) + " requests on " + std::to_string(servers) +
              (servers == 1 ? " server" : " servers") + " behind " + router + ", rate scale " +
              valueText(scale) + ", " + std::to_string(blockTokens) + "-token blocks";
    t.columns = {"figure", "predicted", "measured", "error"};
    if (prompt > 0)
        t.rows.push_back({"token hit ratio", formatFixed(100 * predicted.hitRatio, 1) + " %",
                          formatFixed(100 * measured.hitRatio, 1) + " %",
                          (predicted.hitRatio >= measured.hitRatio ? "+" : "") +
                              formatFixed(100 * (predicted.hitRatio - measured.hitRatio), 1) +
                              " points"});
    else
        t.rows.push_back({"token hit ratio", "not compared", "not reported", ""});
    auto row = [&](const char* name, double pv, double m) {
        t.rows.push_back(
            {name, formatSeconds(pv), formatSeconds(m),
             m > 0 ? (pv >= m ? "+" : "") + formatFixed(100 * (pv / m - 1), 1) + " %" : "n/a"});
    };
    row("TTFT mean", predicted.mean, measured.mean);
    row("TTFT p50", predicted.p50, measured.p50);
    row("TTFT p90", predicted.p90, measured.p90);
    row("TTFT p99", predicted.p99, measured.p99);
    t.footnotes.push_back("Per request, the predicted TTFT is off by " +
                          formatFixed(100 * mape, 1) + " % on average (MAPE).");
    t.footnotes.push_back(
        "Predicted: " + setup.eval.scenario.name + ", rule " + std::string(toString(rule)) +
        (o.admissionGiven ? "" : " (an engine loads every cached block it finds)") +
        ". Measured: " + rowsPath + ".");
    if (failed > 0)
        t.footnotes.push_back(std::to_string(failed) +
                              " requests failed live and are left out of both columns.");
    std::cout << renderTable(t);
    return ExitCode::Ok;
}

} // namespace kvbe::cli
