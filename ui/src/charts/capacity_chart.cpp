#include "kvbe/ui/charts/capacity_chart.h"

#include "kvbe/base/units.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace_capacity_report.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QFileInfo>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// "S = 1.27", to the precision the search found it to.
QString loadText(double S) {
    return QStringLiteral("S = ") + QString::number(S, 'g', 4);
}

// The servers the curve is drawn on where the view sets none: GPU-only caching's need at the
// trace's rate, else the fewest any rule needs; 0 where no number up to the bound holds.
int curveServers(const CapacityResult& r) {
    if (const RuleServers* g = r.serversOf("gpu-only"); g && g->servers) return *g->servers;
    int fewest = 0;
    for (const auto& s : r.servers)
        if (s.servers && (fewest == 0 || *s.servers < fewest)) fewest = *s.servers;
    return fewest;
}

} // namespace

WorkloadCapacity computeCapacity(WorkloadPtr w, const LatencyTarget& target,
                                 const std::function<bool(double)>& progress) {
    WorkloadCapacity out;
    out.workload = w;
    out.target = target;
    if (!w || !w->trace) {
        out.error = QStringLiteral("Open a trace: the capacity search replays it.");
        return out;
    }
    const QString file = QFileInfo(w->file).fileName();
    if (!w->error.isEmpty()) {
        out.error = w->error;
        return out;
    }
    if (!w->replay) {
        out.error = QStringLiteral("%1 has no block ids: the capacity search needs the replay's "
                                   "hits, so it cannot run on this trace.")
                        .arg(file);
        return out;
    }
    if (auto ok = checkArrivals(*w->trace, file.toStdString()); !ok) {
        out.error = qs(ok.message());
        return out;
    }
    const auto t0 = std::chrono::steady_clock::now();
    // The tab's replay: servers are a fleet behind its router, each with its own GPU cache, as
    // kvbe-cli trace capacity --router counts them.
    const ReplayConfig& config = w->config;
    // One search over part of the progress bar; false where it failed or was cancelled.
    auto run = [&](const CapacityRequest& q, double from,
                   double to) -> std::optional<CapacityResult> {
        auto r = traceCapacity(*w->trace, w->eval->cost, config, q, [&](double f) {
            return !progress || progress(from + (to - from) * f);
        });
        if (!r) {
            out.error = qs(r.message());
            return std::nullopt;
        }
        if (r->cancelled) {
            out.cancelled = true;
            return std::nullopt;
        }
        return std::move(*r);
    };
    CapacityRequest q;
    q.target = target;
    q.instances = std::max(0, w->settings.instances);
    out.instancesSet = q.instances > 0;
    if (out.instancesSet) {
        out.result = run(q, 0, 1);
        out.instances = q.instances;
    } else {
        // The servers needed first (a few queueings on one cache pass), then the curve on the
        // number GPU-only caching needs.
        auto servers = run(q, 0, 0.3);
        if (!servers) return out;
        out.instances = curveServers(*servers);
        if (out.instances > 0) {
            CapacityRequest load = q;
            load.instances = out.instances;
            load.serversNeeded = false;
            auto held = run(load, 0.3, 1);
            if (!held) return out;
            held->serversSearched = true;
            held->rateScale = servers->rateScale;
            held->maxInstances = servers->maxInstances;
            held->servers = std::move(servers->servers);
            held->fleetGpuHits = std::move(servers->fleetGpuHits);
            held->passes += servers->passes;
            held->evaluations += servers->evaluations;
            out.result = std::move(held);
        } else {
            out.result = std::move(servers);
        }
    }
    if (!out.result) return out;
    out.serversSentence = qs(capacityServersSentence(*out.result));
    out.loadSentence = qs(capacityLoadSentence(*out.result));
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

// ---- the chart

SloCapacityChart::SloCapacityChart(QWidget* parent) : WorkloadChart(parent) {
    m_xLogFormat = "%g"; // loads below 1
}

const WorkloadCapacity* SloCapacityChart::drawn() const {
    if (!m_capacity || !m_workload || !m_capacity->workload) return nullptr;
    return m_capacity->workload->trace == m_workload->trace ? m_capacity.get() : nullptr;
}

void SloCapacityChart::setCapacity(CapacityPtr c) {
    m_capacity = std::move(c);
    if (m_current) refill();
}

void SloCapacityChart::copyStateFrom(const ChartView& other) {
    if (auto* o = qobject_cast<const SloCapacityChart*>(&other)) {
        m_capacity = o->m_capacity;
        m_target = o->m_target;
    }
    WorkloadChart::copyStateFrom(other);
}

Status SloCapacityChart::setTargetText(const QString& text) {
    auto t = parseLatencyTarget(text.trimmed().toStdString());
    if (!t) return fail(QStringLiteral("--slo ") + qs(t.message()));
    m_target = *t;
    return Ok{};
}

Status SloCapacityChart::computeNow() {
    auto c = std::make_shared<WorkloadCapacity>(computeCapacity(m_workload, m_target));
    if (!c->error.isEmpty()) return fail(c->error);
    setCapacity(std::move(c));
    return Ok{};
}

void SloCapacityChart::refill() {
    const QString headline = tr("TTFT against the load, per caching rule");
    if (!drawEmptyUnlessLoaded(headline)) return;
    const WorkloadCapacity* c = drawn();
    const CapacityResult* r = c && c->result ? &*c->result : nullptr;
    const QString stat = qs(r ? r->target.statistic() : m_target.statistic());
    const QString file = QFileInfo(m_workload->file).fileName();
    const double rate = r ? r->requestsPerS : traceRequestRate(*m_workload->trace);
    setAxes(true,
            tr("Load S: every arrival time divided by S (S = 1: the trace's %1 requests/s)")
                .arg(rate, 0, 'f', 2),
            tr("%1 TTFT (s)").arg(stat), true);
    setSecondaryAxis(QString(), 0, 1);
    if (!r) {
        setTitles(
            headline, describeScenario(*m_current),
            c && !c->error.isEmpty()
                ? c->error
                : tr("%1: the search runs when this tab is shown (progress below)").arg(file));
        beginRefill();
        endRefill();
        setHomeRange(0.5, 2, 0.1, 10);
        return;
    }

    const double target = r->target.seconds;
    double lo = 0.5, hi = 2;
    if (!r->curveRateScale.empty()) lo = r->curveRateScale.front(), hi = r->curveRateScale.back();
    double ylo = target, yhi = target;
    auto extend = [&](double v) {
        if (!(v > 0) || !std::isfinite(v)) return;
        ylo = std::min(ylo, v);
        yhi = std::max(yhi, v);
    };
    QString servers;
    if (c->instances > 0)
        servers = c->instancesSet
                      ? tr("%1 servers, as set above").arg(c->instances)
                      : tr("%1 servers: GPU-only caching's need at S = 1").arg(c->instances);
    // The floor where no number of servers holds: a fleet's is every hit free (each server adds
    // a cache, so a server per request bounds nothing), one cache's a server per request.
    const bool fleetFloor = !r->fleetGpuHits.empty();
    const QString floorText = fleetFloor
                                  ? tr("every prefix hit free on the GPU, no wait")
                                  : tr("with a server per request (no wait), the prefill and the "
                                       "loads alone");
    const QString floorLabel =
        fleetFloor ? tr("with every hit free") : tr("with a server per request");
    // The Workload tab's fleet: a GPU cache on each server, behind its router.
    if (c->instances > 1 && m_workload->config.fleet.enabled)
        servers +=
            tr(", a GPU cache each behind %1").arg(qs(routerText(m_workload->config.fleet.router)));
    setTitles(
        r->curveRateScale.empty()
            ? tr("%1: no number of servers holds it at the trace's rate").arg(qs(r->target.text()))
            : tr("%1 TTFT against the load on %2 servers, and the largest load each rule "
                 "holds at %3")
                  .arg(stat)
                  .arg(c->instances)
                  .arg(qs(r->target.text())),
        describeScenario(*m_current),
        r->curveRateScale.empty()
            ? tr("%1; dotted: %2; decode is not modelled").arg(file, floorText)
            : tr("%1; %2; TTFT = wait + load + recompute, no decode").arg(file, servers));
    beginRefill();
    line(QStringLiteral("target"), tr("target: %1").arg(qs(r->target.text())), textColor(), 1.5,
         Qt::DashLine)
        ->replace(QList<QPointF>{{lo, target}, {hi, target}});
    for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
        const QString rule = qs(std::string(kCapacityRules[k]));
        const QString key = QStringLiteral("rule/%1/").arg(k);
        const QColor col = ruleColor(rule);
        if (r->curveRateScale.empty()) {
            // No curve: each rule's floor, what no number of servers gets below.
            if (const RuleServers* s = r->serversOf(kCapacityRules[k])) {
                line(key + QStringLiteral("floor"), tr("%1 %2").arg(ruleName(rule), floorLabel),
                     col, 2, Qt::DotLine)
                    ->replace(
                        QList<QPointF>{{lo, s->statisticUnlimited}, {hi, s->statisticUnlimited}});
                extend(s->statisticUnlimited);
            }
            continue;
        }
        QList<QPointF> pts;
        for (std::size_t p = 0; p < r->curveRateScale.size(); ++p) {
            const double v = k < r->curveStatistic.size() ? r->curveStatistic[k][p] : 0;
            if (!(v > 0)) continue;
            pts << QPointF(r->curveRateScale[p], v);
            extend(v);
        }
        line(key + QStringLiteral("curve"), ruleName(rule), col,
             rule == QLatin1String("gpu-only") || rule == QLatin1String("optimal") ? 2.5 : 1.8)
            ->replace(pts);
        const RuleLoadHeld* h = r->loadHeldOf(kCapacityRules[k]);
        QList<QPointF> mark;
        if (h && h->rateScale > 0) mark << QPointF(h->rateScale, h->statistic);
        scatter(key + QStringLiteral("held"), tr("%1: largest load held").arg(ruleName(rule)), col,
                11, false)
            ->replace(mark);
    }
    // One label per load held, naming every rule that holds it (always, breakeven and optimal
    // often hold the same).
    std::vector<std::pair<double, QStringList>> marks;
    double gpuLoad = 0;
    for (const auto& h : r->loadHeld) {
        if (!(h.rateScale > 0)) continue;
        if (h.rule == "gpu-only") gpuLoad = h.rateScale;
        auto it = std::find_if(marks.begin(), marks.end(), [&](const auto& m) {
            return std::abs(m.first / h.rateScale - 1) < 1e-9;
        });
        if (it == marks.end()) it = marks.insert(marks.end(), {h.rateScale, {}});
        it->second << qs(h.rule);
    }
    for (std::size_t i = 0; i < marks.size(); ++i) {
        const auto& [S, rules] = marks[i];
        const RuleLoadHeld* h = r->loadHeldOf(rules.front().toStdString());
        QString text = tr("%1: %2").arg(rules.join(QStringLiteral(", ")), loadText(S));
        if (h->outcome == RuleLoadHeld::Outcome::HoldsAtMaximum)
            text += tr(" (the search's bound)");
        else if (gpuLoad > 0 && rules.front() != QLatin1String("gpu-only"))
            text += tr(", %1× GPU-only").arg(S / gpuLoad, 0, 'f', 2);
        // The rules the sentence under the chart names (GPU-only and optimal) place first, and
        // a crowded label falls back to its rules and load alone.
        const bool named =
            rules.contains(QStringLiteral("gpu-only")) || rules.contains(QStringLiteral("optimal"));
        label(QStringLiteral("held/%1").arg(i), text, QPointF(S, h->statistic),
              ruleColor(rules.back()), Qt::Alignment(),
              tr("%1: %2").arg(rules.join(QStringLiteral(", ")), loadText(S)), named ? 1 : 0);
    }
    // The trace's own rate, where the servers sentence below the chart counts.
    if (lo <= 1 && 1 <= hi) {
        line(QStringLiteral("own"), tr("the trace's own rate (S = 1)"), ghost(textColor()), 1,
             Qt::DotLine, false)
            ->replace(QList<QPointF>{{1, ylo / 1.5}, {1, yhi * 1.5}});
        label(QStringLiteral("own"), tr("the trace's own rate"), QPointF(1, ylo / 1.4),
              ghost(textColor()), Qt::AlignRight | Qt::AlignTop);
    }
    endRefill();
    // Up to ten times the target: beyond it the queue grows without bound and the curves only
    // say so.
    setHomeRange(lo, hi, ylo / 1.5, std::min(yhi, 10 * target) * 1.5);
}

QString SloCapacityChart::hoverText(QPointF v) const {
    const WorkloadCapacity* c = drawn();
    if (!c || !c->result || c->result->curveRateScale.empty()) return {};
    const CapacityResult& r = *c->result;
    const std::size_t i = nearestIndex(r.curveRateScale, v.x());
    const double S = r.curveRateScale[i];
    QString s = tr("%1 (%2 requests/s) on %3 servers:")
                    .arg(loadText(S))
                    .arg(S * r.requestsPerS, 0, 'f', 2)
                    .arg(c->instances);
    for (std::size_t k = 0; k < r.loadHeld.size() && k < r.curveStatistic.size(); ++k) {
        const auto& h = r.loadHeld[k];
        s += tr("\n%1: %2 %3")
                 .arg(ruleName(qs(h.rule)), qs(r.target.statistic()),
                      qs(formatSeconds(r.curveStatistic[k][i])));
        if (h.rateScale > 0) s += tr(", holds up to %1").arg(loadText(h.rateScale));
    }
    return s;
}

QString SloCapacityChart::csv() const {
    const WorkloadCapacity* c = drawn();
    if (!c || !c->result) return {};
    const CapacityResult& r = *c->result;
    const QString stat = qs(r.target.statistic());
    QString s = QStringLiteral("rate_scale,requests_per_s");
    for (const auto& h : r.loadHeld)
        s += QStringLiteral(",%1_ttft_s_%2").arg(stat, qs(h.rule));
    s += QLatin1Char('\n');
    for (std::size_t p = 0; p < r.curveRateScale.size(); ++p) {
        s += QStringLiteral("%1,%2")
                 .arg(r.curveRateScale[p], 0, 'g', 10)
                 .arg(r.curveRateScale[p] * r.requestsPerS, 0, 'g', 10);
        for (std::size_t k = 0; k < r.loadHeld.size() && k < r.curveStatistic.size(); ++k)
            s += QLatin1Char(',') + QString::number(r.curveStatistic[k][p], 'g', 10);
        s += QLatin1Char('\n');
    }
    s += QStringLiteral("# target %1, %2 servers\n").arg(qs(r.target.text())).arg(c->instances);
    for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
        const RuleServers* sv = r.serversOf(kCapacityRules[k]);
        const RuleLoadHeld* h = r.loadHeldOf(kCapacityRules[k]);
        s += QStringLiteral(
                 "# %1 servers_needed=%2 load_held_rate_scale=%3 fails_at_rate_scale=%4\n")
                 .arg(qs(std::string(kCapacityRules[k])),
                      sv && sv->servers ? QString::number(*sv->servers) : QStringLiteral("none"),
                      h && h->rateScale > 0 ? QString::number(h->rateScale, 'g', 10)
                                            : QStringLiteral("none"),
                      h && h->failsAt > 0 ? QString::number(h->failsAt, 'g', 10)
                                          : QStringLiteral("none"));
    }
    return s;
}

} // namespace kvbe
