#include "kvbe/plan/plan.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_saturation.h"

#include "plan_pool.h"
#include "plan_text.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <tuple>

namespace kvbe {

using plan_detail::usd;

namespace {

// The replays that run at once keep their state under this (planTrace): a 10^7-request trace
// runs them one at a time, a 10^6-request one on every core.
constexpr double kReplayMemoryBytes = 1.2e9;

using Coord = PlanCoord;

struct Job {
    PlanPoint point;
    Coord at;
    // With a latency limit: the GPU-only rule's fewest servers in this point's replay (the same
    // in every point: the GPU's cache does not depend on the offload tiers).
    std::optional<int> gpuOnlyServers;
};

RequestStatus checkSetup(const PlanSetup& s) {
    if (!s.trace || !s.cost)
        return RequestError{RequestField::None, "the plan has no trace or cost model"};
    if (!(s.limits.lifeYears > 0) || !std::isfinite(s.limits.lifeYears))
        return RequestError{RequestField::Life,
                            "the life limit: " + formatFixed(s.limits.lifeYears, 2) +
                                " years; expected more than 0 years"};
    if (s.limits.sloP99S && !(*s.limits.sloP99S > 0))
        return RequestError{RequestField::SloP99, "the latency limit: a p99 TTFT of " +
                                                      formatFixed(*s.limits.sloP99S, 3) +
                                                      " s; expected more than 0 s"};
    if (s.limits.budgetUsd && !(*s.limits.budgetUsd >= 0))
        return RequestError{RequestField::Budget,
                            "the budget: " + usd(*s.limits.budgetUsd) + "; expected 0 or more"};
    const std::string where = " (" + s.prices.origin + ")";
    if (!s.prices.gpuPerHour.count(s.gpuKey))
        return RequestError{RequestField::None,
                            "prices: no price per hour for the GPU '" + s.gpuKey + "'" + where +
                                "; give gpu_usd_per_hour." + s.gpuKey +
                                " in a --prices file or the " + "scenario's prices"};
    const bool anyDram = std::any_of(s.grid.dramBytes.begin(), s.grid.dramBytes.end(),
                                     [](double b) { return b > 0; });
    if (anyDram && !s.dram)
        return RequestError{RequestField::None,
                            "the scenario has no DRAM tier for the plan's DRAM sizes"};
    if (anyDram && !s.prices.dramPerGiB)
        return RequestError{RequestField::None,
                            "prices: no DRAM price" + where + "; give dram_usd_per_GiB"};
    for (const auto& t : s.driveTiers) {
        if (!t.drive.rated())
            return RequestError{RequestField::None,
                                "drive " + t.name + ": the plan needs its drive writes per day, " +
                                    "warranty years and drive capacity (drive_writes_per_day, " +
                                    "warranty_years, drive_capacity_TB)"};
        if (!s.prices.drive.count(t.name))
            return RequestError{RequestField::None, "prices: no price for the drive " + t.name +
                                                        where + "; give drive_usd." + t.name};
    }
    for (auto k : s.grid.storeAfter)
        if (k < 1 || k > kMaxStoreAfter)
            return RequestError{RequestField::StoreAfterGrid, "store after: " + std::to_string(k) +
                                                                  "; expected 1 to " +
                                                                  std::to_string(kMaxStoreAfter)};
    for (auto n : s.grid.drives)
        if (n < 0)
            return RequestError{RequestField::DriveCounts,
                                "drive counts: expected 0 or more drives"};
    for (auto b : s.grid.dramBytes)
        if (!(b >= 0) || !std::isfinite(b))
            return RequestError{RequestField::DramSizes, "DRAM sizes: expected 0 or more bytes"};
    if (!s.otherRouters.empty() && !s.base.isFleet())
        return RequestError{RequestField::Router,
                            "other routers: a plan compares routers on a fleet (--servers 2 or "
                            "more and --router)"};
    if (std::find(s.base.fleet.pooled.begin(), s.base.fleet.pooled.end(), true) !=
        s.base.fleet.pooled.end())
        return RequestError{RequestField::Pooled,
                            "a plan places its tiers itself: leave out --pooled and give "
                            "--placements local,pooled"};
    if (!s.links.empty() && !s.base.isFleet())
        return RequestError{RequestField::Placements,
                            "a pooled placement: a pool serves a fleet (--servers 2 or more and "
                            "--router)"};
    if (s.links.empty() && !s.placeLocal)
        return RequestError{RequestField::Placements, "expected local, pooled or both"};
    for (const auto& l : s.links)
        if (!s.prices.link.count(l.name))
            return RequestError{RequestField::Links,
                                "prices: no price for the link " + l.name + where +
                                    "; a pooled placement buys one for every node: give "
                                    "link_usd." +
                                    l.name + " in a --prices file"};
    return Ok{};
}

// The grid in order: GPU-only caching first, then DRAM size × drive preset × count × K; from
// the count at index firstCount on only (the drive counts an extension added).
std::vector<Job> gridJobs(const PlanSetup& s, const PlanGrid& g, std::size_t firstCount = 0) {
    const std::string router = s.base.isFleet() ? routerText(s.base.fleet.router) : "";
    std::vector<Job> jobs;
    // GPU-only caching behind the fleet's router, then behind each other router.
    if (firstCount == 0) {
        jobs.emplace_back().point.router = router;
        for (const auto& other : s.otherRouters) {
            Job j;
            j.point.router = other.text;
            j.point.otherRouter = true;
            jobs.push_back(std::move(j));
        }
    }
    // Local first, then pooled over each link: the pool holds the nodes' sizes together.
    const std::int64_t nodes = planNodes(s);
    for (int li = s.placeLocal ? -1 : 0; li < static_cast<int>(s.links.size()); ++li)
        for (std::size_t di = 0; di < g.dramBytes.size(); ++di) {
            const double dram = g.dramBytes[di];
            for (int pi = -1; pi < static_cast<int>(s.driveTiers.size()); ++pi) {
                for (std::size_t ci = firstCount; ci < g.drives.size(); ++ci) {
                    const std::int64_t n = g.drives[ci];
                    if ((pi < 0) != (n == 0)) continue; // no preset goes with no drives, and back
                    if (dram <= 0 && n == 0) continue;  // that is GPU-only caching
                    for (std::size_t ki = 0; ki < g.storeAfter.size(); ++ki) {
                        Job j;
                        j.point.router = router;
                        j.point.dramBytes = dram;
                        j.point.drive = pi >= 0 ? s.driveTiers[std::size_t(pi)].name : "";
                        j.point.drives = n;
                        j.point.storeAfter = g.storeAfter[ki];
                        if (li >= 0) {
                            j.point.link = s.links[std::size_t(li)].name;
                            if (n > 0)
                                j.point.drives = n * nodes;
                            else
                                j.point.dramBytes = dram * double(nodes);
                        }
                        j.at = {int(di), pi, int(ci), int(ki), li};
                        jobs.push_back(std::move(j));
                    }
                }
            }
        }
    return jobs;
}

} // namespace

int planNodes(const PlanSetup& s) {
    if (!s.base.isFleet()) return 1;
    return fleetNodes(s.base.instances, s.base.fleet.nodeServers);
}

namespace {

// scaled: as a sample replays it (fast mode); otherwise the configuration itself. Its servers
// are those of its searched count where it has one (every figure of a counted point is that
// fleet's), else those given.
ReplayConfig pointConfig(const PlanSetup& s, const PlanPoint& p, bool scaled = true) {
    ReplayConfig c = s.base;
    if (p.serversAtSlo && c.instances > 0) c.instances = *p.serversAtSlo;
    c.tiers.clear();
    c.storeAfter = p.storeAfter;
    c.reportRules = {std::string(toString(s.rule)), "gpu-only"}; // scorePoint reads these two
    if (p.otherRouter)
        for (const auto& r : s.otherRouters)
            if (r.text == p.router) c.fleet.router = r;
    if (p.dramBytes > 0) {
        SimTier t = *s.dram;
        t.capacityBytes = p.dramBytes;
        c.tiers.push_back(t);
    }
    for (const auto& d : s.driveTiers)
        if (d.name == p.drive && p.drives > 0) {
            // n drives striped: n times the capacity and the bandwidth of one.
            SimTier t = d;
            const double n = static_cast<double>(p.drives);
            t.capacityBytes = n * *d.drive.capacityBytes;
            t.path.bandwidthBps *= n;
            t.writeBps *= n;
            c.tiers.push_back(t);
        }
    plan_detail::poolTier(s, p, c);
    // A sample: its share of each tier's capacity. Its links keep their bandwidth and its write
    // buffers their size: the sample's arrivals come R times closer together (plan_sample.cpp),
    // so a link carries the full trace's bytes a second, and a load takes as long as in the full
    // trace (scaling the bandwidth by R instead made each load 1/R times slower, and a sampled
    // tier below the break-even bandwidth looked useless).
    if (scaled && s.sampleRate < 1)
        for (auto& t : c.tiers)
            if (s.sampleCapacity) t.capacityBytes = s.sampleCapacity(t.capacityBytes);
    return c;
}

// The span of time the replay stands for: a sample's arrivals are R times closer together than
// the whole trace's (plan_sample.cpp), so its span is R times shorter.
double fullSpanS(const PlanSetup& s, const ReplayResult& r) {
    return s.sampleRate < 1 ? r.durationS / s.sampleRate : r.durationS;
}

// A sample's tier report as the whole trace's: its writes divided by the rate. Its write rates
// (bytes a second) are the whole trace's already: the sample arrives as fast.
TierReport unsampled(const PlanSetup& s, TierReport t, double fullCapacityBytes) {
    if (s.sampleRate >= 1) return t;
    t.capacityBytes = fullCapacityBytes;
    const double f = 1 / s.sampleRate;
    t.blocksWritten = static_cast<std::uint64_t>(std::llround(double(t.blocksWritten) * f));
    t.blocksStored = static_cast<std::uint64_t>(std::llround(double(t.blocksStored) * f));
    t.bytesWritten *= f;
    t.bytesStored *= f;
    return t;
}

const SimTier* driveTierOf(const PlanSetup& s, const PlanPoint& p) {
    for (const auto& d : s.driveTiers)
        if (d.name == p.drive && p.drives > 0) return &d;
    return nullptr;
}

// Whole drives for a rate: at least one, none short of it.
std::int64_t drivesFor(double need, double perDrive) {
    if (!(perDrive > 0) || !(need > 0)) return 1;
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(need / perDrive - 1e-9)));
}

// The drives point p's replay needs: for its busiest minute's reads and writes, and for its
// write rate to last the life limit (installed = life × bytes a day / (DWPD × warranty years)).
void driveNeeds(const PlanSetup& s, const ReplayResult& r, PlanPoint& p) {
    const SimTier* d = driveTierOf(s, p);
    if (!d) return;
    const TierReport t =
        unsampled(s, r.tiers.back(), pointConfig(s, p, false).tiers.back().capacityBytes);
    // In a fleet each node's drives take their node's share: the read use is the mean node's
    // already (each copy's link), the write rates the whole fleet's.
    const double asked = t.readOffered.peakShare * t.readBps;
    p.askedReadBps = asked;
    p.writeRateMaxBps = t.writeRateMax / std::max<double>(1, t.copies);
    p.drivesForBandwidth =
        std::max(drivesFor(asked, d->path.bandwidthBps), drivesFor(p.writeRateMaxBps, d->writeBps));
    const DriveRating& rating = d->drive;
    const TierEndurance e = tierEndurance(t, rating, fullSpanS(s, r));
    if (rating.rated() && e.bytesStoredPerDay)
        p.drivesForEndurance = drivesFor(s.limits.lifeYears * *e.bytesStoredPerDay /
                                             (*rating.writesPerDay * *rating.warrantyYears),
                                         *rating.capacityBytes);
}

// The replay's figures for point p: TTFT under the rule, the writes and drive life per tier, the
// capital cost and the GPU hours saved against GPU-only caching.
void scorePoint(const PlanSetup& s, const ReplayConfig& c, const ReplayResult& r, PlanPoint& p) {
    const RuleResult& rule = *r.rule(toString(s.rule));
    const RuleResult& gpuOnly = *r.rule("gpu-only");
    p.ttftMeanS = rule.ttft.mean;
    p.ttftP99S = rule.ttft.p99;
    p.hitsTokenWeighted = r.anyTier.tokenWeighted;
    const ReplayConfig full = pointConfig(s, p, false);
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const TierReport t = unsampled(s, r.tiers[k], full.tiers[k - 1].capacityBytes);
        PlanTier pt{t.name, t.capacityBytes, t.blocksWritten, t.bytesStored,
                    tierEndurance(t, c.tiers[k - 1].drive, fullSpanS(s, r))};
        if (pt.endurance.yearsToRatedEndurance)
            p.shortestLifeYears = std::min(p.shortestLifeYears.value_or(kUnlimited),
                                           *pt.endurance.yearsToRatedEndurance);
        p.tiers.push_back(std::move(pt));
    }
    // A fleet's local tiers are on every node (a node's sizes, bought for each), its pool once.
    plan_detail::pricePoint(s, p);
    const double span = fullSpanS(s, r);
    const double perDay = span > 0 ? kSecondsPerDay / span : 0;
    const double hours = perDay / 3600 * static_cast<double>(s.gpusPerInstance) / s.sampleRate;
    p.gpuHoursSavedPerDay = (rule.gpuSecondsSaved - gpuOnly.gpuSecondsSaved) * hours;
    p.gpuOnlyHoursPerDay = gpuOnly.gpuSecondsSaved * hours;
    const auto sat = tierSaturation(r, toString(s.rule));
    p.bandwidthBound =
        std::any_of(sat.begin(), sat.end(), [](const auto& t) { return t.saturated; });
    if (p.bandwidthBound) {
        std::vector<bool> drives;
        for (const auto& t : c.tiers)
            drives.push_back(t.drive.capacityBytes.has_value());
        p.saturation = s.sampleRate < 1
                           ? "bandwidth-bound in the sample (its sentence comes with a full replay)"
                           : saturationSentence(r, toString(s.rule), c.instances > 0, drives);
    }
    driveNeeds(s, r, p);
}

// The fewest servers that hold the latency limit at the plan's load, for the plan's rule and
// GPU-only caching, from one search over the point's own configuration (one thread: the plan's
// threads are busy with the other points).
Status countServers(const PlanSetup& s, const ReplayConfig& c, Job& j,
                    const std::atomic<bool>& stop) {
    CapacityRequest q;
    q.target.percentile = 99;
    q.target.seconds = *s.limits.sloP99S;
    q.rateScale = c.rateScale;
    q.maxInstances = s.maxServers;
    q.threads = 1;
    // GPU-only caching's count is the same at every point (the GPU's cache does not depend on
    // the offload tiers): GPU-only caching's own point counts it, the others their rule only.
    q.serversRules = {std::string(toString(s.rule))};
    if (!j.point.offload()) q.serversRules.push_back("gpu-only");
    auto r = traceCapacity(*s.trace, *s.cost, c, q, [&](double) { return !stop; });
    if (!r) return r.error();
    if (r->cancelled) return Ok{};
    const RuleServers* mine = r->serversOf(toString(s.rule));
    const RuleServers* gpuOnly = r->serversOf("gpu-only");
    PlanPoint& p = j.point;
    p.serversAtSlo = mine->servers;
    // A fleet has no server-per-request figure (each server adds a cache): its p99 at the bound.
    if (!mine->servers)
        p.serversNote = "no count up to " + std::to_string(s.maxServers) + " servers holds " +
                        q.target.text() +
                        (c.isFleet() ? " (p99 " + formatSeconds(mine->statistic) + " with " +
                                           std::to_string(s.maxServers) + ")"
                                     : " (p99 " + formatSeconds(mine->statisticUnlimited) +
                                           " with a server per request)");
    j.gpuOnlyServers = gpuOnly->servers;
    return Ok{};
}

// Per drive preset, its needs from its largest count without DRAM, at K = 1 (or the grid's
// smallest K).
std::vector<PlanDriveNeeds> planDriveNeeds(const PlanSetup& s, const PlanGrid& g,
                                           const std::vector<Job>& jobs) {
    std::vector<PlanDriveNeeds> out;
    if (g.storeAfter.empty()) return out;
    const int k = *std::min_element(g.storeAfter.begin(), g.storeAfter.end());
    for (const auto& d : s.driveTiers) {
        const PlanPoint* at = nullptr;
        for (const auto& j : jobs) {
            const PlanPoint& p = j.point;
            if (p.drive == d.name && p.drives > 0 && p.dramBytes <= 0 && p.storeAfter == k &&
                !p.pooled() && p.drivesForBandwidth && (!at || p.drives > at->drives))
                at = &p;
        }
        if (!at) continue;
        PlanDriveNeeds n;
        n.drive = d.name;
        n.atDrives = at->drives;
        n.askedReadBps = at->askedReadBps;
        n.writeBps = at->writeRateMaxBps;
        n.driveReadBps = d.path.bandwidthBps;
        n.driveWriteBps = d.writeBps;
        n.forBandwidth = *at->drivesForBandwidth;
        n.forEndurance = at->drivesForEndurance;
        out.push_back(n);
    }
    return out;
}

// The point whose replay gives a drive preset's needs (planDriveNeeds): the largest count of
// the grid so far without DRAM at the smallest K. With `select`, it is replayed whether chosen
// or not, so the drive counts grow as a full plan's do (with the grid's extension on).
bool needsPoint(const PlanGrid& g, const PlanPoint& p) {
    if (p.drives <= 0 || p.dramBytes > 0 || p.pooled() || g.storeAfter.empty() || g.drives.empty())
        return false;
    return p.drives == *std::max_element(g.drives.begin(), g.drives.end()) &&
           p.storeAfter == *std::min_element(g.storeAfter.begin(), g.storeAfter.end());
}

// A point not replayed here: its figures from `given` (found by its place in the grid), as
// they are where they came from a full replay; otherwise marked sampled, its drive needs
// (where it was replayed for them) kept.
void takeGiven(const PlanSetup& s, PlanPoint& p) {
    const auto needs = std::pair(p.drivesForBandwidth, p.drivesForEndurance);
    const auto asked = std::pair(p.askedReadBps, p.writeRateMaxBps);
    bool full = false; // a full replay's figures, its servers with them
    if (s.given)
        for (const auto& g : *s.given)
            if (g.dramBytes == p.dramBytes && g.drive == p.drive && g.drives == p.drives &&
                g.storeAfter == p.storeAfter && g.link == p.link && g.router == p.router) {
                p = g;
                full = !g.sampled;
                break;
            }
    if (full) return;
    p.sampled = true;
    p.serversAtSlo.reset();
    p.gpusSaved.reset();
    p.serversNote = "not replayed in full: figures from the sample";
    if (needs.first) {
        std::tie(p.drivesForBandwidth, p.drivesForEndurance) = needs;
        std::tie(p.askedReadBps, p.writeRateMaxBps) = asked;
    }
}

} // namespace

PlanGrid defaultPlanGrid() {
    PlanGrid g;
    for (double gib : {0.0, 128.0, 256.0, 512.0, 1024.0, 2048.0})
        g.dramBytes.push_back(gib * double(1ull << 30));
    g.drives = {0, 1, 2, 4, 8};
    g.extendDrives = true;
    return g;
}

namespace {

// ", store every block", ", store at the 2nd sighting": always named (describePlanPoint).
std::string storeAfterText(const PlanPoint& p) {
    return p.storeAfter > 1 ? ", store at the " + sightingText(p.storeAfter)
                            : ", store every block";
}

} // namespace

std::string describePlanPoint(const PlanPoint& p) {
    if (!p.offload())
        return p.router.empty() ? "GPU-only caching" : "GPU-only caching, " + p.router;
    std::string s = plan_detail::pooledWords(p);
    if (p.dramBytes > 0 && !p.pooled()) s = plan_detail::gib(p.dramBytes) + " DRAM";
    if (p.drives > 0 && !p.pooled())
        s += (s.empty() ? "" : " + ") + std::to_string(p.drives) + " x " + p.drive;
    return s + storeAfterText(p);
}

std::string planPurchaseText(const PlanPoint& p) {
    // "on each of the 4 nodes" / "on the node", "for the 4 nodes" / "for the node".
    const std::string nodes = p.nodes == 1 ? "node" : std::to_string(p.nodes) + " nodes";
    const std::string on = p.nodes == 1 ? "on the node, " : "on each of the " + nodes + ", ";
    if (p.pooled()) {
        const std::string local =
            p.dramPooled() || p.dramBytes <= 0 ? "" : plan_detail::gib(p.dramBytes) + " DRAM and ";
        return on + local + "a " + p.link + " link to " + plan_detail::poolText(p) + " for the " +
               nodes + storeAfterText(p);
    }
    return (p.offload() && p.nodes > 0 ? on : std::string()) + describePlanPoint(p);
}

RequestResult<PlanResult> planTrace(const PlanSetup& s,
                                    const std::function<bool(double)>& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto ok = checkSetup(s); !ok) return ok.error();
    PlanResult res;
    if (s.base.isFleet()) {
        res.fleetServers = s.base.instances;
        res.fleetNodes = planNodes(s);
        res.fleetRouter = routerText(s.base.fleet.router);
    }

    // The floor: every prefix hit free on the GPU (unlimited HBM, no offload). Where the servers
    // are searched (--slo-p99) it is that of any count, as trace capacity's: one cache holding
    // every block a fleet's caches could, and no wait; else that of the servers given.
    auto f = replayTrace(*s.trace, *s.cost,
                         s.limits.sloP99S ? everyHitFreeNoWait(s.base) : everyHitFree(s.base));
    if (!f) return f.error();
    res.floorP99S = f->rule("gpu-only")->ttft.p99;
    res.durationS = f->durationS;
    if (!(res.durationS > 0))
        return Error{"the trace spans no time: a plan scales its writes and savings to a day"};
    res.serversSearched = s.limits.sloP99S.has_value();
    if (res.serversSearched)
        if (auto ok = checkArrivals(*s.trace, "the trace"); !ok) return ok.error();
    if (s.limits.sloP99S && *s.limits.sloP99S < res.floorP99S)
        return RequestError{RequestField::SloP99,
                            "the latency limit: a p99 TTFT of " +
                                formatFixed(*s.limits.sloP99S, 3) + " s is below " +
                                formatFixed(res.floorP99S, 3) +
                                " s, the p99 with every prefix hit free on the GPU; no "
                                "configuration can meet it"};

    // The jobs run on a pool of threads, a round at a time: the grid, then the drive counts it
    // must reach for bandwidth and endurance.
    PlanGrid grid = s.grid;
    std::vector<Job> jobs = gridJobs(s, grid);
    std::atomic<bool> stop{false};
    std::optional<Error> failure;
    std::atomic<std::size_t> replayed{0};
    int n = s.threads > 0 ? s.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    // Replays at once: no more than their state fits in kReplayMemoryBytes (docs/workload-model.md,
    // "Planning a large trace from a sample"): per request its prefill times under the two rules
    // a point reads (16 bytes) and, with servers counted, the rule's queueing inputs (its hit runs
    // and static cuts) and the search's order and copy of the times (34 bytes more); per distinct
    // block the caches' state, 24 bytes at most.
    const double perReplay = double(s.trace->size()) * (16.0 + (s.limits.sloP99S ? 34.0 : 0.0)) +
                             double(s.trace->distinctBlocks) * 24.0;
    n = std::max(1, std::min(n, int(kReplayMemoryBytes / std::max(perReplay, 1.0))));
    auto runRound = [&](std::size_t begin) {
        std::atomic<std::size_t> next{begin}, finished{begin};
        std::mutex m;
        std::condition_variable cv;
        auto work = [&] {
            for (std::size_t i; (i = next++) < jobs.size() && !stop;) {
                PlanPoint& p = jobs[i].point;
                const bool chosen = !s.select || s.select(p, i);
                if (!chosen && !(grid.extendDrives && needsPoint(grid, p))) {
                    takeGiven(s, p);
                    ++finished;
                    cv.notify_one();
                    continue;
                }
                const ReplayConfig c = pointConfig(s, p);
                ++replayed;
                auto r = replayTrace(*s.trace, *s.cost, c, nullptr, [&](double) { return !stop; });
                Status counted = Ok{};
                if (r && !r->cancelled) {
                    scorePoint(s, c, *r, p);
                    if (res.serversSearched && chosen) {
                        counted = countServers(s, c, jobs[i], stop);
                        // Counted: its figures are those of the fleet at its count.
                        if (counted && p.serversAtSlo && c.instances > 0 &&
                            *p.serversAtSlo != c.instances) {
                            const ReplayConfig at = pointConfig(s, p);
                            ++replayed;
                            r = replayTrace(*s.trace, *s.cost, at, nullptr,
                                            [&](double) { return !stop; });
                            if (r && !r->cancelled) scorePoint(s, at, *r, p);
                        }
                    } else if (!chosen)
                        takeGiven(s, p); // a drive-count extension's point, replayed for its needs
                }
                if (!r || r->cancelled || !counted) {
                    std::lock_guard lock(m);
                    if (!r && !failure) failure = r.error();
                    if (!counted && !failure) failure = counted.error();
                    stop = true;
                }
                ++finished;
                cv.notify_one();
            }
        };
        const int threads = std::max(1, std::min(n, int(jobs.size() - begin)));
        res.threads = std::max(res.threads, threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t)
            pool.emplace_back(work);
        {
            std::unique_lock lock(m);
            while (finished < jobs.size() && !stop) {
                cv.wait_for(lock, std::chrono::milliseconds(100));
                lock.unlock();
                if (progress && !progress(double(finished) / double(jobs.size()))) stop = true;
                lock.lock();
            }
        }
        for (auto& t : pool)
            t.join();
    };
    runRound(0);
    for (int round = 0; grid.extendDrives && round < 4 && !stop && !failure; ++round) {
        const auto needs = planDriveNeeds(s, grid, jobs);
        const std::int64_t most = *std::max_element(grid.drives.begin(), grid.drives.end());
        std::int64_t need = 0;
        for (const auto& d : needs)
            need = std::max({need, d.forBandwidth, d.forEndurance.value_or(0)});
        need = std::min(need, kMaxPlanDrives);
        if (most <= 0 || need <= most) break;
        const std::size_t first = grid.drives.size();
        for (std::int64_t c = most * 2; c < need; c *= 2)
            grid.drives.push_back(c);
        grid.drives.push_back(need);
        auto more = gridJobs(s, grid, first);
        const std::size_t begin = jobs.size();
        for (auto& j : more)
            jobs.push_back(std::move(j));
        runRound(begin);
    }
    if (failure) return *failure;
    res.replays = replayed + 1;
    if (stop) {
        res.cancelled = true;
        return res;
    }
    if (progress) progress(1.0);
    res.drives = grid.drives;
    res.driveNeeds = planDriveNeeds(s, grid, jobs);

    if (res.serversSearched) res.gpuOnlyServers = jobs[0].gpuOnlyServers;
    std::vector<PlanPoint> points;
    for (auto& j : jobs) {
        points.push_back(std::move(j.point));
        res.coords.push_back(j.at);
    }
    finishPlan(s, grid, std::move(points), res);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

} // namespace kvbe
