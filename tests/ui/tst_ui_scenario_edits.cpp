// Edits of the scenario in the window: a saved scenario is named from its inputs unless the user
// named it, an edit marks the window unsaved, quitting and resetting ask before changes are lost,
// and every edit can be undone.
#include "ui_test_support.h"

#include <QAction>
#include <QLineEdit>
#include <QMessageBox>
#include <QSlider>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString k70b = QStringLiteral("meta-llama/Llama-3.3-70B-Instruct");

} // namespace

class TestUiScenarioEdits : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void savedScenarioIsNamedFromItsInputs() {
        QTemporaryDir dir;
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(QStringLiteral("deepseek-ai/DeepSeek-V3")));
        w->refreshNow();
        const QString file = dir.filePath(QStringLiteral("ds.kvbe.json"));
        QVERIFY(w->saveScenario(file).ok());
        auto back = loadScenario(file.toStdString(), presets());
        QVERIFY(back.ok());
        QCOMPARE(QString::fromStdString(back->name),
                 // u: the default scenario's, fitted to the study (0.670)
                 QStringLiteral("DeepSeek-V3 on %1, u = 67 %, BF16 KV").arg(gpuLabel("h100-sxm")));
    }

    void anEditMarksTheWindowUnsaved() {
        auto w = makeIllustrativeWindow(); // u = 50 %, which the slider can set again
        QVERIFY(!w->isWindowModified());
        panelOf(w).utilisationSlider()->setValue(70);
        QVERIFY(w->isWindowModified());
        QVERIFY(w->windowTitle().contains(QStringLiteral("[*]")));
        // Back to what it was: nothing left to save.
        panelOf(w).utilisationSlider()->setValue(50);
        QVERIFY(!w->isWindowModified());
    }

    void aNameTheUserGaveStays() {
        auto w = makeWindow();
        auto* name = panelOf(w).nameField();
        name->setText(QStringLiteral("Plan B"));
        emit name->editingFinished();
        QVERIFY(panelOf(w).selectModel(k70b));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->label, QStringLiteral("Plan B"));
        QCOMPARE(w->proposedPinLabel(), QStringLiteral("Plan B"));
        // Cleared, the scenario describes itself again.
        name->setText(QString());
        emit name->editingFinished();
        w->refreshNow();
        QVERIFY(explorerOf(w)->result()->label.startsWith(
            QStringLiteral("Llama-3.3-70B-Instruct on ")));
    }

    void quittingAndResettingAskFirst() {
        auto w = makeWindow();
        QStringList asked;
        QMessageBox::StandardButton answer = QMessageBox::Cancel;
        w->setAsk([&](QWidget*, const Question& q) {
            asked << q.text;
            return answer;
        });
        QVERIFY(w->close()); // nothing changed: no question
        QVERIFY(asked.isEmpty());
        panelOf(w).utilisationSlider()->setValue(70);
        QVERIFY(!w->close());
        QCOMPARE(asked.size(), 1);
        QVERIFY(asked.back().contains(QStringLiteral("not saved")));
        QVERIFY(!w->resetToDefault());
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.7);
        answer = QMessageBox::Discard;
        QVERIFY(w->resetToDefault());
        QCOMPARE(asked.size(), 3);
        QCOMPARE(explorerOf(w)->scenario(), *defaultScenario(presets()));
        QVERIFY(!w->isWindowModified());
    }

    void everyScenarioEditCanBeUndone() {
        auto w = makeWindow();
        const Scenario before = explorerOf(w)->scenario();
        QAction* undo = menuAction(w.get(), QStringLiteral("Undo"));
        QVERIFY(undo);
        QCOMPARE(undo->shortcut(), QKeySequence(QKeySequence::Undo));
        QVERIFY(menuAction(w.get(), QStringLiteral("Redo"))
                    ->shortcuts()
                    .contains(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)));
        // A drag is one step.
        for (int v = 51; v <= 80; ++v)
            panelOf(w).utilisationSlider()->setValue(v);
        emit panelOf(w).utilisationSlider()->sliderReleased();
        QVERIFY(panelOf(w).selectModel(k70b));
        panelOf(w).pickGpu(QStringLiteral("h200"));
        undo->trigger();
        undo->trigger();
        QCOMPARE(explorerOf(w)->scenario().model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.8);
        undo->trigger();
        QCOMPARE(explorerOf(w)->scenario(), before);
        QCOMPARE(panelOf(w).utilisationSlider()->value(), 67); // the default's u, 0.670
        // The default's name comes back with its inputs.
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->label, QString::fromStdString(before.name));
    }
};

QTEST_MAIN(TestUiScenarioEdits)
#include "tst_ui_scenario_edits.moc"
