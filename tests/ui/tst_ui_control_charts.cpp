// The charts follow the scenario panel's controls to the numbers core computes: the model size
// chart, hybrids, the frontier map, hover values, legend and zoom, live redraws, imported
// measurements, and drags coalesced into one recompute.
#include "control_test_support.h"
#include "ui_test_support.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/builtin_scenarios.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/frontier_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/scenario/scenario_panel.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QAreaSeries>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QLegendMarker>
#include <QLineEdit>
#include <QMimeData>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>

#include <algorithm>

using namespace kvbe;
using namespace kvbe::test;

class TestUiControlCharts : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    // Windows own every timer and dialog; none may outlive the test that made it.
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    // docs/cost-model.md: Llama 3.3 70B on an H100 SXM at u = 0.5, simple model, no t_fixed,
    // N = 32,768 needs about 0.88 GB/s.
    void modelSizeChartMatchesTheCostModelPage() {
        auto w = makeIllustrativeWindow(); // u = 50 %
        const auto pts = chartOf(w, "models")->seriesByKey("models")->points();
        bool found = false;
        for (const auto& p : pts)
            if (std::abs(p.x() - 70.55) < 0.1) {
                found = true;
                QVERIFY2(std::abs(p.y() - 0.88) < 0.01, qPrintable(QString::number(p.y())));
            }
        QVERIFY(found);
    }

    // A hybrid model: the panel shows its layer mix and state, and the state dtype reaches the
    // cost model (Nemotron 3 Nano: 49,082,368 B with its FP32 SSM state, 24,965,120 in BF16).
    void hybridModelStateInPanel() {
        auto w = makeWindow();
        pick(panelOf(w).modelBox(), QStringLiteral("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->eval->cost.stateBytes(), 49082368.0);
        QVERIFY2(panelOf(w).modelInfoText().contains("23 Mamba-2, 23 MoE, 6 attention"),
                 qPrintable(panelOf(w).modelInfoText()));
        QVERIFY(panelOf(w).stateDtypeBox()->isEnabled());
        pick(panelOf(w).stateDtypeBox(), QStringLiteral("bf16"));
        w->refreshNow();
        QVERIFY(explorerOf(w)->scenario().stateDtype == KvDtype::BF16);
        QCOMPARE(explorerOf(w)->result()->eval->cost.stateBytes(), 24965120.0);
    }

    // Hybrid presets (Nemotron 3 Nano, Qwen3-Next, Jamba 1.5 Mini, Qwen3.5-35B-A3B,
    // Falcon-H1-0.5B, granite-4.0-h-tiny, and gemma-3n-E2B-it, whose last 10 layers hold no KV of
    // their own) are their own series, not among the transformers: their B* per parameter is far
    // lower.
    void modelSizeChartMarksHybrids() {
        auto w = makeWindow();
        const auto hybrids = chartOf(w, "models")->seriesByKey("hybrids")->points();
        QCOMPARE(hybrids.size(), qsizetype(7));
        bool nemotron = false;
        for (const auto& p : hybrids)
            nemotron = nemotron || std::abs(p.x() - 31.58) < 0.01;
        QVERIFY(nemotron);
        for (const auto& p : chartOf(w, "models")->seriesByKey("models")->points())
            QVERIFY(std::abs(p.x() - 31.58) >= 0.01);
        QVERIFY(
            chartOf(w, "models")->csv().contains("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16,"));
    }

    void frontierMapFollowsTheCostModel() {
        auto w = makeIllustrativeWindow(); // its third tier
        auto* f = static_cast<FrontierChart*>(chartOf(w, "frontier"));
        f->setTier(2);
        const auto ref = reference(explorerOf(w)->scenario());
        const auto& tier = ref.eval.tiers[2];
        QCOMPARE(f->image().width(), kFrontierTokens);
        QCOMPARE(f->image().height(), kFrontierFractions);
        const auto contour = f->seriesByKey("contour")->points();
        QVERIFY(!contour.isEmpty());
        // On the contour a hit and a recompute take the same time (to the grid's resolution).
        for (const auto& p : contour) {
            const double s = ref.eval.cost.speedup(tier, p.x(), p.y() * p.x());
            QVERIFY2(
                std::abs(s - 1) < 0.02,
                qPrintable(QStringLiteral("speedup %1 at (%2, %3)").arg(s).arg(p.x()).arg(p.y())));
        }
        // The top-right corner (long prompt, all cached) is a win: its colour is the win side.
        const double sTop =
            ref.eval.cost.speedup(tier, ref.curves.tokens.back(), ref.curves.tokens.back());
        QCOMPARE(f->image().pixel(kFrontierTokens - 1, 0), FrontierChart::speedupColor(sTop));
        QVERIFY(f->hoverText(QPointF(8192, 0.5)).contains(QStringLiteral("8,192 tokens")));
    }

    void hoverShowsExactValues() {
        auto w = makeWindow();
        const auto ref = reference(explorerOf(w)->scenario());
        const size_t i = 100;
        const QString text = chartOf(w, "breakeven")->hoverText(QPointF(ref.curves.tokens[i], 5));
        QVERIFY(text.contains(QString::fromStdString(formatTokens(ref.curves.tokens[i]))));
        QVERIFY(text.contains(
            QString::fromStdString(formatBandwidth(*ref.curves.breakevenBandwidth[i]))));
        const QString ttft = chartOf(w, "ttft")->hoverText(QPointF(ref.curves.tokens[i], 5));
        QVERIFY(ttft.contains(QStringLiteral("speedup")));
    }

    void legendHidesAGroupAndZoomSurvivesRefills() {
        auto w = makeWindow();
        w->show(); // zooming works in pixels: the chart needs a plot area
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* c = chartOf(w, "breakeven");
        c->setSeriesHidden("tier/0/level", true);
        QVERIFY(!c->seriesByKey("tier/0/level")->isVisible());
        QVERIFY(!c->areaByKey("tier/0/win")->isVisible());
        // Its legend entry stays, so a second click can bring it back.
        tabsOf(w)->setCurrentWidget(c);
        QApplication::processEvents();
        auto* legend = legendOf(c);
        QVERIFY(legend);
        const QRectF entry = legend->entryRect("tier/0/level");
        QVERIFY(!entry.isEmpty());
        const QPoint at = c->mapFromScene(entry.center());
        QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(c->seriesByKey("tier/0/level")->isVisible());
        QTest::mouseClick(c->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(!c->seriesByKey("tier/0/level")->isVisible());
        const QRectF home = c->visibleRange();
        c->zoomBy(2, QPointF(4096, 8));
        QVERIFY(c->isZoomed());
        const QRectF zoomed = c->visibleRange();
        QVERIFY(zoomed.width() < home.width());
        panelOf(w).utilisationSlider()->setValue(60);
        w->refreshNow();
        QVERIFY(!c->seriesByKey("tier/0/level")->isVisible()); // still hidden after a refill
        QCOMPARE(c->visibleRange(), zoomed);                   // and still zoomed
        c->panBy(QPointF(40, 0));
        QVERIFY(c->visibleRange().left() < zoomed.left());
        c->resetZoom();
        QVERIFY(!c->isZoomed());
        QCOMPARE(c->visibleRange().left(), explorerOf(w)->result()->curves.tokens.front());
        c->setSeriesHidden("tier/0/level", false);
        QVERIFY(c->seriesByKey("tier/0/level")->isVisible());
        c->setLogY(false);
        QVERIFY(!c->logY());
        c->setLogY(true);
    }

    void liveUpdatesRedrawTheVisibleChartAndHiddenOnesOnShow() {
        auto w = makeWindow();
        tabsOf(w)->setCurrentIndex(0);
        QSignalSpy spy(explorerOf(w), &Explorer::computed);
        panelOf(w).utilisationSlider()->setValue(75);
        QVERIFY(spy.wait(1000));
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        tabsOf(w)->setCurrentIndex(2); // the TTFT tab catches up when shown
        QCOMPARE(currentChartOf(w)->key(), QStringLiteral("ttft"));
        expectSeries(chartOf(w, "ttft")->seriesByKey("miss"), ref.curves.tokens, ref.curves.tMiss,
                     1e3);
    }

    void measuredPrefillTimesAreImportedAndDecimated() {
        QTemporaryDir dir;
        const QString path = dir.filePath("prefill.jsonl");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"kvbe_probe":1,"probe":"prefill","host":"h","started":"t","params":{}}
{"type":"point","series":"t_prefill_s","x":8192,"y":0.25,"unit":"s"}
{"type":"point","series":"prefill_TFLOPs","x":8192,"y":400,"unit":"TFLOP/s"}
{"type":"point","series":"t_prefill_s","x":1024,"y":0.02,"unit":"s"}
{"type":"result","summary":{}}
)");
        f.close();
        auto w = makeWindow();
        QVERIFY(w->importMeasured(path).ok());
        const auto pts = chartOf(w, "ttft")->seriesByKey("imported")->points();
        QCOMPARE(pts.size(), 2);
        QCOMPARE(pts[0], QPointF(1024, 20));
        QCOMPARE(pts[1], QPointF(8192, 250));
        QFile bad(dir.filePath("bad.jsonl"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("not json\n");
        bad.close();
        const auto st = w->importMeasured(bad.fileName());
        QVERIFY(!st.ok());
        QVERIFY2(QString::fromStdString(st.message()).contains("probe stream line 1"),
                 st.message().c_str());

        // 100,000 points reach Qt as at most two per pixel column, the extremes kept.
        std::vector<QPointF> many;
        for (int i = 0; i < 100000; ++i)
            many.emplace_back(256 + i, 1 + (i % 1000) * 0.001 + (i == 77777 ? 5 : 0));
        const auto shown = decimateToColumns(many, 800, 256, 256 + 99999, true);
        QVERIFY(shown.size() <= 1600);
        QVERIFY(
            std::any_of(shown.begin(), shown.end(), [](const QPointF& p) { return p.y() > 5; }));
    }

    void dragsAreCoalescedIntoOneRecompute() {
        auto w = makeWindow();
        QSignalSpy spy(explorerOf(w), &Explorer::computed);
        for (int v = 40; v <= 60; ++v)
            panelOf(w).utilisationSlider()->setValue(v);
        QVERIFY(explorerOf(w)->recomputePending());
        QVERIFY(spy.wait(1000));
        QCOMPARE(spy.count(), 1);
        QCOMPARE(explorerOf(w)->result()->scenario.utilisation, 0.6);
        QVERIFY(!explorerOf(w)->recomputePending());
    }
};

QTEST_MAIN(TestUiControlCharts)
#include "tst_ui_control_charts.moc"
