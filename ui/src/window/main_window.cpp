#include "kvbe/ui/window/main_window.h"

#include "kvbe/calibration/published.h"

#include "kvbe/base/json_text.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/compare/pin_table.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/fleet/measured_import.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/widgets/file_dialogs.h"
#include "kvbe/ui/widgets/fitting_tabs.h"
#include "kvbe/ui/widgets/wheel_guard.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QListView>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPushButton>
#include <QScreen>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include <algorithm>

namespace kvbe {

namespace {
// The scroll area around the scenario panel scrolls only vertically, so it is as wide as the
// panel wants to be: set now, and again whenever the panel's layout asks for more room (the
// style's fonts arrive when it is shown; a tier table row grows).
class PanelWidthFollower : public QObject {
  public:
    PanelWidthFollower(QScrollArea* scroll, QWidget* panel) : QObject(scroll), m_scroll(scroll) {
        panel->installEventFilter(this);
        follow(panel);
    }
    bool eventFilter(QObject* watched, QEvent* e) override {
        if (e->type() == QEvent::LayoutRequest) follow(static_cast<QWidget*>(watched));
        return false;
    }

  private:
    void follow(QWidget* panel) { m_scroll->setMinimumWidth(panel->sizeHint().width() + 24); }
    QScrollArea* m_scroll;
};

// The platform's key bindings followed by the others not among them.
QList<QKeySequence> oneEach(QList<QKeySequence> keys, const QList<QKeySequence>& more) {
    for (const QKeySequence& k : more)
        if (!keys.contains(k)) keys.push_back(k);
    return keys;
}

template <class T> T* chartOf(const std::vector<ChartView*>& charts) {
    for (ChartView* c : charts)
        if (auto* t = qobject_cast<T*>(c)) return t;
    return nullptr;
}
} // namespace

MainWindow::MainWindow(Presets presets, QWidget* parent)
    : QMainWindow(parent), m_explorer(std::move(presets)), m_ask(askWithMessageBox) {
    setWindowTitle(tr("kvbe: KV offload break-even explorer[*]"));
    setAcceptDrops(true);
    // A child like the widgets, so that it is found the same way (findChild, by object name).
    m_explorer.setParent(this);
    m_explorer.setObjectName(QStringLiteral("explorer"));

    auto* tabs = new FittingTabs(this);
    m_tabs = tabs;
    m_tabs->setObjectName(QStringLiteral("chartTabs"));
    // Where the full titles do not fit (2560×1600 at ×2), the chart table's short ones, so that
    // every tab stays in view.
    const auto shortTitle = [](const QString& key) {
        const ChartKind* k = findChartKind(key);
        return k && k->shortTitle ? QCoreApplication::translate("kvbe::ChartView", k->shortTitle)
                                  : QString();
    };
    m_tabs->setDocumentMode(true);
    // The scenario charts of the chart table, in its order; the window talks to the charts that
    // probe runs draw on through their own types.
    for (const QString& key : chartKeys(ChartSource::Scenario)) {
        ChartView* c = createChart(key).release();
        m_charts.push_back(c);
        c->setObjectName(c->key() + QStringLiteral("Chart"));
        connect(c, &ChartView::hovered, this, [this](const QString& text) { showHover(text); });
        auto* page = new QWidget;
        if (QWidget* controls = c->createControls(page)) {
            auto* v = new QVBoxLayout(page);
            v->setContentsMargins(0, 4, 0, 0);
            v->addWidget(controls);
            m_chartControls.push_back(controls);
            v->addWidget(c, 1);
            tabs->addTab(page, c->title(), shortTitle(key));
        } else {
            delete page;
            tabs->addTab(c, c->title(), shortTitle(key));
        }
    }
    m_breakeven = chartOf<BreakevenChart>(m_charts);
    m_fraction = chartOf<FractionChart>(m_charts);
    m_ttft = chartOf<TtftChart>(m_charts);
    // After the charts: tab indices below m_charts.size() stay the charts'.
    m_workload = new WorkloadView(&m_explorer);
    tabs->addTab(m_workload, tr("Workload"));
    // The pins side by side: B* at chosen lengths and p* per tier, with differences.
    m_pinTable = new PinTableView(&m_explorer);
    m_pinTable->setObjectName(QStringLiteral("pinTable"));
    tabs->addTab(m_pinTable, tr("Pin table"));
    connect(m_pinTable, &PinTableView::exportRequested, this, &MainWindow::exportPinTable);
    setCentralWidget(m_tabs);
    m_stale.assign(m_charts.size(), true);

    m_panel = new ScenarioPanel(&m_explorer);
    m_panel->setObjectName(QStringLiteral("scenarioPanel"));
    // The wheel scrolls the panel; an input takes it only when focused (wheel_guard.h).
    guardWheel(m_panel);
    auto* scroll = new QScrollArea;
    scroll->setWidget(m_panel);
    scroll->setWidgetResizable(true);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    new PanelWidthFollower(scroll, m_panel);
    m_panelDock = new QDockWidget(tr("Scenario"), this);
    m_panelDock->setObjectName(QStringLiteral("scenarioDock"));
    m_panelDock->setWidget(scroll);
    addDockWidget(Qt::LeftDockWidgetArea, m_panelDock);

    m_pinView = new QListView;
    m_pinView->setObjectName(QStringLiteral("pinView"));
    m_pinView->setModel(m_explorer.pins());
    m_pinView->setToolTip(
        tr("Pinned scenarios are drawn dashed under the current one; double-click to rename"));
    auto* pinPage = new QWidget;
    auto* pv = new QVBoxLayout(pinPage);
    pv->setContentsMargins(4, 4, 4, 4);
    pv->addWidget(m_pinView);
    auto* pinButtons = new QHBoxLayout;
    auto* pinButton = new QPushButton(tr("Pin current…"), pinPage);
    auto* unpinButton = new QPushButton(tr("Unpin"), pinPage);
    auto* tableButton = new QPushButton(tr("Table"), pinPage);
    tableButton->setObjectName(QStringLiteral("pinTableButton"));
    tableButton->setToolTip(tr("The pins side by side: B* and p* with their differences"));
    pinButtons->addWidget(pinButton);
    pinButtons->addWidget(unpinButton);
    pinButtons->addWidget(tableButton);
    pv->addLayout(pinButtons);
    m_pinDock = new QDockWidget(tr("Compare"), this);
    m_pinDock->setObjectName(QStringLiteral("compareDock"));
    m_pinDock->setWidget(pinPage);
    addDockWidget(Qt::LeftDockWidgetArea, m_pinDock);
    connect(pinButton, &QPushButton::clicked, this, &MainWindow::askPin);
    connect(tableButton, &QPushButton::clicked, this,
            [this] { m_tabs->setCurrentWidget(m_pinTable); });
    connect(unpinButton, &QPushButton::clicked, this, [this] {
        const auto idx = m_pinView->currentIndex();
        m_explorer.pins()->unpin(idx.isValid() ? idx.row() : m_explorer.pins()->rowCount() - 1);
    });

    // Made now, not by its first message: a status bar that appears later moves the layout.
    statusBar();
    buildActions();
    buildMeasured();
    buildDockTitles();
    setAsk(nullptr);
    connect(&m_explorer, &Explorer::computed, this, [this] {
        refreshCharts(false);
        updateTitle();
    });
    connect(&m_explorer, &Explorer::scenarioChanged, this, &MainWindow::updateTitle);
    connect(&m_explorer, &Explorer::failed, this,
            [this](const QString& m) { statusBar()->showMessage(m); });
    // Pins change by a click, not per frame: every chart follows at once.
    connect(m_explorer.pins(), &PinModel::pinsChanged, this, [this] { refreshCharts(true); });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int i) {
        if (i >= 0 && i < int(m_stale.size()) && m_stale[size_t(i)]) {
            m_charts[size_t(i)]->setResults(m_explorer.result(), m_explorer.pins()->pins());
            m_stale[size_t(i)] = false;
        }
        if (auto* c = currentChart()) {
            m_logYAction->setEnabled(c->canToggleLogY());
            m_logYAction->setChecked(c->logY());
        }
    });

    // The pin list needs a few rows; the scenario panel gets the height (until a saved layout).
    resizeDocks({m_panelDock, m_pinDock}, {700, 160}, Qt::Vertical);
    restoreSettings();
}

MainWindow::~MainWindow() = default;

ChartView* MainWindow::currentChart() const {
    // On the Workload tab: its visible chart, for Export, the clipboard and zoom.
    if (m_workload && m_tabs->currentWidget() == m_workload) return m_workload->visibleChart();
    const int i = m_tabs->currentIndex();
    return i >= 0 && i < int(m_charts.size()) ? m_charts[size_t(i)] : nullptr;
}

void MainWindow::buildActions() {
    auto* file = menuBar()->addMenu(tr("&File"));
    m_fileMenu = file;
    auto* openAct = file->addAction(tr("&Open scenario or config.json…"), this, &MainWindow::open);
    openAct->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &recent"));
    file->addAction(tr("&Import measured prefill times…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Measured prefill times (kvbe-cli probe gpu-prefill)"), QString(),
            fileDialogFilter({FileKind::ProbeStream}));
        if (path.isEmpty()) return;
        if (auto st = importMeasured(path); !st) reportError(QString::fromStdString(st.message()));
    });
    file->addAction(tr("Open request &trace…"), this, [this] {
        m_tabs->setCurrentWidget(m_workload);
        m_workload->chooseTraceFile();
    });
    auto* saveAct = file->addAction(tr("&Save scenario"), this, [this] { save(false); });
    m_saveAction = saveAct;
    saveAct->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save scenario &as…"), this, [this] { save(true); })
        ->setShortcut(QKeySequence::SaveAs);
    file->addSeparator();
    file->addAction(tr("E&xport report…"), this, &MainWindow::exportReport)
        ->setToolTip(tr("The sign-off report of what is open, as PDF or HTML: the scenario and "
                        "its sources, the charts, the trace's plan, the risks"));
    file->addAction(tr("&Reset to the default scenario"), this, [this] { resetToDefault(); });
    // The scenarios shipped in resources/scenarios/, by name: the default and the one fitted to
    // the study's published figures.
    auto* builtin = file->addMenu(tr("&Built-in scenarios"));
    if (auto all = builtinScenarios(m_explorer.presets())) {
        for (const auto& named : *all) {
            const Scenario s = named.scenario;
            builtin->addAction(QString::fromStdString(named.name), this, [this, s] {
                if (maybeKeepChanges(tr("opening a built-in scenario"))) startOver(s, QString());
            });
        }
    } else {
        builtin->setEnabled(false);
        builtin->setToolTip(QString::fromStdString(all.message()));
    }
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    // Every scenario edit (controls, adopted fits, measured tiers) is one undo step.
    auto* editMenu = menuBar()->addMenu(tr("&Edit"));
    m_undoAction = m_explorer.undoStack()->createUndoAction(this, tr("&Undo"));
    m_undoAction->setObjectName(QStringLiteral("undo"));
    // The platform's keys and Ctrl+Z, each once: a key listed twice is an ambiguous shortcut
    // that Qt refuses ("Ambiguous shortcut overload: Ctrl+Z"), and Ctrl+Z did nothing.
    m_undoAction->setShortcuts(oneEach(QKeySequence::keyBindings(QKeySequence::Undo),
                                       {QKeySequence(Qt::CTRL | Qt::Key_Z)}));
    m_redoAction = m_explorer.undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setObjectName(QStringLiteral("redo"));
    m_redoAction->setShortcuts(oneEach(
        QKeySequence::keyBindings(QKeySequence::Redo),
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)}));
    editMenu->addAction(m_undoAction);
    editMenu->addAction(m_redoAction);
    addAction(m_undoAction);
    addAction(m_redoAction);

    auto* exp = menuBar()->addMenu(tr("&Export"));
    auto* png =
        exp->addAction(tr("Chart as &PNG…"), this, [this] { exportImage(QStringLiteral("png")); });
    exp->addAction(tr("Chart as &SVG…"), this, [this] { exportImage(QStringLiteral("svg")); });
    exp->addAction(tr("Chart as P&DF…"), this, [this] { exportImage(QStringLiteral("pdf")); });
    exp->addAction(tr("Chart data as &CSV…"), this, &MainWindow::exportCsv);
    auto* copy = exp->addAction(tr("&Copy chart to clipboard"), this, &MainWindow::copyToClipboard);
    copy->setShortcut(QKeySequence::Copy);

    auto* view = menuBar()->addMenu(tr("&View"));
    m_viewMenu = view;
    m_presentationAction = view->addAction(tr("&Presentation mode"));
    m_presentationAction->setCheckable(true);
    m_presentationAction->setShortcut(QKeySequence(Qt::Key_F5));
    connect(m_presentationAction, &QAction::toggled, this, &MainWindow::setPresentation);
    // On the window itself: its shortcut must work while the menu bar and toolbar are hidden.
    addAction(m_presentationAction);
    m_leavePresentationAction = new QAction(tr("Leave presentation mode"), this);
    m_leavePresentationAction->setShortcut(QKeySequence(Qt::Key_Escape));
    m_leavePresentationAction->setEnabled(false);
    connect(m_leavePresentationAction, &QAction::triggered, this,
            [this] { setPresentation(false); });
    addAction(m_leavePresentationAction);
    m_darkAction = view->addAction(tr("&Dark theme"));
    m_darkAction->setCheckable(true);
    connect(m_darkAction, &QAction::toggled, this, &MainWindow::setDark);
    auto* publishedAct = view->addAction(tr("Pu&blished figures"));
    publishedAct->setCheckable(true);
    publishedAct->setChecked(true);
    publishedAct->setToolTip(
        tr("Markers for the study's published figures, where the scenario's model and GPU match"));
    connect(publishedAct, &QAction::toggled, this, [this](bool on) {
        for (auto* c : m_charts)
            c->setSeriesHidden(kPublishedKey, !on);
    });
    // Fleet files and probe runs of another model than the scenario's: dimmed and marked with
    // their model, or left out.
    auto* otherModels = view->addAction(tr("Measurements of &other models"));
    otherModels->setObjectName(QStringLiteral("otherModels"));
    otherModels->setCheckable(true);
    otherModels->setChecked(true);
    otherModels->setToolTip(tr("Imported files and probe runs measured with another model than the "
                               "scenario's: drawn dimmed, marked with their model"));
    connect(otherModels, &QAction::toggled, this, [this](bool on) {
        m_style.otherModels = on;
        for (auto* c : m_charts)
            c->setChartStyle(m_style);
    });
    m_logYAction = view->addAction(tr("&Log value axis"));
    m_logYAction->setCheckable(true);
    m_logYAction->setChecked(true);
    connect(m_logYAction, &QAction::triggered, this, [this](bool on) {
        if (auto* c = currentChart()) c->setLogY(on);
    });
    auto* reset = view->addAction(tr("&Reset zoom"), this, [this] {
        if (auto* c = currentChart()) c->resetZoom();
    });
    reset->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
    // Each tab a key away: Ctrl+1 the first chart, then on in the tabs' order (the Workload tab,
    // the Pin table).
    auto* tabs = view->addMenu(tr("&Tabs"));
    for (int i = 0; i < m_tabs->count() && i < 9; ++i)
        tabs->addAction(m_tabs->tabText(i), this, [this, i] { m_tabs->setCurrentIndex(i); })
            ->setShortcut(QKeySequence(int(Qt::CTRL) | (int(Qt::Key_1) + i)));
    view->addSeparator();
    view->addAction(m_panelDock->toggleViewAction());
    view->addAction(m_pinDock->toggleViewAction());

    auto* cmp = menuBar()->addMenu(tr("&Compare"));
    auto* pin = cmp->addAction(tr("&Pin current scenario…"), this, &MainWindow::askPin);
    pin->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_P));
    cmp->addAction(tr("&Clear pins"), this, [this] { m_explorer.pins()->clear(); });
    cmp->addSeparator();
    cmp->addAction(tr("Pin &table"), this, [this] { m_tabs->setCurrentWidget(m_pinTable); })
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    cmp->addAction(tr("Export pin table as C&SV…"), this,
                   [this] { exportPinTable(QStringLiteral("csv")); });
    cmp->addAction(tr("Export pin table as P&NG…"), this,
                   [this] { exportPinTable(QStringLiteral("png")); });
    cmp->addAction(tr("Export pin table as S&VG…"), this,
                   [this] { exportPinTable(QStringLiteral("svg")); });

    auto* bar = addToolBar(tr("Main"));
    bar->setObjectName(QStringLiteral("mainToolbar"));
    bar->addAction(openAct);
    bar->addAction(saveAct);
    bar->addSeparator();
    bar->addAction(pin);
    bar->addAction(png);
    bar->addAction(copy);
    bar->addSeparator();
    bar->addAction(m_logYAction);
    bar->addAction(reset);
    bar->addAction(m_presentationAction);
    bar->addAction(m_darkAction);
}

void MainWindow::refreshCharts(bool all) {
    const auto& r = m_explorer.result();
    if (!r) return;
    const auto& pins = m_explorer.pins()->pins();
    const ChartView* visible = currentChart();
    for (size_t i = 0; i < m_charts.size(); ++i) {
        // Hidden tabs wait: refilling every chart per frame would spend most on nothing seen.
        if (!all && m_charts[i] != visible) {
            m_stale[i] = true;
            continue;
        }
        m_charts[i]->setResults(r, pins);
        m_stale[i] = false;
    }
    // A chart picks its own axis on its first results (the fraction chart is linear): the
    // button follows what is drawn.
    if (auto* c = currentChart()) {
        m_logYAction->setEnabled(c->canToggleLogY());
        m_logYAction->setChecked(c->logY());
    }
}

void MainWindow::refreshNow() {
    m_explorer.recomputeNow();
    refreshCharts(true);
}

Status MainWindow::importMeasured(const QString& path) {
    auto pts = readPrefillPoints(path.toStdString());
    if (!pts) return pts.error();
    const size_t n = pts->size();
    m_ttft->setMeasured(std::move(*pts), tr("measured, %1").arg(QFileInfo(path).fileName()));
    m_tabs->setCurrentIndex(
        int(std::find(m_charts.begin(), m_charts.end(), m_ttft) - m_charts.begin()));
    statusBar()->showMessage(tr("Imported %1 measured prefill times from %2").arg(n).arg(path),
                             4000);
    return Ok{};
}

void MainWindow::setAsk(AskFn ask) {
    m_ask = ask ? std::move(ask) : AskFn(askWithMessageBox);
    m_fleetPanel->setAsk([this](const Question& q) { return this->ask(q); });
}

QMessageBox::StandardButton MainWindow::ask(const Question& q) {
    return m_ask(this, q);
}

QString MainWindow::proposedPinLabel() const {
    return const_cast<Explorer&>(m_explorer).labelFor(m_explorer.scenario());
}

void MainWindow::reportError(const QString& message) {
    statusBar()->showMessage(message);
    // Offscreen (tests, headless) a modal box would wait for a click that never comes.
    if (QGuiApplication::platformName() != QLatin1String("offscreen"))
        QMessageBox::warning(this, tr("kvbe"), message);
}

bool MainWindow::pinCurrent(const QString& label) {
    return m_explorer.pinCurrent(label);
}

void MainWindow::askPin() {
    const auto& r = m_explorer.result();
    if (!r) return;
    // Wide enough for the proposed label (a scenario's description runs long), within the
    // screen.
    QInputDialog dialog(this);
    dialog.setObjectName(QStringLiteral("pinLabelDialog"));
    dialog.setWindowTitle(tr("Pin scenario"));
    dialog.setLabelText(tr("Label for the overlay:"));
    dialog.setTextValue(proposedPinLabel());
    const int text = dialog.fontMetrics().horizontalAdvance(dialog.textValue()) + 80;
    const int most = screen() ? screen()->availableGeometry().width() * 9 / 10 : 1200;
    dialog.resize(std::min(most, std::max(dialog.sizeHint().width(), text)),
                  dialog.sizeHint().height());
    if (dialog.exec() == QDialog::Accepted) pinCurrent(dialog.textValue());
}

// The hover box's first lines in the status bar, as many whole lines as fit its width; gone when
// the mouse leaves the plot (an empty text), so no stale values stay behind.
void MainWindow::showHover(const QString& text) {
    if (text.isEmpty()) {
        if (statusBar()->currentMessage() == m_hoverMessage) statusBar()->clearMessage();
        m_hoverMessage.clear();
        return;
    }
    const QFontMetrics fm(statusBar()->font());
    const int room = statusBar()->width() - 24;
    QString shown;
    for (const QString& line : text.split(QLatin1Char('\n'))) {
        const QString next = shown.isEmpty() ? line : shown + QStringLiteral(" · ") + line;
        if (!shown.isEmpty() && fm.horizontalAdvance(next) > room) break;
        shown = next;
    }
    m_hoverMessage = shown;
    statusBar()->showMessage(shown);
}

void MainWindow::setDark(bool on) {
    m_style.dark = on;
    for (auto* c : m_charts)
        c->setChartStyle(m_style);
    const QSignalBlocker block(m_darkAction);
    m_darkAction->setChecked(on);
}

} // namespace kvbe
