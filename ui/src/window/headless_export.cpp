#include "kvbe/ui/window/headless_export.h"

#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/fleet/fleet_drawing.h"
#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/widgets/qt_error.h"

namespace kvbe {

namespace {

// "a, b or c"
QString orList(QStringList words) {
    if (words.size() < 2) return words.join(QString());
    const QString last = words.takeLast();
    return words.join(QStringLiteral(", ")) + QStringLiteral(" or ") + last;
}

QStringList keysWhere(bool (*test)(const ChartKind&)) {
    QStringList keys;
    for (const auto& k : chartKinds())
        if (test(k)) keys << k.key;
    return keys;
}

bool drawsImports(const ChartKind& k) {
    return k.drawImports != nullptr;
}
bool takesTier(const ChartKind& k) {
    return k.setTier != nullptr;
}
bool takesTarget(const ChartKind& k) {
    return k.setTarget != nullptr;
}

// Whether the request fits the chart: what its row says it draws from and can draw.
Status checkRequest(const ChartKind& kind, const HeadlessExport& q, const Scenario& scenario) {
    if (auto st = checkExportFormat(q.path); !st) return st;
    const bool traceChart = kind.source == ChartSource::Trace;
    if (traceChart && q.trace.isEmpty())
        return fail(QStringLiteral("the %1 chart needs a trace: add --trace FILE").arg(kind.key));
    if (!traceChart && !q.trace.isEmpty())
        return fail(QStringLiteral("--trace draws the workload charts; --chart '%1' is not one "
                                   "of %2")
                        .arg(kind.key, chartKeys(ChartSource::Trace).join(QStringLiteral(", "))));
    if (!q.imports.isEmpty() && !kind.drawImports)
        return fail((traceChart ? QStringLiteral("--import draws on the scenario charts, not on "
                                                 "the workload charts of --trace")
                                : QStringLiteral("--import draws on the %1 charts, not on %2")
                                      .arg(orList(keysWhere(drawsImports)), kind.key)));
    if (q.tier && !kind.setTier)
        return fail(QStringLiteral("--tier picks the tier of the %1 chart; %2 draws every tier")
                        .arg(orList(keysWhere(takesTier)), kind.key));
    if (!q.target.isEmpty() && !kind.setTarget)
        return fail(QStringLiteral("--slo sets the latency target of the %1 chart; %2 draws none")
                        .arg(orList(keysWhere(takesTarget)), kind.key));
    if ((!q.live.isEmpty() || !q.engine.isEmpty() || q.asRouted) &&
        kind.key != QLatin1String("workload-live"))
        return fail(QStringLiteral("--live, --engine and --as-routed draw the workload-live chart; "
                                   "--chart '%1' "
                                   "is not it")
                        .arg(kind.key));
    if (q.tier && *q.tier >= int(scenario.tiers.size()))
        return fail(QStringLiteral("--tier %1: the scenario has %2 tiers")
                        .arg(*q.tier + 1)
                        .arg(scenario.tiers.size()));
    return Ok{};
}

// The scenario's curves, computed now (a headless export has no frame timer to wait for).
Status evaluate(Explorer& explorer, const Scenario& scenario) {
    if (auto r = explorer.loadModel(scenario.model); !r) return r.error();
    explorer.setScenario(scenario);
    explorer.recomputeNow();
    if (!explorer.result()) return fail(explorer.lastError());
    return Ok{};
}

// The imported files, read one by one as the Fleet view's importer reads them; the first that
// cannot be read fails the export.
Result<std::vector<ImportedCalibration>> readImports(const QStringList& paths) {
    const auto list = CalibrationImporter::expand(paths);
    if (!list.errors.isEmpty()) return fail(QStringLiteral("--import: ") + list.errors.front());
    std::vector<ImportedCalibration> files;
    for (const QString& f : list.files) {
        auto one = CalibrationImporter::read(f);
        if (!one) return Error{"--import: " + one.message()};
        files.push_back(std::move(*one));
    }
    return files;
}

// The trace replayed through the scenario's tiers with the Workload view's default settings,
// beside the live replay where one is given.
Result<WorkloadPtr> replayTrace(const HeadlessExport& q, const Explorer& explorer) {
    auto trace = loadTrace(q.trace.toStdString(), {});
    if (!trace) return trace.error();
    WorkloadSettings settings;
    settings.liveDir = q.live.toStdString();
    settings.engine = q.engine.toStdString();
    settings.liveAsRouted = q.asRouted;
    auto w = std::make_shared<WorkloadResult>(
        computeWorkload(std::make_shared<const Trace>(std::move(*trace)), q.trace,
                        explorer.result()->eval, settings));
    if (!w->error.isEmpty()) return fail(w->error);
    if (!q.live.isEmpty() && !w->live) return fail(QStringLiteral("--live: ") + w->liveNote);
    return WorkloadPtr(std::move(w));
}

} // namespace

Status exportHeadless(const Presets& presets, const Scenario& scenario, const HeadlessExport& q) {
    const ChartKind* kind = findChartKind(q.chart);
    if (!kind)
        return fail(QStringLiteral("unknown chart '%1'; expected one of %2")
                        .arg(q.chart, keysWhere([](const ChartKind&) {
                                          return true;
                                      }).join(QStringLiteral(", "))));
    if (auto st = checkRequest(*kind, q, scenario); !st) return st;
    Explorer explorer(presets);
    if (auto st = evaluate(explorer, scenario); !st) return st;
    auto chart = kind->create(nullptr);
    if (kind->setTier) kind->setTier(*chart, q.tier.value_or(0));
    if (!q.target.isEmpty())
        if (auto st = kind->setTarget(*chart, q.target); !st) return st;
    if (kind->drawImports && !q.imports.isEmpty()) {
        auto files = readImports(q.imports);
        if (!files) return files.error();
        kind->drawImports(*chart, fleetDrawing(*files, explorer.result()));
    }
    chart->setChartStyle(q.style);
    chart->setResults(explorer.result(), {});
    if (kind->source == ChartSource::Trace) {
        auto w = replayTrace(q, explorer);
        if (!w) return w.error();
        if (auto* wc = qobject_cast<WorkloadChart*>(chart.get())) wc->setWorkload(*w);
        if (kind->computeNow)
            if (auto st = kind->computeNow(*chart); !st) return st;
    }
    return exportChart(*chart, q.path, q.size);
}

QString chartOptionHelp() {
    return QStringLiteral("Chart to export: %1; with --trace, %2.")
        .arg(orList(chartKeys(ChartSource::Scenario)), orList(chartKeys(ChartSource::Trace)));
}

QString tierOptionHelp() {
    return QStringLiteral("Tier of the %1 chart, from 1.").arg(orList(keysWhere(takesTier)));
}

QString targetOptionHelp() {
    return QStringLiteral("Latency target of the %1 chart: a TTFT statistic and the most it may "
                          "be, with a unit (p99=5s, the default; p90=500ms, mean=300ms); in the "
                          "window, the Capacity tab's field.")
        .arg(orList(keysWhere(takesTarget)));
}

} // namespace kvbe
