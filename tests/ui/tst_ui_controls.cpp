// Each control of the scenario panel changes the series it should, to the numbers core computes.
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

class TestUiControls : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    // Windows own every timer and dialog; none may outlive the test that made it.
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void modelsInTheHuggingFaceCacheCanBePicked() {
        QTemporaryDir hub;
        const QString snap = hub.filePath("models--acme--Tiny-8B/snapshots/0123abcd");
        QVERIFY(QDir().mkpath(snap));
        QVERIFY(
            QFile::copy(QStringLiteral(KVBE_SOURCE_DIR
                                       "/resources/models/meta-llama__Llama-3.1-8B-Instruct.json"),
                        snap + "/config.json"));
        qputenv("HF_HUB_CACHE", hub.path().toLocal8Bit());
        auto w = makeWindow();
        qunsetenv("HF_HUB_CACHE");
        auto* box = panelOf(w).modelBox();
        int found = -1;
        for (int i = 0; i < box->count(); ++i)
            if (box->itemText(i).contains("acme/Tiny-8B (HF cache)")) found = i;
        QVERIFY(found >= 0);
        box->setCurrentIndex(found);
        emit box->activated(found);
        w->refreshNow();
        QVERIFY(QString::fromStdString(explorerOf(w)->scenario().model).startsWith(hub.path()));
        QCOMPARE(QString::fromStdString(explorerOf(w)->result()->model().id),
                 QStringLiteral("acme/Tiny-8B"));
        // A loaded model joins the model-size chart.
        QVERIFY(chartOf(w, "models")->csv().contains("acme/Tiny-8B"));
    }

    void defaultScenarioComesFromCore() {
        auto w = makeWindow();
        QCOMPARE(explorerOf(w)->scenario(), *defaultScenario(presets()));
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
    }

    void utilisationSliderMovesBreakEven() {
        auto w = makeWindow();
        const auto before = chartOf(w, "breakeven")->seriesByKey("bstar")->points();
        panelOf(w).utilisationSlider()->setValue(80);
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.8);
        const auto ref = reference(explorerOf(w)->scenario());
        auto* s = chartOf(w, "breakeven")->seriesByKey("bstar");
        expectSeries(s, ref.curves.tokens, ref.curves.breakevenBandwidth, 1e-9);
        QVERIFY(s->points() != before);
        // The same move reaches the other charts too.
        expectSeries(chartOf(w, "ttft")->seriesByKey("miss"), ref.curves.tokens, ref.curves.tMiss,
                     1e3);
    }

    void fractionSliderMovesHitTimes() {
        auto w = makeWindow();
        panelOf(w).fractionSlider()->setValue(25);
        w->refreshNow();
        const auto ref = reference(explorerOf(w)->scenario());
        QCOMPARE(ref.curves.cachedFraction, 0.25);
        for (size_t t = 0; t < ref.curves.tiers.size(); ++t) {
            expectSeries(chartOf(w, "ttft")->seriesByKey(QStringLiteral("tier/%1/hit").arg(t)),
                         ref.curves.tokens, ref.curves.tiers[t].tHit, 1e3);
            expectSeries(chartOf(w, "ttft")->seriesByKey(QStringLiteral("tier/%1/speedup").arg(t)),
                         ref.curves.tokens, ref.curves.tiers[t].speedup, 1);
        }
        const auto chosen = chartOf(w, "fraction")->seriesByKey("chosen")->points();
        QCOMPARE(chosen.front().y(), 25.0); // per cent
    }

    void gpuPickerAndPeakField() {
        auto w = makeWindow();
        pick(panelOf(w).gpuBox(), QStringLiteral("h200"));
        w->refreshNow();
        QCOMPARE(panelOf(w).peakField()->value().value(),
                 presets().findGpu("h200")->bf16Flops / 1e12);
        auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);

        // Typed key by key: each prefix ("5", "50") is a valid peak and applies live.
        panelOf(w).peakField()->edit()->clear();
        QTest::keyClicks(panelOf(w).peakField()->edit(), QStringLiteral("500"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().peakTflops.value(), 500.0);
        ref = reference(explorerOf(w)->scenario());
        QCOMPARE(ref.eval.peakFlops, 500e12);
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
    }

    // The peak is core's (scenarioPeakFlops): FP8 on a GPU without an FP8 peak is refused with
    // core's sentence, as evaluate refuses it, never shown as the BF16 peak.
    void fp8OnAGpuWithoutAnFp8PeakIsRefusedAsCoreRefusesIt() {
        const auto* a100 = presets().findGpu("a100-80gb-sxm");
        QVERIFY(a100 && !a100->fp8Flops);
        auto w = makeWindow();
        auto* peak = child<NumberField>(w.get(), QStringLiteral("peak"));
        pick(child<QComboBox>(w.get(), QStringLiteral("gpu")), QStringLiteral("a100-80gb-sxm"));
        QCOMPARE(peak->value().value(), a100->bf16Flops / 1e12);
        pick(child<QComboBox>(w.get(), QStringLiteral("computeDtype")), QStringLiteral("fp8"));
        w->refreshNow();
        const auto refused = evaluate(explorerOf(w)->scenario(), presets());
        QVERIFY(!refused);
        QVERIFY2(!peak->value(), qPrintable(QString::number(peak->value().value_or(0))));
        QVERIFY(!peak->isValid());
        QCOMPARE(peak->errorText(), QString::fromStdString(refused.message()));

        // Back to BF16: the preset's peak returns.
        pick(child<QComboBox>(w.get(), QStringLiteral("computeDtype")), QStringLiteral("bf16"));
        QCOMPARE(peak->value().value(), a100->bf16Flops / 1e12);
        QVERIFY(peak->errorText().isEmpty());
    }

    void flopModelKvDtypeAndTensorParallel() {
        auto w = makeWindow();
        pick(panelOf(w).flopModelBox(), QStringLiteral("detailed"));
        pick(panelOf(w).kvDtypeBox(), QStringLiteral("fp8"));
        pick(panelOf(w).tensorParallelBox(), 4);
        panelOf(w).sharedPathBox()->setChecked(true);
        w->refreshNow();
        const Scenario& s = explorerOf(w)->scenario();
        QVERIFY(s.flopModel == FlopModel::Detailed);
        QVERIFY(s.kvDtype == KvDtype::FP8);
        QCOMPARE(s.tensorParallel, 4);
        QVERIFY(s.sharedPath);
        const auto ref = reference(s);
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        for (size_t t = 0; t < ref.curves.tiers.size(); ++t)
            expectSeries(
                chartOf(w, "fraction")->seriesByKey(QStringLiteral("tier/%1/fstar").arg(t)),
                ref.curves.tokens, ref.curves.tiers[t].minFraction, 100);
    }

    // The TP control offers only sizes the model can be split into; a new model keeps a size it
    // can run, or takes the largest one below and says why.
    void tensorParallelOffersOnlyValidSizes() {
        auto w = makeWindow();
        auto offered = [&] {
            QList<int> v;
            auto* box = panelOf(w).tensorParallelBox();
            for (int i = 0; i < box->count(); ++i)
                v << box->itemData(i).toInt();
            return v;
        };
        QCOMPARE(offered(), (QList<int>{1, 2, 4, 8, 24})); // Llama 3.2 3B: 24 query, 8 KV heads
        pick(panelOf(w).tensorParallelBox(), 24);
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().tensorParallel, 24);
        QVERIFY(explorerOf(w)->lastError().isEmpty());
        // Qwen2.5 7B (28 query, 4 KV heads) runs 1, 2, 4 and 28: 24 becomes 4.
        QVERIFY(panelOf(w).selectModel(QStringLiteral("Qwen/Qwen2.5-7B-Instruct")));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().tensorParallel, 4);
        QVERIFY2(panelOf(w).messageText().contains(QStringLiteral("Tensor parallel 24 → 4")),
                 qPrintable(panelOf(w).messageText()));
        QVERIFY(panelOf(w).messageText().contains(
            QStringLiteral("28 query heads do not divide by 24")));
        QCOMPARE(offered(), (QList<int>{1, 2, 4, 28}));
        QVERIFY(explorerOf(w)->lastError().isEmpty());
    }

    // Amplification and write bandwidth in the tier table, the charts and the scenario file.
    void amplificationThroughTheWindow() {
        QTemporaryDir dir;
        const QString file = dir.filePath("amp.kvbe.json");
        {
            auto w = makeIllustrativeWindow(); // the preset NVMe, 13.5 GB/s
            auto* m = panelOf(w).tierModel();
            QCOMPARE(
                m->data(m->index(1, TierTableModel::WriteBandwidth), Qt::DisplayRole).toString(),
                QStringLiteral("6.75"));
            QCOMPARE(
                m->data(m->index(1, TierTableModel::Amplification), Qt::DisplayRole).toString(),
                QStringLiteral("1"));
            QVERIFY(!m->setData(m->index(1, TierTableModel::Amplification), QStringLiteral("0.5"),
                                Qt::EditRole));
            QVERIFY(panelOf(w).messageText().contains(QStringLiteral("from 1 to 1000")));
            QVERIFY(m->setData(m->index(1, TierTableModel::Amplification), QStringLiteral("2.5"),
                               Qt::EditRole));
            w->refreshNow();
            const Scenario& s = explorerOf(w)->scenario();
            QCOMPARE(s.tiers[1].amplification, 2.5);
            // B* counts useful bytes, so the tier's line sits at 13.5 / 2.5 = 5.4 GB/s.
            const auto level = chartOf(w, "breakeven")->seriesByKey("tier/1/level")->points();
            QVERIFY(sameValue(level.front().y(), 5.4, 1e-12));
            QVERIFY2(chartOf(w, "breakeven")
                         ->labelText("tier/1/label")
                         .contains(QStringLiteral("× 2.5 = 5.40 GB/s effective")),
                     qPrintable(chartOf(w, "breakeven")->labelText("tier/1/label")));
            QVERIFY(chartOf(w, "breakeven")
                        ->hoverText(QPointF(8192, 1))
                        .contains(QStringLiteral("13.5 GB/s × 2.5 = 5.40 GB/s effective")));
            QVERIFY(chartOf(w, "ttft")
                        ->hoverText(QPointF(8192, 1))
                        .contains(QStringLiteral("× 2.5 amplification")));
            QVERIFY(chartOf(w, "fraction")
                        ->hoverText(QPointF(8192, 0.5))
                        .contains(QStringLiteral("× 2.5 amplification")));
            const auto ref = reference(s);
            expectSeries(chartOf(w, "fraction")->seriesByKey(QStringLiteral("tier/1/fstar")),
                         ref.curves.tokens, ref.curves.tiers[1].minFraction, 100);
            // The same p* as a plain tier at the effective rate.
            Scenario plain = s;
            plain.tiers[1].amplification = 1;
            plain.tiers[1].bandwidthGBps = 5.4;
            const auto pref = reference(plain);
            QVERIFY(sameValue(*ref.curves.tiers[1].breakevenPrefix,
                              *pref.curves.tiers[1].breakevenPrefix, 1e-6));
            QVERIFY(m->setData(m->index(1, TierTableModel::WriteBandwidth), QStringLiteral("2"),
                               Qt::EditRole));
            QVERIFY(w->saveScenario(file).ok());
        }
        auto w = makeWindow();
        QVERIFY(w->openFile(file).ok());
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().tiers[1].amplification, 2.5);
        QCOMPARE(*explorerOf(w)->scenario().tiers[1].writeGBps, 2.0);
        auto* m = panelOf(w).tierModel();
        QCOMPARE(m->data(m->index(1, TierTableModel::Amplification), Qt::DisplayRole).toString(),
                 QStringLiteral("2.5"));
    }

    // Lengths past the model's context: the charts end at the context and say so.
    void chartsEndAtTheContext() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(QStringLiteral("mistralai/Mistral-7B-Instruct-v0.3")));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().lengths.maxTokens,
                 131072.0); // the asked-for range is kept
        for (const char* key : {"breakeven", "ttft", "fraction"}) {
            QXYSeries* s = nullptr;
            if (QString(key) == "breakeven")
                s = chartOf(w, key)->seriesByKey("bstar");
            else if (QString(key) == "ttft")
                s = chartOf(w, key)->seriesByKey("miss");
            else
                s = chartOf(w, key)->seriesByKey("tier/0/fstar");
            QVERIFY2(s, key);
            QVERIFY(!s->points().isEmpty());
            QVERIFY2(s->points().back().x() <= 32768, key);
        }
        QCOMPARE(chartOf(w, "breakeven")->seriesByKey("bstar")->points().back().x(), 32768.0);
        QVERIFY(explorerOf(w)->result()->endsAtContext);
        QVERIFY(describeScenario(*explorerOf(w)->result())
                    .contains(QStringLiteral("end at the model's context, 32,768 tokens")));
        // A shortest prompt past the context is refused with the reason.
        Scenario s = explorerOf(w)->scenario();
        s.lengths.minTokens = 40000;
        explorerOf(w)->setScenario(s);
        w->refreshNow();
        QVERIFY2(explorerOf(w)->lastError().contains(
                     QStringLiteral("past the context of mistralai/Mistral-7B-Instruct-v0.3")),
                 qPrintable(explorerOf(w)->lastError()));
    }

    void tierTableEditsMoveTierLines() {
        auto w = makeIllustrativeWindow(); // three tiers
        auto* m = panelOf(w).tierModel();
        QVERIFY(
            m->setData(m->index(1, TierTableModel::Bandwidth), QStringLiteral("20"), Qt::EditRole));
        QVERIFY(m->setData(m->index(1, TierTableModel::FixedCost), QStringLiteral("2.5"),
                           Qt::EditRole));
        QVERIFY(m->setData(m->index(1, TierTableModel::Name), QStringLiteral("Fast NVMe"),
                           Qt::EditRole));
        w->refreshNow();
        const auto ref = reference(explorerOf(w)->scenario());
        const double b = ref.eval.tiers[1].bandwidthBps * 1e-9; // after pipelined staging, by core
        const auto level = chartOf(w, "breakeven")->seriesByKey("tier/1/level")->points();
        QCOMPARE(level.front().y(), b);
        QCOMPARE(level.back().y(), b);
        QVERIFY(chartOf(w, "breakeven")->labelText("tier/1/label").startsWith("Fast NVMe"));
        expectSeries(chartOf(w, "breakeven")->seriesByKey("tier/1/bstar"), ref.curves.tokens,
                     ref.curves.tiers[1].breakevenBandwidth, 1e-9);
        // The shaded win region lies between the curve and the tier's line.
        auto* win = chartOf(w, "breakeven")->areaByKey("tier/1/win");
        QVERIFY(win);
        const auto lower = win->lowerSeries()->points();
        for (qsizetype i = 0; i < lower.size(); ++i)
            QVERIFY(lower[i].y() <= b);

        m->addTier(tierFromPreset(*presets().findTier("nvme-gen4-raid4")));
        w->refreshNow();
        QVERIFY(chartOf(w, "ttft")->seriesByKey("tier/3/hit"));
        m->removeTier(0);
        w->refreshNow();
        QVERIFY(!chartOf(w, "ttft")->seriesByKey("tier/3/hit"));
        QCOMPARE(explorerOf(w)->scenario().tiers.size(), size_t(3));
        QCOMPARE(explorerOf(w)->scenario().tiers[0].name, std::string("Fast NVMe"));
    }

    void promptRangeAndLogToggle() {
        auto w = makeWindow();
        typeInto(panelOf(w).minTokensField()->edit(), QStringLiteral("1k"));
        typeInto(panelOf(w).maxTokensField()->edit(), QStringLiteral("64k"));
        w->refreshNow();
        auto pts = chartOf(w, "breakeven")->seriesByKey("bstar")->points();
        QCOMPARE(pts.front().x(), 1024.0);
        QCOMPARE(pts.back().x(), 65536.0);
        panelOf(w).logLengthsBox()->setChecked(false);
        w->refreshNow();
        QVERIFY(!explorerOf(w)->scenario().lengths.log);
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        pts = chartOf(w, "breakeven")->seriesByKey("bstar")->points();
        // Evenly spaced in tokens now (rounded to whole tokens).
        QVERIFY(std::abs((pts[2].x() - pts[1].x()) - (pts[1].x() - pts[0].x())) <= 1);
    }

    void modelPickerAndSweepLength() {
        auto w = makeWindow();
        QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        typeInto(panelOf(w).sweepTokensField()->edit(), QStringLiteral("8k"));
        w->refreshNow();
        const Scenario& s = explorerOf(w)->scenario();
        QCOMPARE(s.sweepTokens, 8192.0);
        const auto ref = reference(s);
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        const auto mine = chartOf(w, "models")->seriesByKey("current")->points();
        QCOMPARE(mine.size(), 1);
        QVERIFY(sameValue(mine.front().y(), *ref.eval.cost.breakevenBandwidth(8192) * 1e-9));
        QVERIFY(sameValue(mine.front().x(), ref.eval.model.paramsTotal * 1e-9));
    }
};

QTEST_MAIN(TestUiControls)
#include "tst_ui_controls.moc"
