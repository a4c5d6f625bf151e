#include "kvbe/ui/report/report_writer.h"

#include "report_document.h"

#include "kvbe/report/report.h"
#include "kvbe/trace/replay_command.h"
#include "kvbe/trace/trace_saturation.h"
#include "kvbe/ui/charts/capacity_chart.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/fleet/calibration_importer.h"
#include "kvbe/ui/fleet/fleet_drawing.h"
#include "kvbe/ui/results/workload_result.h"
#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QApplication>
#include <QCryptographicHash>
#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>

#include <cstdio>
#include <cstdlib>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

// A QApplication for the charts where the caller has none (kvbe-cli), on the offscreen
// platform where there is no display, as `kvbe --export` does; Qt's notes about the offscreen
// platform stay off stderr.
std::unique_ptr<QApplication> ensureApplication() {
    if (QCoreApplication::instance()) return nullptr;
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
        qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& msg) {
        if (type == QtCriticalMsg || type == QtFatalMsg)
            std::fprintf(stderr, "kvbe-cli: %s\n", msg.toLocal8Bit().constData());
    });
    static int argc = 1;
    static char name[] = "kvbe-cli";
    static char* argv[] = {name, nullptr};
    return std::make_unique<QApplication>(argc, argv);
}

Result<std::string> sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return fail(QStringLiteral("%1: cannot be read to hash it: %2").arg(path, f.errorString()));
    QCryptographicHash h(QCryptographicHash::Sha256);
    if (!h.addData(&f)) return fail(QStringLiteral("%1: cannot be read to hash it").arg(path));
    return h.result().toHex().toStdString();
}

struct Drawn {
    ResultPtr scenario;
    ImportDrawing imports;
    bool hasImports = false;
    WorkloadPtr workload;
    PlanPtr plan;
    QString target; // the capacity chart's latency target
};

// One figure as SVG: the chart of the chart table drawn as `kvbe --export` draws it.
Result<QByteArray> drawFigure(const std::string& key, const Drawn& d, const QTemporaryDir& dir,
                              int n) {
    const ChartKind* kind = findChartKind(qs(key));
    if (!kind) return fail(QStringLiteral("no chart '%1' in the chart table").arg(qs(key)));
    auto chart = kind->create(nullptr);
    if (kind->setTier) kind->setTier(*chart, 0);
    if (kind->drawImports && d.hasImports) kind->drawImports(*chart, d.imports);
    chart->setResults(d.scenario, {});
    if (auto* wc = qobject_cast<WorkloadChart*>(chart.get())) wc->setWorkload(d.workload);
    if (auto* pc = qobject_cast<PlanChart*>(chart.get())) pc->setPlan(d.plan);
    if (kind->setTarget && !d.target.isEmpty())
        if (auto st = kind->setTarget(*chart, d.target); !st) return st.error();
    if (kind->computeNow && !qobject_cast<PlanChart*>(chart.get()))
        if (auto st = kind->computeNow(*chart); !st) return st.error();
    const QString path = dir.filePath(QStringLiteral("figure%1.svg").arg(n));
    if (auto st = exportChart(*chart, path, QSize(960, 540)); !st) return st.error();
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return fail(QStringLiteral("cannot read %1").arg(path));
    return f.readAll();
}

} // namespace

Status checkReportPath(const std::string& out) {
    const QString ext = QFileInfo(qs(out)).suffix().toLower();
    if (ext == QLatin1String("pdf") || ext == QLatin1String("html") || ext == QLatin1String("htm"))
        return Ok{};
    return Error{"--out " + out + ": name it .pdf or .html"};
}

Status writeReport(const ReportJob& job) {
    if (auto st = checkReportPath(job.out); !st) return st;
    auto app = ensureApplication();

    Explorer explorer(job.presets);
    if (auto m = explorer.loadModel(job.scenario.model); !m) return m.error();
    explorer.setScenario(job.scenario);
    explorer.recomputeNow();
    if (!explorer.result()) return fail(explorer.lastError());
    Drawn d;
    d.scenario = explorer.result();
    std::shared_ptr<const Evaluation> eval = job.eval ? job.eval : d.scenario->eval;

    ReportInputs in;
    std::vector<ReportFile> files;
    for (const auto& [path, role] : job.inputs) {
        auto h = sha256(qs(path));
        if (!h) return h.error();
        files.push_back({path, role, *h});
    }
    if (!job.imports.empty()) {
        QStringList paths;
        for (const auto& p : job.imports)
            paths << qs(p);
        const auto list = CalibrationImporter::expand(paths);
        if (!list.errors.isEmpty()) return fail(QStringLiteral("--import: ") + list.errors.front());
        std::vector<ImportedCalibration> imported;
        for (const QString& f : list.files) {
            auto one = CalibrationImporter::read(f);
            if (!one) return Error{"--import: " + one.message()};
            in.calibrations.push_back(one->calibration);
            imported.push_back(std::move(*one));
            auto h = sha256(f);
            if (!h) return h.error();
            files.push_back({f.toStdString(), "calibration (--import)", *h});
        }
        d.imports = fleetDrawing(imported, d.scenario);
        d.hasImports = true;
    }

    if (job.trace) {
        auto w = std::make_shared<WorkloadResult>(computeWorkload(
            job.trace, qs(job.traceFile), eval, job.workload.value_or(WorkloadSettings{})));
        if (!w->error.isEmpty()) return fail(w->error);
        d.workload = w;
        in.answer = w->summary.toStdString();
        in.replayCommand = shellCommandLines(
            replayCommandLine(workloadRequest(w->settings, eval->scenario.tiers.size()), *eval,
                              w->settings.admission, job.traceFile, "scenario.kvbe.json"));
        in.replaySettings = replaySettingsSentence(w->config, w->settings.admission);
        in.saturation = w->saturation.toStdString();
        if (w->replay && !w->replay->cancelled)
            for (const auto& t : tierSaturation(*w->replay, toString(w->settings.admission)))
                in.saturated = in.saturated || t.saturated;
        auto wp = std::make_shared<WorkloadPlan>();
        wp->workload = w;
        if (job.planSetup) {
            wp->setup = job.planSetup;
            wp->limits = job.planSetup->limits;
        }
        wp->result = job.plan;
        wp->error = qs(job.planError);
        d.plan = wp;
        if (job.planSetup && job.planSetup->limits.sloP99S)
            d.target = QStringLiteral("p99=%1s").arg(*job.planSetup->limits.sloP99S);
    }

    in.eval = eval.get();
    in.presets = &job.presets;
    in.scenarioFile = job.scenarioFile;
    in.scenarioFlags = job.scenarioFlags;
    in.trace = job.trace.get();
    in.traceFile = job.traceFile;
    in.planSetup = d.plan && d.plan->setup ? &*d.plan->setup : nullptr;
    in.plan = d.plan && d.plan->result ? &*d.plan->result : nullptr;
    in.planError = job.planError;
    in.capacityChart = !d.target.isEmpty();
    in.version = job.version;
    in.command = job.command;
    in.scenarioJson = scenarioToJson(job.scenario);
    in.planCommand = job.planCommand;
    in.calcCommand = job.calcCommand;
    in.files = std::move(files);
    in.title = job.title;
    in.date = QDateTime::currentDateTimeUtc().toString(Qt::ISODate).toStdString();
    const Report report = buildReport(in);

    QTemporaryDir dir;
    if (!dir.isValid())
        return fail(QStringLiteral("cannot make a temporary folder for the charts"));
    std::vector<QByteArray> svgs;
    int n = 0;
    for (const ReportBlock* f : report.figures()) {
        auto svg = drawFigure(f->chart, d, dir, ++n);
        if (!svg)
            return Error{"figure " + std::to_string(n) + " (" + f->chart + "): " + svg.message()};
        svgs.push_back(std::move(*svg));
    }
    const QString out = qs(job.out);
    const QString ext = QFileInfo(out).suffix().toLower();
    return ext == QLatin1String("pdf") ? writeReportPdf(report, svgs, out)
                                       : writeReportHtml(report, svgs, out);
}

} // namespace kvbe
