#include "kvbe/plan/plan_shard.h"

#include <chrono>
#include <cmath>
#include <set>

namespace kvbe {
using nlohmann::json;

namespace {

// Numbers as JSON, exactly: nlohmann writes a finite double with 17 significant digits (it reads
// back the same double); the others, which JSON has no number for, as strings.
json num(double v) {
    if (std::isfinite(v)) return v;
    return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}
double toNum(const json& j) {
    if (j.is_string()) {
        const auto s = j.get<std::string>();
        if (s == "inf") return INFINITY;
        if (s == "-inf") return -INFINITY;
        if (s == "nan") return NAN;
        throw std::runtime_error("expected a number, found '" + s + "'");
    }
    return j.get<double>();
}
template <class T> json opt(const std::optional<T>& v) {
    if (!v) return nullptr;
    if constexpr (std::is_floating_point_v<T>)
        return num(*v);
    else
        return *v;
}
template <class T> std::optional<T> getOpt(const json& j) {
    if (j.is_null()) return std::nullopt;
    if constexpr (std::is_floating_point_v<T>)
        return toNum(j);
    else
        return j.get<T>();
}

json ratingJson(const DriveRating& d) {
    return {{"model", d.model},
            {"writes_per_day", opt(d.writesPerDay)},
            {"warranty_years", opt(d.warrantyYears)},
            {"capacity_bytes", opt(d.capacityBytes)}};
}
DriveRating ratingOf(const json& j) {
    DriveRating d;
    d.model = j.at("model").get<std::string>();
    d.writesPerDay = getOpt<double>(j.at("writes_per_day"));
    d.warrantyYears = getOpt<double>(j.at("warranty_years"));
    d.capacityBytes = getOpt<double>(j.at("capacity_bytes"));
    return d;
}

json tierJson(const PlanTier& t) {
    const TierEndurance& e = t.endurance;
    return {{"name", t.name},
            {"capacity_bytes", num(t.capacityBytes)},
            {"blocks_written", t.blocksWritten},
            {"bytes_stored", num(t.bytesStored)},
            {"endurance",
             {{"drive", ratingJson(e.drive)},
              {"drives", opt(e.drives)},
              {"installed_bytes", num(e.installedBytes)},
              {"bytes_offered_per_day", opt(e.bytesOfferedPerDay)},
              {"bytes_stored_per_day", opt(e.bytesStoredPerDay)},
              {"drive_writes_per_day", opt(e.driveWritesPerDay)},
              {"years_to_rated_endurance", opt(e.yearsToRatedEndurance)},
              {"note", e.note},
              {"warning", e.warning}}}};
}
PlanTier tierOf(const json& j) {
    PlanTier t;
    t.name = j.at("name").get<std::string>();
    t.capacityBytes = toNum(j.at("capacity_bytes"));
    t.blocksWritten = j.at("blocks_written").get<std::uint64_t>();
    t.bytesStored = toNum(j.at("bytes_stored"));
    const json& e = j.at("endurance");
    t.endurance.drive = ratingOf(e.at("drive"));
    t.endurance.drives = getOpt<std::int64_t>(e.at("drives"));
    t.endurance.installedBytes = toNum(e.at("installed_bytes"));
    t.endurance.bytesOfferedPerDay = getOpt<double>(e.at("bytes_offered_per_day"));
    t.endurance.bytesStoredPerDay = getOpt<double>(e.at("bytes_stored_per_day"));
    t.endurance.driveWritesPerDay = getOpt<double>(e.at("drive_writes_per_day"));
    t.endurance.yearsToRatedEndurance = getOpt<double>(e.at("years_to_rated_endurance"));
    t.endurance.note = e.at("note").get<std::string>();
    t.endurance.warning = e.at("warning").get<std::string>();
    return t;
}

json pointJson(const PlanPoint& p) {
    json tiers = json::array();
    for (const auto& t : p.tiers)
        tiers.push_back(tierJson(t));
    return {{"router", p.router},
            {"other_router", p.otherRouter},
            {"gpu_only_hours_per_day", num(p.gpuOnlyHoursPerDay)},
            {"dram_bytes", num(p.dramBytes)},
            {"drive", p.drive},
            {"drives", p.drives},
            {"store_after", p.storeAfter},
            {"link", p.link},
            {"tiers", tiers},
            {"dram_usd", num(p.dramUsd)},
            {"links_usd", num(p.linksUsd)},
            {"drives_usd", num(p.drivesUsd)},
            {"capex_usd", num(p.capexUsd)},
            {"ttft_mean_s", num(p.ttftMeanS)},
            {"ttft_p99_s", num(p.ttftP99S)},
            {"hits_token_weighted", num(p.hitsTokenWeighted)},
            {"gpu_hours_saved_per_day", num(p.gpuHoursSavedPerDay)},
            {"servers_at_slo", opt(p.serversAtSlo)},
            {"servers_note", p.serversNote},
            {"shortest_life_years", opt(p.shortestLifeYears)},
            {"bandwidth_bound", p.bandwidthBound},
            {"saturation", p.saturation},
            {"drives_for_bandwidth", opt(p.drivesForBandwidth)},
            {"drives_for_endurance", opt(p.drivesForEndurance)},
            {"asked_read_Bps", num(p.askedReadBps)},
            {"write_rate_max_Bps", num(p.writeRateMaxBps)}};
}
// The figures a replay gives; finishPlan works out the rest (value, limits, fronts) again.
PlanPoint pointOf(const json& j) {
    PlanPoint p;
    p.router = j.value("router", std::string());
    p.otherRouter = j.value("other_router", false);
    if (j.contains("gpu_only_hours_per_day"))
        p.gpuOnlyHoursPerDay = toNum(j.at("gpu_only_hours_per_day"));
    p.dramBytes = toNum(j.at("dram_bytes"));
    p.drive = j.at("drive").get<std::string>();
    p.drives = j.at("drives").get<std::int64_t>();
    p.storeAfter = j.at("store_after").get<int>();
    p.link = j.value("link", std::string());
    for (const auto& t : j.at("tiers"))
        p.tiers.push_back(tierOf(t));
    p.dramUsd = toNum(j.at("dram_usd"));
    p.drivesUsd = toNum(j.at("drives_usd"));
    if (j.contains("links_usd")) p.linksUsd = toNum(j.at("links_usd"));
    p.capexUsd = toNum(j.at("capex_usd"));
    p.ttftMeanS = toNum(j.at("ttft_mean_s"));
    p.ttftP99S = toNum(j.at("ttft_p99_s"));
    p.hitsTokenWeighted = toNum(j.at("hits_token_weighted"));
    p.gpuHoursSavedPerDay = toNum(j.at("gpu_hours_saved_per_day"));
    p.serversAtSlo = getOpt<int>(j.at("servers_at_slo"));
    p.serversNote = j.at("servers_note").get<std::string>();
    p.shortestLifeYears = getOpt<double>(j.at("shortest_life_years"));
    p.bandwidthBound = j.at("bandwidth_bound").get<bool>();
    p.saturation = j.at("saturation").get<std::string>();
    p.drivesForBandwidth = getOpt<std::int64_t>(j.at("drives_for_bandwidth"));
    p.drivesForEndurance = getOpt<std::int64_t>(j.at("drives_for_endurance"));
    p.askedReadBps = toNum(j.at("asked_read_Bps"));
    p.writeRateMaxBps = toNum(j.at("write_rate_max_Bps"));
    return p;
}

json needsJson(const PlanDriveNeeds& d) {
    return {{"drive", d.drive},
            {"at_drives", d.atDrives},
            {"asked_read_Bps", num(d.askedReadBps)},
            {"write_Bps", num(d.writeBps)},
            {"drive_read_Bps", num(d.driveReadBps)},
            {"drive_write_Bps", num(d.driveWriteBps)},
            {"for_bandwidth", d.forBandwidth},
            {"for_endurance", opt(d.forEndurance)}};
}
PlanDriveNeeds needsOf(const json& j) {
    PlanDriveNeeds d;
    d.drive = j.at("drive").get<std::string>();
    d.atDrives = j.at("at_drives").get<std::int64_t>();
    d.askedReadBps = toNum(j.at("asked_read_Bps"));
    d.writeBps = toNum(j.at("write_Bps"));
    d.driveReadBps = toNum(j.at("drive_read_Bps"));
    d.driveWriteBps = toNum(j.at("drive_write_Bps"));
    d.forBandwidth = j.at("for_bandwidth").get<std::int64_t>();
    d.forEndurance = getOpt<std::int64_t>(j.at("for_endurance"));
    return d;
}

} // namespace

Result<PlanPart> planShard(const PlanSetup& s, int shard, int shards,
                           const std::function<bool(double)>& progress) {
    if (shards < 1 || shard < 0 || shard >= shards)
        return Error{"shard " + std::to_string(shard) + " of " + std::to_string(shards) +
                     ": expected 0 <= I < N"};
    PlanSetup x = s;
    x.select = [shard, shards](const PlanPoint&, std::size_t index) {
        return index % std::size_t(shards) == std::size_t(shard);
    };
    x.given = nullptr;
    auto r = planTrace(x, progress);
    if (!r) return Error{r.error().message};
    if (r->cancelled) return Error{"the shard was cancelled"};
    PlanPart part;
    part.shard = shard;
    part.shards = shards;
    part.configurations = r->points.size();
    for (std::size_t i = 0; i < r->points.size(); ++i) {
        if (r->points[i].sampled) continue; // another shard's
        part.indices.push_back(i);
        part.coords.push_back(r->coords[i]);
        part.points.push_back(r->points[i]);
    }
    part.drives = r->drives;
    part.driveNeeds = r->driveNeeds;
    part.floorP99S = r->floorP99S;
    part.durationS = r->durationS;
    part.serversSearched = r->serversSearched;
    if (shard == 0) part.gpuOnlyServers = r->gpuOnlyServers;
    part.replays = r->replays;
    part.seconds = r->seconds;
    return part;
}

json planPartJson(const PlanPart& p) {
    json points = json::array();
    for (std::size_t i = 0; i < p.points.size(); ++i) {
        const PlanCoord& c = p.coords[i];
        points.push_back({{"index", p.indices[i]},
                          {"coord", {c.dram, c.drive, c.count, c.k, c.link}},
                          {"point", pointJson(p.points[i])}});
    }
    json needs = json::array();
    for (const auto& d : p.driveNeeds)
        needs.push_back(needsJson(d));
    return {{"kvbe_plan_part", 1},
            {"shard", p.shard},
            {"shards", p.shards},
            {"command", p.command},
            {"configurations", p.configurations},
            {"drive_counts", p.drives},
            {"drive_needs", needs},
            {"floor_p99_s", num(p.floorP99S)},
            {"duration_s", num(p.durationS)},
            {"servers_searched", p.serversSearched},
            {"gpu_only_servers", opt(p.gpuOnlyServers)},
            {"replays", p.replays},
            {"seconds", p.seconds},
            {"points", points}};
}

Result<PlanPart> parsePlanPart(const json& j, const std::string& source) {
    try {
        if (!j.is_object() || j.value("kvbe_plan_part", 0) != 1)
            return Error{source + ": not a plan part (expected \"kvbe_plan_part\": 1, as "
                                  "`kvbe-cli trace plan --shard I/N --out FILE` writes)"};
        PlanPart p;
        p.shard = j.at("shard").get<int>();
        p.shards = j.at("shards").get<int>();
        p.command = j.at("command");
        p.configurations = j.at("configurations").get<std::size_t>();
        p.drives = j.at("drive_counts").get<std::vector<std::int64_t>>();
        for (const auto& d : j.at("drive_needs"))
            p.driveNeeds.push_back(needsOf(d));
        p.floorP99S = toNum(j.at("floor_p99_s"));
        p.durationS = toNum(j.at("duration_s"));
        p.serversSearched = j.at("servers_searched").get<bool>();
        p.gpuOnlyServers = getOpt<int>(j.at("gpu_only_servers"));
        p.replays = j.at("replays").get<std::size_t>();
        p.seconds = j.at("seconds").get<double>();
        for (const auto& e : j.at("points")) {
            p.indices.push_back(e.at("index").get<std::size_t>());
            const auto c = e.at("coord").get<std::vector<int>>();
            if (c.size() != 4 && c.size() != 5)
                return Error{source + ": field 'coord': expected 5 indices"};
            p.coords.push_back({c[0], c[1], c[2], c[3], c.size() == 5 ? c[4] : -1});
            p.points.push_back(pointOf(e.at("point")));
        }
        return p;
    } catch (const std::exception& e) {
        return Error{source + ": " + e.what()};
    }
}

RequestResult<PlanResult> mergePlanParts(const PlanSetup& s, const std::vector<PlanPart>& parts) {
    if (parts.empty()) return Error{"no plan parts to merge"};
    const PlanPart& first = parts.front();
    const int n = first.shards;
    std::set<int> seen;
    for (const auto& p : parts) {
        const std::string which =
            "part " + std::to_string(p.shard) + "/" + std::to_string(p.shards);
        if (p.shards != n || p.command != first.command ||
            p.configurations != first.configurations || p.drives != first.drives)
            return Error{which + " is not of the same plan as part " + std::to_string(first.shard) +
                         "/" + std::to_string(n) + " (another command, shard count or grid)"};
        if (!seen.insert(p.shard).second) return Error{which + " is given twice"};
    }
    for (int i = 0; i < n; ++i)
        if (!seen.count(i))
            return Error{"part " + std::to_string(i) + "/" + std::to_string(n) +
                         " is missing: every shard 0 to " + std::to_string(n - 1) +
                         " must be merged"};
    std::vector<PlanPoint> points(first.configurations);
    std::vector<bool> filled(first.configurations, false);
    PlanResult res;
    res.coords.resize(first.configurations);
    for (const auto& p : parts) {
        for (std::size_t k = 0; k < p.indices.size(); ++k) {
            const std::size_t i = p.indices[k];
            if (i >= points.size() || filled[i])
                return Error{"part " + std::to_string(p.shard) + ": configuration " +
                             std::to_string(i) + " is out of the grid or in two parts"};
            points[i] = p.points[k];
            res.coords[i] = p.coords[k];
            filled[i] = true;
        }
        res.replays += p.replays;
        res.seconds = std::max(res.seconds, p.seconds);
        if (p.shard == 0) res.gpuOnlyServers = p.gpuOnlyServers;
    }
    for (std::size_t i = 0; i < filled.size(); ++i)
        if (!filled[i])
            return Error{"configuration " + std::to_string(i) + " is in no part (shard " +
                         std::to_string(i % std::size_t(n)) + " holds it)"};
    res.durationS = first.durationS;
    res.floorP99S = first.floorP99S;
    res.serversSearched = first.serversSearched;
    res.drives = first.drives;
    res.driveNeeds = first.driveNeeds;
    res.threads = 1;
    res.sampling.reason = "--exact, merged from " + std::to_string(n) + " shards";
    PlanGrid grid = s.grid;
    grid.drives = first.drives;
    finishPlan(s, grid, std::move(points), res);
    return res;
}

} // namespace kvbe
