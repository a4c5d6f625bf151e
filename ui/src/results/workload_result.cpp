#include "kvbe/ui/results/workload_result.h"

#include "kvbe/base/units.h"
#include "kvbe/trace/trace_saturation.h"
#include "kvbe/trace/trace_setup.h"

#include <QStringList>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace kvbe {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kTiB = kGiB * 1024;

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

QString percent(double share) {
    return QString::number(share * 100, 'f', 1) + QStringLiteral(" %");
}

// "−25.5 %" or "+3.0 %": a change with its sign, the minus a real one.
QString signedPercent(double change) {
    const QString digits = QString::number(std::abs(change) * 100, 'f', 1);
    return (change < 0 ? QStringLiteral("\u2212") : QStringLiteral("+")) + digits +
           QStringLiteral(" %");
}

QString listText(const QStringList& items) {
    if (items.size() <= 1) return items.join(QString());
    return items.mid(0, items.size() - 1).join(QStringLiteral(", ")) + QStringLiteral(" and ") +
           items.back();
}

QString contextWarning(const WorkloadResult& w);
QString workloadAnswer(const WorkloadResult& w);

} // namespace

double defaultTierCapacity(std::size_t scenarioTier) {
    if (scenarioTier == 0) return 512 * kGiB;
    if (scenarioTier == 1) return 8 * kTiB;
    return 0;
}

std::vector<SimTier> workloadSimTiers(const Evaluation& e) {
    auto sim = scenarioSimTiers(e);
    for (std::size_t i = 0; i < sim.size() && i < e.tiers.size(); ++i)
        sim[i].name = e.tiers[i].name;
    return sim;
}

ReplayRequest workloadRequest(const WorkloadSettings& s, std::size_t scenarioTiers) {
    ReplayRequest r;
    if (s.gpuCacheBytes) r.gpuCache = Capacity{Capacity::Unit::Bytes, *s.gpuCacheBytes};
    r.leaveOutEmptyTiers = true;
    r.tiersNamedAsScenario = true;
    // Capacities per scenario tier: the slider's, or the default where it has none yet.
    for (std::size_t i = 0; i < scenarioTiers; ++i)
        r.tierCapacities.push_back(Capacity{Capacity::Unit::Bytes, i < s.tierCapacityBytes.size()
                                                                       ? s.tierCapacityBytes[i]
                                                                       : defaultTierCapacity(i)});
    r.policy = s.policy;
    r.placement = s.placement;
    r.writeQueue = s.writeQueue;
    r.everyLinkShared = s.sharedLinks;
    r.instances = s.instances;
    r.fleet = true; // as kvbe-cli trace replay: servers above one are a fleet
    r.router = s.router;
    r.nodeServers = std::max(1, s.nodeServers);
    r.pooledScenarioTiers = s.pooled;
    r.storeAfter = s.storeAfter;
    return r;
}

std::vector<double> workloadSweepTokens() {
    return logGrid(1e4, 1e9, 40);
}

QString capacityText(double bytes) {
    if (!std::isfinite(bytes)) return QStringLiteral("unlimited");
    // Binary units throughout (the sliders move in doublings of GiB): "512 GiB", "22.6 GiB", "8
    // TiB".
    if (bytes >= kTiB) return QString::number(bytes / kTiB, 'g', 3) + QStringLiteral(" TiB");
    return QString::number(bytes / kGiB, 'g', 3) + QStringLiteral(" GiB");
}

double shareAtOrAbove(const Trace& trace, double tokens) {
    if (trace.size() == 0) return 0;
    std::size_t k = 0;
    for (auto n : trace.inputTokens)
        k += double(n) >= tokens;
    return double(k) / double(trace.size());
}

namespace {

// The live replay beside its prediction, with the rule an engine follows: it loads every cached
// block it finds.
void compareLive(WorkloadResult& w, const WorkloadSettings& settings) {
    auto run = readLiveReplay(settings.liveDir);
    auto engine = parseEngine(settings.engine);
    if (!run) {
        w.liveNote = QString::fromStdString(run.message());
    } else if (!engine) {
        w.liveNote = QString::fromStdString(engine.message());
    } else {
        auto c = compareLiveReplay(*run, *w.trace, *w.eval,
                                   workloadRequest(settings, w.eval->scenario.tiers.size()),
                                   *engine, Admission::Always, settings.liveAsRouted);
        if (c)
            w.live = std::move(*c);
        else
            w.liveNote = QString::fromStdString(c.error().message);
    }
}

} // namespace

WorkloadResult computeWorkload(std::shared_ptr<const Trace> trace, const QString& file,
                               std::shared_ptr<const Evaluation> eval,
                               const WorkloadSettings& settings, const std::atomic<bool>* cancel) {
    WorkloadResult w;
    w.trace = trace;
    w.file = file;
    w.settings = settings;
    w.eval = eval;
    const Evaluation& e = *eval;
    for (auto n : trace->inputTokens)
        w.pastContext += double(n) > e.model.contextLimit;
    const auto sim = workloadSimTiers(e);
    for (std::size_t i = 0; i < sim.size(); ++i) {
        WorkloadTier t;
        t.name = QString::fromStdString(sim[i].name);
        t.pStar = wholeBreakevenPrefix(e.cost.breakevenPrefix(sim[i].path));
        if (t.pStar) t.shareAtOrAbove = shareAtOrAbove(*trace, *t.pStar);
        w.scenarioTiers.push_back(t);
    }
    if (!trace->summary.hasBlocks()) {
        w.summary = workloadSummary(w);
        return w;
    }

    // The replay as core assembles it from the view's request; a GPU cache core cannot size
    // is the GPU control's, answered with advice.
    auto setup = replaySetup(workloadRequest(settings, e.scenario.tiers.size()), e,
                             trace->summary.blockTokens);
    if (!setup && setup.error().field == RequestField::GpuCache) {
        w.gpuCacheMissing = true;
        for (const auto& f : tensorParallelFits(e))
            if (f.gpus > e.scenario.tensorParallel) w.tensorParallelFits.push_back(f);
        w.summary = gpuCacheAdvice(e, w.tensorParallelFits) + contextWarning(w);
        w.sweepNote = QStringLiteral("No HBM is left for KV on the GPU: see the sentence above the "
                                     "charts.");
        return w;
    }
    if (!setup) {
        w.error = QString::fromStdString(setup.message());
        w.summary = w.error;
        return w;
    }
    w.config = std::move(setup->config);
    w.configTierOf = std::move(setup->scenarioTierOf);
    ReplayConfig& c = w.config;
    const auto go = [cancel](double) { return !(cancel && cancel->load()); };

    const auto t0 = std::chrono::steady_clock::now();
    auto r = replayTrace(*trace, e.cost, c, &w.times, go);
    w.replaySeconds = secondsSince(t0);
    if (!r) {
        w.error = QString::fromStdString(r.message());
        w.summary = w.error;
        return w;
    }
    w.replay = std::move(*r);
    if (w.replay->cancelled) return w;
    bool backlog = false;
    for (const auto& t : w.replay->tiers)
        backlog = backlog || t.writesDropped || t.lookupsLate || t.lookupsDropped;
    if (backlog) {
        ReplayConfig free = c;
        free.writeQueue = false;
        // No servers (nothing queues), except a fleet's: its caches are its servers'.
        if (!c.isFleet()) free.instances = 0;
        auto f = replayTrace(*trace, e.cost, free, nullptr, go);
        if (f && !f->cancelled) w.writesKeptUp = std::move(*f);
        w.replaySeconds = secondsSince(t0);
    }
    {
        const RequestTimes& rt = w.times;
        const bool queued = c.instances > 0 && !rt.queuedNone.empty();
        const std::pair<const char*, const std::vector<double>*> rules[] = {
            {"none", queued ? &rt.queuedNone : &rt.none},
            {"gpu-only", queued ? &rt.queuedGpuOnly : &rt.gpuOnly},
            {"always", queued ? &rt.queuedAlways : &rt.always},
            {"breakeven", queued ? &rt.queuedBreakeven : &rt.breakeven},
            {"optimal", queued ? &rt.queuedOptimal : &rt.optimal}};
        for (const auto& [name, v] : rules) {
            if (v->empty()) continue;
            std::vector<double> sorted = *v;
            std::sort(sorted.begin(), sorted.end());
            w.ttftSorted.emplace_back(name, std::move(sorted));
        }
    }

    // The sweep varies one tier with the others as set; a tier left out joins it at its place.
    if (c.policy != EvictionPolicy::Lru || c.placement != Placement::WriteThrough) {
        w.sweepNote =
            QStringLiteral("The one-pass capacity sweep needs LRU with write-through "
                           "(inclusion holds only there): choose those to see the curve.");
    } else if (c.storeAfter > 1) {
        w.sweepNote = QStringLiteral(
            "The one-pass capacity sweep is exact only when the offload tiers store every block "
            "(a block's place then follows from its LRU stack distance): set Offload to the 1st "
            "sighting to see the curve, or replay each capacity.");
    } else {
        ReplayConfig sc = c;
        sc.writeQueue = false; // the sweep assumes writes keep up
        sc.instances = 0;
        std::size_t vary = 0;
        const int want = std::clamp(settings.sweepTier, 0, int(sim.size()));
        if (want > 0) {
            const int scenarioIndex = want - 1;
            std::size_t pos = 0;
            while (pos < w.configTierOf.size() && w.configTierOf[pos] < scenarioIndex)
                ++pos;
            if (pos == w.configTierOf.size() || w.configTierOf[pos] != scenarioIndex) {
                SimTier t = sim[std::size_t(scenarioIndex)];
                t.capacityBytes = 0;
                sc.tiers.insert(sc.tiers.begin() + std::ptrdiff_t(pos), t);
            }
            vary = pos + 1;
        }
        const auto t1 = std::chrono::steady_clock::now();
        auto s = sweepCapacity(*trace, e.cost, sc, vary, workloadSweepTokens(), go);
        w.sweepSeconds = secondsSince(t1);
        w.sweepVary = vary;
        if (s)
            w.sweep = std::move(*s);
        else if (!(cancel && cancel->load()))
            w.sweepNote = QString::fromStdString(s.message());
    }
    // Every router on the fleet: seven replays, so only where one is quick.
    if (c.isFleet() && !(cancel && cancel->load())) {
        if (trace->size() > kRouterCompareRequests) {
            w.routersNote =
                QStringLiteral("Routers not compared: the trace has more than %1 requests; "
                               "kvbe-cli trace replay --router compare compares them")
                    .arg(kRouterCompareRequests);
        } else {
            auto runs = compareRouters(*trace, e.cost, c, toString(settings.admission), go);
            if (runs)
                w.routers = std::move(*runs);
            else
                w.routersNote = QString::fromStdString(runs.message());
        }
    }
    if (!settings.liveDir.empty() && !(cancel && cancel->load())) compareLive(w, settings);
    w.summary = workloadSummary(w);
    if (w.replay && !w.replay->cancelled && !w.config.tiers.empty()) {
        std::vector<bool> drives;
        for (const auto& t : w.config.tiers)
            drives.push_back(t.drive.capacityBytes.has_value());
        w.saturation = QString::fromStdString(saturationSentence(
            *w.replay, toString(w.settings.admission), w.config.instances > 0, drives));
    }
    return w;
}

QString gpuCacheAdvice(const Evaluation& e, const std::vector<TensorParallelFit>& fits) {
    const QString slider =
        QStringLiteral("drag the GPU slider to the HBM you expect to leave for KV");
    if (!e.gpu)
        return QStringLiteral("The scenario's GPU is not a preset, so its memory is unknown: %1.")
            .arg(slider);
    const double weights = e.model.weightBytes(e.scenario.weightDtype);
    const WeightDtype served = e.model.servedWeights(e.scenario.weightDtype);
    const int tp = e.scenario.tensorParallel;
    QString s =
        QStringLiteral("%1's weights (%2 in %3) do not fit in 90 % of %4 (%5), so no HBM is "
                       "left for KV.")
            .arg(QString::fromStdString(e.model.id), QString::fromStdString(formatBytes(weights)),
                 QString::fromStdString(std::string(toString(served))).toUpper(),
                 tp == 1
                     ? QStringLiteral("one %1").arg(QString::fromStdString(e.gpu->name))
                     : QStringLiteral("%1 × %2").arg(tp).arg(QString::fromStdString(e.gpu->name)),
                 QString::fromStdString(formatBytes(0.9 * e.gpu->memoryBytes * tp)));
    QStringList sizes;
    for (const auto& f : fits)
        sizes << QStringLiteral("%1 GPUs leave %2")
                     .arg(f.gpus)
                     .arg(QString::fromStdString(formatBytes(f.kvBytes)));
    // Served quantized, they may fit: the Model box's Weights says in what precision they are.
    if (bytesPerWeight(served) > 1)
        s += QStringLiteral(" Served in FP8 or INT4, they take about a half or a quarter of that: "
                            "set Weights in the scenario panel (Model ▸ Weights).");
    if (sizes.isEmpty())
        return s +
               QStringLiteral(" No tensor-parallel size up to 8 GPUs holds them: %1.").arg(slider);
    return s + QStringLiteral(" With tensor parallel, %1 for KV: set it in the scenario panel "
                              "(GPU ▸ Tensor parallel) or below, or %2.")
                   .arg(listText(sizes), slider);
}

namespace {

// The warning for prompts past the model's context, to follow the answer; empty when none is.
QString contextWarning(const WorkloadResult& w) {
    if (!w.pastContext || !w.trace || !w.eval) return {};
    return QStringLiteral(" %1 of the trace's %2 requests (%3) are longer than %4's context of %5 "
                          "tokens: a server would refuse them; the replay takes them as they are.")
        .arg(w.pastContext)
        .arg(w.trace->size())
        .arg(percent(double(w.pastContext) / double(w.trace->size())),
             QString::fromStdString(w.eval->model.id),
             QString::fromStdString(formatTokens(w.eval->model.contextLimit)));
}

} // namespace

QString workloadSummary(const WorkloadResult& w) {
    return workloadAnswer(w) + contextWarning(w);
}

namespace {

QString workloadAnswer(const WorkloadResult& w) {
    if (!w.error.isEmpty()) return w.error;
    if (!w.replay) {
        QStringList above;
        for (const auto& t : w.scenarioTiers)
            if (t.pStar)
                above << QStringLiteral("%1 above %2's p* (%3 tokens)")
                             .arg(percent(t.shareAtOrAbove), t.name)
                             .arg(*t.pStar, 0, 'f', 0);
        QString s =
            QStringLiteral("This %1 trace has no block ids, so it gives lengths and arrivals only: "
                           "no hit ratios.")
                .arg(QString::fromStdString(std::string(toString(w.trace->summary.format))));
        if (!above.isEmpty())
            s += QStringLiteral(" Of its %1 requests, %2.")
                     .arg(w.trace->size())
                     .arg(listText(above));
        return s;
    }
    const ReplayResult& r = *w.replay;
    const ReplayConfig& c = w.config;
    QStringList tiers;
    for (const auto& t : c.tiers)
        tiers << capacityText(t.capacityBytes) + QLatin1Char(' ') + QString::fromStdString(t.name);
    const QString admission = QString::fromStdString(std::string(toString(w.settings.admission)));
    const RuleResult* rule = r.rule(toString(w.settings.admission));
    const RuleResult* gpu = r.rule("gpu-only");
    if (!rule || !gpu)
        return QStringLiteral("The replay gave no result for %1 admission.").arg(admission);
    const double change = gpu->ttft.mean > 0 ? rule->ttft.mean / gpu->ttft.mean - 1 : 0;
    QString s =
        tiers.isEmpty()
            ? QStringLiteral("With the GPU's %1 alone").arg(capacityText(c.gpuCapacityBytes))
            : QStringLiteral("With %1").arg(listText(tiers));
    if (r.fleet)
        s += QStringLiteral(" on each of %1 servers behind %2")
                 .arg(r.fleet->servers)
                 .arg(QString::fromStdString(r.fleet->router));
    if (!tiers.isEmpty() && c.storeAfter > 1)
        s += QStringLiteral(" (offload at a block's %1)")
                 .arg(QString::fromStdString(sightingText(c.storeAfter)));
    s += QStringLiteral(", %1 of requests are faster than GPU-only caching, mean TTFT %2 (%3 "
                        "\u2192 %4 ms, %5 admission)")
             .arg(percent(rule->gainShare), signedPercent(change))
             .arg(gpu->ttft.mean * 1e3, 0, 'f', 1)
             .arg(rule->ttft.mean * 1e3, 0, 'f', 1)
             .arg(admission);
    // As kvbe-cli trace replay's sentence: the prefill GPU time the tiers save beyond GPU-only.
    s += QStringLiteral(", %1 GPU prefill seconds saved")
             .arg(rule->gpuSecondsSaved - gpu->gpuSecondsSaved, 0, 'f', 1);
    // The write backlog: what it cost against writes that keep up, which the capacity chart's
    // one-pass curve assumes.
    if (w.writesKeptUp) {
        const RuleResult* keptRule = w.writesKeptUp->rule(toString(w.settings.admission));
        const RuleResult* keptGpu = w.writesKeptUp->rule("gpu-only");
        s += QStringLiteral("; writes falling behind cost hits: %1 of prompt tokens hit a cache, "
                            "%2 if writes kept up")
                 .arg(percent(r.anyTier.tokenWeighted),
                      percent(w.writesKeptUp->anyTier.tokenWeighted));
        if (keptRule && keptGpu && keptGpu->ttft.mean > 0)
            s += QStringLiteral(" (mean TTFT %1, as the capacity chart's curve assumes)")
                     .arg(signedPercent(keptRule->ttft.mean / keptGpu->ttft.mean - 1));
    }
    if (!c.tiers.empty() && r.tiers.size() == c.tiers.size() + 1) {
        const TierReport& last = r.tiers.back();
        s += QStringLiteral("; %1 needs %2 of writes (p99 minute)")
                 .arg(QString::fromStdString(last.name),
                      QString::fromStdString(formatBandwidth(last.writeRateP99)));
        if (last.writeBps > 0 && last.writeRateP99 > last.writeBps)
            s += QStringLiteral(", above its %1")
                     .arg(QString::fromStdString(formatBandwidth(last.writeBps)));
    }
    return s + QLatin1Char('.');
}

} // namespace

} // namespace kvbe
