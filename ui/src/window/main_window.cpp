#include "kvbe/ui/window/main_window.h"

#include "kvbe/calibration/published.h"

#include "kvbe/base/json_text.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/compare/pin_table.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/fleet/measured_import.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/window/file_dialogs.h"
#include "kvbe/ui/workload/workload_charts.h"
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

namespace kvbe {

namespace {
constexpr int kMaxRecent = 8;
Error fail(const QString& m) {
    return Error{m.toStdString()};
}

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

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("chartTabs"));
    m_tabs->setDocumentMode(true);
    // The scenario charts of the chart table, in its order; the window talks to the charts that
    // probe runs draw on through their own types.
    for (const QString& key : chartKeys(ChartSource::Scenario)) {
        ChartView* c = createChart(key).release();
        m_charts.push_back(c);
        c->setObjectName(c->key() + QStringLiteral("Chart"));
        connect(c, &ChartView::hovered, this, [this](const QString& text) {
            statusBar()->showMessage(
                QString(text).replace(QLatin1Char('\n'), QStringLiteral(" · ")), 4000);
        });
        auto* page = new QWidget;
        if (QWidget* controls = c->createControls(page)) {
            auto* v = new QVBoxLayout(page);
            v->setContentsMargins(0, 4, 0, 0);
            v->addWidget(controls);
            m_chartControls.push_back(controls);
            v->addWidget(c, 1);
            m_tabs->addTab(page, c->title());
        } else {
            delete page;
            m_tabs->addTab(c, c->title());
        }
    }
    m_breakeven = chartOf<BreakevenChart>(m_charts);
    m_fraction = chartOf<FractionChart>(m_charts);
    m_ttft = chartOf<TtftChart>(m_charts);
    // After the charts: tab indices below m_charts.size() stay the charts'.
    m_workload = new WorkloadView(&m_explorer);
    m_tabs->addTab(m_workload, tr("Workload"));
    // The pins side by side: B* at chosen lengths and p* per tier, with differences.
    m_pinTable = new PinTableView(&m_explorer);
    m_pinTable->setObjectName(QStringLiteral("pinTable"));
    m_tabs->addTab(m_pinTable, tr("Pin table"));
    connect(m_pinTable, &PinTableView::exportRequested, this, &MainWindow::exportPinTable);
    setCentralWidget(m_tabs);
    m_stale.assign(m_charts.size(), true);

    m_panel = new ScenarioPanel(&m_explorer);
    m_panel->setObjectName(QStringLiteral("scenarioPanel"));
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
    m_undoAction->setShortcuts({QKeySequence::Undo, QKeySequence(Qt::CTRL | Qt::Key_Z)});
    m_redoAction = m_explorer.undoStack()->createRedoAction(this, tr("&Redo"));
    m_redoAction->setObjectName(QStringLiteral("redo"));
    m_redoAction->setShortcuts(
        {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z), QKeySequence(Qt::CTRL | Qt::Key_Y)});
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

void MainWindow::updateTitle() {
    const QString name = m_file.isEmpty() ? tr("unsaved scenario") : QFileInfo(m_file).fileName();
    // [*]: Qt shows the "*" where the window is modified.
    setWindowTitle(tr("%1[*] · kvbe").arg(name));
    setWindowModified(hasUnsavedChanges());
}

bool MainWindow::hasUnsavedChanges() const {
    return m_explorer.scenario() != m_saved;
}

void MainWindow::setAsk(AskFn ask) {
    m_ask = ask ? std::move(ask) : AskFn(askWithMessageBox);
    m_fleetPanel->setAsk([this](const Question& q) { return this->ask(q); });
}

QMessageBox::StandardButton MainWindow::ask(const Question& q) {
    return m_ask(this, q);
}

bool MainWindow::maybeKeepChanges(const QString& doing) {
    if (!hasUnsavedChanges()) return true;
    Question q;
    q.title = tr("Unsaved changes");
    q.text =
        m_file.isEmpty()
            ? tr("The scenario has changes that are not saved. Save them before %1?").arg(doing)
            : tr("%1 has changes that are not saved. Save them before %2?")
                  .arg(QFileInfo(m_file).fileName(), doing);
    q.buttons = QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel;
    q.defaultButton = QMessageBox::Save;
    q.unattended = QMessageBox::Cancel;
    switch (ask(q)) {
    case QMessageBox::Save:
        save(false);
        return !hasUnsavedChanges(); // a save that was cancelled or failed keeps them
    case QMessageBox::Discard:
        return true;
    default:
        return false;
    }
}

bool MainWindow::resetToDefault() {
    auto s = defaultScenario(m_explorer.presets());
    if (!s) {
        reportError(QString::fromStdString(s.message()));
        return false;
    }
    if (!maybeKeepChanges(tr("resetting to the default scenario"))) return false;
    startOver(*s, QString());
    return true;
}

void MainWindow::startOver(const Scenario& s, const QString& file) {
    m_file = file;
    m_saved = s;
    m_explorer.setScenario(s, isUserName(s));
    updateTitle();
}

bool MainWindow::isUserName(const Scenario& s) {
    if (s.name.empty()) return false;
    Scenario unnamed = s;
    unnamed.name.clear();
    // A name that only says what the inputs say is a description (written by Save where the
    // user gave none), and the shipped scenarios' names describe their inputs too.
    if (QString::fromStdString(s.name) == m_explorer.labelFor(unnamed)) return false;
    if (auto d = defaultScenario(m_explorer.presets()); d && d->name == s.name) return false;
    if (auto all = builtinScenarios(m_explorer.presets()))
        for (const auto& named : *all)
            if (named.scenario.name == s.name || named.name == s.name) return false;
    return true;
}

QString MainWindow::proposedPinLabel() const {
    return const_cast<Explorer&>(m_explorer).labelFor(m_explorer.scenario());
}

Status MainWindow::openFile(const QString& path) {
    return openAs(path, classifyFile(path.toStdString()));
}

Status MainWindow::openAs(const QString& path, const FileClass& kind) {
    switch (kind.kind) {
    case FileKind::Scenario: {
        auto s = loadScenario(path.toStdString(), m_explorer.presets());
        if (!s) return s.error();
        if (auto m = m_explorer.loadModel(s->model); !m) return m.error();
        startOver(*s, path);
        break;
    }
    case FileKind::ModelConfig:
        if (!m_panel->selectModel(path)) return fail(m_panel->messageText());
        break;
    case FileKind::Calibration:
        if (!importCalibrations({path}))
            return fail(tr("An import is still running; open the file again when it has finished"));
        return Ok{};
    case FileKind::Trace:
        if (!openTrace(path))
            return fail(
                tr("A trace is still being read; open the file again when it has finished"));
        return Ok{};
    case FileKind::ProbeStream:
        return importMeasured(path);
    case FileKind::PublishedReference:
        return fail(tr("%1 holds published figures; the window draws the ones kvbe ships "
                       "(View > Published figures)")
                        .arg(QFileInfo(path).fileName()));
    case FileKind::PrefillTable:
    case FileKind::Unknown:
        return Error{kind.reason};
    }
    addRecent(path);
    // Replaces whatever the status bar said before (an earlier error).
    statusBar()->showMessage(tr("Opened %1").arg(QFileInfo(path).fileName()), 4000);
    return Ok{};
}

Status MainWindow::saveScenario(const QString& path) {
    Scenario s = m_explorer.scenario();
    // Unnamed, the file carries the label its inputs make: what legends and exports show.
    if (s.name.empty()) s.name = m_explorer.labelFor(s).toStdString();
    auto st = kvbe::saveScenario(path.toStdString(), s);
    if (!st) return st;
    m_file = path;
    m_saved = m_explorer.scenario();
    addRecent(path);
    updateTitle();
    return Ok{};
}

void MainWindow::open() {
    if (!maybeKeepChanges(tr("opening another scenario"))) return;
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Open a scenario or a model's config.json"), QString(),
        fileDialogFilter({FileKind::Scenario, FileKind::ModelConfig}));
    if (path.isEmpty()) return;
    if (auto st = openFile(path); !st) reportError(QString::fromStdString(st.message()));
}

void MainWindow::save(bool as) {
    QString path = m_file;
    if (as || path.isEmpty()) {
        path = QFileDialog::getSaveFileName(this, tr("Save scenario"),
                                            QStringLiteral("scenario.kvbe.json"),
                                            tr("Scenarios (*.kvbe.json)"));
        if (path.isEmpty()) return;
        if (!path.endsWith(QLatin1String(".json"))) path += QStringLiteral(".kvbe.json");
    }
    if (auto st = saveScenario(path); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Saved %1").arg(path), 4000);
}

void MainWindow::reportError(const QString& message) {
    statusBar()->showMessage(message);
    // Offscreen (tests, headless) a modal box would wait for a click that never comes.
    if (QGuiApplication::platformName() != QLatin1String("offscreen"))
        QMessageBox::warning(this, tr("kvbe"), message);
}

QStringList MainWindow::recentFiles() const {
    return QSettings().value(QStringLiteral("recentFiles")).toStringList();
}

void MainWindow::addRecent(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList list = recentFiles();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(QStringLiteral("recentFiles"), list);
    fillRecentMenu();
}

void MainWindow::fillRecentMenu() {
    m_recentMenu->clear();
    const QStringList list = recentFiles();
    for (const QString& p : list)
        m_recentMenu
            ->addAction(QFileInfo(p).fileName(), this,
                        [this, p] {
                            if (auto st = openFile(p); !st)
                                reportError(QString::fromStdString(st.message()));
                        })
            ->setToolTip(p);
    m_recentMenu->setEnabled(!list.isEmpty());
}

bool MainWindow::pinCurrent(const QString& label) {
    return m_explorer.pinCurrent(label);
}

void MainWindow::askPin() {
    const auto& r = m_explorer.result();
    if (!r) return;
    bool ok = false;
    const QString label =
        QInputDialog::getText(this, tr("Pin scenario"), tr("Label for the overlay:"),
                              QLineEdit::Normal, proposedPinLabel(), &ok);
    if (ok) pinCurrent(label);
}

void MainWindow::setDark(bool on) {
    m_style.dark = on;
    for (auto* c : m_charts)
        c->setChartStyle(m_style);
    const QSignalBlocker block(m_darkAction);
    m_darkAction->setChecked(on);
}

// ---- export

bool MainWindow::askPngSize(QSize& size, int& dpi) {
    QDialog d(this);
    d.setWindowTitle(tr("PNG size"));
    auto* form = new QFormLayout(&d);
    auto* w = new QSpinBox(&d);
    auto* h = new QSpinBox(&d);
    auto* r = new QSpinBox(&d);
    w->setRange(16, 16384);
    h->setRange(16, 16384);
    r->setRange(36, 1200);
    w->setValue(size.width());
    h->setValue(size.height());
    r->setValue(dpi);
    w->setSuffix(tr(" px"));
    h->setSuffix(tr(" px"));
    r->setSuffix(tr(" dpi"));
    form->addRow(tr("Width"), w);
    form->addRow(tr("Height"), h);
    form->addRow(tr("Resolution"), r);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &d);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    if (d.exec() != QDialog::Accepted) return false;
    size = QSize(w->value(), h->value());
    dpi = r->value();
    return true;
}

void MainWindow::exportImage(const QString& format) {
    // On the Pin table tab, Export acts on the table.
    if (m_tabs->currentWidget() == m_pinTable) {
        exportPinTable(format);
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    QSize size(1600, 900);
    int dpi = 96;
    if (format == QLatin1String("png") && !askPngSize(size, dpi)) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), exportFolder().filePath(c->key() + QLatin1Char('.') + format),
        format.toUpper() + QStringLiteral(" (*.") + format + ')');
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = exportChart(*c, path, size, dpi); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::exportCsv() {
    if (m_tabs->currentWidget() == m_pinTable) {
        exportPinTable(QStringLiteral("csv"));
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart data"), exportFolder().filePath(c->key() + QStringLiteral(".csv")),
        tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = kvbe::exportCsv(*c, path); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::exportPinTable(const QString& format) {
    const PinComparison& t = m_pinTable->comparison();
    if (t.empty()) {
        reportError(tr("There is no pin table to export: the scenario has not been computed."));
        return;
    }
    // A slide's size, like the charts'; the table is fitted into it.
    QSize size(1600, 900);
    int dpi = 96;
    if (format == QLatin1String("png") && !askPngSize(size, dpi)) return;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the pin table"),
                                     exportFolder().filePath(QStringLiteral("pin-table.") + format),
                                     format.toUpper() + QStringLiteral(" (*.") + format + ')');
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = kvbe::exportPinTable(t, path, size, dpi, m_style.dark); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::copyToClipboard() {
    if (m_tabs->currentWidget() == m_pinTable) {
        const PinComparison& t = m_pinTable->comparison();
        if (t.empty()) return;
        const QSize size = pinTableNaturalSize(t).toSize();
        QImage img(size, QImage::Format_ARGB32_Premultiplied);
        QPainter p(&img);
        paintPinTable(p, t, size, m_style.dark);
        p.end();
        QApplication::clipboard()->setImage(img);
        statusBar()->showMessage(
            tr("Copied the pin table (%1 × %2)").arg(size.width()).arg(size.height()), 4000);
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    const QSize size = c->size().expandedTo(QSize(800, 450));
    QApplication::clipboard()->setImage(renderChartImage(*c, size));
    statusBar()->showMessage(tr("Copied the chart (%1 × %2)").arg(size.width()).arg(size.height()),
                             4000);
}

// ---- files dropped on the window

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
    const auto urls = e->mimeData()->urls();
    if (urls.isEmpty()) return;
    for (const auto& u : urls)
        if (!u.isLocalFile() || !mayDrop(u.toLocalFile())) return;
    e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
    QStringList paths;
    for (const auto& u : e->mimeData()->urls())
        paths << u.toLocalFile();
    sniffAndOpen(paths);
    e->acceptProposedAction();
}

// ---- settings

void MainWindow::restoreSettings() {
    QSettings st;
    // A saved layout, where it still fits a screen; otherwise the one for this screen.
    const bool restored =
        restoreGeometry(st.value(QStringLiteral("window/geometry")).toByteArray());
    const QScreen* screen = QGuiApplication::screenAt(geometry().center());
    if (!screen) screen = QGuiApplication::primaryScreen();
    const QRect available = screen ? screen->availableGeometry() : QRect();
    if (!restored || (available.isValid() && (frameGeometry().height() > available.height() ||
                                              frameGeometry().width() > available.width()))) {
        if (available.isValid()) fitToScreen(available);
    } else {
        restoreState(st.value(QStringLiteral("window/state")).toByteArray());
        setBottomDocksCollapsed(st.value(QStringLiteral("window/docksCollapsed"), true).toBool());
    }
    m_tabs->setCurrentIndex(st.value(QStringLiteral("window/tab"), 0).toInt());
    setDark(st.value(QStringLiteral("window/dark"), false).toBool());
    m_file = st.value(QStringLiteral("scenario/file")).toString();
    fillRecentMenu();

    const Presets& presets = m_explorer.presets();
    std::optional<Scenario> scenario;
    const QString text = st.value(QStringLiteral("scenario/last")).toString();
    if (!text.isEmpty()) {
        auto s = scenarioFromJson(text.toStdString(), "the last session's scenario", presets);
        // A model file that has gone since last time falls back to the default scenario.
        if (s && m_explorer.loadModel(s->model)) scenario = *s;
    }
    if (!scenario) {
        m_file.clear();
        if (auto s = defaultScenario(presets)) scenario = *s;
    }
    // The baseline of the unsaved marker: the file as it is on disk, or the default scenario
    // for one never saved. Changes kept from the last session show as unsaved.
    m_saved = scenario ? *scenario : Scenario{};
    if (!m_file.isEmpty()) {
        if (auto onDisk = loadScenario(m_file.toStdString(), presets))
            m_saved = *onDisk;
        else
            m_file.clear();
    } else if (auto d = defaultScenario(presets)) {
        m_saved = *d;
    }
    if (scenario) m_explorer.setScenario(*scenario, isUserName(*scenario));
    // Computed now rather than on the frame timer, so the first frame already shows the charts.
    m_explorer.recomputeNow();
    updateTitle();
}

void MainWindow::saveSettings() const {
    QSettings st;
    st.setValue(QStringLiteral("window/geometry"),
                m_style.presentation && !m_geometryBeforePresentation.isEmpty()
                    ? m_geometryBeforePresentation
                    : saveGeometry());
    st.setValue(QStringLiteral("window/docksCollapsed"), m_bottomCollapsed);
    st.setValue(QStringLiteral("window/state"),
                m_style.presentation && !m_stateBeforePresentation.isEmpty()
                    ? m_stateBeforePresentation
                    : saveState());
    st.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
    st.setValue(QStringLiteral("window/dark"), m_style.dark);
    st.setValue(QStringLiteral("scenario/last"),
                QString::fromStdString(scenarioToJson(m_explorer.scenario())));
    st.setValue(QStringLiteral("scenario/file"), m_file);
}

void MainWindow::closeEvent(QCloseEvent* e) {
    // Offscreen, where nobody can answer, the window closes and the session keeps the changes
    // (they come back marked unsaved): nothing is written to the file unasked.
    Question q;
    if (hasUnsavedChanges()) {
        q.title = tr("Unsaved changes");
        q.text = m_file.isEmpty()
                     ? tr("The scenario has changes that are not saved. Save them before quitting?")
                     : tr("%1 has changes that are not saved. Save them before quitting?")
                           .arg(QFileInfo(m_file).fileName());
        q.buttons = QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel;
        q.defaultButton = QMessageBox::Save;
        q.unattended = QMessageBox::Discard;
        q.details = tr("Without saving, the file stays as it is; the window brings these changes "
                       "back next time, marked unsaved.");
        const auto answer = ask(q);
        if (answer == QMessageBox::Cancel ||
            (answer == QMessageBox::Save && (save(false), hasUnsavedChanges()))) {
            e->ignore();
            return;
        }
    }
    saveSettings();
    QMainWindow::closeEvent(e);
}

} // namespace kvbe
