// Pinned scenarios: a pin appears as a ghost overlay in every chart, several can be pinned,
// and unpinning removes exactly that overlay. The pin list passes QAbstractItemModelTester. A pin
// after a model change is labelled from its inputs, and the pin dialog is as wide as its label.
#include "ui_test_support.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QInputDialog>
#include <QLineEdit>
#include <QListView>
#include <QTimer>

#include "kvbe/ui/scenario/scenario_panel.h"

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString k70b = QStringLiteral("meta-llama/Llama-3.3-70B-Instruct");

QStringList pinKeys(const ChartView* c) {
    QStringList out;
    for (const QString& k : c->seriesKeys())
        if (k.startsWith(QLatin1String("pin/"))) out << k;
    return out;
}

} // namespace

class TestUiCompare : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    // Windows own every timer and dialog; none may outlive the test that made it.
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void aPinAppearsInEveryChartAndDisappears() {
        auto w = makeWindow();
        QAbstractItemModelTester tester(explorerOf(w)->pins(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Scenario h100 = explorerOf(w)->scenario();
        for (auto* c : chartsOf(w))
            QVERIFY(pinKeys(c).isEmpty());
        QVERIFY(w->pinCurrent(QStringLiteral("H100")));

        // Move on to an H200: the pin keeps the H100's numbers, the current curve the H200's.
        auto* gpu = panelOf(w).gpuBox();
        const int i = gpu->findData(QStringLiteral("h200"));
        gpu->setCurrentIndex(i);
        emit gpu->activated(i);
        w->refreshNow();
        for (auto* c : chartsOf(w))
            QVERIFY2(!pinKeys(c).isEmpty(), qPrintable(c->key()));

        const auto ref100 = reference(h100);
        const auto pinned = chartOf(w, "breakeven")->seriesByKey("pin/0/bstar")->points();
        QVERIFY(pinned.size() > 0);
        QCOMPARE(pinned.front().x(), ref100.curves.tokens.front());
        QVERIFY(sameValue(pinned.front().y(), *ref100.curves.breakevenBandwidth.front() * 1e-9));
        QVERIFY(chartOf(w, "breakeven")->seriesByKey("pin/0/bstar")->name().startsWith("H100"));
        const auto ref200 = reference(explorerOf(w)->scenario());
        QVERIFY(sameValue(chartOf(w, "breakeven")->seriesByKey("bstar")->points().front().y(),
                          *ref200.curves.breakevenBandwidth.front() * 1e-9));

        // A second pin, then unpin the first: the second stays, under the first slot.
        QVERIFY(w->pinCurrent(QStringLiteral("H200")));
        QCOMPARE(explorerOf(w)->pins()->rowCount(), 2);
        QVERIFY(chartOf(w, "ttft")->seriesByKey("pin/1/miss"));
        explorerOf(w)->pins()->unpin(0);
        QCOMPARE(explorerOf(w)->pins()->rowCount(), 1);
        QVERIFY(!chartOf(w, "ttft")->seriesByKey("pin/1/miss"));
        QVERIFY(chartOf(w, "ttft")->seriesByKey("pin/0/miss")->name().startsWith("H200"));

        // Renaming through the list renames the overlay.
        auto* pins = explorerOf(w)->pins();
        QVERIFY(pins->setData(pins->index(0), QStringLiteral("B200 next year"), Qt::EditRole));
        QVERIFY(!pins->setData(pins->index(0), QStringLiteral("   "), Qt::EditRole));
        QVERIFY(chartOf(w, "ttft")->seriesByKey("pin/0/miss")->name().startsWith("B200 next year"));
        QCOMPARE(child<QListView>(w.get(), QStringLiteral("pinView"))->model()->rowCount(), 1);

        pins->clear();
        for (auto* c : chartsOf(w))
            QVERIFY(pinKeys(c).isEmpty());
    }

    void pinsOverlayTheModelSizeAndFrontierCharts() {
        auto w = makeWindow();
        pick(w.get(), "fp8");
        QVERIFY(w->pinCurrent(QStringLiteral("FP8 KV")));
        QVERIFY(chartOf(w, "models")->seriesByKey("pin/0/models"));
        QVERIFY(chartOf(w, "frontier")->seriesByKey("pin/0/contour"));
        QVERIFY(chartOf(w, "fraction")->seriesByKey("pin/0/f0"));
        QVERIFY(chartOf(w, "breakeven")->hoverText(QPointF(4096, 5)).contains("FP8 KV (pinned)"));
    }

    void pinAfterAModelChangeIsLabelledFromItsInputs() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(k70b));
        panelOf(w).pickGpu(QStringLiteral("h200"));
        w->refreshNow();
        QVERIFY(w->pinCurrent(QString())); // the label the window proposes
        const QString label = explorerOf(w)->pins()->pins().front()->label;
        const QString expect =
            // u is the default scenario's, fitted to the study: 0.670.
            QStringLiteral("Llama-3.3-70B-Instruct on %1, u = 67 %, BF16 KV").arg(gpuLabel("h200"));
        QCOMPARE(label, expect);
        QVERIFY(chartOf(w, QStringLiteral("breakeven"))
                    ->seriesByKey(QStringLiteral("pin/0/bstar"))
                    ->name()
                    .startsWith(expect));
        // Nothing about the default's "Llama 3.2 3B on an H100 SXM" is left in the legend.
        QVERIFY(!chartOf(w, QStringLiteral("breakeven"))
                     ->seriesByKey(QStringLiteral("pin/0/bstar"))
                     ->name()
                     .contains(QStringLiteral("3.2 3B")));
    }

    // Compare ▸ Pin current scenario… asks with a dialog as wide as the label it proposes.
    void thePinDialogFitsItsLabel() {
        auto w = makeWindow();
        w->show();
        QAction* pin = menuAction(w.get(), QStringLiteral("Pin current scenario"));
        QVERIFY(pin);
        int textWidth = 0, editWidth = 0;
        QTimer::singleShot(0, [&] {
            auto* d = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!d) return;
            auto* edit = d->findChild<QLineEdit*>();
            textWidth = edit->fontMetrics().horizontalAdvance(edit->text());
            editWidth = edit->width();
            d->reject();
        });
        pin->trigger();
        QVERIFY(textWidth > 0);
        QVERIFY2(
            editWidth >= textWidth,
            qPrintable(QStringLiteral("%1 px for a label of %2 px").arg(editWidth).arg(textWidth)));
    }

  private:
    static void pick(MainWindow* w, const QString& kv) {
        auto* box = panelOf(w).kvDtypeBox();
        const int i = box->findData(kv);
        box->setCurrentIndex(i);
        emit box->activated(i);
        w->refreshNow();
    }
};

QTEST_MAIN(TestUiCompare)
#include "tst_ui_compare.moc"
