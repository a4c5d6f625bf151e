// The Workload tab's answers a person can act on: a model too big for one GPU gets the
// tensor-parallel sizes that hold it (a click away) and a GPU slider that gives the HBM for KV,
// in the window's words; and where the replay and the one-pass capacity curve differ (the write
// queue drops hits the curve assumes), both figures are shown and told apart; requests longer than
// the model's context are counted and named.
#include "ui_test_support.h"
#include "workload_reference.h"

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSlider>
#include <QToolButton>

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

WorkloadView* viewOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}

bool settle(MainWindow& w) {
    auto* v = viewOf(w);
    return QTest::qWaitFor(
        [&] { return !v->loading() && !v->replaying() && !explorerOf(&w)->recomputePending(); },
        120000);
}

QString text(WorkloadView* v, const char* name) {
    return child<QLabel>(v, QString::fromLatin1(name))->text();
}

// Llama 3.3 70B on one H200 (tensor parallel 1), edited as one change, with the hand-written
// trace open and everything settled.
bool open70BOnOneH200(MainWindow& w) {
    Scenario s = explorerOf(&w)->scenario();
    s.model = "meta-llama/Llama-3.3-70B-Instruct";
    s.gpu = "h200";
    s.tensorParallel = 1;
    explorerOf(&w)->edit(s, QStringLiteral("70B on an H200"));
    return w.openTrace(QStringLiteral(KVBE_FIXTURES "/traces/hand.jsonl")) && settle(w);
}

} // namespace

class TestUiWorkloadAnswers : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // Llama 3.3 70B (70.55 B parameters in BF16: 141.11 GB) on one H200 (90 % of 141 GB is
    // 126.9 GB): the weights leave no HBM for KV. Tensor parallel 2 leaves 0.9 · 282 − 141.11 =
    // 112.69 GB, 4 leaves 366.49 GB. The sentence says so once, with no command-line flag; the
    // GPU slider is "not set"; a click on "2 GPUs" sets the scenario's tensor parallel and the
    // replay runs; back on one GPU, the slider gives the HBM and the replay runs too.
    void aBigModelOnOneGpuGetsAnAnswer() {
        auto w = makeWindow();
        w->show();
        auto* v = viewOf(*w);
        QVERIFY(open70BOnOneH200(*w));
        QVERIFY(v->result() && v->result()->gpuCacheMissing);
        const QString summary = text(v, "workloadSummary");
        for (const char* part :
             {"weights (141.11 GB in BF16) do not fit in 90 % of one NVIDIA H200 SXM 141GB (126.90 "
              "GB)",
              "Model ▸ Weights", "2 GPUs leave 112.69 GB", "4 GPUs leave 366.49 GB", "GPU slider"})
            QVERIFY2(summary.contains(QString::fromUtf8(part)), qPrintable(summary));
        QVERIFY2(!summary.contains(QLatin1String("--gpu-cache")), qPrintable(summary));
        // Said once: no red box repeating it.
        QVERIFY(!child<QLabel>(v, QStringLiteral("workloadError"))->isVisible());
        QVERIFY2(text(v, "workloadTier0Value").startsWith(QLatin1String("not set")),
                 qPrintable(text(v, "workloadTier0Value")));

        auto* advice = child<QLabel>(v, QStringLiteral("workloadGpuAdvice"));
        QVERIFY(advice->isVisible());
        QVERIFY2(advice->text().contains(QLatin1String("href=\"tp:2\"")),
                 qPrintable(advice->text()));
        emit advice->linkActivated(QStringLiteral("tp:2"));
        QVERIFY(settle(*w));
        QCOMPARE(explorerOf(w)->scenario().tensorParallel, 2);
        QVERIFY(v->result() && v->result()->replay);
        QVERIFY(!advice->isVisible());
        QVERIFY2(text(v, "workloadSummary").startsWith(QLatin1String("With ")),
                 qPrintable(text(v, "workloadSummary")));

        // One GPU again, and the GPU slider at 16 GiB (step 20: 2^((20 − 4)/4) GiB).
        explorerOf(w)->undoStack()->undo();
        QVERIFY(settle(*w));
        QCOMPARE(explorerOf(w)->scenario().tensorParallel, 1);
        QVERIFY(v->result()->gpuCacheMissing);
        child<QSlider>(v, QStringLiteral("workloadTier0"))->setValue(20);
        QVERIFY(settle(*w));
        QVERIFY(v->result() && v->result()->replay);
        QCOMPARE(v->result()->config.gpuCapacityBytes, 16.0 * 1024 * 1024 * 1024);
        QVERIFY2(text(v, "workloadTier0Value").startsWith(QLatin1String("16 GiB")),
                 qPrintable(text(v, "workloadTier0Value")));
    }

    // Llama 3.3 70B with FP8 weights on one H200 (issue 40): the decoder's 68.45 B weights take
    // a byte each, the embeddings and untied lm_head (2 · 128256 · 8192) stay in BF16, so the
    // weights take 72.66 GB and 90 % of 141 GB leaves 54.24 GB for KV: the Workload tab answers.
    // The GPU row's handle sits at that value (it stayed at the left end when only the value
    // changed), and a drag past it is said in red.
    void seventyBWithFp8WeightsOnOneH200GetsAnAnswer() {
        auto w = makeWindow();
        w->show();
        auto* v = viewOf(*w);
        QVERIFY(open70BOnOneH200(*w));
        QVERIFY(v->result() && v->result()->gpuCacheMissing);

        // Weights ▸ FP8 in the scenario panel, as a user picks it.
        QComboBox* weights = panelOf(w).get<QComboBox>("weightDtype");
        const int fp8 = weights->findData(QStringLiteral("fp8"));
        QVERIFY(fp8 > 0);
        weights->setCurrentIndex(fp8);
        emit weights->activated(fp8);
        QVERIFY(settle(*w));
        QVERIFY(explorerOf(w)->scenario().weightDtype == WeightDtype::FP8);
        // Pins and legends tell it from the BF16 one.
        QVERIFY2(explorerOf(w)->result()->label.contains(QLatin1String(", FP8 weights")),
                 qPrintable(explorerOf(w)->result()->label));

        const double decoder =
            80 * (8192.0 * 8192 * 2 + 8192.0 * 1024 * 2 + 3.0 * 8192 * 28672 + 2 * 8192) + 8192;
        const double embeddings = 2 * 128256.0 * 8192;
        const double left = 0.9 * 141e9 - (decoder * 1 + embeddings * 2);
        QVERIFY2(std::abs(left - 54.24e9) < 0.01e9, qPrintable(QString::number(left)));
        QVERIFY(v->result() && !v->result()->gpuCacheMissing);
        QVERIFY(v->result()->replay);
        QVERIFY(sameValue(v->result()->config.gpuCapacityBytes, left));
        const QString summary = text(v, "workloadSummary");
        QVERIFY2(summary.startsWith(QLatin1String("With ")), qPrintable(summary));

        auto* slider = child<QSlider>(v, QStringLiteral("workloadTier0"));
        const int step = int(std::lround(std::log2(left / (1024.0 * 1024 * 1024)) * 4)) + 4;
        QCOMPARE(slider->value(), step);
        const QString value = text(v, "workloadTier0Value");
        QVERIFY2(!value.contains(QLatin1String("beside the weights")), qPrintable(value));

        // 128 GiB (step 32): more than the HBM the weights leave, said beside the slider.
        slider->setValue(32);
        QVERIFY(settle(*w));
        const QString over = text(v, "workloadTier0Value");
        QVERIFY2(over.startsWith(QLatin1String("128 GiB")) &&
                     over.contains(QLatin1String("more than the 54.24 GB left beside the weights")),
                 qPrintable(over));
        // The row runs to the H200's 141 GB (step 32, 128 GiB), not to 64 TiB.
        QCOMPARE(slider->maximum(), 32);

        // Auto: back to the default, which follows the weights again.
        auto* automatic = child<QToolButton>(v, QStringLiteral("workloadGpuAuto"));
        QVERIFY(automatic->isEnabled());
        automatic->click();
        QVERIFY(settle(*w));
        QVERIFY(!automatic->isEnabled());
        QVERIFY(sameValue(v->result()->config.gpuCapacityBytes, left));
        QCOMPARE(slider->value(), step);
        const int bf16 = weights->findData(QStringLiteral("bf16"));
        QVERIFY(bf16 >= 0);
        weights->setCurrentIndex(bf16);
        emit weights->activated(bf16);
        QVERIFY(settle(*w));
        QVERIFY(v->result()->gpuCacheMissing); // BF16 weights leave no room: it followed them
    }

    // The conversation trace with 512 GiB of DRAM and 8 TiB of NVMe, write queues on (the
    // default): the queues drop writes, so the replay finds fewer hits than the one-pass curve,
    // which assumes writes keep up. The sentence gives both hit ratios (core's replay with and
    // without the queue, set up here); the curve says "if writes keep up"; the replay's own hit
    // ratio is a point at the capacity set, labelled with the points the backlog cost.
    void theReplayAndTheCurveAreToldApart() {
        auto w = makeWindow();
        w->show();
        auto* v = viewOf(*w);
        QVERIFY(w->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")));
        QVERIFY(settle(*w));
        QVERIFY(v->result() && v->result()->replay);
        auto t = loadTrace(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl", {});
        QVERIFY(t.ok());
        const auto ref = reference(explorerOf(w)->scenario());
        const double GiB = 1024.0 * 1024 * 1024;
        const ReplayResult queued = referenceReplay(*t, ref.eval, 512 * GiB, 8192 * GiB, true);
        const ReplayResult keptUp = referenceReplay(*t, ref.eval, 512 * GiB, 8192 * GiB, false);
        const double hits = queued.anyTier.tokenWeighted * 100;
        const double hitsKeptUp = keptUp.anyTier.tokenWeighted * 100;
        qInfo("hits %.1f %% with the write queue, %.1f %% with writes that keep up", hits,
              hitsKeptUp);
        QVERIFY2(hitsKeptUp > hits + 0.5, "the fixture's writes no longer fall behind");

        const QString summary = text(v, "workloadSummary");
        const QString both =
            QStringLiteral("%1 % of prompt tokens hit a cache, %2 % if writes kept up")
                .arg(hits, 0, 'f', 1)
                .arg(hitsKeptUp, 0, 'f', 1);
        QVERIFY2(summary.contains(both), qPrintable(summary + QStringLiteral("\nwanted: ") + both));

        auto* capacity =
            qobject_cast<WorkloadChart*>(child<QWidget>(v, QStringLiteral("workload-capacity")));
        QVERIFY(capacity);
        QVERIFY2(capacity->seriesByKey(QStringLiteral("hits/any"))
                     ->name()
                     .endsWith(QLatin1String("if writes keep up")),
                 qPrintable(capacity->seriesByKey(QStringLiteral("hits/any"))->name()));
        QVERIFY(capacity->seriesByKey(QStringLiteral("saved"))
                    ->name()
                    .endsWith(QLatin1String("if writes keep up")));
        auto* point = capacity->seriesByKey(QStringLiteral("replay/0/hits"));
        QVERIFY(point);
        QCOMPARE(point->count(), 1);
        QCOMPARE(point->at(0).x(), 512.0);
        QVERIFY(std::abs(point->at(0).y() - hits) < 1e-9);
        const QString label = capacity->labelText(QStringLiteral("replay/0/label"));
        QVERIFY2(label.contains(QStringLiteral("%1 points lost to the write backlog")
                                    .arg(hitsKeptUp - hits, 0, 'f', 1)),
                 qPrintable(label));
    }

    // Mistral 7B (a context of 32,768 tokens) on the conversation trace: the requests longer than
    // that, counted here from the file, are named after the answer.
    void requestsPastTheContextAreNamed() {
        QFile f(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl"));
        QVERIFY(f.open(QIODevice::ReadOnly));
        int past = 0, all = 0;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().trimmed();
            if (line.isEmpty()) continue;
            ++all;
            past += QJsonDocument::fromJson(line).object().value("input_length").toInt() > 32768;
        }
        QVERIFY(past > 0);
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.model = "mistralai/Mistral-7B-Instruct-v0.3";
        explorerOf(w)->edit(s, QStringLiteral("Mistral"));
        QVERIFY(w->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")));
        QVERIFY(settle(*w));
        const QString summary = child<QLabel>(w.get(), QStringLiteral("workloadSummary"))->text();
        const QString want =
            QStringLiteral("%1 of the trace's %2 requests (%3 %) are longer than "
                           "mistralai/Mistral-7B-Instruct-v0.3's context of 32,768 tokens")
                .arg(past)
                .arg(all)
                .arg(100.0 * past / all, 0, 'f', 1);
        QVERIFY2(summary.contains(want), qPrintable(summary + QStringLiteral("\nwanted: ") + want));
    }
};

QTEST_MAIN(TestUiWorkloadAnswers)
#include "tst_ui_workload_answers.moc"
