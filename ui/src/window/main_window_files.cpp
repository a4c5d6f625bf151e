// MainWindow's files: the scenario's file and its unsaved changes, opening any file kvbe reads
// (by what it is), recent files, drops, and the session kept between runs.
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/widgets/file_dialogs.h"
#include "kvbe/ui/widgets/qt_error.h"
#include "kvbe/ui/window/main_window.h"

#include <QCloseEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <filesystem>

namespace kvbe {

namespace {
constexpr int kMaxRecent = 8;

// The frame moved, not resized, so that all of it lies within `available` (a frame larger than
// it keeps its top left corner there).
QRect movedInto(QRect frame, const QRect& available) {
    frame.moveLeft(
        std::max(available.left(), std::min(frame.left(), available.right() + 1 - frame.width())));
    frame.moveTop(
        std::max(available.top(), std::min(frame.top(), available.bottom() + 1 - frame.height())));
    return frame;
}
} // namespace

void MainWindow::updateTitle() {
    const QString name = m_file.isEmpty() ? tr("unsaved scenario") : QFileInfo(m_file).fileName();
    // [*]: Qt shows the "*" where the window is modified.
    setWindowTitle(tr("%1[*] · kvbe").arg(name));
    setWindowModified(hasUnsavedChanges());
}

bool MainWindow::hasUnsavedChanges() const {
    return m_explorer.scenario() != m_saved;
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

Status MainWindow::openFile(const QString& path) {
    // A built-in scenario by name (kvbe --scenario illustrative), where no file has that name:
    // opened as the File menu's Built-in scenarios open it, tied to no file.
    if (!QFileInfo::exists(path) && !std::filesystem::path(path.toStdString()).has_parent_path()) {
        auto s = loadScenario(path.toStdString(), m_explorer.presets());
        if (!s) return s.error();
        if (auto m = m_explorer.loadModel(s->model); !m) return m.error();
        startOver(*s, QString());
        return Ok{};
    }
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

// Files dropped on the window.

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

void MainWindow::sniffAndOpen(const QStringList& paths) {
    // Calibration files and folders go to the Fleet view together; every other file opens as
    // what it is (classifyFile: a scenario, a config.json, a trace, a probe's output).
    QStringList imports;
    for (const QString& path : paths) {
        const FileClass kind = QFileInfo(path).isDir() ? FileClass{FileKind::Calibration, "", ""}
                                                       : classifyFile(path.toStdString());
        if (kind.kind == FileKind::Calibration)
            imports << path;
        else if (auto st = openAs(path, kind); !st)
            reportError(QString::fromStdString(st.message()));
    }
    if (!imports.isEmpty() && !importCalibrations(imports))
        reportError(tr("An import is still running; drop the files again when it has finished"));
}

// The session: the window's layout and the scenario, kept between runs.

void MainWindow::restoreSettings() {
    QSettings st;
    // A saved layout, on a screen of the size it was saved on and moved wholly onto it; one
    // saved on a screen of another size (a run at 2560×1600 ×2, then a 1600×1000 screen), or
    // larger than this screen, gives way to this screen's own layout.
    const bool restored =
        restoreGeometry(st.value(QStringLiteral("window/geometry")).toByteArray());
    const QScreen* screen = QGuiApplication::screenAt(geometry().center());
    if (!screen) screen = QGuiApplication::primaryScreen();
    const QRect available = screen ? screen->availableGeometry() : QRect();
    const QSize savedOn = st.value(QStringLiteral("window/screen")).toSize();
    const bool otherScreen =
        savedOn.isValid() && available.isValid() && savedOn != available.size();
    if (!restored || otherScreen ||
        (available.isValid() && (frameGeometry().height() > available.height() ||
                                 frameGeometry().width() > available.width()))) {
        if (available.isValid()) fitToScreen(available);
    } else {
        if (available.isValid()) {
            move(movedInto(frameGeometry(), available).topLeft()); // pos() is the frame's
        }
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
    // The screen the layout was made for: another one gets its own layout at the next start.
    if (const QScreen* on = screen())
        st.setValue(QStringLiteral("window/screen"), on->availableGeometry().size());
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
    bool discarded = false;
    if (hasUnsavedChanges()) {
        q.title = tr("Unsaved changes");
        q.text = m_file.isEmpty()
                     ? tr("The scenario has changes that are not saved. Save them before quitting?")
                     : tr("%1 has changes that are not saved. Save them before quitting?")
                           .arg(QFileInfo(m_file).fileName());
        q.buttons = QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel;
        q.defaultButton = QMessageBox::Save;
        // Unattended, the changes are kept for the next session (Ignore: not a button shown).
        q.unattended = QMessageBox::Ignore;
        q.details = tr("Discard: the file stays as it is, and the next start opens it as saved "
                       "(or the default scenario), without these changes.");
        const auto answer = ask(q);
        if (answer == QMessageBox::Cancel ||
            (answer == QMessageBox::Save && (save(false), hasUnsavedChanges()))) {
            e->ignore();
            return;
        }
        discarded = answer == QMessageBox::Discard;
    }
    saveSettings();
    // Discarded: the next start does not bring the changes back (it did, marked unsaved).
    if (discarded)
        QSettings().setValue(QStringLiteral("scenario/last"),
                             QString::fromStdString(scenarioToJson(m_saved)));
    QMainWindow::closeEvent(e);
}

} // namespace kvbe
