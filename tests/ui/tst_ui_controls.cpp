// Each control of the scenario panel changes the series it should, to the numbers core computes;
// fields refuse impossible values with a reason; models pass QAbstractItemModelTester.
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

namespace {

// The series holds exactly core's values, at core's prompt lengths, skipping core's gaps.
void expectSeries(QXYSeries* s, const std::vector<double>& xs,
                  const std::vector<std::optional<double>>& ys, double scale) {
    QVERIFY(s);
    const auto pts = s->points();
    qsizetype k = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        if (!ys[i]) continue;
        QVERIFY2(k < pts.size(), "the series has fewer points than core has values");
        QCOMPARE(pts[k].x(), xs[i]);
        QVERIFY2(sameValue(pts[k].y(), *ys[i] * scale),
                 qPrintable(QStringLiteral("at N = %1: chart %2, core %3")
                                .arg(xs[i])
                                .arg(pts[k].y())
                                .arg(*ys[i] * scale)));
        ++k;
    }
    QCOMPARE(k, pts.size());
}

void expectSeries(QXYSeries* s, const std::vector<double>& xs, const std::vector<double>& ys,
                  double scale) {
    std::vector<std::optional<double>> o(ys.begin(), ys.end());
    expectSeries(s, xs, o, scale);
}

void pick(QComboBox* box, const QVariant& data) {
    const int i = box->findData(data);
    QVERIFY2(i >= 0, qPrintable(data.toString()));
    box->setCurrentIndex(i);
    emit box->activated(i);
}

// As if pasted: one edit with the whole text.
void typeInto(QLineEdit* edit, const QString& text) {
    edit->setText(text);
    emit edit->textEdited(text);
}

} // namespace

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

    void invalidInputIsRefusedWithItsReason_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("message");
        QTest::newRow("negative peak") << "peak"
                                       << "-5"
                                       << "Peak must be from";
        QTest::newRow("peak not a number") << "peak"
                                           << "fast"
                                           << "Peak must be a number of TFLOP/s";
        QTest::newRow("tokens not a count") << "min"
                                            << "12q"
                                            << "Shortest prompt:";
        QTest::newRow("zero tokens") << "max"
                                     << "0"
                                     << "Longest prompt: '0' is not a positive token count";
        QTest::newRow("too many tokens") << "max"
                                         << "200m"
                                         << "Longest prompt must be from";
        QTest::newRow("sweep length") << "sweep"
                                      << "-1k"
                                      << "Model-size length";
    }
    void invalidInputIsRefusedWithItsReason() {
        QFETCH(QString, field);
        QFETCH(QString, text);
        QFETCH(QString, message);
        auto w = makeWindow();
        const auto p = panelOf(w);
        NumberField* f = field == "peak"  ? p.peakField()
                         : field == "min" ? p.minTokensField()
                         : field == "max" ? p.maxTokensField()
                                          : p.sweepTokensField();
        const Scenario before = explorerOf(w)->scenario();
        typeInto(f->edit(), text);
        w->refreshNow();
        QVERIFY(!f->isValid());
        QVERIFY2(f->errorText().contains(message), qPrintable(f->errorText()));
        QCOMPARE(explorerOf(w)->scenario(), before);
    }

    void tierAndRangeRefusals() {
        auto w = makeWindow();
        auto* m = panelOf(w).tierModel();
        const Scenario before = explorerOf(w)->scenario();
        QSignalSpy rejected(m, &TierTableModel::rejected);
        QVERIFY(!m->setData(m->index(0, TierTableModel::Bandwidth), QStringLiteral("-1"),
                            Qt::EditRole));
        QCOMPARE(rejected.count(), 1);
        QVERIFY2(
            panelOf(w).messageText().contains("Read bandwidth must be a positive number of GB/s"),
            qPrintable(rejected.front().front().toString() + " / " + panelOf(w).messageText()));
        QVERIFY(!m->setData(m->index(0, TierTableModel::FixedCost), QStringLiteral("soon"),
                            Qt::EditRole));
        QVERIFY(!m->setData(m->index(0, TierTableModel::StagingColumn), QStringLiteral("teleport"),
                            Qt::EditRole));
        QVERIFY(
            !m->setData(m->index(0, TierTableModel::Colour), QStringLiteral("#12"), Qt::EditRole));
        QVERIFY(!m->setData(m->index(0, TierTableModel::Name), QStringLiteral("  "), Qt::EditRole));
        QCOMPARE(rejected.count(), 5);
        QVERIFY(panelOf(w).messageText().contains("A tier needs a name"));
        typeInto(panelOf(w).minTokensField()->edit(), QStringLiteral("200k"));
        QVERIFY(panelOf(w).messageText().contains("longest prompt must be longer"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), before);
        // A model file that isn't there is refused and the scenario keeps its model.
        QVERIFY(!panelOf(w).selectModel(QStringLiteral("/nonexistent/config.json")));
        QVERIFY(!panelOf(w).messageText().isEmpty());
        QCOMPARE(explorerOf(w)->scenario().model, before.model);
    }

    void tierModelPassesTheModelTester() {
        TierTableModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Scenario s = *builtinScenario("illustrative", presets()); // three tiers
        m.setTiers(s.tiers);
        QCOMPARE(m.rowCount(), 3);
        QCOMPARE(m.columnCount(), int(TierTableModel::ColumnCount));
        m.addTier(tierFromPreset(*presets().findTier("dram-pcie4")));
        QVERIFY(
            m.setData(m.index(3, TierTableModel::Colour), QStringLiteral("#123456"), Qt::EditRole));
        QCOMPARE(m.data(m.index(3, TierTableModel::Colour), Qt::DecorationRole).value<QColor>(),
                 QColor("#123456"));
        m.removeTier(0);
        m.removeTier(7); // out of range: ignored
        m.setTiers({});
        QCOMPARE(m.rowCount(), 0);
    }

    void openSaveDropAndRestore() {
        QTemporaryDir dir;
        const QString file = dir.filePath("mine.kvbe.json");
        {
            auto w = makeWindow();
            panelOf(w).utilisationSlider()->setValue(70);
            w->refreshNow();
            QVERIFY(w->saveScenario(file).ok());
            QCOMPARE(w->recentFiles().front(), QFileInfo(file).absoluteFilePath());
            panelOf(w).utilisationSlider()->setValue(35);
            w->refreshNow();
            w->close(); // saves layout and the last scenario
        }
        auto w = makeWindow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.35); // restored from QSettings
        QVERIFY(w->openFile(file).ok());
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.7);
        QCOMPARE(panelOf(w).utilisationSlider()->value(), 70);

        // A config.json dropped on the window becomes the model.
        const QString config =
            QStringLiteral(KVBE_SOURCE_DIR "/resources/models/Qwen__Qwen3-8B.json");
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(config)});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &drop);
        w->refreshNow();
        QCOMPARE(QString::fromStdString(explorerOf(w)->scenario().model), config);
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        QVERIFY(!w->openFile(dir.filePath("missing.kvbe.json")).ok());
    }

    void presentationAndThemes() {
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* dock = w->findChild<QDockWidget*>("scenarioDock");
        QVERIFY(dock->isVisible());
        w->setPresentation(true);
        QVERIFY(!dock->isVisible());
        for (auto* c : chartsOf(w))
            QVERIFY(c->chartStyle().presentation);
        w->setDark(true);
        for (auto* c : chartsOf(w))
            QVERIFY(c->chartStyle().dark);
        // Refills keep working under the new style.
        panelOf(w).utilisationSlider()->setValue(90);
        w->refreshNow();
        const auto ref = reference(explorerOf(w)->scenario());
        expectSeries(chartOf(w, "breakeven")->seriesByKey("bstar"), ref.curves.tokens,
                     ref.curves.breakevenBandwidth, 1e-9);
        w->setPresentation(false);
        QVERIFY(dock->isVisible());
        w->close();
    }
};

QTEST_MAIN(TestUiControls)
#include "tst_ui_controls.moc"
