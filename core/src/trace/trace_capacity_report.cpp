#include "kvbe/trace/trace_capacity_report.h"

#include "kvbe/base/csv.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvbe {
using nlohmann::json;

namespace {

std::string num(const char* format, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}
// A load scale: four significant digits (the search's precision is 0.1 %).
std::string scale(double s) {
    return num("%.4g", s);
}
std::string rate(double requestsPerS) {
    return num("%.2f", requestsPerS) + " requests/s";
}
std::string duration(double s) {
    return s >= 120 ? num("%.1f", s / 60) + " min" : formatSeconds(s);
}
std::string capacityText(double bytes) {
    return std::isfinite(bytes) ? formatBytes(bytes) : "unlimited";
}
std::string outcomeName(RuleLoadHeld::Outcome o) {
    using O = RuleLoadHeld::Outcome;
    return o == O::Found ? "found" : o == O::HoldsAtMaximum ? "holds-at-maximum" : "never-holds";
}
json orNull(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}
json pointJson(const LoadPoint& p) {
    return {{"rate_scale", p.rateScale}, {"statistic_s", p.statistic}};
}

// "up to S = 1.27 (4.32 requests/s)", "at every load up to S = 1024 (the highest searched)",
// "at no load down to S = 0.0009766 (p99 4.10 s there)".
std::string heldClause(const RuleLoadHeld& h, const CapacityResult& r) {
    using O = RuleLoadHeld::Outcome;
    if (h.outcome == O::Found)
        return "up to S = " + scale(h.rateScale) + " (" + rate(h.rateScale * r.requestsPerS) + ")";
    if (h.outcome == O::HoldsAtMaximum)
        return "at every load up to S = " + scale(h.rateScale) + " (the highest searched)";
    return "at no load down to S = " + scale(h.failsAt) + " (" + r.target.statistic() + " " +
           formatSeconds(h.statisticFails) + " there)";
}

// Servers that are a fleet, a GPU cache each: a server for every request bounds nothing there.
bool fleetOf(const TraceCapacityReport& x) {
    return x.config && x.config->fleet.enabled;
}

// No number of servers holds the target: even with no wait the statistic is above it.
bool noNumberHolds(const RuleServers& s, const CapacityResult& r) {
    return !s.servers && s.statisticUnlimited > r.target.seconds;
}

// "4", "none" (no number holds), "> 1024" (none up to the bound).
std::string serversText(const RuleServers& s, const CapacityResult& r) {
    if (s.servers) return std::to_string(*s.servers);
    return noNumberHolds(s, r) ? "none" : "> " + std::to_string(r.maxInstances);
}

// "4 servers", "more than 1024 servers (p99 2.31 s with 1024)", "more servers than any number
// gives (p99 3.64 s with no wait)".
std::string needText(const RuleServers& s, const CapacityResult& r) {
    if (s.servers) return std::to_string(*s.servers) + (*s.servers == 1 ? " server" : " servers");
    if (noNumberHolds(s, r))
        return "more than any number of servers gives (" + r.target.statistic() + " " +
               formatSeconds(s.statisticUnlimited) +
               (r.fleetGpuHits.empty() ? " with no wait at all)"
                                       : " with every prefix hit free and no wait)");
    return "more than " + std::to_string(r.maxInstances) + " servers (" + r.target.statistic() +
           " " + formatSeconds(s.statistic) + " with " + std::to_string(r.maxInstances) + ")";
}

std::string rateScaleText(const CapacityResult& r) {
    return rate(r.rateScale * r.requestsPerS) +
           (r.rateScale == 1 ? " (the trace's own rate)"
                             : " (S = " + scale(r.rateScale) + " × the trace's rate)");
}

// Whether the statistic rose with the load at every load evaluated, and where it did not: per
// rule the falls, the largest, and whether the target holds again above the load that failed.
std::string fallsNote(const CapacityResult& r, bool writeQueue) {
    const std::string stat = r.target.statistic();
    std::size_t points = 0;
    std::string rules, again;
    for (const auto& h : r.loadHeld) {
        points += h.evaluated.size();
        if (h.falls.empty()) continue;
        const auto& [a, b] =
            *std::max_element(h.falls.begin(), h.falls.end(), [](const auto& x, const auto& y) {
                return x.first.statistic - x.second.statistic <
                       y.first.statistic - y.second.statistic;
            });
        rules += (rules.empty() ? "" : "; ") + h.rule + " at " + std::to_string(h.falls.size()) +
                 " of " + std::to_string(h.evaluated.size()) + " loads (the most " +
                 formatSeconds(a.statistic) + " -> " + formatSeconds(b.statistic) +
                 ", S = " + scale(a.rateScale) + " to " + scale(b.rateScale) + ")";
        if (h.holdsAgain)
            again += (again.empty() ? "" : "; ") + h.rule +
                     " holds it again at S = " + scale(h.holdsAgain->rateScale) + " (" +
                     formatSeconds(h.holdsAgain->statistic) + "), above S = " + scale(h.failsAt) +
                     " where it failed";
    }
    if (rules.empty())
        return stat + " rises with the load at every load evaluated (" + std::to_string(points) +
               " in all), as the bisection assumes.";
    return stat +
           " falls a little as the load rises between neighbouring loads evaluated: " + rules +
           (writeQueue ? " (with write queues the hits change with the load)" : "") + ". " +
           (again.empty() ? "No rule holds the target again above the load where it failed."
                          : again + ": the answer is the first load found where the target "
                                    "stops holding.");
}

} // namespace

std::string capacityServersSentence(const CapacityResult& r) {
    const RuleServers* g = r.serversOf("gpu-only");
    const RuleServers* o = r.serversOf("optimal");
    if (!r.serversSearched || !g || !o) return {};
    std::string s = "To hold " + r.target.text() + " at " + rateScaleText(r) + ", ";
    // A fleet's floor is one figure for every rule (every hit free); servers sharing one cache
    // have one per rule (a server per request).
    const bool fleet = !r.fleetGpuHits.empty();
    if (noNumberHolds(*g, r) && noNumberHolds(*o, r))
        return s + "no number of servers is enough: with " +
               (fleet ? "every prefix hit free on the GPU and no wait" : "no wait") +
               " at all the " + r.target.statistic() + " is " +
               formatSeconds(g->statisticUnlimited) +
               (fleet ? " (the prefill of what no cache holds alone)."
                      : " with GPU-only caching and " + formatSeconds(o->statisticUnlimited) +
                            " with optimal (the prefill and the loads alone).");
    s += "GPU-only caching needs " + needText(*g, r) + " and optimal " + needText(*o, r) +
         " (always " + serversText(*r.serversOf("always"), r) + ", breakeven " +
         serversText(*r.serversOf("breakeven"), r) + ")";
    if (g->servers && o->servers)
        s += *o->servers < *g->servers
                 ? ": offload saves " + std::to_string(*g->servers - *o->servers) + " of " +
                       std::to_string(*g->servers)
                 : ": offload saves no server";
    s += ".";
    // A fleet: each server added adds a GPU cache and moves the router's choices, so the hit
    // ratio moves with the count.
    const auto& h = r.fleetGpuHits;
    if (g->servers && h.size() > 1) {
        const auto at =
            std::find_if(h.begin(), h.end(), [&](const auto& p) { return p.first == *g->servers; });
        if (at != h.end() && at != h.begin()) {
            const auto& [n0, h0] = h.front();
            const auto& [n1, h1] = *at;
            const std::string a = num("%.1f", h0 * 100), b = num("%.1f", h1 * 100);
            s += " Each server adds a GPU cache: from " + std::to_string(n0) + " to " +
                 std::to_string(n1) + " servers the GPU hit ratio " +
                 (a == b ? "stays at " + b + " %"
                         : std::string(h1 > h0 ? "rises" : "falls") + " from " + a + " % to " + b +
                               " %") +
                 ".";
        }
    }
    return s;
}

std::string capacityLoadSentence(const CapacityResult& r) {
    const RuleLoadHeld* g = r.loadHeldOf("gpu-only");
    const RuleLoadHeld* o = r.loadHeldOf("optimal");
    if (r.instances <= 0 || !g || !o) return {};
    std::string s = "On " + std::to_string(r.instances) + " server" +
                    (r.instances == 1 ? "" : "s") + " GPU-only caching holds " + r.target.text() +
                    " " + heldClause(*g, r) + ", optimal " + heldClause(*o, r);
    if (o->vsGpuOnly) s += ": offload carries " + num("%.2f", *o->vsGpuOnly) + "× the load";
    return s + ".";
}

namespace {

// A sample's answer for rule i: its servers, or its load held ("-": none).
std::string sampleServers(const TraceCapacityReport& x, std::size_t k, std::size_t i) {
    const auto& v = x.run->samples[k].servers;
    return i < v.size() && v[i].servers ? std::to_string(*v[i].servers) : "-";
}
std::string sampleLoad(const TraceCapacityReport& x, std::size_t k, std::size_t i) {
    const auto& v = x.run->samples[k].loadHeld;
    return i < v.size() && v[i].rateScale > 0 ? scale(v[i].rateScale) : "-";
}
bool sampled(const TraceCapacityReport& x) {
    return x.run && x.run->sampling.sampled && x.run->samples.size() == 2;
}

json samplingJson(const TraceCapacityReport& x) {
    const TraceSampling& m = x.run->sampling;
    json j = {{"mode", m.sampled ? "sampled" : "full"}, {"text", m.mode}, {"rate", m.rate}};
    if (!sampled(x)) return j;
    j["sample_requests"] = {m.sampleRequests[0], m.sampleRequests[1]};
    j["error_bound"] = {{"servers", x.run->serversError}, {"load_relative", x.run->loadError}};
    json rules = json::array();
    for (std::size_t i = 0; i < kCapacityRules.size(); ++i) {
        json servers = json::array(), loads = json::array();
        for (std::size_t k = 0; k < 2; ++k) {
            const auto& s = x.run->samples[k];
            servers.push_back(i < s.servers.size() && s.servers[i].servers
                                  ? json(*s.servers[i].servers)
                                  : json(nullptr));
            loads.push_back(i < s.loadHeld.size() && s.loadHeld[i].rateScale > 0
                                ? json(s.loadHeld[i].rateScale)
                                : json(nullptr));
        }
        rules.push_back({{"rule", std::string(kCapacityRules[i])},
                         {"servers", servers},
                         {"rate_scale", loads}});
    }
    j["samples"] = rules;
    return j;
}

} // namespace

json traceCapacityJson(const TraceCapacityReport& x) {
    const CapacityResult& r = *x.result;
    const ReplayConfig& cfg = *x.config;
    json j = {{"kvbe_trace_capacity", 1}};
    j["trace"] = {{"file", x.file},
                  {"requests", r.requests},
                  {"duration_s", r.durationS},
                  {"requests_per_s", r.requestsPerS},
                  {"duration_cap_s", x.durationCapS > 0 ? json(x.durationCapS) : json(nullptr)}};
    j["scenario"] = x.scenario;
    json tiers = json::array();
    tiers.push_back(
        {{"name", "gpu"},
         {"capacity_bytes",
          std::isfinite(cfg.gpuCapacityBytes) ? json(cfg.gpuCapacityBytes) : json(nullptr)}});
    for (const auto& t : cfg.tiers)
        tiers.push_back({{"name", t.name},
                         {"capacity_bytes",
                          std::isfinite(t.capacityBytes) ? json(t.capacityBytes) : json(nullptr)}});
    j["config"] = {{"policy", std::string(toString(cfg.policy))},
                   {"placement", std::string(toString(cfg.placement))},
                   {"write_queue", cfg.writeQueue},
                   {"gpus_per_server", x.gpusPerServer},
                   {"tiers", tiers}};
    j["target"] = {{"statistic", r.target.statistic()},
                   {"percentile", r.target.mean ? json(nullptr) : json(r.target.percentile)},
                   {"seconds", r.target.seconds},
                   {"text", r.target.text()}};
    j["ttft_includes"] = kCapacityTtftNote;
    if (r.serversSearched) {
        json rules = json::array();
        for (const auto& s : r.servers)
            rules.push_back(
                {{"rule", s.rule},
                 {"servers", s.servers ? json(*s.servers) : json(nullptr)},
                 {"statistic_s", s.statistic},
                 {"statistic_one_fewer_s", orNull(s.statisticOneFewer)},
                 {"statistic_unlimited_s", fleetOf(x) ? json(nullptr) : json(s.statisticUnlimited)},
                 {"statistic_floor_s", fleetOf(x) ? json(s.statisticUnlimited) : json(nullptr)}});
        json hits = json::array();
        for (const auto& [n, h] : r.fleetGpuHits)
            hits.push_back({{"servers", n}, {"gpu_token_weighted", h}});
        j["servers_needed"] = {{"rate_scale", r.rateScale},
                               {"requests_per_s", r.rateScale * r.requestsPerS},
                               {"max_instances", r.maxInstances},
                               {"rules", rules},
                               {"fleet_gpu_hits", fleetOf(x) ? hits : json(nullptr)},
                               {"sentence", capacityServersSentence(r)}};
    }
    if (r.instances > 0) {
        json rules = json::array();
        for (const auto& h : r.loadHeld) {
            json falls = json::array(), evaluated = json::array();
            for (const auto& [a, b] : h.falls)
                falls.push_back({{"from", pointJson(a)}, {"to", pointJson(b)}});
            for (const auto& p : h.evaluated)
                evaluated.push_back(pointJson(p));
            const bool found = h.rateScale > 0;
            rules.push_back(
                {{"rule", h.rule},
                 {"outcome", outcomeName(h.outcome)},
                 {"rate_scale", found ? json(h.rateScale) : json(nullptr)},
                 {"requests_per_s", found ? json(h.rateScale * r.requestsPerS) : json(nullptr)},
                 {"statistic_s", found ? json(h.statistic) : json(nullptr)},
                 {"fails_at_rate_scale", h.failsAt > 0 ? json(h.failsAt) : json(nullptr)},
                 {"statistic_fails_s", h.failsAt > 0 ? json(h.statisticFails) : json(nullptr)},
                 {"vs_gpu_only", orNull(h.vsGpuOnly)},
                 {"rises", h.falls.empty()},
                 {"falls", falls},
                 {"holds_again", h.holdsAgain ? pointJson(*h.holdsAgain) : json(nullptr)},
                 {"evaluated", evaluated}});
        }
        json curve = {{"rate_scale", r.curveRateScale}};
        for (std::size_t k = 0; k < r.loadHeld.size() && k < r.curveStatistic.size(); ++k)
            curve[r.loadHeld[k].rule] = r.curveStatistic[k];
        j["load_held"] = {{"instances", r.instances},
                          {"rules", rules},
                          {"curve_statistic_s", curve},
                          {"sentence", capacityLoadSentence(r)}};
    }
    if (x.run) j["sampling"] = samplingJson(x);
    j["passes"] = r.passes;
    j["evaluations"] = r.evaluations;
    return j;
}

std::string traceCapacityCsv(const TraceCapacityReport& x) {
    const CapacityResult& r = *x.result;
    auto g = [](double v) { return num("%.9g", v); };
    auto opt = [&](const std::optional<double>& v) { return v ? g(*v) : std::string(); };
    std::string out;
    if (r.serversSearched) {
        std::vector<std::string> head{"rule",
                                      "rate_scale",
                                      "requests_per_s",
                                      "servers",
                                      "statistic_s",
                                      "statistic_one_fewer_s",
                                      "statistic_unlimited_s"};
        if (x.run) head.insert(head.end(), {"mode", "sample_rate", "samples_servers"});
        out += csvLine(head);
        for (std::size_t i = 0; i < r.servers.size(); ++i) {
            const RuleServers& s = r.servers[i];
            std::vector<std::string> row{s.rule,
                                         g(r.rateScale),
                                         g(r.rateScale * r.requestsPerS),
                                         s.servers ? std::to_string(*s.servers) : "",
                                         g(s.statistic),
                                         opt(s.statisticOneFewer),
                                         fleetOf(x) ? std::string() : g(s.statisticUnlimited)};
            if (x.run)
                row.insert(
                    row.end(),
                    {sampled(x) ? "sampled" : "full", g(x.run->sampling.rate),
                     sampled(x) ? sampleServers(x, 0, i) + " " + sampleServers(x, 1, i) : ""});
            out += csvLine(row);
        }
    }
    if (r.instances > 0) {
        if (!out.empty()) out += "\n";
        std::vector<std::string> head{"rule",
                                      "instances",
                                      "outcome",
                                      "rate_scale",
                                      "requests_per_s",
                                      "statistic_s",
                                      "fails_at_rate_scale",
                                      "statistic_fails_s",
                                      "vs_gpu_only",
                                      "rises"};
        if (x.run) head.insert(head.end(), {"mode", "sample_rate", "samples_rate_scale"});
        out += csvLine(head);
        for (std::size_t i = 0; i < r.loadHeld.size(); ++i) {
            const RuleLoadHeld& h = r.loadHeld[i];
            const bool found = h.rateScale > 0, fails = h.failsAt > 0;
            std::vector<std::string> row{h.rule,
                                         std::to_string(r.instances),
                                         outcomeName(h.outcome),
                                         found ? g(h.rateScale) : "",
                                         found ? g(h.rateScale * r.requestsPerS) : "",
                                         found ? g(h.statistic) : "",
                                         fails ? g(h.failsAt) : "",
                                         fails ? g(h.statisticFails) : "",
                                         opt(h.vsGpuOnly),
                                         h.falls.empty() ? "true" : "false"};
            if (x.run)
                row.insert(row.end(),
                           {sampled(x) ? "sampled" : "full", g(x.run->sampling.rate),
                            sampled(x) ? sampleLoad(x, 0, i) + " " + sampleLoad(x, 1, i) : ""});
            out += csvLine(row);
        }
    }
    return out;
}

std::string traceCapacityTable(const TraceCapacityReport& x) {
    const CapacityResult& r = *x.result;
    const ReplayConfig& cfg = *x.config;
    const std::string stat = r.target.statistic();
    std::string out = "trace     " + x.file + ": " + std::to_string(r.requests) +
                      " requests over " + duration(r.durationS) + ", " + rate(r.requestsPerS) +
                      (x.durationCapS > 0 ? " (the first " + duration(x.durationCapS) + ")" : "") +
                      "\n";
    out += "scenario  " + x.scenario + "; gpu " + capacityText(cfg.gpuCapacityBytes);
    for (const auto& t : cfg.tiers)
        out += ", " + t.name + " " + capacityText(t.capacityBytes);
    out += "; " + std::string(toString(cfg.policy)) + ", " + std::string(toString(cfg.placement)) +
           (cfg.writeQueue ? ", write queues" : ", writes keep up") + "\n";
    out += "target    " + r.target.text() + " for the time to first token, where\n          " +
           std::string(kCapacityTtftNote) + ".\n";
    if (x.run) {
        const TraceSampling& m = x.run->sampling;
        if (sampled(x))
            out += "mode      sampled at rate " + num("%.4g", m.rate) + " (" + m.mode +
                   "); the samples differ by up to " + std::to_string(x.run->serversError) +
                   " server" + (x.run->serversError == 1 ? "" : "s") +
                   (r.instances > 0
                        ? " and " + num("%.1f", x.run->loadError * 100) + " % of the load held"
                        : std::string()) +
                   "\n";
        else
            out += "mode      full, " + m.mode + "\n";
    }
    const std::string server =
        x.gpusPerServer > 1
            ? "a server is " + std::to_string(x.gpusPerServer) + " GPUs (tensor parallel)"
            : "a server is one GPU";
    if (r.serversSearched) {
        TextTable t;
        t.title = "\nservers needed at " + rateScaleText(r) + "; " + server + ", searched up to " +
                  std::to_string(r.maxInstances);
        t.columns = {"rule", "servers", stat + " TTFT", "with one fewer", "with one per request"};
        if (sampled(x)) t.columns.push_back("samples said");
        for (std::size_t i = 0; i < r.servers.size(); ++i) {
            const RuleServers& s = r.servers[i];
            t.rows.push_back({s.rule, serversText(s, r), formatSeconds(s.statistic),
                              s.statisticOneFewer ? formatSeconds(*s.statisticOneFewer) : "-",
                              fleetOf(x) ? "n/c; floor " + formatSeconds(s.statisticUnlimited)
                                         : formatSeconds(s.statisticUnlimited)});
            if (sampled(x))
                t.rows.back().push_back(sampleServers(x, 0, i) + " / " + sampleServers(x, 1, i));
        }
        out += renderTable(t) + capacityServersSentence(r) + "\n";
    }
    if (r.instances > 0) {
        TextTable t;
        t.title = "\nlargest load on " + std::to_string(r.instances) + " server" +
                  (r.instances == 1 ? "" : "s") + " (S: every arrival time divided by S; " +
                  server + ")";
        t.columns = {"rule",          "S",          "requests/s", stat + " there", "fails at S",
                     stat + " there", "vs GPU-only"};
        if (sampled(x)) t.columns.push_back("samples said");
        for (std::size_t i = 0; i < r.loadHeld.size(); ++i) {
            const RuleLoadHeld& h = r.loadHeld[i];
            const bool found = h.rateScale > 0, fails = h.failsAt > 0;
            t.rows.push_back({h.rule, found ? scale(h.rateScale) : "none",
                              found ? num("%.2f", h.rateScale * r.requestsPerS) : "-",
                              found ? formatSeconds(h.statistic) : "-",
                              fails ? scale(h.failsAt) : "-",
                              fails ? formatSeconds(h.statisticFails) : "-",
                              h.vsGpuOnly ? num("%.2f", *h.vsGpuOnly) + "×" : "-"});
            if (sampled(x))
                t.rows.back().push_back(sampleLoad(x, 0, i) + " / " + sampleLoad(x, 1, i));
        }
        t.footnotes.push_back(fallsNote(r, cfg.writeQueue));
        out += renderTable(t) + capacityLoadSentence(r) + "\n";
    }
    return out;
}

} // namespace kvbe
