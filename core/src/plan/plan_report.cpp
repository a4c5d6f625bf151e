#include "kvbe/plan/plan_report.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/scenario/calc_report.h"

#include "plan_text.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace kvbe {
using nlohmann::json;
using plan_detail::usd;

namespace {

json optionalJson(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

json optionalInt(const std::optional<int>& v) {
    return v ? json(*v) : json(nullptr);
}

json optionalCount(const std::optional<std::int64_t>& v) {
    return v ? json(*v) : json(nullptr);
}

// Per drive preset: the drives bandwidth and endurance need, in words.
std::string driveNeedsLine(const PlanDriveNeeds& d, const PlanLimits& l) {
    std::string out = d.drive + ": " + std::to_string(d.forBandwidth) + " drive" +
                      (d.forBandwidth == 1 ? "" : "s") +
                      " for bandwidth (the busiest minute asks " + formatBandwidth(d.askedReadBps) +
                      " of reads and " + formatBandwidth(d.writeBps) + " of writes, against " +
                      formatBandwidth(d.driveReadBps) + " and " + formatBandwidth(d.driveWriteBps) +
                      " a drive), ";
    out += d.forEndurance ? std::to_string(*d.forEndurance) + " for endurance (" +
                                formatFixed(l.lifeYears, 1) + " years at its write rate)"
                          : "no endurance figure (the drive has no full rating)";
    return out + "; read from " + std::to_string(d.atDrives) + " drives without DRAM";
}

std::string ms(double s) {
    return formatFixed(s * 1e3, 1);
}

// The prices the plan used, and whether they are the shipped examples.
std::string pricesLine(const PlanSetup& s) {
    const auto& p = s.prices;
    std::string out = p.example ? "EXAMPLE prices (" + p.origin +
                                      "): replace them with your own quotes (--prices FILE)"
                                : "prices from " + p.origin;
    out += "; " + s.gpuKey + " $" + formatFixed(p.gpuPerHour.at(s.gpuKey).usd, 2) + " per GPU-hour";
    if (p.dramPerGiB && s.dram) out += ", DRAM $" + formatFixed(p.dramPerGiB->usd, 2) + " per GiB";
    for (const auto& d : s.driveTiers)
        out += ", " + d.name + " " + usd(p.drive.at(d.name).usd) + " a drive";
    for (const auto& l : s.links)
        out += ", " + l.name + " " + usd(p.link.at(l.name).usd) + " a node's link";
    return out;
}

std::string limitsLine(const PlanLimits& l) {
    std::string out =
        "drive life at least " + formatFixed(l.lifeYears, 1) + " years (the horizon too)";
    out += l.sloP99S ? ", p99 TTFT at most " + formatFixed(*l.sloP99S, 3) + " s"
                     : ", no latency limit";
    out += l.budgetUsd ? ", capital cost at most " + usd(*l.budgetUsd) : ", no budget";
    return out;
}

// Whether the servers were counted, at what, and what GPU-only caching needs.
std::string serversLine(const PlanSetup& s, const PlanResult& r) {
    if (!r.serversSearched)
        return "not counted: give --slo-p99 for the prefill servers each configuration needs and "
               "the GPUs it saves against GPU-only caching";
    const std::string target = "p99 TTFT at most " + formatFixed(*s.limits.sloP99S, 3) + " s";
    const std::string load = s.base.rateScale == 1
                                 ? "the trace's own load"
                                 : formatFixed(s.base.rateScale, 3) + " times the trace's load";
    const std::string gpus = std::to_string(s.gpusPerInstance) +
                             (s.gpusPerInstance == 1 ? " GPU" : " GPUs") + " a server";
    const std::string gpuOnly =
        r.points.empty() ? std::string("GPU-only caching") : describePlanPoint(r.points.front());
    if (!r.gpuOnlyServers)
        return "the fewest that hold " + target + " at " + load + " (" + gpus + "); " + gpuOnly +
               " holds it with no count up to " + std::to_string(s.maxServers) +
               ", so the value is the GPU-hours saved";
    return "the fewest that hold " + target + " at " + load + " (" + gpus + "): " + gpuOnly +
           " needs " + std::to_string(*r.gpuOnlyServers) +
           "; the value is the GPUs a configuration saves against that, at the price per GPU-hour";
}

// Which mode ran, and with a sample its rate and the error bound.
std::string samplingLine(const PlanResult& r) {
    const PlanSampling& m = r.sampling;
    if (!m.sampled)
        return "exact: " + (m.reason.empty() ? "every configuration replayed in full" : m.reason);
    return "sampled at " + formatFixed(m.rate * 100, 2) + " % of the prefix subtrees (" +
           std::to_string(m.sampleRequests[0]) + " and " + std::to_string(m.sampleRequests[1]) +
           " requests in two samples; blocks in " + std::to_string(m.trunkMinRequests) +
           " requests or more are trunk, " + std::to_string(m.trunkBlocks) +
           " blocks); error bound (the two samples' largest difference): hit ratio " +
           formatFixed(m.hitsError * 100, 2) + " points, mean TTFT " +
           formatFixed(m.ttftMeanError * 100, 1) + " %, p99 " +
           formatFixed(m.ttftP99Error * 100, 1) + " %, GPU-hours " +
           formatFixed(m.gpuHoursError * 100, 1) + " %, drive life " +
           formatFixed(m.lifeError * 100, 1) + " %; " + std::to_string(m.shortlisted) +
           " configurations replayed in full (the recommendation is one of them: its figures "
           "are exact); --exact replays all";
}

} // namespace

// The servers each configuration is replayed on: a fleet's (a GPU cache each, behind its router;
// each tier on every node), servers sharing one cache, or one server; "" without queueing.
std::string planFleetText(const PlanSetup& s, const PlanResult& r) {
    if (r.fleetServers > 0) {
        const int perNode = std::max(1, s.base.fleet.nodeServers);
        return std::to_string(r.fleetServers) + " servers on " + std::to_string(r.fleetNodes) +
               (r.fleetNodes == 1 ? " node" : " nodes") +
               (perNode > 1 ? " (" + std::to_string(perNode) + " a node)" : "") + " behind " +
               r.fleetRouter + ", a GPU cache each: every DRAM size and drive count is a node's, " +
               (r.serversSearched
                    ? "each row replayed on the servers it needs and priced for their nodes (one "
                      "not counted: the " +
                          std::to_string(r.fleetServers) + " servers' " +
                          std::to_string(r.fleetNodes) + (r.fleetNodes == 1 ? " node" : " nodes") +
                          ")"
                    : "every cost is for the " + std::to_string(r.fleetNodes) +
                          (r.fleetNodes == 1 ? " node" : " nodes")) +
               (s.links.empty() ? ""
                                : "; a pool's size is the pool's, bought once, with a link on "
                                  "every node");
    }
    if (s.base.instances > 1)
        return std::to_string(s.base.instances) +
               " servers sharing one GPU cache and one of each tier (not a fleet: --router gives "
               "each server its own)";
    return s.base.instances == 1 ? "one server" : "";
}

json planPointJson(const PlanPoint& p) {
    json tiers = json::array(), capacities = json::object(), years = json::object();
    for (const auto& t : p.tiers) {
        const auto& e = t.endurance;
        tiers.push_back({{"name", t.name},
                         {"capacity_bytes", jsonCount(t.capacityBytes)},
                         {"drives", e.drives ? json(*e.drives) : json(nullptr)},
                         {"drive_model", e.drive.model},
                         {"blocks_written", t.blocksWritten},
                         {"bytes_stored", jsonCount(t.bytesStored)},
                         {"bytes_stored_per_day", optionalJson(e.bytesStoredPerDay)},
                         {"drive_writes_per_day", optionalJson(e.driveWritesPerDay)},
                         {"years_to_rated_endurance", optionalJson(e.yearsToRatedEndurance)}});
        capacities[t.name] = jsonCount(t.capacityBytes);
        years[t.name] = optionalJson(e.yearsToRatedEndurance);
    }
    return {{"description", describePlanPoint(p)},
            {"router", p.router.empty() ? json(nullptr) : json(p.router)},
            {"other_router", p.otherRouter},
            {"capacities_bytes", capacities},
            {"tiers", tiers},
            {"dram_bytes", jsonCount(p.dramBytes)},
            {"drive", p.drive.empty() ? json(nullptr) : json(p.drive)},
            {"drives", p.drives},
            {"store_after", p.storeAfter},
            {"placement", p.pooled() ? "pooled" : "local"},
            {"pooled_tier", !p.pooled()      ? json(nullptr)
                            : p.dramPooled() ? json("dram")
                                             : json(p.drive)},
            {"link", p.pooled() ? json(p.link) : json(nullptr)},
            {"capex_usd", p.capexUsd},
            {"nodes", p.nodes > 0 ? json(p.nodes) : json(nullptr)},
            {"links_usd", p.linksUsd},
            {"dram_usd", p.dramUsd},
            {"drives_usd", p.drivesUsd},
            {"ttft_mean_s", p.ttftMeanS},
            {"ttft_p99_s", p.ttftP99S},
            {"hits_token_weighted", p.hitsTokenWeighted},
            {"gpu_hours_saved_per_day", p.gpuHoursSavedPerDay},
            {"servers_at_slo", optionalInt(p.serversAtSlo)},
            {"gpus_saved", optionalInt(p.gpusSaved)},
            {"servers_note", p.serversNote},
            {"value_per_month_usd", p.valueNotComputed ? json(nullptr) : json(p.valuePerMonthUsd)},
            {"value_from", p.valueNotComputed     ? json(nullptr)
                           : p.valueFromGpusSaved ? json("gpus_saved")
                                                  : json("gpu_hours_saved_per_day")},
            {"payback_months", optionalJson(p.paybackMonths)},
            {"net_usd_over_life", p.valueNotComputed ? json(nullptr) : json(p.netUsdOverLife)},
            {"years_to_rated_endurance", years},
            {"shortest_life_years", optionalJson(p.shortestLifeYears)},
            {"life_if_every_block_stored_years", optionalJson(p.lifeIfEveryBlockStored)},
            {"meets_limits",
             p.latencyNotComputed && p.fails.empty() ? json(nullptr) : json(p.fails.empty())},
            {"fails", p.fails},
            {"on_ttft_front", p.onTtftFront},
            {"on_gpu_hours_front", p.onGpuHoursFront},
            {"bandwidth_bound", p.bandwidthBound},
            {"saturation", p.saturation},
            {"drives_for_bandwidth", optionalCount(p.drivesForBandwidth)},
            {"drives_for_endurance", optionalCount(p.drivesForEndurance)},
            {"sampled", p.sampled}};
}

json planJson(const PlanReport& x) {
    const PlanSetup& s = *x.setup;
    const PlanResult& r = *x.result;
    json j = {{"kvbe_trace_plan", 1},
              {"trace", {{"file", x.file}, {"requests", x.trace->size()}}},
              {"scenario", x.scenario},
              {"rule", std::string(toString(s.rule))}};
    json drives = json::object();
    for (const auto& d : s.driveTiers)
        drives[d.name] = s.prices.drive.at(d.name).usd;
    json links = json::object();
    for (const auto& l : s.links)
        links[l.name] = s.prices.link.at(l.name).usd;
    j["prices"] = {
        {"origin", s.prices.origin},
        {"example", s.prices.example},
        {"note", s.prices.note},
        {"gpu", s.gpuKey},
        {"gpu_usd_per_hour", s.prices.gpuPerHour.at(s.gpuKey).usd},
        {"dram_usd_per_GiB", s.prices.dramPerGiB ? json(s.prices.dramPerGiB->usd) : json(nullptr)},
        {"drive_usd", drives},
        {"link_usd", links}};
    j["limits"] = {{"life_years", s.limits.lifeYears},
                   {"slo_p99_s", optionalJson(s.limits.sloP99S)},
                   {"budget_usd", optionalJson(s.limits.budgetUsd)}};
    j["gpus_per_instance"] = s.gpusPerInstance;
    j["fleet"] = r.fleetServers > 0 ? json{{"servers", r.fleetServers},
                                           {"nodes", r.fleetNodes},
                                           {"node_servers", std::max(1, s.base.fleet.nodeServers)},
                                           {"router", r.fleetRouter},
                                           {"sizes", s.links.empty() ? "per node"
                                                                     : "per node; a pool's in "
                                                                       "total"},
                                           {"costs", "every node"},
                                           {"text", planFleetText(s, r)}}
                                    : json(nullptr);
    j["duration_s"] = r.durationS;
    j["floor_p99_s"] = r.floorP99S;
    j["servers_searched"] = r.serversSearched;
    j["max_servers"] = s.maxServers;
    j["gpu_only_servers_at_slo"] = optionalInt(r.gpuOnlyServers);
    j["configurations"] = r.points.size();
    j["drive_counts"] = r.drives;
    json needs = json::array();
    for (const auto& d : r.driveNeeds)
        needs.push_back({{"drive", d.drive},
                         {"at_drives", d.atDrives},
                         {"busiest_minute_read_Bps", d.askedReadBps},
                         {"busiest_minute_write_Bps", d.writeBps},
                         {"drive_read_Bps", d.driveReadBps},
                         {"drive_write_Bps", d.driveWriteBps},
                         {"drives_for_bandwidth", d.forBandwidth},
                         {"drives_for_endurance", optionalCount(d.forEndurance)}});
    j["drive_needs"] = needs;
    const PlanSampling& m = r.sampling;
    j["mode"] = m.sampled ? "sampled" : "exact";
    j["sampling"] = {{"sampled", m.sampled},
                     {"reason", m.reason},
                     {"rate", m.rate},
                     {"sample_requests", {m.sampleRequests[0], m.sampleRequests[1]}},
                     {"trunk_min_requests", m.trunkMinRequests},
                     {"trunk_blocks", m.trunkBlocks},
                     {"error",
                      {{"hits_token_weighted", m.hitsError},
                       {"ttft_mean_relative", m.ttftMeanError},
                       {"ttft_p99_relative", m.ttftP99Error},
                       {"gpu_hours_relative", m.gpuHoursError},
                       {"life_relative", m.lifeError}}},
                     {"replayed_in_full", m.sampled ? m.shortlisted : r.points.size()},
                     {"sample_seconds", m.sampleSeconds},
                     {"full_seconds", m.fullSeconds}};
    j["replays"] = r.replays;
    j["threads"] = r.threads;
    j["seconds"] = r.seconds;
    json front = json::array();
    for (std::size_t i : r.front)
        front.push_back(planPointJson(r.points[i]));
    j["front"] = front;
    j["recommended"] = r.recommended ? planPointJson(r.points[*r.recommended]) : json(nullptr);
    j["why"] = r.why;
    j["unmet"] = r.unmet;
    return j;
}

std::string planCsv(const PlanReport& x) {
    const PlanResult& r = *x.result;
    std::string out =
        "configuration,dram_bytes,drive,drives,store_after,capex_usd,ttft_mean_s,"
        "ttft_p99_s,hits_token_weighted,gpu_hours_saved_per_day,servers_at_slo,gpus_saved,"
        "value_per_month_usd,payback_months,net_usd_over_life,shortest_life_years,"
        "meets_limits,on_ttft_front,on_gpu_hours_front,recommended,bandwidth_bound,"
        "drives_for_bandwidth,drives_for_endurance,sampled,placement,link,links_usd\n";
    auto opt = [](const std::optional<double>& v) {
        return v ? formatFixed(*v, 6) : std::string();
    };
    auto optInt = [](const std::optional<int>& v) {
        return v ? std::to_string(*v) : std::string();
    };
    for (std::size_t i = 0; i < r.points.size(); ++i) {
        const PlanPoint& p = r.points[i];
        out += csvField(describePlanPoint(p)) + "," + formatFixed(p.dramBytes, 0) + "," + p.drive +
               "," + std::to_string(p.drives) + "," + std::to_string(p.storeAfter) + "," +
               formatFixed(p.capexUsd, 2) + "," + formatFixed(p.ttftMeanS, 9) + "," +
               formatFixed(p.ttftP99S, 9) + "," + formatFixed(p.hitsTokenWeighted, 6) + "," +
               formatFixed(p.gpuHoursSavedPerDay, 6) + "," + optInt(p.serversAtSlo) + "," +
               optInt(p.gpusSaved) + "," +
               (p.valueNotComputed ? std::string() : formatFixed(p.valuePerMonthUsd, 2)) + "," +
               opt(p.paybackMonths) + "," +
               (p.valueNotComputed ? std::string() : formatFixed(p.netUsdOverLife, 2)) + "," +
               opt(p.shortestLifeYears) + "," +
               (!p.fails.empty()       ? "0"
                : p.latencyNotComputed ? ""
                                       : "1") +
               "," + (p.onTtftFront ? "1" : "0") + "," + (p.onGpuHoursFront ? "1" : "0") + "," +
               (r.recommended && *r.recommended == i ? "1" : "0") + "," +
               (p.bandwidthBound ? "1" : "0") + "," +
               (p.drivesForBandwidth ? std::to_string(*p.drivesForBandwidth) : "") + "," +
               (p.drivesForEndurance ? std::to_string(*p.drivesForEndurance) : "") + "," +
               (p.sampled ? "1" : "0") + "," + (p.pooled() ? "pooled," : "local,") + p.link + "," +
               formatFixed(p.linksUsd, 2) + "\n";
    }
    return out;
}

std::string planTable(const PlanReport& x) {
    const PlanSetup& s = *x.setup;
    const PlanResult& r = *x.result;
    std::string out = "plan      " + x.file + ": " + std::to_string(x.trace->size()) +
                      " requests over " + formatFixed(r.durationS / 60, 1) + " min; " + x.scenario +
                      "; " + std::string(toString(s.rule)) + " admission\n";
    out += "grid      " + std::to_string(r.points.size()) + " configurations (DRAM sizes x " +
           "drives x store-after K, and GPU-only caching" +
           (s.otherRouters.empty()
                ? std::string()
                : " behind the fleet's router and " + std::to_string(s.otherRouters.size()) +
                      (s.otherRouters.size() == 1 ? " other" : " others")) +
           "), " + std::to_string(r.replays) + " replays in " + formatFixed(r.seconds, 1) +
           " s on " + std::to_string(r.threads) + " thread" + (r.threads == 1 ? "" : "s") + "\n";
    out += "mode      " + samplingLine(r) + "\n";
    out += "limits    " + limitsLine(s.limits) + "\n";
    out += "prices    " + pricesLine(s) + "\n";
    if (const std::string f = planFleetText(s, r); !f.empty()) out += "fleet     " + f + "\n";
    out += "servers   " + serversLine(s, r) + "\n\n";
    std::string counts;
    for (auto c : r.drives)
        counts += (counts.empty() ? "" : ", ") + std::to_string(c);
    out += "drives    counts replayed: " + counts + "\n";
    for (const auto& d : r.driveNeeds)
        out += "          " + driveNeedsLine(d, s.limits) + "\n";
    out += "\nThe Pareto front: capital cost against mean TTFT (T) and against GPU-hours saved (H);"
           " B: bandwidth-bound (a tier saturated)" +
           std::string(r.sampling.sampled
                           ? std::string("; s: the sample's estimate, not replayed in full (n/c: "
                                         "not computed, its servers, the value they give and "
                                         "whether they hold the latency limit)") +
                                 (r.serversSearched && r.fleetServers > 0
                                      ? "; an s row is the " + std::to_string(r.fleetServers) +
                                            " servers' fleet, its cost for their " +
                                            std::to_string(r.fleetNodes) + " nodes"
                                      : "")
                           : "") +
           "\n";
    char line[512];
    // The servers and GPUs saved at the latency limit, where they were counted.
    auto servers = [&](const std::string& count, const std::string& saved) {
        if (!r.serversSearched) return std::string();
        std::snprintf(line, sizeof line, " %7s %10s", count.c_str(), saved.c_str());
        return std::string(line);
    };
    const std::string serversHead = servers("servers", "GPUs saved");
    // The configuration column fits the longest name shown (a pool's are the longest).
    std::vector<std::size_t> rows = r.front;
    if (r.recommended && !r.points[*r.recommended].onTtftFront &&
        !r.points[*r.recommended].onGpuHoursFront)
        rows.push_back(*r.recommended);
    int width = 58;
    for (std::size_t i : rows)
        width = std::max(width, int(describePlanPoint(r.points[i]).size()));
    std::snprintf(line, sizeof line, "%-3s %-*s %9s %21s %8s%s %9s %8s %12s  %s\n", "", width,
                  "configuration", "capex", "TTFT ms mean / p99", "GPU-h/d", serversHead.c_str(),
                  "$/month", "payback", "drive life", "limits");
    out += line;
    // The front, and the recommended configuration where it is not on it (a front point that
    // fails a limit can shadow it): rows, above.
    for (std::size_t i : rows) {
        const PlanPoint& p = r.points[i];
        const std::string mark = std::string(p.onTtftFront ? "T" : " ") +
                                 (p.onGpuHoursFront ? "H" : " ") + (p.bandwidthBound ? "B" : " ") +
                                 (p.sampled ? "s" : "");
        const std::string ttft = ms(p.ttftMeanS) + " / " + ms(p.ttftP99S);
        // n/c: not computed (a sampled row's servers, and the value they give).
        const std::string payback = p.valueNotComputed ? "n/c"
                                    : p.paybackMonths  ? formatFixed(*p.paybackMonths, 1) + " mo"
                                                       : "-";
        const std::string life = p.shortestLifeYears ? formatLife(*p.shortestLifeYears) : "-";
        // n/c: a sampled row whose latency verdict is its searched count's, not computed.
        std::string limits = !p.fails.empty()
                                 ? "fails " + p.fails.front().substr(0, p.fails.front().find(':'))
                             : p.latencyNotComputed ? "n/c"
                                                    : "ok";
        if (r.recommended && *r.recommended == i)
            limits += p.onTtftFront || p.onGpuHoursFront ? "  <- recommended"
                                                         : "  <- recommended (not on a front)";
        const std::string serversCells = servers(p.serversAtSlo ? std::to_string(*p.serversAtSlo)
                                                 : p.sampled    ? std::string("n/c")
                                                             : ">" + std::to_string(s.maxServers),
                                                 p.gpusSaved ? std::to_string(*p.gpusSaved)
                                                 : p.sampled ? "n/c"
                                                             : "-");
        std::snprintf(line, sizeof line, "%-3s %-*s %9s %21s %8s%s %9s %8s %12s  %s\n",
                      mark.c_str(), width, describePlanPoint(p).c_str(), usd(p.capexUsd).c_str(),
                      ttft.c_str(), formatFixed(p.gpuHoursSavedPerDay, 1).c_str(),
                      serversCells.c_str(),
                      (p.valueNotComputed ? std::string("n/c") : usd(p.valuePerMonthUsd)).c_str(),
                      payback.c_str(), life.c_str(), limits.c_str());
        out += line;
    }
    out += "\n";
    if (r.recommended) {
        out += "Recommended: " + r.why + "\n";
        const PlanPoint& p = r.points[*r.recommended];
        if (p.bandwidthBound) out += "It is bandwidth-bound: " + p.saturation + "\n";
    } else
        out += r.unmet + "\n";
    if (s.prices.example)
        out += "The prices are examples: the money figures move with your own quotes.\n";
    return out;
}

} // namespace kvbe
