// Measurements of another model than the scenario's are not drawn as this model's: the Fleet
// files measured with Qwen3-8B and a probe run of Llama 3.3 70B appear on the Llama 3.2 3B charts
// dimmed and marked with their model, in the legend and the hover; node17's file, measured with
// the scenario's own model, is drawn as before; View ▸ Measurements of other models leaves the
// others out.
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QLineSeries>
#include <QScatterSeries>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES);

// The TTFT chart's series of imported files, by the file they came from: their keys are
// overlay/<row>/…, in the Fleet table's order.
QStringList overlayNames(ChartView* c, const QString& rowPrefix) {
    QStringList out;
    for (const QString& key : c->seriesKeys())
        if (key.startsWith(rowPrefix))
            if (auto* s = c->seriesByKey(key)) out << s->name();
    return out;
}

} // namespace

class TestUiOtherModels : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        useFakeProbe();
    }
    void init() {
        QSettings().clear();
        resetFakeProbe();
    }

    void otherModelsAreMarkedDimmedOrLeftOut() {
        auto w = makeWindow();
        w->show();
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/calibration")}));
        auto* fleet = fleetPanelOf(w);
        QVERIFY(QTest::qWaitFor([&] { return !fleet->importing(); }, 60000));
        auto* ttft = chartOf(w, QStringLiteral("ttft"));
        tabsOf(w)->setCurrentWidget(ttft);
        w->refreshNow();

        // Which rows are of which model, from the files themselves.
        QString qwenRow, llamaRow;
        for (int row = 0; row < fleet->model()->rowCount(); ++row) {
            const auto& c = fleet->model()->at(row).calibration;
            const QString prefix = QStringLiteral("overlay/%1/").arg(row);
            if (overlayNames(ttft, prefix).isEmpty()) continue;
            if (c.model == "Qwen/Qwen3-8B")
                qwenRow = prefix;
            else if (c.model == "meta-llama/Llama-3.2-3B")
                llamaRow = prefix;
        }
        QVERIFY2(!qwenRow.isEmpty() && !llamaRow.isEmpty(), "fixtures of both models expected");

        for (const QString& name : overlayNames(ttft, qwenRow))
            QVERIFY2(name.contains(QLatin1String("[another model: Qwen3-8B]")), qPrintable(name));
        for (const QString& key : ttft->seriesKeys())
            if (key.startsWith(qwenRow)) {
                auto* s = ttft->seriesByKey(key);
                const QColor c = qobject_cast<QLineSeries*>(s) ? s->pen().color() : s->color();
                QVERIFY2(c.alphaF() < 0.5, qPrintable(key));
            }
        for (const QString& name : overlayNames(ttft, llamaRow))
            QVERIFY2(!name.contains(QLatin1String("another model")), qPrintable(name));

        // The hover over the Qwen curves names their model too.
        const QString hover = ttft->hoverText(QPointF(8192, 100));
        QVERIFY2(hover.contains(QLatin1String("[another model: Qwen3-8B]")), qPrintable(hover));

        // A gpu-prefill run of Llama 3.3 70B: its B* is not this model's.
        auto* probes = probePanelOf(w);
        QVERIFY(probes->setProbe(QStringLiteral("gpu-prefill")));
        QVERIFY(probes->setOption(QStringLiteral("--model"),
                                  QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        QVERIFY(probes->run());
        QVERIFY(QTest::qWaitFor([&] { return !probes->anyRunning(); }, 60000));
        auto* breakeven = chartOf(w, QStringLiteral("breakeven"));
        tabsOf(w)->setCurrentWidget(breakeven);
        w->refreshNow();
        auto* measured = breakeven->seriesByKey(QStringLiteral("measured-bstar"));
        QVERIFY(measured);
        QVERIFY2(measured->name().contains(QLatin1String("[another model: Llama-3.3-70B")),
                 qPrintable(measured->name()));
        QVERIFY(measured->color().alphaF() < 0.5);

        // View ▸ Measurements of other models, off: they are left out; the scenario's own stay.
        auto* toggle = w->findChild<QAction*>(QStringLiteral("otherModels"));
        QVERIFY(toggle);
        toggle->setChecked(false);
        QVERIFY(!breakeven->seriesByKey(QStringLiteral("measured-bstar")));
        QVERIFY(overlayNames(ttft, qwenRow).isEmpty());
        QVERIFY(!overlayNames(ttft, llamaRow).isEmpty());
        toggle->setChecked(true);
        QVERIFY(breakeven->seriesByKey(QStringLiteral("measured-bstar")));
    }
};

QTEST_MAIN(TestUiOtherModels)
#include "tst_ui_other_models.moc"
