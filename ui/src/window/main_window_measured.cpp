// MainWindow's measured side: the Probes dock, whose streamed points land on the
// charts, and the Fleet dock of imported calibrations.
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "kvbe/ui/widgets/file_dialogs.h"
#include "kvbe/ui/widgets/wheel_guard.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QDockWidget>
#include <QFileDialog>
#include <QMenu>
#include <QScrollArea>
#include <QStatusBar>
#include <QTabWidget>

#include <algorithm>
#include <iterator>
#include <optional>

namespace kvbe {

namespace {

// The scenario with a measured tier added or updated. Its t_fixed is the probe's latency of one
// read at queue depth 1, where it measured one (`tFixedMs`); else it borrows staging and t_fixed
// from the first nominal tier of the same kind.
Scenario withMeasuredTier(const Scenario& s, const Presets& presets, const std::string& name,
                          const QString& probe, double gbps, int run,
                          std::optional<double> tFixedMs) {
    Scenario out = s;
    for (auto& t : out.tiers)
        if (t.name == name) {
            t.bandwidthGBps = gbps;
            if (tFixedMs) t.tFixedMs = *tFixedMs;
            return out;
        }
    const TierKind kind =
        probe.startsWith(QLatin1String("nvme-")) ? TierKind::Nvme : TierKind::Dram;
    TierConfig t;
    t.name = name;
    t.bandwidthGBps = gbps;
    // Measured tiers in reds, so they stand apart from the nominal ones.
    static const char* const reds[] = {"#d00000", "#e85d04", "#9d0208", "#f48c06", "#6a040f"};
    t.color = reds[size_t(run) % std::size(reds)];
    for (const auto& nominal : s.tiers) {
        const auto* preset = nominal.preset.empty() ? nullptr : presets.findTier(nominal.preset);
        if (preset && preset->kind == kind && nominal.measured.empty()) {
            t.staging = nominal.staging;
            t.tFixedMs = nominal.tFixedMs;
            t.tLayerUs = nominal.tLayerUs;
            break;
        }
    }
    if (tFixedMs) t.tFixedMs = *tFixedMs;
    out.tiers.push_back(t);
    return out;
}

// A dock's contents in a scroll area: a dock shorter than its contents scrolls them, and never
// makes the window taller than the screen.
QScrollArea* scrolling(QWidget* contents) {
    guardWheel(contents); // the wheel scrolls the dock, not the inputs it passes over
    auto* scroll = new QScrollArea;
    scroll->setObjectName(contents->objectName() + QStringLiteral("Scroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    scroll->setWidget(contents);
    return scroll;
}

} // namespace

void MainWindow::buildMeasured() {
    m_probePanel = new ProbePanel;
    m_probePanel->setObjectName(QStringLiteral("probePanel"));
    m_probeDock = new QDockWidget(tr("Probes"), this);
    m_probeDock->setObjectName(QStringLiteral("probeDock"));
    m_probeDock->setWidget(scrolling(m_probePanel));
    addDockWidget(Qt::BottomDockWidgetArea, m_probeDock);
    connect(m_probePanel, &ProbePanel::runStarted, this, &MainWindow::connectRun);
    connect(
        m_probePanel, &ProbePanel::tierRowChosen, this,
        [this](int run, double gbps, const QString& setting) {
            auto& r = m_liveRuns[run];
            if (!r.inScenario) return;
            r.why = tr("You chose %1 (%2 GB/s) for the tier.").arg(setting).arg(gbps, 0, 'f', 2);
            m_explorer.edit(withMeasuredTier(m_explorer.scenario(), m_explorer.presets(),
                                             r.name.toStdString(), r.probe, gbps, run, r.latencyMs),
                            tr("Tier %1 from %2").arg(r.name, setting));
            m_probePanel->markTierRow(run, gbps, r.why);
        });
    // The marked row follows the scenario's tier through undo and redo.
    connect(&m_explorer, &Explorer::scenarioChanged, this, [this] {
        for (const auto& [run, r] : m_liveRuns) {
            if (!r.inScenario) continue;
            double gbps = 0;
            for (const auto& t : m_explorer.scenario().tiers)
                if (QString::fromStdString(t.name) == r.name) gbps = t.bandwidthGBps;
            m_probePanel->markTierRow(run, gbps);
        }
    });
    connect(m_probePanel, &ProbePanel::keepRequested, this,
            [this](int run) { addMeasuredTier(run, m_liveRuns[run].name); });

    m_fleetPanel = new FleetPanel(&m_explorer);
    m_fleetPanel->setObjectName(QStringLiteral("fleetPanel"));
    m_fleetDock = new QDockWidget(tr("Fleet"), this);
    m_fleetDock->setObjectName(QStringLiteral("fleetDock"));
    m_fleetDock->setWidget(scrolling(m_fleetPanel));
    addDockWidget(Qt::BottomDockWidgetArea, m_fleetDock);
    tabifyDockWidget(m_probeDock, m_fleetDock);
    m_probeDock->raise();
    resizeDocks({m_probeDock}, {320}, Qt::Vertical);
    connect(m_fleetPanel, &FleetPanel::overlaysChanged, this,
            [this] { drawImports(m_fleetPanel->drawing(), m_charts); });
    connect(m_fleetPanel, &FleetPanel::message, this,
            [this](const QString& m) { statusBar()->showMessage(m, 6000); });
    connect(m_fleetPanel, &FleetPanel::imported, this, [this](int files, int errors) {
        statusBar()->showMessage(
            errors
                ? tr("Imported %1 calibration files; %2 could not be read").arg(files).arg(errors)
                : tr("Imported %1 calibration files").arg(files),
            6000);
        m_fleetDock->raise();
    });
    const auto scenarioDefaults = [this] {
        m_probePanel->setDefaultModel(QString::fromStdString(m_explorer.scenario().model));
        // A GPU preset only: the probe knows no other.
        const std::string& gpu = m_explorer.scenario().gpu;
        m_probePanel->setDefaultGpu(m_explorer.presets().findGpu(gpu) ? QString::fromStdString(gpu)
                                                                      : QString());
    };
    connect(&m_explorer, &Explorer::scenarioChanged, this, scenarioDefaults);
    scenarioDefaults();

    auto* importCal = new QAction(tr("Import &calibration files…"), this);
    connect(importCal, &QAction::triggered, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Calibration files"), QString(), fileDialogFilter({FileKind::Calibration}));
        if (!files.isEmpty()) importCalibrations(files);
    });
    auto* importDir = new QAction(tr("Import a &folder of calibration files…"), this);
    connect(importDir, &QAction::triggered, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder of node files"));
        if (!dir.isEmpty()) importCalibrations({dir});
    });
    auto* exportPy = new QAction(tr("Export py-kvcache &thresholds of the scenario…"), this);
    connect(exportPy, &QAction::triggered, this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("py-kvcache break-even file"),
                                         QStringLiteral("breakeven.json"), tr("JSON (*.json)"));
        if (p.isEmpty()) return;
        if (auto st = m_fleetPanel->exportPyKvcache(p, false); !st)
            reportError(QString::fromStdString(st.message()));
    });
    // Before "Save scenario": the import entries sit with the other imports.
    m_fileMenu->insertActions(m_saveAction, {importCal, importDir, exportPy});
    m_viewMenu->addAction(m_probeDock->toggleViewAction());
    m_viewMenu->addAction(m_fleetDock->toggleViewAction());
}

bool MainWindow::importCalibrations(const QStringList& paths) {
    m_fleetDock->show();
    m_fleetDock->raise();
    setBottomDocksCollapsed(false); // an import is using the dock
    return m_fleetPanel->importPaths(paths);
}

QString MainWindow::measuredTierName(int run) const {
    const auto it = m_liveRuns.find(run);
    return it == m_liveRuns.end() || !it->second.inScenario ? QString() : it->second.name;
}

// A run's bandwidth is data only once the run has finished: until then it is drawn as
// provisional (dashed, "running"); a stopped or failed run's partial best joins the scenario
// only when the user keeps it.
void MainWindow::connectRun(int index, ProbeRunner* runner, const QString& probe) {
    LiveRun live;
    live.probe = probe;
    // The model the run measures, as the form just started it: the serving probe's --config,
    // not its served name ("standin"), named by its id as the scenario's model is, so that a
    // config.json of the scenario's model is not marked as another model's.
    live.model = m_probePanel->runModel();
    if (auto spec = resolveModel(live.model.toStdString(), m_explorer.presets()))
        live.model = QString::fromStdString(spec->id);
    live.name = tr("%1 #%2, measured").arg(probe).arg(index + 1);
    m_liveRuns[index] = live;
    connect(runner, &ProbeRunner::point, this, [this, index, probe](const ProbePoint& p) {
        // What a point measures is core's rule (seriesRole), the one kvbe-cli calibrate uses:
        // a tier load is a drive read, a host-to-GPU copy from pinned memory or a host memcpy.
        const SeriesRole role = seriesRole(p.series);
        if (isTierLoad(role) && p.y > 0) applyBandwidth(index, probe, p.y);
        // One read at queue depth 1 is the tier's fixed cost per hit: the fastest such median.
        if (isTierLoad(role) && p.meta.value("queue_depth", 0.0) == 1.0)
            if (const double us = p.meta.value("p50_us", 0.0); us > 0) {
                auto& run = m_liveRuns[index];
                run.latencyMs = std::min(run.latencyMs.value_or(us / 1e3), us / 1e3);
            }
        // Cold prefills: the GPU probe's kernel times, or the serving probe's cold TTFTs (which
        // carry the server's scheduling overhead; the fit of its own files takes that out).
        if ((role == SeriesRole::Prefill || role == SeriesRole::ColdTtft) && p.x > 0 && p.y > 0)
            applyPrefill(index, probe, p.x, p.y);
    });
    connect(runner, &ProbeRunner::progress, this, [this, index](double f, const QString&) {
        auto& run = m_liveRuns[index];
        run.fraction = f;
        if (run.best > 0) showProvisional(index);
    });
    connect(runner, &ProbeRunner::finished, this,
            [this, index, probe](ProbeRunner::Outcome o, const QString& message) {
                statusBar()->showMessage(tr("%1: %2").arg(probe, message), 8000);
                finishRun(index, o);
            });
}

void MainWindow::applyBandwidth(int run, const QString&, double gbps) {
    auto& r = m_liveRuns[run];
    // The best rate so far: the block size and queue depth a cache loader would choose.
    if (gbps <= r.best) return;
    r.best = gbps;
    showProvisional(run);
}

void MainWindow::showProvisional(int run) {
    const auto& r = m_liveRuns[run];
    m_breakeven->setProvisional({run,
                                 tr("%1 #%2: running, %3 % · %4 GB/s so far (provisional)")
                                     .arg(r.probe)
                                     .arg(run + 1)
                                     .arg(int(r.fraction * 100))
                                     .arg(r.best, 0, 'g', 4),
                                 r.best});
}

void MainWindow::finishRun(int run, ProbeRunner::Outcome outcome) {
    auto& r = m_liveRuns[run];
    m_breakeven->clearProvisional(run);
    if (!(r.best > 0)) return;
    if (outcome == ProbeRunner::Outcome::Succeeded) {
        addMeasuredTier(run, r.name);
        // An input changed: say which, and how to take it back.
        statusBar()->showMessage(
            tr("%1 finished and added the tier \"%2\" at %3 GB/s to the scenario (Edit ▸ Undo "
               "takes it out)")
                .arg(r.probe, QString::fromStdString(m_explorer.scenario().tiers.empty()
                                                         ? std::string()
                                                         : m_explorer.scenario().tiers.back().name))
                .arg(r.best, 0, 'f', 2),
            15000);
        m_probePanel->markTierRow(
            run, r.best,
            tr("The tier takes the marked row, %1 GB/s: the highest sustained rate of the run (the "
               "median over its measured windows), the setting a cache loader would choose. Select "
               "another row to use its rate instead.")
                .arg(r.best, 0, 'f', 2));
        return;
    }
    m_probePanel->offerKeep(run, tr("partial result (best %1 GB/s at %2 %) not used")
                                     .arg(r.best, 0, 'g', 4)
                                     .arg(int(r.fraction * 100)));
    r.name = tr("%1 #%2, %3 at %4 %")
                 .arg(r.probe)
                 .arg(run + 1)
                 .arg(outcome == ProbeRunner::Outcome::Stopped ? tr("stopped") : tr("failed"))
                 .arg(int(r.fraction * 100));
}

void MainWindow::addMeasuredTier(int run, const QString& name) {
    auto& r = m_liveRuns[run];
    r.inScenario = true;
    m_explorer.edit(withMeasuredTier(m_explorer.scenario(), m_explorer.presets(),
                                     name.toStdString(), r.probe, r.best, run, r.latencyMs),
                    tr("Measured tier %1").arg(name));
}

void MainWindow::applyPrefill(int run, const QString& probe, double tokens, double seconds) {
    // The model the probe ran: its points are that model's, and a run of another model starts
    // the measured points afresh.
    const QString model = m_liveRuns[run].model;
    if (model != m_streamedModel) m_streamedPrefill.clear();
    m_streamedModel = model;
    m_streamedPrefill.emplace_back(tokens, seconds);
    const QString label = tr("%1 #%2, measured").arg(probe).arg(run + 1);
    m_ttft->setMeasured(m_streamedPrefill, label, model);
    m_breakeven->setMeasuredPrefill(m_streamedPrefill, label, model);
}

bool MainWindow::openTrace(const QString& path) {
    m_tabs->setCurrentWidget(m_workload);
    return m_workload->openTrace(path);
}

} // namespace kvbe
