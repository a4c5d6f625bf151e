#include "kvbe/ui/workload/workload_view.h"

#include "kvbe/ui/workload/background_job.h"

#include "kvbe/base/units.h"
#include "kvbe/files/trace_format.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/link_chart.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/widgets/file_dialogs.h"
#include "kvbe/ui/widgets/wheel_guard.h"
#include "kvbe/ui/widgets/wrap_box.h"
#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/live_section.h"
#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/price_fields.h"

#include <QBoxLayout>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QThread>
#include <QTimer>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <optional>

namespace kvbe {

namespace {

// A rule's combo box: as wide as its longest item ("Host DRAM (PCIe 5.0)") where the tab has
// the room, as narrow as a short name's where it has not, so that the rules still fit in rows on
// a narrow tab; the list opens at full width.
class RuleCombo : public QComboBox {
  public:
    explicit RuleCombo(QWidget* parent) : QComboBox(parent) {
        setSizeAdjustPolicy(QComboBox::AdjustToContents);
    }
    QSize minimumSizeHint() const override {
        QSize s = QComboBox::minimumSizeHint();
        int longest = 0;
        for (int i = 0; i < count(); ++i)
            longest = std::max(longest, fontMetrics().horizontalAdvance(itemText(i)));
        const int shortName = fontMetrics().horizontalAdvance(QLatin1Char('x')) * 8;
        if (longest > shortName) s.rwidth() -= longest - shortName;
        return s;
    }
};

} // namespace

WorkloadView::WorkloadView(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("workloadView"));
    // The tab's contents scroll where a short screen or an unfolded dock leaves them less height
    // than the charts need (kMinChartHeight each), rather than squeezing the charts to a strip
    // and the Capacity sentence onto its chart's axis.
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("workloadScroll"));
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidgetResizable(true);
    auto* page = new QWidget(scroll);
    page->setObjectName(QStringLiteral("workloadPage"));
    auto* v = new QVBoxLayout(page);
    v->setContentsMargins(6, 6, 6, 0);
    v->setSpacing(4);

    // The file: open, progress with Cancel, errors.
    auto* top = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open trace…"), this);
    open->setObjectName(QStringLiteral("workloadOpen"));
    open->setToolTip(tr("%1, also .gz and .zst; or drop the file on the window")
                         .arg(QString::fromStdString(traceFormatsSentence())));
    connect(open, &QPushButton::clicked, this, &WorkloadView::chooseTraceFile);
    m_fileLabel = new QLabel(tr("No trace open"), this);
    m_fileLabel->setObjectName(QStringLiteral("workloadFile"));
    m_fileLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long file name and description wrap rather than widen the window.
    m_fileLabel->setWordWrap(true);
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
    m_gpuAdvice = new QLabel(this);
    m_gpuAdvice->setObjectName(QStringLiteral("workloadGpuAdvice"));
    m_gpuAdvice->setTextFormat(Qt::RichText);
    m_gpuAdvice->setWordWrap(true);
    m_gpuAdvice->setVisible(false);
    connect(m_gpuAdvice, &QLabel::linkActivated, this, [this](const QString& link) {
        const int gpus = link.section(QLatin1Char(':'), 1).toInt();
        if (!link.startsWith(QLatin1String("tp:")) || gpus < 1) return;
        Scenario s = m_explorer->scenario();
        s.tensorParallel = gpus;
        m_explorer->edit(s, tr("Tensor parallel %1").arg(gpus));
    });
    v->addWidget(m_gpuAdvice);

    v->addWidget(buildControls());

    m_chartTabs = new QTabWidget(this);
    m_chartTabs->setObjectName(QStringLiteral("workloadCharts"));
    m_chartTabs->setDocumentMode(true);
    // The trace charts of the chart table, in its order.
    TtftLinksTab* ttftTab = nullptr;
    for (const QString& key : chartKeys(ChartSource::Trace)) {
        auto* c = qobject_cast<WorkloadChart*>(createChart(key).release());
        m_charts.push_back(c);
        c->setObjectName(key);
        c->setMinimumHeight(kMinChartHeight);
        // The Capacity chart's tab holds it with its target field and sentence.
        if (auto* capacity = qobject_cast<SloCapacityChart*>(c)) {
            m_capacity = new CapacityPanel(capacity, this);
            m_chartTabs->addTab(m_capacity, c->title());
        } else if (auto* plan = qobject_cast<PlanChart*>(c)) {
            auto* section = new PlanSection(plan, &m_explorer->presets(), this);
            section->setUndoStack(m_explorer->undoStack());
            section->addToAnswer(new PriceFields(m_explorer, section));
            m_chartTabs->addTab(section, c->title());
        } else if (auto* live = qobject_cast<LiveChart*>(c)) {
            auto* section = new LiveSection(live, this);
            connect(section, &LiveSection::changed, this, &WorkloadView::setLiveReplay);
            m_chartTabs->addTab(section, c->title());
        } else if (qobject_cast<TtftDistributionChart*>(c)) {
            ttftTab = new TtftLinksTab(c, this);
            m_chartTabs->addTab(ttftTab, c->title());
        } else if (qobject_cast<LinkUseChart*>(c) && ttftTab) {
            m_saturation = ttftTab->addLinks(c);
        } else {
            m_chartTabs->addTab(c, c->title());
        }
    }
    // The Plan says where it counts servers otherwise than the Capacity tab.
    if (auto* plan = findChild<PlanSection*>(); plan && m_capacity) {
        plan->setCapacityTarget(m_capacity->target());
        connect(m_capacity, &CapacityPanel::targetChanged, plan,
                [this, plan] { plan->setCapacityTarget(m_capacity->target()); });
    }
    // Its pages' wrapped text (the Capacity sentence) counts in the height it asks of the tab:
    // without, a three-line sentence was squeezed onto its chart's axis.
    QSizePolicy tabsPolicy = m_chartTabs->sizePolicy();
    tabsPolicy.setHeightForWidth(true);
    m_chartTabs->setSizePolicy(tabsPolicy);
    v->addWidget(m_chartTabs, 1);
    scroll->setWidget(page);
    outer->addWidget(scroll);
    // The wheel scrolls the tab, not the rules and sliders it passes over.
    guardWheel(page);

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

QWidget* WorkloadView::buildControls() {
    // Left: one capacity row per tier (filled by syncTierRows). Right, or under them where the
    // tab is narrow: the replay's rules (layRules).
    auto* tiers = new QWidget(this);
    m_tierGrid = new QGridLayout(tiers);
    m_tierGrid->setContentsMargins(0, 0, 0, 0);
    m_tierGrid->setHorizontalSpacing(8);
    m_tierGrid->setVerticalSpacing(2);
    m_tierGrid->setColumnStretch(1, 1);
    auto* rules = new QWidget(this);
    m_rulesGrid = new QGridLayout(rules);
    m_rulesGrid->setContentsMargins(0, 0, 0, 0);
    m_rulesGrid->setHorizontalSpacing(8);
    m_rulesGrid->setVerticalSpacing(2);

    auto addCombo = [&](const QString& label, const char* name, const QStringList& items,
                        const QString& tip) {
        auto* l = new QLabel(label, this);
        auto* c = new RuleCombo(this);
        c->setObjectName(QString::fromLatin1(name));
        c->addItems(items);
        c->setToolTip(tip);
        l->setBuddy(c);
        m_ruleCells.push_back({l, c});
        return c;
    };
    m_admission =
        addCombo(tr("Admission"), "workloadAdmission", {"always", "breakeven", "optimal"},
                 tr("always: load every hit; breakeven: only above the tier's p*; optimal: the "
                    "fastest cut per request. The summary and the thick TTFT curve use it."));
    m_admission->setCurrentText(QStringLiteral("optimal"));
    m_policy = addCombo(tr("Eviction"), "workloadPolicy", {"lru", "s3fifo"},
                        tr("LRU, or S3-FIFO (frequency-aware); the capacity sweep needs LRU"));
    m_placement =
        addCombo(tr("Placement"), "workloadPlacement", {"write-through", "cascade"},
                 tr("write-through: every tier stores every block; cascade: blocks move down "
                    "one tier when evicted. The capacity sweep needs write-through"));
    m_sweepTier =
        addCombo(tr("Sweep"), "workloadSweepTier", {}, tr("The tier the capacity chart varies"));

    auto* l = new QLabel(tr("Prefill servers"), this);
    m_instances = new QSpinBox(this);
    m_instances->setObjectName(QStringLiteral("workloadInstances"));
    m_instances->setRange(0, 1024);
    m_instances->setSpecialValueText(tr("no queueing"));
    m_instances->setToolTip(
        tr("Prefill servers, each first come first served; a load may start while its request "
           "waits, each link serves the loads in arrival order, and optimal admission decides "
           "each request from the wait and the links' backlog at its arrival. Above one, a "
           "fleet: each server has its own GPU cache, behind the router"));
    l->setBuddy(m_instances);
    m_ruleCells.push_back({l, m_instances});
    // The fleet's router and its servers per node, in one cell.
    m_router = new RuleCombo(this);
    m_router->setObjectName(QStringLiteral("workloadRouter"));
    for (const auto name : routerNames())
        m_router->addItem(QString::fromLatin1(name.data(), qsizetype(name.size())));
    m_router->setToolTip(
        tr("What sends each request to a server of the fleet, as its project ships it "
           "(docs/routers.md): round-robin, random, least-loaded, session affinity, SGLang's "
           "cache-aware router, llm-d's precise prefix scorer, Dynamo's KV router"));
    m_nodeServers = new QSpinBox(this);
    m_nodeServers->setObjectName(QStringLiteral("workloadNodeServers"));
    m_nodeServers->setRange(1, 64);
    m_nodeServers->setPrefix(tr("per node "));
    m_nodeServers->setToolTip(
        tr("Servers per node: a tier on each node (not pooled) is shared by its servers"));
    auto* routerLabel = new QLabel(tr("Router"), this);
    routerLabel->setBuddy(m_router);
    auto* routerCell = new QWidget(this);
    auto* routerRow = new QHBoxLayout(routerCell);
    routerRow->setContentsMargins(0, 0, 0, 0);
    routerRow->setSpacing(4);
    routerRow->addWidget(m_router, 1);
    routerRow->addWidget(m_nodeServers);
    m_writeQueue = new QCheckBox(tr("Write queues"), this);
    m_writeQueue->setObjectName(QStringLiteral("workloadWriteQueue"));
    m_writeQueue->setToolTip(
        tr("Model each tier's write bandwidth: a block is readable once written, "
           "and a full queue drops its oldest writes"));
    m_sharedLink = new QCheckBox(tr("Shared links"), this);
    m_sharedLink->setObjectName(QStringLiteral("workloadSharedLink"));
    m_sharedLink->setToolTip(
        tr("Each tier's reads and writes share one link: loads go first and delay "
           "the queued writes (with write queues)"));
    m_storeAfter = new QSpinBox(this);
    m_storeAfter->setObjectName(QStringLiteral("workloadStoreAfter"));
    m_storeAfter->setRange(1, kMaxStoreAfter);
    m_storeAfter->setToolTip(
        tr("Store admission (kvbe-cli --store-after K): the offload tiers take a block the K-th "
           "time a request contains it (1: every block). Fewer writes, fewer hits; the capacity "
           "sweep needs 1"));
    auto* offload = new QLabel(tr("Store after"), this);
    offload->setBuddy(m_storeAfter);
    // The shared links and store admission in one cell beside the write queues: a seventh cell
    // would take a row of its own on a narrow tab, and the window must fit a 1366x768 screen.
    auto* queueCell = new QWidget(this);
    auto* queueRow = new QHBoxLayout(queueCell);
    queueRow->setContentsMargins(0, 0, 0, 0);
    queueRow->addWidget(m_sharedLink);
    queueRow->setSpacing(4);
    queueRow->addWidget(offload);
    queueRow->addWidget(m_storeAfter, 1);
    m_ruleCells.push_back({m_writeQueue, queueCell});
    m_ruleCells.push_back({routerLabel, routerCell});
    m_timing = new QLabel(this);
    m_timing->setObjectName(QStringLiteral("workloadTiming"));
    // It never widens the tab: it wraps onto a second line where its cell is narrow (the tab
    // scrolls where that leaves the charts too little height).
    m_timing->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_timing->setWordWrap(true);
    QFont small = m_timing->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_timing->setFont(small);
    layRules(true);

    auto changed = [this] {
        m_settings.policy = *parseEvictionPolicy(m_policy->currentText().toStdString());
        m_settings.placement = *parsePlacement(m_placement->currentText().toStdString());
        m_settings.admission = *parseAdmission(m_admission->currentText().toStdString());
        m_settings.instances = m_instances->value();
        m_settings.router = m_router->currentText().toStdString();
        m_settings.nodeServers = m_nodeServers->value();
        m_router->setEnabled(m_settings.instances > 1);
        m_nodeServers->setEnabled(m_settings.instances > 1);
        for (auto& row : m_rows)
            if (row.pooled) row.pooled->setEnabled(m_settings.instances > 1);
        m_settings.storeAfter = m_storeAfter->value();
        m_settings.writeQueue = m_writeQueue->isChecked();
        m_settings.sharedLinks = m_sharedLink->isChecked();
        m_sharedLink->setEnabled(m_settings.writeQueue);
        m_settings.sweepTier = std::max(0, m_sweepTier->currentIndex());
        requestReplay();
    };
    m_router->setEnabled(false);
    m_nodeServers->setEnabled(false);
    for (auto* c : {m_policy, m_placement, m_admission, m_sweepTier, m_router})
        connect(c, &QComboBox::currentIndexChanged, this, changed);
    for (auto* spin : {m_instances, m_storeAfter, m_nodeServers})
        connect(spin, &QSpinBox::valueChanged, this, changed);
    connect(m_writeQueue, &QCheckBox::toggled, this, changed);
    connect(m_sharedLink, &QCheckBox::toggled, this, changed);
    m_sharedLink->setEnabled(false);
    auto* box = new WrapBox(tiers, rules, this);
    box->setObjectName(QStringLiteral("workloadControls"));
    connect(box, &WrapBox::sideBySideChanged, this, &WorkloadView::layRules);
    return box;
}

void WorkloadView::layRules(bool besideTiers) {
    for (const auto& [label, field] : m_ruleCells) {
        m_rulesGrid->removeWidget(label);
        m_rulesGrid->removeWidget(field);
    }
    m_rulesGrid->removeWidget(m_timing);
    for (int c = 0; c < m_rulesGrid->columnCount(); ++c)
        m_rulesGrid->setColumnStretch(c, 0);
    // Beside the tiers a column of four rows with the servers, queues and store admission at its
    // right; under them, where the tab is narrow, rows of two, so that each combo box has the
    // width for its whole choice ("Host DRAM (PCIe 5.0)"; the tab scrolls for the extra row).
    const int perRow = besideTiers ? 4 : 2;
    const int cells = int(m_ruleCells.size());
    for (int i = 0; i < cells; ++i) {
        const int row = besideTiers ? (i < perRow ? i : i - perRow) : i / perRow;
        const int col = besideTiers ? (i < perRow ? 0 : 2) : 2 * (i % perRow);
        m_rulesGrid->addWidget(m_ruleCells[std::size_t(i)].first, row, col);
        m_rulesGrid->addWidget(m_ruleCells[std::size_t(i)].second, row, col + 1);
        m_rulesGrid->setColumnStretch(col + 1, 1);
    }
    if (besideTiers)
        m_rulesGrid->addWidget(m_timing, cells - perRow, 2, 2 * perRow - cells, 2);
    else
        m_rulesGrid->addWidget(m_timing, (cells + perRow - 1) / perRow, 0, 1, 2 * perRow);
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

void WorkloadView::setLiveReplay(const QString& dir, const QString& engine, bool asRouted) {
    m_settings.liveDir = dir.toStdString();
    m_settings.engine = engine.toStdString();
    m_settings.liveAsRouted = asRouted;
    if (auto* live = findChild<LiveSection*>()) live->showSettings(dir, engine, asRouted);
    requestReplay();
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
        yieldToTheWindow();
        *out = computeWorkload(trace, file, eval, settings, cancel.get());
    });
    connect(m_replayThread, &QThread::finished, this, [this, out, cancel, generation] {
        deleteWhenReturned(m_replayThread);
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
    if (m_saturation) {
        m_saturation->setText(m_result->saturation);
        m_saturation->setVisible(!m_result->saturation.isEmpty());
    }
    if (!m_result->error.isEmpty())
        showError(m_result->error);
    else
        m_error->setVisible(false);
    if (m_result->replay) {
        m_timing->setText(
            tr("Replay %1 ms + sweep %2 ms (%3 M lookups/s): %4")
                .arg(m_result->replaySeconds * 1e3, 0, 'f', 0)
                .arg(m_result->sweepSeconds * 1e3, 0, 'f', 0)
                .arg(m_result->replaySeconds > 0
                         ? double(m_result->replay->lookups) / m_result->replaySeconds / 1e6
                         : 0.0,
                     0, 'f', 1)
                .arg(live() ? tr("sliders re-run live") : tr("sliders re-run on release")));
        m_timing->setToolTip(m_timing->text());
    } else
        m_timing->clear();
    // The charts take the result one at a time, each in its own turn of the event loop, the one
    // on screen first: together they hold the UI thread for tens of milliseconds on a large trace
    // (issue 41: no frame over 100 ms), one of them for about ten.
    m_applySteps.clear();
    std::vector<WorkloadChart*> order = m_charts;
    std::stable_partition(order.begin(), order.end(),
                          [shown = visibleChart()](WorkloadChart* c) { return c == shown; });
    for (auto* c : order)
        m_applySteps.push_back([this, c] {
            const auto& r = m_explorer->result();
            if (r && c->current() != r)
                c->setResultAndWorkload(r, m_result);
            else
                c->setWorkload(m_result);
        });
    m_applySteps.push_back([this] { finishApply(); });
    applyStep(++m_applyGeneration);
}

void WorkloadView::applyStep(quint64 generation) {
    // A newer result's steps replace these.
    if (generation != m_applyGeneration || m_applySteps.empty()) return;
    auto step = std::move(m_applySteps.front());
    m_applySteps.pop_front();
    step();
    if (!m_applySteps.empty())
        QTimer::singleShot(0, this, [this, generation] { applyStep(generation); });
}

void WorkloadView::finishApply() {
    if (m_capacity) m_capacity->setWorkload(m_result);
    if (auto* plan = findChild<PlanSection*>()) plan->setWorkload(m_result);
    if (auto* live = findChild<LiveSection*>()) live->setWorkload(m_result);
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        showRow(i);
    // Where the weights fill the GPU: the tensor-parallel sizes that hold them, a click away.
    QStringList sizes;
    for (const auto& f : m_result->tensorParallelFits)
        sizes << QStringLiteral("<a href=\"tp:%1\">%1 GPUs</a> (%2 for KV)")
                     .arg(f.gpus)
                     .arg(QString::fromStdString(formatBytes(f.kvBytes)));
    m_gpuAdvice->setText(tr("Tensor parallel: %1").arg(sizes.join(QStringLiteral(" · "))));
    m_gpuAdvice->setVisible(m_result->gpuCacheMissing && !sizes.isEmpty());
    emit replayed();
}

WorkloadChart* WorkloadView::visibleChart() const {
    // The first chart the current tab is or holds (the TTFT tab: the distribution, above the
    // links).
    const QWidget* page = m_chartTabs->currentWidget();
    for (auto* c : m_charts)
        if (page && (c == page || page->isAncestorOf(c))) return c;
    return nullptr;
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
