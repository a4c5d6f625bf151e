#include "kvbe/plan/plan.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_saturation.h"

#include "plan_text.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace kvbe {

using plan_detail::usd;

namespace {

constexpr double kDaysPerMonth = kDaysPerYear / 12;

// A point's place in the grid: DRAM size, drive preset (-1: no NVMe tier), drive count and K
// (indices; -1 for GPU-only caching), to find its neighbours.
struct Coord {
    int dram = -1, drive = -1, count = -1, k = -1;
};

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
    return Ok{};
}

// The grid in order: GPU-only caching first, then DRAM size × drive preset × count × K; from
// the count at index firstCount on only (the drive counts an extension added).
std::vector<Job> gridJobs(const PlanSetup& s, const PlanGrid& g, std::size_t firstCount = 0) {
    std::vector<Job> jobs(firstCount == 0 ? 1 : 0);
    for (std::size_t di = 0; di < g.dramBytes.size(); ++di) {
        const double dram = g.dramBytes[di];
        for (int pi = -1; pi < static_cast<int>(s.driveTiers.size()); ++pi) {
            for (std::size_t ci = firstCount; ci < g.drives.size(); ++ci) {
                const std::int64_t n = g.drives[ci];
                if ((pi < 0) != (n == 0)) continue; // no preset goes with no drives, and back
                if (dram <= 0 && n == 0) continue;  // that is GPU-only caching
                for (std::size_t ki = 0; ki < g.storeAfter.size(); ++ki) {
                    Job j;
                    j.point.dramBytes = dram;
                    j.point.drive = pi >= 0 ? s.driveTiers[std::size_t(pi)].name : "";
                    j.point.drives = n;
                    j.point.storeAfter = g.storeAfter[ki];
                    j.at = {int(di), pi, int(ci), int(ki)};
                    jobs.push_back(std::move(j));
                }
            }
        }
    }
    return jobs;
}

ReplayConfig pointConfig(const PlanSetup& s, const PlanPoint& p) {
    ReplayConfig c = s.base;
    c.tiers.clear();
    c.storeAfter = p.storeAfter;
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
    return c;
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
    const TierReport& t = r.tiers.back();
    const double asked = t.readOffered.peakShare * t.readBps;
    p.askedReadBps = asked;
    p.writeRateMaxBps = t.writeRateMax;
    p.drivesForBandwidth =
        std::max(drivesFor(asked, d->path.bandwidthBps), drivesFor(t.writeRateMax, d->writeBps));
    const DriveRating& rating = d->drive;
    const TierEndurance e = tierEndurance(t, rating, r.durationS);
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
    for (std::size_t k = 1; k < r.tiers.size(); ++k) {
        const auto& t = r.tiers[k];
        PlanTier pt{t.name, t.capacityBytes, t.blocksWritten, t.bytesStored,
                    tierEndurance(t, c.tiers[k - 1].drive, r.durationS)};
        if (pt.endurance.yearsToRatedEndurance)
            p.shortestLifeYears = std::min(p.shortestLifeYears.value_or(kUnlimited),
                                           *pt.endurance.yearsToRatedEndurance);
        p.tiers.push_back(std::move(pt));
    }
    if (p.dramBytes > 0) p.dramUsd = p.dramBytes / double(1ull << 30) * s.prices.dramPerGiB->usd;
    if (p.drives > 0) p.drivesUsd = static_cast<double>(p.drives) * s.prices.drive.at(p.drive).usd;
    p.capexUsd = p.dramUsd + p.drivesUsd;
    const double perDay = r.durationS > 0 ? kSecondsPerDay / r.durationS : 0;
    p.gpuHoursSavedPerDay = (rule.gpuSecondsSaved - gpuOnly.gpuSecondsSaved) * perDay / 3600 *
                            static_cast<double>(s.gpusPerInstance);
    const auto sat = tierSaturation(r, toString(s.rule));
    p.bandwidthBound =
        std::any_of(sat.begin(), sat.end(), [](const auto& t) { return t.saturated; });
    if (p.bandwidthBound) {
        std::vector<bool> drives;
        for (const auto& t : c.tiers)
            drives.push_back(t.drive.capacityBytes.has_value());
        p.saturation = saturationSentence(r, toString(s.rule), c.instances > 0, drives);
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
    auto r = traceCapacity(*s.trace, *s.cost, c, q, [&](double) { return !stop; });
    if (!r) return r.error();
    if (r->cancelled) return Ok{};
    const RuleServers* mine = r->serversOf(toString(s.rule));
    const RuleServers* gpuOnly = r->serversOf("gpu-only");
    PlanPoint& p = j.point;
    p.serversAtSlo = mine->servers;
    if (!mine->servers)
        p.serversNote = "no count up to " + std::to_string(s.maxServers) + " servers holds " +
                        q.target.text() + " (p99 " + formatSeconds(mine->statisticUnlimited) +
                        " with a server per request)";
    j.gpuOnlyServers = gpuOnly->servers;
    return Ok{};
}

// The GPUs saved against GPU-only caching (where both counts are known) and the value: those
// GPUs at the price per hour, or without them the GPU-hours saved; the payback and the net.
void valuePoint(const PlanSetup& s, const PlanResult& res, PlanPoint& p) {
    const double price = s.prices.gpuPerHour.at(s.gpuKey).usd;
    if (res.serversSearched && p.serversAtSlo && res.gpuOnlyServers) {
        p.gpusSaved = (*res.gpuOnlyServers - *p.serversAtSlo) * s.gpusPerInstance;
        p.valueFromGpusSaved = true;
        p.valuePerMonthUsd = *p.gpusSaved * 24 * kDaysPerMonth * price;
    } else {
        if (res.serversSearched && p.serversAtSlo)
            p.serversNote = "GPU-only caching holds p99 at no count up to " +
                            std::to_string(s.maxServers) +
                            " servers, so the GPUs saved are not "
                            "counted";
        p.valuePerMonthUsd = p.gpuHoursSavedPerDay * kDaysPerMonth * price;
    }
    if (p.valuePerMonthUsd > 0 && p.capexUsd > 0) p.paybackMonths = p.capexUsd / p.valuePerMonthUsd;
    p.netUsdOverLife = p.valuePerMonthUsd * 12 * s.limits.lifeYears - p.capexUsd;
}

void checkLimits(const PlanLimits& l, PlanPoint& p) {
    if (p.shortestLifeYears && *p.shortestLifeYears < l.lifeYears)
        p.fails.push_back("life: drives last " + formatLife(*p.shortestLifeYears) + ", " +
                          formatFixed(l.lifeYears - *p.shortestLifeYears, 2) + " years short of " +
                          formatFixed(l.lifeYears, 1));
    if (l.sloP99S && p.ttftP99S > *l.sloP99S)
        p.fails.push_back("latency: p99 TTFT " + formatFixed(p.ttftP99S, 3) + " s, " +
                          formatFixed(p.ttftP99S - *l.sloP99S, 3) + " s over " +
                          formatFixed(*l.sloP99S, 3) + " s");
    else if (l.sloP99S && !p.serversAtSlo) // the search ran and found no count
        p.fails.push_back("latency: " + p.serversNote);
    if (l.budgetUsd && p.capexUsd > *l.budgetUsd)
        p.fails.push_back("budget: " + usd(p.capexUsd) + ", " + usd(p.capexUsd - *l.budgetUsd) +
                          " over " + usd(*l.budgetUsd));
}

// The points no cheaper (or equally cheap) point beats on `better`, by capital cost.
template <class Better>
void markFront(std::vector<PlanPoint>& pts, Better better, bool PlanPoint::*flag) {
    std::vector<std::size_t> order(pts.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (pts[a].capexUsd != pts[b].capexUsd) return pts[a].capexUsd < pts[b].capexUsd;
        return better(pts[a], pts[b]);
    });
    const PlanPoint* best = nullptr;
    for (std::size_t i : order)
        if (!best || better(pts[i], *best)) {
            pts[i].*flag = true;
            best = &pts[i];
        }
}

// One step apart in one coordinate of the grid (DRAM size, drive count or K), or the same sizes
// with the other drive. GPU-only caching neighbours the single smallest tiers at the first K.
bool neighbours(const PlanGrid& g, const Coord& a, const Coord& b) {
    if (a.k < 0 || b.k < 0) {
        const Coord& o = a.k < 0 ? b : a;
        if (o.k != 0) return false;
        auto firstAbove = [](const auto& v) {
            for (std::size_t i = 0; i < v.size(); ++i)
                if (v[i] > 0) return int(i);
            return -1;
        };
        const bool noDram = g.dramBytes[std::size_t(o.dram)] <= 0;
        return (o.drive < 0 && o.dram == firstAbove(g.dramBytes)) ||
               (noDram && o.count == firstAbove(g.drives));
    }
    const int steps = std::abs(a.dram - b.dram) + std::abs(a.count - b.count) + std::abs(a.k - b.k);
    if (a.drive == b.drive || a.drive < 0 || b.drive < 0) return steps == 1;
    return steps == 0;
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
                p.drivesForBandwidth && (!at || p.drives > at->drives))
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

} // namespace

PlanGrid defaultPlanGrid() {
    PlanGrid g;
    for (double gib : {0.0, 128.0, 256.0, 512.0, 1024.0, 2048.0})
        g.dramBytes.push_back(gib * double(1ull << 30));
    g.drives = {0, 1, 2, 4, 8};
    g.extendDrives = true;
    return g;
}

std::string describePlanPoint(const PlanPoint& p) {
    if (!p.offload()) return "GPU-only caching";
    std::string s;
    if (p.dramBytes > 0) s = plan_detail::gib(p.dramBytes) + " DRAM";
    if (p.drives > 0) s += (s.empty() ? "" : " + ") + std::to_string(p.drives) + " x " + p.drive;
    if (p.storeAfter > 1) s += ", store at the " + sightingText(p.storeAfter);
    return s;
}

RequestResult<PlanResult> planTrace(const PlanSetup& s,
                                    const std::function<bool(double)>& progress) {
    const auto t0 = std::chrono::steady_clock::now();
    if (auto ok = checkSetup(s); !ok) return ok.error();
    PlanResult res;

    // The floor: every prefix hit free on the GPU (unlimited HBM, no offload).
    ReplayConfig floor = s.base;
    floor.tiers.clear();
    floor.gpuCapacityBytes = kUnlimited;
    floor.writeQueue = false;
    auto f = replayTrace(*s.trace, *s.cost, floor);
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
    std::size_t done = 0;
    int n = s.threads > 0 ? s.threads : int(std::max(1u, std::thread::hardware_concurrency()));
    auto runRound = [&](std::size_t begin) {
        std::atomic<std::size_t> next{begin}, finished{begin};
        std::mutex m;
        std::condition_variable cv;
        auto work = [&] {
            for (std::size_t i; (i = next++) < jobs.size() && !stop;) {
                PlanPoint& p = jobs[i].point;
                const ReplayConfig c = pointConfig(s, p);
                auto r = replayTrace(*s.trace, *s.cost, c, nullptr, [&](double) { return !stop; });
                Status counted = Ok{};
                if (r && !r->cancelled) {
                    scorePoint(s, c, *r, p);
                    if (res.serversSearched) counted = countServers(s, c, jobs[i], stop);
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
        done = finished;
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
    res.replays = done + 1;
    if (stop) {
        res.cancelled = true;
        return res;
    }
    if (progress) progress(1.0);
    res.drives = grid.drives;
    res.driveNeeds = planDriveNeeds(s, grid, jobs);

    if (res.serversSearched) res.gpuOnlyServers = jobs[0].gpuOnlyServers;
    std::vector<Coord> at;
    for (auto& j : jobs) {
        valuePoint(s, res, j.point);
        checkLimits(s.limits, j.point);
        res.points.push_back(std::move(j.point));
        at.push_back(j.at);
    }
    for (auto& p : res.points) {
        if (p.storeAfter <= 1 || !p.shortestLifeYears) continue;
        for (const auto& q : res.points)
            if (q.storeAfter == 1 && q.dramBytes == p.dramBytes && q.drive == p.drive &&
                q.drives == p.drives)
                p.lifeIfEveryBlockStored = q.shortestLifeYears;
    }
    markFront(
        res.points,
        [](const PlanPoint& a, const PlanPoint& b) { return a.ttftMeanS < b.ttftMeanS; },
        &PlanPoint::onTtftFront);
    markFront(
        res.points,
        [](const PlanPoint& a, const PlanPoint& b) {
            return a.gpuHoursSavedPerDay > b.gpuHoursSavedPerDay;
        },
        &PlanPoint::onGpuHoursFront);
    for (std::size_t i = 0; i < res.points.size(); ++i)
        if (res.points[i].onTtftFront || res.points[i].onGpuHoursFront) res.front.push_back(i);
    std::stable_sort(res.front.begin(), res.front.end(), [&](std::size_t a, std::size_t b) {
        return res.points[a].capexUsd < res.points[b].capexUsd;
    });

    for (std::size_t i = 0; i < res.points.size(); ++i) {
        const PlanPoint& p = res.points[i];
        if (!p.fails.empty()) continue;
        if (!res.recommended) {
            res.recommended = i;
            continue;
        }
        const PlanPoint& r = res.points[*res.recommended];
        if (p.netUsdOverLife > r.netUsdOverLife + 1e-6 ||
            (std::abs(p.netUsdOverLife - r.netUsdOverLife) <= 1e-6 && p.capexUsd < r.capexUsd))
            res.recommended = i;
    }
    std::vector<std::size_t> near;
    if (res.recommended)
        for (std::size_t i = 0; i < res.points.size(); ++i)
            if (i != *res.recommended && neighbours(grid, at[i], at[*res.recommended]))
                near.push_back(i);
    res.why = res.recommended ? plan_detail::whySentence(s, res, near) : "";
    res.unmet = res.recommended ? "" : plan_detail::unmetSentence(s, res);
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
}

} // namespace kvbe
