// trace sweep and trace capacity from two spatial samples (trace_sampled.h; docs/
// workload-model.md, "Sweeps and capacity from a sample").
#include "kvbe/trace/trace_sampled.h"

#include "kvbe/base/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace kvbe {

namespace {

double relative(double a, double b) {
    const double m = std::max(std::abs(a), std::abs(b));
    return m > 0 ? std::abs(a - b) / m : 0;
}

double mean(double a, double b) {
    return (a + b) / 2;
}

HitRatios mean(const HitRatios& a, const HitRatios& b) {
    return {mean(a.tokenWeighted, b.tokenWeighted), mean(a.blockWeighted, b.blockWeighted),
            mean(a.perRequest, b.perRequest)};
}

// Progress from lo to hi of the whole, for one stage.
std::function<bool(double)> stage(const std::function<bool(double)>& progress, double lo,
                                  double hi) {
    if (!progress) return {};
    return [&progress, lo, hi](double f) { return progress(lo + (hi - lo) * f); };
}

void describe(TraceSampling& info, const TraceSample& t, int k) {
    info.sampleRequests[k] = t.trace.size();
    info.trunkBlocks = t.trunkBlocks;
    info.trunkMinRequests = t.trunkMinRequests;
}

std::string rateText(double rate) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", rate);
    return buf;
}

std::string sampleError(double rate, const std::string& message) {
    return "the sample (rate " + rateText(rate) + "): " + message;
}

// A sample with no request has no figure to give: a sentence, never zeros.
Status checkSample(const TraceSample& t, std::size_t requests) {
    if (t.trace.size() > 0) return Ok{};
    return Error{"the sample at rate " + rateText(t.rate) + " kept none of the " +
                 std::to_string(requests) +
                 " requests; give a larger sampling rate (--sample-rate) or --exact"};
}

// The mean of two sweeps of the same grid, at the full trace's capacities; the bound.
void combine(const SweepResult (&part)[2], const SweepRequest& q, const ReplayConfig& config,
             double blockTokens, SweepRun& run) {
    run.sweep.tierName = part[0].tierName;
    run.sweep.accesses = part[0].accesses + part[1].accesses;
    for (std::size_t g = 0; g < part[0].points.size() && g < part[1].points.size(); ++g) {
        const CapacityPoint& a = part[0].points[g];
        const CapacityPoint& b = part[1].points[g];
        CapacityPoint p;
        p.capacityTokens = q.capacitiesTokens[g];
        p.capacityBytes = p.capacityTokens / blockTokens * config.blockBytes;
        p.anyTier = mean(a.anyTier, b.anyTier);
        for (std::size_t k = 0; k < a.tiers.size() && k < b.tiers.size(); ++k)
            p.tiers.push_back(mean(a.tiers[k], b.tiers[k]));
        p.meanTtftNone = mean(a.meanTtftNone, b.meanTtftNone);
        p.meanTtftGpuOnly = mean(a.meanTtftGpuOnly, b.meanTtftGpuOnly);
        p.meanTtftAlways = mean(a.meanTtftAlways, b.meanTtftAlways);
        p.ttftSavedVsNone = p.meanTtftNone > 0 ? 1 - p.meanTtftAlways / p.meanTtftNone : 0;
        p.ttftSavedVsGpuOnly = p.meanTtftGpuOnly > 0 ? 1 - p.meanTtftAlways / p.meanTtftGpuOnly : 0;
        if (std::abs(p.ttftSavedVsGpuOnly) < 1e-12) p.ttftSavedVsGpuOnly = 0;
        if (std::abs(p.ttftSavedVsNone) < 1e-12) p.ttftSavedVsNone = 0;
        run.hitsError =
            std::max(run.hitsError, std::abs(a.anyTier.tokenWeighted - b.anyTier.tokenWeighted));
        run.ttftError = std::max(run.ttftError, relative(a.meanTtftAlways, b.meanTtftAlways));
        run.sweep.points.push_back(std::move(p));
    }
}

} // namespace

namespace {

// A fleet's sweep: a replay at each capacity (each server's cache is fed what its router sends
// it, which follows the caches and the queues, so no one pass gives every capacity), every
// request, its TTFTs queued on its server.
Result<SweepRun> sweepFleet(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                            const SweepRequest& q, const std::function<bool(double)>& progress) {
    if (q.varyTier > config.tiers.size()) return Error{"sweep: no such tier"};
    SweepRun run;
    run.sampling.mode = "a replay of every request at each capacity (a fleet of " +
                        std::to_string(config.instances) + " servers behind " +
                        std::string(toString(config.fleet.router.kind)) +
                        ": its routing follows its caches, so no one pass and no sample gives "
                        "every capacity); TTFTs queued on each server, writes keeping up";
    SweepResult& s = run.sweep;
    s.tierName = q.varyTier == 0 ? "gpu" : config.tiers[q.varyTier - 1].name;
    const double B = trace.summary.blockTokens;
    const std::size_t n = q.capacitiesTokens.size();
    for (std::size_t p = 0; p < n; ++p) {
        ReplayConfig c = config;
        const double tokens = q.capacitiesTokens[p];
        const double bytes = tokens / B * config.blockBytes;
        if (q.varyTier == 0)
            c.gpuCapacityBytes = bytes;
        else
            c.tiers[q.varyTier - 1].capacityBytes = bytes;
        c.reportRules = {"none", "gpu-only", "always"};
        c.writeQueue = false; // as the one-pass sweep: writes keep up
        auto r = replayTrace(trace, cost, c, nullptr, [&](double f) {
            return !progress || progress((static_cast<double>(p) + f) / static_cast<double>(n));
        });
        if (!r) return r.error();
        if (r->cancelled) break;
        CapacityPoint pt;
        pt.capacityTokens = tokens;
        pt.capacityBytes = bytes;
        pt.anyTier = r->anyTier;
        for (const auto& t : r->tiers)
            pt.tiers.push_back(t.hits);
        pt.meanTtftNone = r->rule("none")->ttft.mean;
        pt.meanTtftGpuOnly = r->rule("gpu-only")->ttft.mean;
        pt.meanTtftAlways = r->rule("always")->ttft.mean;
        pt.ttftSavedVsNone = pt.meanTtftNone > 0 ? 1 - pt.meanTtftAlways / pt.meanTtftNone : 0;
        pt.ttftSavedVsGpuOnly =
            pt.meanTtftGpuOnly > 0 ? 1 - pt.meanTtftAlways / pt.meanTtftGpuOnly : 0;
        s.accesses = r->blocks;
        s.points.push_back(std::move(pt));
    }
    return run;
}

} // namespace

Result<SweepRun> sweepTrace(const Trace& trace, const CostModel& cost, const ReplayConfig& config,
                            const SweepRequest& q, const std::function<bool(double)>& progress) {
    if (config.isFleet()) {
        if (q.sampling.rate > 0)
            return Error{"--sample-rate: a fleet's sweep replays every request at each capacity "
                         "(a sample would change what each server's router sees); leave it out"};
        return sweepFleet(trace, cost, config, q, progress);
    }
    SweepRun run;
    // The one pass is linear in the trace and costs about what reading it does, so a sample
    // saves little; and below a few times the trunk's size its capacities are biased (docs/
    // workload-model.md, "Sweeps and capacity from a sample"). Sampled only when a rate is
    // asked for.
    SampleMode mode = q.sampling;
    if (!(mode.rate > 0)) mode.exact = true;
    const SampleChoice choice = chooseSampling(mode, trace.size());
    if (!choice.sampled()) {
        auto s = sweepCapacity(trace, cost, config, q.varyTier, q.capacitiesTokens, progress);
        if (!s) return s.error();
        run.sweep = std::move(*s);
        run.sampling.mode = q.sampling.exact ? choice.fullText("one pass over every request")
                            : choice.whyFull == "--exact"
                                ? "one pass over every request (a sample only with --sample-rate)"
                                : "one pass over every request (" + choice.whyFull + ")";
        return run;
    }
    // The sweep has no queueing (its TTFTs are the cost model's, without waits), so the
    // samples' arrival times do not matter; their capacities are scaled as the plan's are
    // (TraceSample::capacity: the trunk whole), and the first sample is swept again at the
    // rate alone (no trunk held): the truth lies between the two where the trunk is not
    // always cached, and their difference joins the bound.
    const double B = trace.summary.blockTokens;
    run.sampling.sampled = true;
    run.sampling.rate = choice.rate;
    SweepResult part[2], bare;
    for (int k = 0; k < 3; ++k) {
        const TraceSample t = sampleTrace(trace, choice.rate, std::uint64_t(k == 2 ? 1 : k + 1));
        if (k < 2) describe(run.sampling, t, k);
        if (auto ok = checkSample(t, trace.size()); !ok) return ok.error();
        std::vector<double> grid;
        for (const double c : q.capacitiesTokens)
            grid.push_back(k < 2 ? t.capacity(c, B) : c * t.rate);
        ReplayConfig c = sampledConfig(config, t);
        if (k == 2) {
            c = config;
            c.gpuCapacityBytes *= t.rate;
            for (auto& tier : c.tiers)
                tier.capacityBytes *= t.rate;
        }
        auto s = sweepCapacity(t.trace, cost, c, q.varyTier, grid,
                               stage(progress, k / 3.0, (k + 1) / 3.0));
        if (!s) return Error{sampleError(choice.rate, s.message())};
        (k < 2 ? part[k] : bare) = std::move(*s);
    }
    combine(part, q, config, B, run);
    const double spread = run.hitsError;
    for (std::size_t g = 0; g < run.sweep.points.size() && g < bare.points.size(); ++g) {
        const double b = std::max(2 * spread, std::abs(part[0].points[g].anyTier.tokenWeighted -
                                                       bare.points[g].anyTier.tokenWeighted));
        run.hitsBound.push_back(b);
        run.hitsError = std::max(run.hitsError, b);
    }
    run.sampling.mode = "sampled: the mean of two samples of " +
                        std::to_string(run.sampling.sampleRequests[0]) + " and " +
                        std::to_string(run.sampling.sampleRequests[1]) + " requests";
    return run;
}

namespace {

// The samples' largest relative difference of the load each rule holds (1 where they disagree
// on whether one holds at all), and their mean load per rule, to start the full search from.
std::vector<double> loadGuess(CapacityRun& run) {
    const CapacityResult& a = run.samples[0];
    const CapacityResult& b = run.samples[1];
    std::vector<double> from(kCapacityRules.size(), 0);
    for (std::size_t i = 0; i < a.loadHeld.size() && i < b.loadHeld.size(); ++i) {
        const RuleLoadHeld& x = a.loadHeld[i];
        const RuleLoadHeld& y = b.loadHeld[i];
        if (x.outcome != y.outcome)
            run.loadError = std::max(run.loadError, 1.0);
        else
            run.loadError = std::max(run.loadError, relative(x.rateScale, y.rateScale));
        if (x.rateScale > 0 && y.rateScale > 0) from[i] = mean(x.rateScale, y.rateScale);
    }
    return from;
}

} // namespace

Result<CapacityRun> traceCapacityRun(const Trace& trace, const CostModel& cost,
                                     const ReplayConfig& config, const CapacityRequest& q,
                                     const SampleMode& sampling,
                                     const std::function<bool(double)>& progress) {
    CapacityRun run;
    if (config.fleet.enabled) {
        // A fleet: every request (a sample would change what each router sees).
        if (sampling.rate > 0)
            return Error{"--sample-rate: a fleet's capacity replays every request (a sample "
                         "would change what each server's router sees); leave it out"};
        auto r = traceCapacity(trace, cost, config, q, progress);
        if (!r) return r.error();
        run.result = std::move(*r);
        run.sampling.mode = "every search a replay of the whole fleet (" +
                            std::string(toString(config.fleet.router.kind)) +
                            "): a server added adds a GPU cache";
        return run;
    }
    const SampleChoice choice = chooseSampling(sampling, trace.size());
    if (!choice.sampled()) {
        auto r = traceCapacity(trace, cost, config, q, progress);
        if (!r) return r.error();
        run.result = std::move(*r);
        run.sampling.mode = choice.fullText("every search on the whole trace");
        return run;
    }
    if (auto ok = checkArrivals(trace, "the trace"); !ok) return ok.error();
    run.sampling.sampled = true;
    run.sampling.rate = choice.rate;
    // Each sample arrives as fast as the whole trace (its arrivals R times closer), so N
    // servers and every link and write queue see the full trace's load per second.
    const double share = 0.3;
    for (int k = 0; k < 2; ++k) {
        const TraceSample t = sampleAtFullLoad(trace, choice.rate, std::uint64_t(k + 1));
        describe(run.sampling, t, k);
        if (auto ok = checkSample(t, trace.size()); !ok) return ok.error();
        auto r = traceCapacity(t.trace, cost, sampledConfig(config, t), q,
                               stage(progress, share * k / 2, share * (k + 1) / 2));
        if (!r) return Error{sampleError(choice.rate, r.message())};
        if (r->cancelled) {
            run.result = std::move(*r);
            return run;
        }
        run.samples.push_back(std::move(*r));
    }
    const CapacityResult& a = run.samples[0];
    const CapacityResult& b = run.samples[1];
    // Both searches again on the whole trace, each starting from the samples' answer: the
    // servers from the larger count, the load from the mean, in steps of the samples' spread.
    CapacityRequest full = q;
    full.serversFrom.assign(kCapacityRules.size(), 0);
    for (std::size_t i = 0; i < a.servers.size() && i < b.servers.size(); ++i) {
        const auto& x = a.servers[i].servers;
        const auto& y = b.servers[i].servers;
        full.serversFrom[i] = std::max(x.value_or(0), y.value_or(0));
        if (x && y)
            run.serversError = std::max(run.serversError, std::abs(*x - *y));
        else if (x || y)
            run.serversError = std::max(run.serversError, q.maxInstances);
    }
    if (q.instances > 0) {
        full.loadFrom = loadGuess(run);
        full.loadStep = 1 + std::clamp(run.loadError, 0.01, 1.0);
    }
    auto r = traceCapacity(trace, cost, config, full, stage(progress, share, 1));
    if (!r) return r.error();
    run.result = std::move(*r);
    if (run.result.cancelled) return run;
    for (const auto& s : run.samples) {
        run.result.passes += s.passes;
        run.result.evaluations += s.evaluations;
    }
    run.sampling.mode = "sampled: two samples of " +
                        std::to_string(run.sampling.sampleRequests[0]) + " and " +
                        std::to_string(run.sampling.sampleRequests[1]) +
                        " requests guide the searches, whose answers are confirmed on the whole "
                        "trace";
    return run;
}

} // namespace kvbe
