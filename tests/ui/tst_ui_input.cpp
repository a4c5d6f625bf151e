// Inputs change only when the user means it: the mouse wheel over the scenario panel scrolls it
// and never turns a combo box, spin box or slider it passes over (a GPU combo box once went
// H200 → … → Custom unseen while the panel scrolled); a focused input still takes the wheel.
// Every key sequence has one owner in the window (Ctrl+Z had two and did nothing).
#include "ui_test_support.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QKeySequence>
#include <QMap>
#include <QScrollArea>
#include <QScrollBar>
#include <QShortcut>
#include <QSpontaneKeyEvent>
#include <QWheelEvent>

using namespace kvbe;
using namespace kvbe::test;

namespace {

bool wheelInput(const QWidget* w) {
    return qobject_cast<const QComboBox*>(w) || qobject_cast<const QAbstractSpinBox*>(w) ||
           qobject_cast<const QAbstractSlider*>(w);
}

// What the user sees of an input: its index, text or position.
QString stateOf(const QWidget* w) {
    if (auto* c = qobject_cast<const QComboBox*>(w))
        return QStringLiteral("%1 %2").arg(c->currentIndex()).arg(c->currentText());
    if (auto* s = qobject_cast<const QAbstractSpinBox*>(w)) return s->text();
    if (auto* s = qobject_cast<const QAbstractSlider*>(w)) return QString::number(s->value());
    return {};
}

QString describe(const QWidget* w) {
    return QStringLiteral("%1 \"%2\"").arg(w->metaObject()->className(), w->objectName());
}

// A wheel turn down over the widget's centre, as the window system delivers it (spontaneous:
// QApplication passes it on to the parents when the widget does not take it).
void wheelDown(QWidget* w) {
    const QPointF at = QRectF(w->rect()).center();
    QWheelEvent e(at, w->mapToGlobal(at), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                  Qt::NoScrollPhase, false);
    QSpontaneKeyEvent::setSpontaneous(&e);
    // notify(), not sendEvent(): sendEvent marks every event as sent by the program.
    qApp->notify(w, &e);
}

// Every key sequence of a shortcut that is live in the window, with who owns it. An action or
// QShortcut of window or application scope owns its keys in the whole window; one of widget
// scope only in its widget.
struct Owner {
    QString who;
    const QObject* scope;
};
void addOwners(QMap<QString, QList<Owner>>& keys, const QString& who, const QObject* scope,
               const QList<QKeySequence>& shortcuts) {
    for (const QKeySequence& k : shortcuts)
        if (!k.isEmpty()) keys[k.toString(QKeySequence::PortableText)].push_back({who, scope});
}

} // namespace

class TestUiInput : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void theWheelScrollsThePanelAndChangesNoInput() {
        auto w = std::make_unique<MainWindow>(presets());
        w->fitToScreen(QRect(0, 0, 1366, 768));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        w->refreshNow();
        const PanelControls p = panelOf(w);
        auto* scroll =
            qobject_cast<QScrollArea*>(child<QDockWidget>(&*w, "scenarioDock")->widget());
        QVERIFY(scroll);
        QScrollBar* bar = scroll->verticalScrollBar();
        QVERIFY2(bar->maximum() > 0,
                 "the panel must scroll at 1366×768 for this test to mean much");

        QList<QWidget*> inputs;
        for (QWidget* c : p.panel->findChildren<QWidget*>())
            if (wheelInput(c)) inputs.push_back(c);
        // The model, KV dtype, state dtype, GPU, compute dtype, FLOP model and TP boxes, the
        // utilisation and cached-fraction sliders at least.
        QVERIFY2(inputs.size() >= 9, qPrintable(QString::number(inputs.size())));
        const Scenario before = explorerOf(w)->scenario();
        int scrolled = 0;
        for (QWidget* input : inputs) {
            if (!input->isVisible()) continue;
            scroll->ensureWidgetVisible(input);
            QApplication::processEvents();
            const QString was = stateOf(input);
            const int barWas = bar->value();
            for (int turn = 0; turn < 3; ++turn)
                wheelDown(input);
            QApplication::processEvents();
            QVERIFY2(stateOf(input) == was,
                     qPrintable(QStringLiteral("%1 went from %2 to %3")
                                    .arg(describe(input), was, stateOf(input))));
            if (bar->value() != barWas) ++scrolled;
        }
        QVERIFY2(explorerOf(w)->scenario() == before, "the scenario changed under the wheel");
        // The wheel went on to the scroll area (where there was room to scroll).
        QVERIFY2(scrolled > 0, "the wheel never scrolled the panel");

        // A focused input takes the wheel: the user clicked it, or reached it with Tab.
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        QComboBox* gpu = p.gpuBox();
        QCOMPARE(gpu->focusPolicy(), Qt::StrongFocus);
        scroll->ensureWidgetVisible(gpu);
        gpu->setFocus(Qt::TabFocusReason);
        QVERIFY(gpu->hasFocus());
        const int gpuWas = gpu->currentIndex();
        wheelDown(gpu);
        QApplication::processEvents();
        QVERIFY2(gpu->currentIndex() != gpuWas, "a focused combo box ignored the wheel");
    }

    void everyShortcutHasOneOwner() {
        auto w = makeWindow();
        QMap<QString, QList<Owner>> keys;
        for (QAction* a : w->findChildren<QAction*>()) {
            const QObject* scope = a->shortcutContext() == Qt::WidgetShortcut ||
                                           a->shortcutContext() == Qt::WidgetWithChildrenShortcut
                                       ? a->parent()
                                       : w.get();
            addOwners(keys, QStringLiteral("action \"%1\"").arg(a->text()), scope, a->shortcuts());
        }
        for (QShortcut* s : w->findChildren<QShortcut*>()) {
            const QObject* scope =
                s->context() == Qt::WidgetShortcut || s->context() == Qt::WidgetWithChildrenShortcut
                    ? s->parent()
                    : w.get();
            addOwners(keys, QStringLiteral("shortcut %1").arg(s->objectName()), scope, s->keys());
        }
        QVERIFY2(keys.size() >= 10, "the window's shortcuts were not found");
        for (auto it = keys.cbegin(); it != keys.cend(); ++it) {
            QMap<const QObject*, QStringList> byScope;
            for (const Owner& o : it.value())
                byScope[o.scope].push_back(o.who);
            for (const QStringList& owners : byScope)
                QVERIFY2(owners.size() == 1,
                         qPrintable(
                             QStringLiteral("%1 is owned by %2").arg(it.key(), owners.join(", "))));
        }
        QVERIFY(keys.contains(QStringLiteral("Ctrl+Z")));
    }

    // Ctrl+Z and Ctrl+Shift+Z pressed in the window undo and redo an edit.
    // Tab walks the GPU box in the order it reads: GPU, peak, compute dtype, utilisation, FLOP
    // model, tensor parallel. It skipped from Compute dtype to FLOP model, past Utilisation.
    void tabWalksTheGpuBoxInOrder() {
        auto w = makeWindow();
        w->show();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        auto* dtype = child<QWidget>(&*w, QStringLiteral("computeDtype"));
        auto* util = child<QWidget>(&*w, QStringLiteral("utilisation"));
        auto* flops = child<QWidget>(&*w, QStringLiteral("flopModel"));
        dtype->setFocus(Qt::TabFocusReason);
        QVERIFY(QTest::qWaitFor([&] { return dtype->hasFocus(); }));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QVERIFY2(QApplication::focusWidget() == util,
                 qPrintable(QApplication::focusWidget() ? QApplication::focusWidget()->objectName()
                                                        : QStringLiteral("nothing")));
        QTest::keyClick(QApplication::focusWidget(), Qt::Key_Tab);
        QCOMPARE(QApplication::focusWidget(), flops);
    }

    void ctrlZUndoes() {
        QTest::failOnWarning(QRegularExpression(QStringLiteral("Ambiguous shortcut")));
        auto w = makeWindow();
        w->show();
        w->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(w.get()));
        const PanelControls p = panelOf(w);
        const Scenario before = explorerOf(w)->scenario();
        p.pickGpu(QStringLiteral("l40s"));
        QVERIFY(explorerOf(w)->scenario() != before);
        const Scenario after = explorerOf(w)->scenario();
        QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier);
        QVERIFY2(explorerOf(w)->scenario() == before, "Ctrl+Z did not undo the GPU change");
        QTest::keyClick(w.get(), Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QVERIFY2(explorerOf(w)->scenario() == after, "Ctrl+Shift+Z did not redo it");
    }
};

QTEST_MAIN(TestUiInput)
#include "tst_ui_input.moc"
