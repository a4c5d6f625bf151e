#include "kvbe/ui/workload/workload_view.h"

#include "kvbe/base/units.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/window/file_dialogs.h"
#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/workload_charts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <optional>

namespace kvbe {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// Capacity sliders move in quarter doublings: step s holds 2^((s − 4) / 4) GiB, so step 4 is
// 1 GiB, 40 is 512 GiB, 56 is 8 TiB and 68 is 64 TiB; step 0 leaves an offload tier out.
constexpr int kStepsPerDoubling = 4;
constexpr int kMaxStep = 68;

double stepBytes(int step) {
    return std::exp2(double(step - kStepsPerDoubling) / kStepsPerDoubling) * kGiB;
}
int bytesStep(double bytes) {
    if (!(bytes > 0)) return 0;
    if (!std::isfinite(bytes)) return kMaxStep;
    return std::clamp(int(std::lround(std::log2(bytes / kGiB) * kStepsPerDoubling)) +
                          kStepsPerDoubling,
                      1, kMaxStep);
}

} // namespace

WorkloadView::WorkloadView(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("workloadView"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(6, 6, 6, 0);
    v->setSpacing(4);

    // The file: open, progress with Cancel, errors.
    auto* top = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open trace…"), this);
    open->setObjectName(QStringLiteral("workloadOpen"));
    open->setToolTip(tr("Mooncake or Bailian JSON Lines, Azure or kvbe CSV, also .gz and .zst; or "
                        "drop the file on the window"));
    connect(open, &QPushButton::clicked, this, &WorkloadView::chooseTraceFile);
    m_fileLabel = new QLabel(tr("No trace open"), this);
    m_fileLabel->setObjectName(QStringLiteral("workloadFile"));
    m_fileLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("workloadProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setVisible(false);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("workloadCancel"));
    m_cancel->setVisible(false);
    connect(m_cancel, &QPushButton::clicked, this, &WorkloadView::cancelLoad);
    auto* exportChartButton = new QPushButton(tr("Export chart…"), this);
    exportChartButton->setObjectName(QStringLiteral("workloadExport"));
    connect(exportChartButton, &QPushButton::clicked, this, [this] { exportVisible(false); });
    auto* exportCsvButton = new QPushButton(tr("Export CSV…"), this);
    exportCsvButton->setObjectName(QStringLiteral("workloadExportCsv"));
    connect(exportCsvButton, &QPushButton::clicked, this, [this] { exportVisible(true); });
    top->addWidget(open);
    top->addWidget(m_fileLabel, 1);
    top->addWidget(m_progress);
    top->addWidget(m_cancel);
    top->addWidget(exportChartButton);
    top->addWidget(exportCsvButton);
    v->addLayout(top);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("workloadError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->setVisible(false);
    v->addWidget(m_error);

    m_summary =
        new QLabel(tr("Open a request trace to see what offload does for its traffic."), this);
    m_summary->setObjectName(QStringLiteral("workloadSummary"));
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = m_summary->font();
    f.setPointSizeF(f.pointSizeF() * 1.05);
    f.setBold(true);
    m_summary->setFont(f);
    v->addWidget(m_summary);

    auto* grid = new QGridLayout;
    grid->setHorizontalSpacing(8);
    grid->setVerticalSpacing(2);
    buildControls(grid);
    v->addLayout(grid);

    m_chartTabs = new QTabWidget(this);
    m_chartTabs->setObjectName(QStringLiteral("workloadCharts"));
    m_chartTabs->setDocumentMode(true);
    // The trace charts of the chart table, in its order.
    for (const QString& key : chartKeys(ChartSource::Trace)) {
        auto* c = qobject_cast<WorkloadChart*>(createChart(key).release());
        m_charts.push_back(c);
        c->setObjectName(key);
        // The Capacity chart's tab holds it with its target field and sentence.
        if (auto* capacity = qobject_cast<SloCapacityChart*>(c)) {
            m_capacity = new CapacityPanel(capacity, this);
            m_chartTabs->addTab(m_capacity, c->title());
        } else {
            m_chartTabs->addTab(c, c->title());
        }
    }
    v->addWidget(m_chartTabs, 1);

    m_progressTimer = new QTimer(this);
    m_progressTimer->setInterval(50);
    connect(m_progressTimer, &QTimer::timeout, this, [this] {
        if (m_loadFraction) m_progress->setValue(int(m_loadFraction->load() * 1000));
    });

    // The scenario (model, GPU, tiers) changes in the main window: the same trace again.
    connect(m_explorer, &Explorer::computed, this, [this] {
        syncTierRows();
        const auto& r = m_explorer->result();
        if (!r) return;
        // With a trace the replay's result redraws the charts (once); without one, the titles.
        if (m_trace)
            requestReplay();
        else
            for (auto* c : m_charts)
                c->setResults(r, {});
    });
    syncTierRows();
    if (const auto& r = m_explorer->result())
        for (auto* c : m_charts)
            c->setResults(r, {});
}

WorkloadView::~WorkloadView() {
    if (m_loadCancel) m_loadCancel->store(true);
    if (m_replayCancel) m_replayCancel->store(true);
    for (QThread* t : {m_loadThread, m_replayThread})
        if (t) {
            t->disconnect(this);
            t->wait();
            delete t;
        }
}

void WorkloadView::buildControls(QGridLayout* grid) {
    // Left: one capacity row per tier (filled by syncTierRows). Right: the replay's rules.
    m_tierGrid = new QGridLayout;
    m_tierGrid->setVerticalSpacing(2);
    m_tierGrid->setColumnStretch(1, 1);
    grid->addLayout(m_tierGrid, 0, 0, 4, 1);
    grid->setColumnStretch(0, 3);

    auto addCombo = [&](int row, int col, const QString& label, const char* name,
                        const QStringList& items, const QString& tip) {
        auto* l = new QLabel(label, this);
        auto* c = new QComboBox(this);
        c->setObjectName(QString::fromLatin1(name));
        c->addItems(items);
        c->setToolTip(tip);
        l->setBuddy(c);
        grid->addWidget(l, row, col);
        grid->addWidget(c, row, col + 1);
        return c;
    };
    m_admission =
        addCombo(0, 1, tr("Admission"), "workloadAdmission", {"always", "breakeven", "optimal"},
                 tr("always: load every hit; breakeven: only above the tier's p*; optimal: the "
                    "fastest cut per request. The summary and the thick TTFT curve use it."));
    m_admission->setCurrentText(QStringLiteral("optimal"));
    m_policy = addCombo(1, 1, tr("Eviction"), "workloadPolicy", {"lru", "s3fifo"},
                        tr("LRU, or S3-FIFO (frequency-aware); the capacity sweep needs LRU"));
    m_placement =
        addCombo(2, 1, tr("Placement"), "workloadPlacement", {"write-through", "cascade"},
                 tr("write-through: every tier stores every block; cascade: blocks move down "
                    "one tier when evicted. The capacity sweep needs write-through"));
    m_sweepTier = addCombo(3, 1, tr("Sweep"), "workloadSweepTier", {},
                           tr("The tier the capacity chart varies"));

    auto* l = new QLabel(tr("Prefill servers"), this);
    m_instances = new QSpinBox(this);
    m_instances->setObjectName(QStringLiteral("workloadInstances"));
    m_instances->setRange(0, 1024);
    m_instances->setSpecialValueText(tr("no queueing"));
    m_instances->setToolTip(
        tr("Servers fed first come first served; a load may start while its request waits, and "
           "loads in flight together share each tier's bandwidth"));
    grid->addWidget(l, 0, 3);
    grid->addWidget(m_instances, 0, 4);
    m_writeQueue = new QCheckBox(tr("Write queues"), this);
    m_writeQueue->setObjectName(QStringLiteral("workloadWriteQueue"));
    m_writeQueue->setToolTip(
        tr("Model each tier's write bandwidth: a block is readable once written, "
           "and a full queue drops its oldest writes"));
    grid->addWidget(m_writeQueue, 1, 3);
    m_sharedLink = new QCheckBox(tr("Shared links"), this);
    m_sharedLink->setObjectName(QStringLiteral("workloadSharedLink"));
    m_sharedLink->setToolTip(
        tr("Each tier's reads and writes share one link: loads go first and delay "
           "the queued writes (with write queues)"));
    grid->addWidget(m_sharedLink, 1, 4);
    m_timing = new QLabel(this);
    m_timing->setObjectName(QStringLiteral("workloadTiming"));
    m_timing->setWordWrap(true);
    QFont small = m_timing->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_timing->setFont(small);
    grid->addWidget(m_timing, 2, 3, 2, 2);
    grid->setColumnStretch(2, 1);
    grid->setColumnStretch(4, 1);

    auto changed = [this] {
        m_settings.policy = *parseEvictionPolicy(m_policy->currentText().toStdString());
        m_settings.placement = *parsePlacement(m_placement->currentText().toStdString());
        m_settings.admission = *parseAdmission(m_admission->currentText().toStdString());
        m_settings.instances = m_instances->value();
        m_settings.writeQueue = m_writeQueue->isChecked();
        m_settings.sharedLinks = m_sharedLink->isChecked();
        m_sharedLink->setEnabled(m_settings.writeQueue);
        m_settings.sweepTier = std::max(0, m_sweepTier->currentIndex());
        requestReplay();
    };
    for (auto* c : {m_policy, m_placement, m_admission, m_sweepTier})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    connect(m_instances, &QSpinBox::valueChanged, this, changed);
    connect(m_writeQueue, &QCheckBox::toggled, this, changed);
    connect(m_sharedLink, &QCheckBox::toggled, this, changed);
    m_sharedLink->setEnabled(false);
}

QString WorkloadView::tierValueText(double bytes) const {
    if (!(bytes > 0)) return tr("off");
    QString s = capacityText(bytes);
    if (m_trace && m_trace->summary.hasBlocks()) {
        if (const auto& r = m_explorer->result()) {
            const double blockBytes = traceBlockBytes(r->eval->cost, m_trace->summary.blockTokens);
            s += QStringLiteral(" (%1 tokens)")
                     .arg(QString::fromStdString(formatTokens(
                         std::floor(bytes / blockBytes) * double(m_trace->summary.blockTokens))));
        }
    }
    return s;
}

// One row per tier of the current scenario; rebuilt when the scenario's tiers change.
void WorkloadView::syncTierRows() {
    const auto& r = m_explorer->result();
    if (!r) return;
    QStringList names{tr("GPU (HBM for KV)")};
    for (const auto& t : scenarioSimTiers(*r->eval))
        names << QString::fromStdString(t.name);
    if (names == m_tierNames) {
        for (std::size_t i = 0; i < m_rows.size(); ++i) {
            double bytes = 0;
            if (i == 0) {
                auto g = defaultGpuCacheBytes(*r->eval);
                bytes = m_settings.gpuCacheBytes.value_or(g ? *g : 0.0);
            } else {
                bytes = i - 1 < m_settings.tierCapacityBytes.size()
                            ? m_settings.tierCapacityBytes[i - 1]
                            : defaultTierCapacity(i - 1);
            }
            m_rows[i].value->setText(tierValueText(bytes));
        }
        return;
    }
    m_tierNames = names;
    for (auto& row : m_rows) {
        delete row.name;
        delete row.slider;
        delete row.value;
    }
    m_rows.clear();
    // New tiers start at their defaults; tiers kept by position keep what was set.
    const std::size_t had = m_settings.tierCapacityBytes.size();
    m_settings.tierCapacityBytes.resize(std::size_t(names.size() - 1), 0);
    for (std::size_t i = had; i < m_settings.tierCapacityBytes.size(); ++i)
        m_settings.tierCapacityBytes[i] = defaultTierCapacity(i);
    for (int i = 0; i < names.size(); ++i) {
        TierRow row;
        row.name = new QLabel(names[i], this);
        row.slider = new QSlider(Qt::Horizontal, this);
        row.slider->setObjectName(QStringLiteral("workloadTier%1").arg(i));
        row.slider->setRange(i == 0 ? 1 : 0, kMaxStep);
        row.slider->setPageStep(kStepsPerDoubling);
        row.slider->setToolTip(
            i == 0 ? tr("HBM left for KV; the scenario's default is 90 % of HBM less the weights")
                   : tr("Capacity of %1; all the way left leaves it out").arg(names[i]));
        row.value = new QLabel(this);
        row.value->setObjectName(QStringLiteral("workloadTier%1Value").arg(i));
        row.value->setMinimumWidth(row.value->fontMetrics().horizontalAdvance(
            QStringLiteral("999.99 GB (99,999,999 tokens)")));
        m_tierGrid->addWidget(row.name, i, 0);
        m_tierGrid->addWidget(row.slider, i, 1);
        m_tierGrid->addWidget(row.value, i, 2);
        connect(row.slider, &QSlider::valueChanged, this,
                [this, i](int step) { onCapacityMoved(i, step); });
        // Replays too slow to follow the slider run when it is let go.
        connect(row.slider, &QSlider::sliderReleased, this, [this] {
            if (!live()) requestReplay();
        });
        m_rows.push_back(row);
    }
    {
        const QSignalBlocker block(m_sweepTier);
        const int keep = m_settings.sweepTier;
        m_sweepTier->clear();
        m_sweepTier->addItem(tr("GPU"));
        for (int i = 1; i < names.size(); ++i)
            m_sweepTier->addItem(names[i]);
        m_settings.sweepTier = std::clamp(keep, 0, int(names.size()) - 1);
        m_sweepTier->setCurrentIndex(m_settings.sweepTier);
    }
    syncControls();
}

void WorkloadView::syncControls() {
    const auto& r = m_explorer->result();
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
        double bytes = 0;
        if (i == 0) {
            std::optional<double> g;
            if (r)
                if (auto d = defaultGpuCacheBytes(*r->eval)) g = *d;
            bytes = m_settings.gpuCacheBytes ? *m_settings.gpuCacheBytes : g.value_or(0);
        } else {
            bytes = i - 1 < m_settings.tierCapacityBytes.size()
                        ? m_settings.tierCapacityBytes[i - 1]
                        : 0;
        }
        const QSignalBlocker block(m_rows[i].slider);
        m_rows[i].slider->setValue(bytesStep(bytes));
        m_rows[i].value->setText(tierValueText(bytes));
    }
    const QSignalBlocker b1(m_policy), b2(m_placement), b3(m_admission), b4(m_instances),
        b5(m_writeQueue), b6(m_sweepTier), b7(m_sharedLink);
    m_policy->setCurrentText(QString::fromStdString(std::string(toString(m_settings.policy))));
    m_placement->setCurrentText(
        QString::fromStdString(std::string(toString(m_settings.placement))));
    m_admission->setCurrentText(
        QString::fromStdString(std::string(toString(m_settings.admission))));
    m_instances->setValue(m_settings.instances);
    m_writeQueue->setChecked(m_settings.writeQueue);
    m_sharedLink->setChecked(m_settings.sharedLinks);
    m_sharedLink->setEnabled(m_settings.writeQueue);
    m_sweepTier->setCurrentIndex(m_settings.sweepTier);
}

void WorkloadView::onCapacityMoved(int row, int step) {
    const double bytes = row > 0 && step == 0 ? 0.0 : stepBytes(step);
    if (row == 0)
        m_settings.gpuCacheBytes = bytes;
    else
        m_settings.tierCapacityBytes[std::size_t(row - 1)] = bytes;
    m_rows[std::size_t(row)].value->setText(tierValueText(bytes));
    // Fast replays follow the slider; slow ones wait for its release (keys and clicks at once).
    if (live() || !m_rows[std::size_t(row)].slider->isSliderDown()) requestReplay();
}

void WorkloadView::setSettings(const WorkloadSettings& s) {
    m_settings = s;
    m_settings.tierCapacityBytes.resize(std::size_t(std::max<qsizetype>(0, m_tierNames.size() - 1)),
                                        0);
    for (std::size_t i = s.tierCapacityBytes.size(); i < m_settings.tierCapacityBytes.size(); ++i)
        m_settings.tierCapacityBytes[i] = defaultTierCapacity(i);
    syncControls();
    requestReplay();
}

// ---- reading a trace

void WorkloadView::chooseTraceFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a request trace"), QString(),
                                                      fileDialogFilter({FileKind::Trace}));
    if (!path.isEmpty()) openTrace(path);
}

bool WorkloadView::openTrace(const QString& path) {
    if (m_loadThread) return false;
    m_error->setVisible(false);
    m_loadCancel = std::make_shared<std::atomic<bool>>(false);
    m_loadFraction = std::make_shared<std::atomic<double>>(0.0);
    m_progress->setValue(0);
    m_progress->setFormat(tr("Reading %1: %p%").arg(QFileInfo(path).fileName()));
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    m_progressTimer->start();
    struct Outcome {
        std::optional<Trace> trace;
        QString error;
        bool cancelled = false;
    };
    auto out = std::make_shared<Outcome>();
    auto cancel = m_loadCancel;
    auto fraction = m_loadFraction;
    m_loadThread = QThread::create([path, out, cancel, fraction] {
        TraceReadOptions o;
        o.progress = [cancel, fraction](double f) {
            fraction->store(f);
            return !cancel->load();
        };
        auto t = loadTrace(path.toStdString(), o);
        if (!t)
            out->error = QString::fromStdString(t.message());
        else if (t->summary.cancelled)
            out->cancelled = true;
        else
            out->trace = std::move(*t);
    });
    connect(m_loadThread, &QThread::finished, this, [this, out, cancel, path] {
        m_loadThread->deleteLater();
        m_loadThread = nullptr;
        m_progressTimer->stop();
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
        // A cancel wins even over a read that had just finished: nothing of it is kept.
        if (cancel->load() || out->cancelled) {
            emit loadCancelled();
            return;
        }
        if (!out->error.isEmpty()) {
            showError(out->error);
            emit loadFailed(out->error);
            return;
        }
        m_trace = std::make_shared<const Trace>(std::move(*out->trace));
        m_file = path;
        m_result.reset();
        const auto& s = m_trace->summary;
        QString text = tr("%1: %2 requests, %3")
                           .arg(QFileInfo(path).fileName())
                           .arg(m_trace->size())
                           .arg(QString::fromStdString(std::string(toString(s.format))));
        if (s.hasBlocks())
            text += tr(", %1-token blocks, %2 distinct")
                        .arg(s.blockTokens)
                        .arg(m_trace->distinctBlocks);
        else
            text += tr(", no block ids (lengths and arrivals only)");
        if (s.skippedLines) text += tr(", %1 bad lines skipped").arg(s.skippedLines);
        m_fileLabel->setText(text);
        m_fileLabel->setToolTip(path);
        syncControls();
        emit traceLoaded(path);
        requestReplay();
    });
    m_loadThread->start();
    return true;
}

void WorkloadView::cancelLoad() {
    if (m_loadCancel) m_loadCancel->store(true);
}

void WorkloadView::showError(const QString& message) {
    m_error->setText(message);
    m_error->setVisible(true);
}

// ---- replays

void WorkloadView::requestReplay() {
    if (!m_trace || !m_explorer->result()) return;
    ++m_generation;
    if (m_replayThread) {
        // The running replay is out of date: stop it, and run the latest when it returns.
        m_replayCancel->store(true);
        m_replayPending = true;
        return;
    }
    startReplay();
}

void WorkloadView::startReplay() {
    m_replayPending = false;
    m_replayCancel = std::make_shared<std::atomic<bool>>(false);
    auto cancel = m_replayCancel;
    auto out = std::make_shared<WorkloadResult>();
    const quint64 generation = m_generation;
    auto trace = m_trace;
    auto eval = m_explorer->result()->eval;
    const WorkloadSettings settings = m_settings;
    const QString file = m_file;
    m_replayThread = QThread::create([out, trace, file, eval, settings, cancel] {
        *out = computeWorkload(trace, file, eval, settings, cancel.get());
    });
    connect(m_replayThread, &QThread::finished, this, [this, out, cancel, generation] {
        m_replayThread->deleteLater();
        m_replayThread = nullptr;
        if (!cancel->load() && generation == m_generation) apply(out);
        if (m_replayPending) startReplay();
    });
    m_replayThread->start();
}

void WorkloadView::apply(WorkloadPtr w) {
    m_result = std::move(w);
    m_lastSeconds = m_result->replaySeconds + m_result->sweepSeconds;
    m_summary->setText(m_result->summary);
    if (!m_result->error.isEmpty())
        showError(m_result->error);
    else
        m_error->setVisible(false);
    if (m_result->replay)
        m_timing->setText(
            tr("Replay %1 ms + sweep %2 ms (%3 M lookups/s): %4")
                .arg(m_result->replaySeconds * 1e3, 0, 'f', 0)
                .arg(m_result->sweepSeconds * 1e3, 0, 'f', 0)
                .arg(m_result->replaySeconds > 0
                         ? double(m_result->replay->lookups) / m_result->replaySeconds / 1e6
                         : 0.0,
                     0, 'f', 1)
                .arg(live() ? tr("sliders re-run live") : tr("sliders re-run on release")));
    else
        m_timing->clear();
    const auto& r = m_explorer->result();
    for (auto* c : m_charts) {
        if (r && c->current() != r)
            c->setResultAndWorkload(r, m_result);
        else
            c->setWorkload(m_result);
    }
    if (m_capacity) m_capacity->setWorkload(m_result);
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        m_rows[i].value->setText(tierValueText(i == 0 ? m_result->config.gpuCapacityBytes
                                                      : (i - 1 < m_settings.tierCapacityBytes.size()
                                                             ? m_settings.tierCapacityBytes[i - 1]
                                                             : 0.0)));
    emit replayed();
}

WorkloadChart* WorkloadView::visibleChart() const {
    const int i = m_chartTabs->currentIndex();
    return i >= 0 && std::size_t(i) < m_charts.size() ? m_charts[std::size_t(i)] : nullptr;
}

void WorkloadView::exportVisible(bool csv) {
    auto* c = visibleChart();
    if (!c || !c->current()) return;
    const QString path = QFileDialog::getSaveFileName(
        this, csv ? tr("Export chart data") : tr("Export chart"),
        c->key() + (csv ? QStringLiteral(".csv") : QStringLiteral(".png")),
        csv ? tr("CSV (*.csv)") : tr("Images (*.png *.svg *.pdf)"));
    if (path.isEmpty()) return;
    const Status st = csv ? exportCsv(*c, path) : exportChart(*c, path, QSize(1600, 900));
    if (!st) showError(QString::fromStdString(st.message()));
}

} // namespace kvbe
