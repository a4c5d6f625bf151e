// The Workload view: a real trace opened off the UI thread, the summary sentence against core's
// replay computed here, the histogram's share above p* against a count made here, Cancel and bad
// files, the controls and the scenario re-running the replay, and the charts' export.
#include "ui_test_support.h"
#include "workload_reference.h"

#include "kvbe/base/units.h"
#include "kvbe/files/file_kind.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDropEvent>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QMimeData>
#include <QProcess>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QUrl>

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// The Mooncake conversation trace (tests/fixtures/traces/README.md: where it comes from).
QString realTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}
QString handTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/hand.jsonl");
}

WorkloadView* viewOf(MainWindow& w) {
    return w.findChild<WorkloadView*>(QStringLiteral("workloadView"));
}

// Until no read, no replay and no recompute is pending.
bool settle(MainWindow& w) {
    auto* v = viewOf(w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() &&
                   !w.findChild<Explorer*>(QStringLiteral("explorer"))->recomputePending();
        },
        120000);
}

// Prompt lengths read with Qt's JSON parser, not the production reader.
std::vector<double> realInputLengths() {
    std::vector<double> out;
    QFile f(realTracePath());
    if (!f.open(QIODevice::ReadOnly)) return out;
    while (!f.atEnd()) {
        const QByteArray line = f.readLine().trimmed();
        if (line.isEmpty()) continue;
        out.push_back(QJsonDocument::fromJson(line).object().value("input_length").toDouble());
    }
    return out;
}

QString pct(double share) {
    return QString::number(share * 100, 'f', 1) + QStringLiteral(" %");
}

} // namespace

class TestUiWorkload : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theViewIsATabWithItsCharts() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QVERIFY(v);
        QVERIFY(tabsOf(w)->indexOf(v) >= 0);
        for (const char* key : {"workload-lengths", "workload-capacity", "workload-ttft"})
            QVERIFY2(v->findChild<WorkloadChart*>(QString::fromLatin1(key)), key);
        // Before a trace: no workload in the charts, a sentence that asks for one.
        QVERIFY(!v->trace());
        QVERIFY(v->findChild<QLabel*>("workloadSummary")->text().contains("Open a request trace"));
    }

    // The real trace, read on a worker; the summary's numbers are core's replay's, set up here.
    void realTraceSummaryEqualsCoreReplay() {
        QVERIFY2(QFile::exists(realTracePath()), qPrintable(realTracePath() + " is missing"));
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QSignalSpy loaded(v, &WorkloadView::traceLoaded);
        QVERIFY(v->openTrace(realTracePath()));
        QVERIFY(v->loading());
        QVERIFY(settle(*w));
        QCOMPARE(loaded.count(), 1);
        QCOMPARE(v->trace()->size(), std::size_t(12031));
        QVERIFY(v->findChild<QLabel*>("workloadFile")->text().contains("12031 requests"));
        QVERIFY(v->result() && v->result()->replay);
        // For the record (no assertion on speed): what one control change costs on the worker.
        qInfo("replay %.1f ms (%llu lookups) + sweep %.1f ms on the worker",
              v->result()->replaySeconds * 1e3,
              static_cast<unsigned long long>(v->result()->replay->lookups),
              v->result()->sweepSeconds * 1e3);

        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const auto ref = reference(explorerOf(w)->scenario());
        const auto& e = ref.eval;
        QVERIFY(e.gpu.has_value());
        auto check = [&](double dram, const char* admission) {
            const ReplayResult r = referenceReplay(*t, e, dram, 8 * 1024 * kGiB);
            const RuleResult* rule = r.rule(admission);
            const RuleResult* gpu = r.rule("gpu-only");
            const QString s = v->findChild<QLabel*>("workloadSummary")->text();
            const double change = rule->ttft.mean / gpu->ttft.mean - 1;
            // The tiers by the names the charts and the scenario panel give them, not their
            // presets' keys.
            const QString dramName = QString::fromStdString(e.tiers[0].name);
            const QString nvmeName = QString::fromStdString(e.tiers[1].name);
            QCOMPARE(dramName, QStringLiteral("Host DRAM (PCIe 5.0)"));
            QVERIFY2(s.contains(QStringLiteral("With %1 GiB %2 and 8 TiB %3")
                                    .arg(dram / kGiB)
                                    .arg(dramName, nvmeName)),
                     qPrintable(s));
            QVERIFY2(
                s.contains(pct(rule->gainShare) + " of requests are faster than GPU-only caching"),
                qPrintable(s));
            QVERIFY2(s.contains(QStringLiteral("mean TTFT %1%2 %")
                                    .arg(change < 0 ? QStringLiteral("\u2212") : "+")
                                    .arg(std::abs(change) * 100, 0, 'f', 1)),
                     qPrintable(s));
            QVERIFY2(s.contains(QStringLiteral("(%1 \u2192 %2 ms, %3 admission)")
                                    .arg(gpu->ttft.mean * 1e3, 0, 'f', 1)
                                    .arg(rule->ttft.mean * 1e3, 0, 'f', 1)
                                    .arg(admission)),
                     qPrintable(s));
            QVERIFY2(s.contains(QStringLiteral(", %1 GPU prefill seconds saved")
                                    .arg(rule->gpuSecondsSaved - gpu->gpuSecondsSaved, 0, 'f', 1)),
                     qPrintable(s));
            QVERIFY2(s.contains(QStringLiteral("%1 needs %2 of writes")
                                    .arg(nvmeName, QString::fromStdString(formatBandwidth(
                                                       r.tiers.back().writeRateP99)))),
                     qPrintable(s));
            // The view's own replay holds the same figures.
            QCOMPARE(v->result()->replay->rule(admission)->gainShare, rule->gainShare);
        };
        check(512 * kGiB, "optimal");

        // The admission control re-runs the replay (all rules come from one replay; the
        // sentence follows the chosen one).
        v->findChild<QComboBox*>("workloadAdmission")->setCurrentText("always");
        QVERIFY(settle(*w));
        check(512 * kGiB, "always");

        // The DRAM slider: 2^((s − 4)/4) GiB, so step 36 is 256 GiB.
        auto* dram = v->findChild<QSlider*>("workloadTier1");
        QVERIFY(dram);
        dram->setValue(36);
        QVERIFY(settle(*w));
        QCOMPARE(v->result()->config.tiers.front().capacityBytes, 256 * kGiB);
        check(256 * kGiB, "always");
        QVERIFY(v->findChild<QLabel*>("workloadTier1Value")->text().startsWith("256 GiB"));
    }

    // The store-after control: the view's replay writes what core's replay at K = 2 writes, the
    // sentence says so, and the capacity chart says why it has no sweep (exact only for K = 1).
    void storeAfterControlGatesTheOffloadTiers() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QVERIFY(v->openTrace(realTracePath()));
        QVERIFY(settle(*w));
        QVERIFY(v->result()->sweep);
        auto* k = v->findChild<QSpinBox*>("workloadStoreAfter");
        QVERIFY(k);
        QCOMPARE(k->value(), 1);
        k->setValue(2);
        QVERIFY(settle(*w));
        QCOMPARE(v->result()->config.storeAfter, 2);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const auto ref = reference(explorerOf(w)->scenario());
        const ReplayResult r = referenceReplay(*t, ref.eval, 512 * kGiB, 8 * 1024 * kGiB, true, 2);
        const auto& mine = v->result()->replay->tiers;
        QCOMPARE(mine.size(), r.tiers.size());
        for (std::size_t i = 1; i < r.tiers.size(); ++i)
            QCOMPARE(mine[i].blocksWritten, r.tiers[i].blocksWritten);
        QVERIFY(!v->result()->sweep);
        QVERIFY(v->result()->sweepNote.contains("store every block"));
        QVERIFY(v->findChild<QLabel*>("workloadSummary")->text().contains("2nd sighting"));
        k->setValue(1);
        QVERIFY(settle(*w));
        QVERIFY(v->result()->sweep);
    }

    // Each tier's p* line says the share of requests at or above it: counted here from the file.
    void histogramShareAbovePStarEqualsACount() {
        QVERIFY2(QFile::exists(realTracePath()), qPrintable(realTracePath() + " is missing"));
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QVERIFY(v->openTrace(realTracePath()));
        QVERIFY(settle(*w));
        auto* chart = v->findChild<PromptLengthChart*>("workload-lengths");
        QVERIFY(chart);
        const auto lengths = realInputLengths();
        QCOMPARE(lengths.size(), std::size_t(12031));
        std::size_t inBins = 0;
        for (const auto& b : chart->bins())
            inBins += b.requests;
        QCOMPARE(inBins, lengths.size());
        // Each bin holds the prompts in [lo, hi), counted here.
        for (const auto& b : chart->bins()) {
            std::size_t in = 0;
            for (double n : lengths)
                in += std::max(1.0, n) >= b.lo && std::max(1.0, n) < b.hi;
            QCOMPARE(b.requests, in);
        }
        const auto ref = reference(explorerOf(w)->scenario());
        int drawn = 0;
        for (std::size_t i = 0; i < ref.eval.tiers.size(); ++i) {
            // The whole prefix every view states (the prompts are whole tokens: the same count).
            const auto pStar =
                wholeBreakevenPrefix(ref.eval.cost.breakevenPrefix(ref.eval.tiers[i]));
            const QString key = QStringLiteral("tier/%1/pstar").arg(i);
            if (!pStar) {
                QVERIFY(!chart->seriesByKey(key));
                continue;
            }
            std::size_t above = 0;
            for (double n : lengths)
                above += n >= *pStar;
            const double share = double(above) / double(lengths.size());
            auto* line = chart->seriesByKey(key);
            QVERIFY(line);
            // The line's legend entry says the share.
            const QString text = line->name();
            QVERIFY2(
                text.contains(
                    QStringLiteral("%1 % of requests at or above").arg(share * 100, 0, 'f', 1)),
                qPrintable(text));
            QVERIFY(chart->labelText(key).contains("p*"));
            QCOMPARE(line->at(0).x(), std::max(1.0, *pStar));
            ++drawn;
        }
        QVERIFY(drawn > 0);
    }

    // A trace dropped on the window opens in the Workload tab; a scenario file still opens as one.
    void droppingATraceOpensIt() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QCOMPARE(classifyFile(handTracePath().toStdString()).kind, FileKind::Trace);
        QCOMPARE(
            classifyFile(KVBE_SOURCE_DIR "/resources/models/meta-llama__Llama-3.2-3B.json").kind,
            FileKind::ModelConfig);
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(handTracePath())});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QApplication::sendEvent(w.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(w.get(), &drop);
        QVERIFY(settle(*w));
        QCOMPARE(v->traceFile(), handTracePath());
        QCOMPARE(tabsOf(w)->currentWidget(), v);
        QCOMPARE(v->trace()->size(), std::size_t(4));
        QVERIFY(v->result() && v->result()->replay);
    }

    // Cancel: the read is dropped whole; the trace shown before stays, in the view and the charts.
    void cancelLeavesNoHalfLoadedState() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        // With nothing open before: nothing open after.
        QSignalSpy cancelled(v, &WorkloadView::loadCancelled);
        QVERIFY(v->openTrace(handTracePath()));
        v->findChild<QPushButton*>("workloadCancel")->click();
        QVERIFY(settle(*w));
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!v->trace());
        QVERIFY(!v->result());
        QVERIFY(v->traceFile().isEmpty());
        for (auto* c : v->charts())
            QVERIFY(!c->workload());
        QVERIFY(!v->findChild<QProgressBar*>("workloadProgress")->isVisibleTo(v));

        // With a trace open: it stays.
        QVERIFY(v->openTrace(handTracePath()));
        QVERIFY(settle(*w));
        QCOMPARE(v->trace()->size(), std::size_t(4));
        const auto before = v->result();
        QVERIFY(before);
        const QString other = realTracePath();
        QVERIFY(v->openTrace(other));
        QVERIFY(!v->openTrace(other)); // one read at a time
        v->findChild<QPushButton*>("workloadCancel")->click();
        QVERIFY(settle(*w));
        QCOMPARE(cancelled.count(), 2);
        QCOMPARE(v->traceFile(), handTracePath());
        QCOMPARE(v->trace()->size(), std::size_t(4));
        QCOMPARE(v->result(), before);
        QVERIFY(v->findChild<QLabel*>("workloadFile")->text().startsWith("hand.jsonl"));
        for (auto* c : v->charts())
            QCOMPARE(c->workload(), before);
    }

    // A bad line: the error names the file, the line and the field, in the window; nothing loads.
    void badTraceShowsFileLineAndField() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.jsonl");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"timestamp\": 0, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": "
                "[1, 2]}\n"
                "{\"timestamp\": 10, \"input_length\": 1024, \"output_length\": 1, \"hash_ids\": "
                "[1, 2]}\n"
                "{\"timestamp\": 20, \"input_length\": \"many\", \"output_length\": 1, "
                "\"hash_ids\": [1, 2]}\n");
        f.close();
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QSignalSpy failed(v, &WorkloadView::loadFailed);
        QVERIFY(v->openTrace(path));
        QVERIFY(settle(*w));
        QCOMPARE(failed.count(), 1);
        auto* error = v->findChild<QLabel*>("workloadError");
        QVERIFY(error->isVisibleTo(v));
        QVERIFY2(error->text().contains(path + ":3:"), qPrintable(error->text()));
        QVERIFY2(error->text().contains("input_length"), qPrintable(error->text()));
        QVERIFY(!v->trace());
        // A good file afterwards clears it.
        QVERIFY(v->openTrace(handTracePath()));
        QVERIFY(settle(*w));
        QVERIFY(!error->isVisibleTo(v));
    }

    // The scenario changes in the main window: the replay follows it.
    void scenarioChangeReRunsTheReplay() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        QVERIFY(v->openTrace(handTracePath()));
        QVERIFY(settle(*w));
        Scenario s = explorerOf(w)->scenario();
        s.utilisation = s.utilisation / 2;
        explorerOf(w)->edit(s, "u");
        w->refreshNow();
        QVERIFY(settle(*w));
        QCOMPARE(v->result()->eval->scenario.utilisation, s.utilisation);
        const auto ref = reference(s);
        const auto pStar = wholeBreakevenPrefix(ref.eval.cost.breakevenPrefix(ref.eval.tiers[0]));
        QCOMPARE(v->result()->scenarioTiers[0].pStar.has_value(), pStar.has_value());
        if (pStar) QCOMPARE(*v->result()->scenarioTiers[0].pStar, *pStar);
    }

    // Every workload chart exports to a non-empty PNG and SVG, in the window and headless.
    void chartsExport() {
        auto w = makeWindow();
        auto* v = viewOf(*w);
        const QString trace = realTracePath();
        QVERIFY(v->openTrace(trace));
        QVERIFY(settle(*w));
        QTemporaryDir dir;
        for (auto* c : v->charts()) {
            // The Capacity and Plan charts compute while their tabs are shown: tst_ui_capacity
            // and tst_ui_plan export them.
            if (c->key() == QLatin1String("capacity") || c->key() == QLatin1String("plan"))
                continue;
            for (const char* ext : {"png", "svg"}) {
                const QString out = dir.filePath(c->key() + "." + ext);
                const Status st = exportChart(*c, out, QSize(900, 560));
                QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
                QFile f(out);
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QByteArray bytes = f.readAll();
                QVERIFY(bytes.size() > 1000);
                if (QByteArray(ext) == "png")
                    QVERIFY(bytes.startsWith("\x89PNG"));
                else
                    QVERIFY(bytes.contains("<svg"));
            }
            QVERIFY(!c->csv().isEmpty());
        }
        // The window's Export menu acts on the Workload tab's visible chart.
        tabsOf(w)->setCurrentWidget(v);
        auto* tabs = v->findChild<QTabWidget*>("workloadCharts");
        tabs->setCurrentIndex(2);
        QCOMPARE(currentChartOf(w),
                 static_cast<ChartView*>(v->findChild<WorkloadChart*>("workload-ttft")));
        // kvbe --export with --trace, without a display.
        const QString out = dir.filePath("capacity.png");
        QProcess p;
        auto env = QProcessEnvironment::systemEnvironment();
        env.remove("DISPLAY");
        env.remove("QT_QPA_PLATFORM");
        p.setProcessEnvironment(env);
        p.start(QStringLiteral(KVBE_GUI_PATH), {"--export", out, "--chart", "workload-capacity",
                                                "--trace", trace, "--size", "800x450"});
        QVERIFY(p.waitForFinished(120000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        QImage img(out);
        QCOMPARE(img.size(), QSize(800, 450));
        // A workload chart without a trace is refused with a sentence.
        p.start(QStringLiteral(KVBE_GUI_PATH),
                {"--export", dir.filePath("x.png"), "--chart", "workload-ttft"});
        QVERIFY(p.waitForFinished(120000));
        QCOMPARE(p.exitCode(), 1);
        QVERIFY(p.readAllStandardError().contains("--trace"));
    }
};

QTEST_MAIN(TestUiWorkload)
#include "tst_ui_workload.moc"
