// The window's imported measurements: calibration files of every format into the Fleet view,
// implied curves and break-even, drops, mismatch warnings, fit and adopt, the py-kvcache export,
// and a 50 MB import that leaves the UI thread free.
#include "kvbe/calibration/fit.h"
#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "ui_event_clock.h"
#include "ui_test_support.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QMimeData>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QXYSeries>

#include <cerrno>
#include <csignal>
#include <fstream>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES "/calibration");

// An upper bound only: a 50 MB import under ASan beside a clang build took more than 60 s once.
bool waitImport(FleetPanel* f) {
    return QTest::qWaitFor([f] { return !f->importing(); }, 300000);
}

int rowOf(FleetModel* m, const QString& fileName) {
    for (int i = 0; i < m->rowCount(); ++i)
        if (m->index(i, FleetModel::Source).data().toString() == fileName) return i;
    return -1;
}

QString cell(FleetModel* m, int row, int column) {
    return m->index(row, column).data().toString();
}

} // namespace

class TestMeasuredImport : public QObject {
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
    void cleanup() { qunsetenv("KVBE_FAKE_PROBE_QD1_US"); }

    void importsEveryFormat() {
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        auto* m = fleet->model();
        QAbstractItemModelTester tester(m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(w->importCalibrations({kFixtures}));
        QVERIFY(fleet->importing());
        QVERIFY(waitImport(fleet));
        QCOMPARE(m->rowCount(), 14); // every fixture, shaped as the tools write them
        QVERIFY(fleet->importErrors().isEmpty());

        const int kvbeRow = rowOf(m, QStringLiteral("kvbe-node17.json"));
        QVERIFY(kvbeRow >= 0);
        QCOMPARE(cell(m, kvbeRow, FleetModel::Format), QStringLiteral("kvbe"));
        QCOMPARE(cell(m, kvbeRow, FleetModel::Host), QStringLiteral("node17"));
        QCOMPARE(cell(m, kvbeRow, FleetModel::Gpu), QStringLiteral("NVIDIA H100 80GB HBM3"));
        QCOMPARE(cell(m, kvbeRow, FleetModel::Model), QStringLiteral("meta-llama/Llama-3.2-3B"));
        QCOMPARE(cell(m, kvbeRow, m->pstarColumn("nvme")), QStringLiteral("6057"));

        // The published break-even prefix lengths (cost-model.md) of the py-kvcache files.
        struct Row {
            const char* file;
            const char* format;
            double ssd, mem;
        };
        const Row py[] = {{"pykvcache-v1-llama-3.2-3b-h100.json", "py-kvcache-v1", 6057, 736},
                          {"pykvcache-v1-qwen3-4b-h100.json", "py-kvcache-v1", 6203, 825},
                          {"pykvcache-v1-qwen3-4b-rtx4000ada.json", "py-kvcache-v1", 559, 481},
                          {"pykvcache-v2.json", "py-kvcache-v2", 6057, 736}};
        for (const auto& r : py) {
            const int row = rowOf(m, QString::fromLatin1(r.file));
            QVERIFY2(row >= 0, r.file);
            QCOMPARE(cell(m, row, FleetModel::Format), QString::fromLatin1(r.format));
            QCOMPARE(m->index(row, m->pstarColumn("ssd")).data(FleetModel::ValueRole).toDouble(),
                     r.ssd);
            QCOMPARE(m->index(row, m->pstarColumn("mem")).data(FleetModel::ValueRole).toDouble(),
                     r.mem);
        }
        // fio's own json+ output (two seqread jobs summed, one randread job).
        const int fio = rowOf(m, QStringLiteral("fio-jsonplus-two-jobs.json"));
        QCOMPARE(cell(m, fio, FleetModel::Format), QStringLiteral("fio"));
        QVERIFY2(cell(m, fio, m->measuredColumn()).contains(QStringLiteral("fio seqread")) &&
                     cell(m, fio, m->measuredColumn()).contains(QStringLiteral("0.9745 GB/s")),
                 qPrintable(cell(m, fio, m->measuredColumn())));
        // py-kvcache v1 with only its two thresholds.
        const int only = rowOf(m, QStringLiteral("pykvcache-v1-thresholds-only.json"));
        QCOMPARE(m->index(only, m->pstarColumn("ssd")).data(FleetModel::ValueRole).toDouble(),
                 100.0);
        // nvbandwidth's real -j -v output: host-to-device over the copy engine, 12.3964 GB/s.
        const int nvb = rowOf(m, QStringLiteral("nvbandwidth-v0.5-verbose-dcgm.json"));
        QCOMPARE(cell(m, nvb, FleetModel::Format), QStringLiteral("nvbandwidth"));
        QVERIFY2(cell(m, nvb, m->measuredColumn())
                     .contains(QStringLiteral("Host DRAM (nvbandwidth) 12.4 GB/s")),
                 qPrintable(cell(m, nvb, m->measuredColumn())));
        QVERIFY(fleet->warningText().contains(QStringLiteral("17 tests did not pass (Waived)")));
        const int pareto = rowOf(m, QStringLiteral("pareto-measure.csv"));
        QCOMPARE(cell(m, pareto, FleetModel::Format), QStringLiteral("pareto-csv"));
        QVERIFY(cell(m, pareto, m->measuredColumn()).contains(QStringLiteral("4 hits")));

        // Each node's measured recompute curve joins the TTFT chart with its measured values.
        w->refreshNow();
        auto* ttft = chartOf(w, QStringLiteral("ttft"));
        auto* curve = ttft->seriesByKey(QStringLiteral("overlay/%1/prefill").arg(kvbeRow));
        QVERIFY(curve);
        const auto& cal = m->at(kvbeRow).calibration;
        QCOMPARE(curve->count(), int(cal.prefill.size()));
        for (int i = 0; i < curve->count(); ++i) {
            QCOMPARE(curve->at(i).x(), cal.prefill[size_t(i)].tokens);
            QVERIFY(sameValue(curve->at(i).y(), cal.prefill[size_t(i)].seconds * 1e3, 1e-12));
        }

        // A file for another model is flagged, visibly, in the table and above it.
        const int qwen = rowOf(m, QStringLiteral("pykvcache-v1-qwen3-4b-h100.json"));
        QVERIFY(cell(m, qwen, FleetModel::Model).startsWith(QStringLiteral("⚠")));
        QVERIFY(!m->mismatches(qwen).empty());
        QVERIFY(m->mismatches(kvbeRow).empty());
        QVERIFY(fleet->warningText().contains(
            QStringLiteral("measured with model 'Qwen/Qwen3-4B-Instruct-2507', the scenario uses "
                           "'meta-llama/Llama-3.2-3B'")));
        QVERIFY(!fleet->warningText().contains(QStringLiteral("kvbe-node17.json")));
        // What a reader skipped is said above the table too: the pareto file's failed run.
        QVERIFY2(fleet->warningText().contains(QStringLiteral("1 failed run skipped")),
                 qPrintable(fleet->warningText()));

        // A v2 file's load curves and its hits and golden points are drawn beside its f.
        const int v2 = rowOf(m, QStringLiteral("pykvcache-v2.json"));
        const auto& v2cal = m->at(v2).calibration;
        for (const char* name : {"prefill", "g_ssd", "g_mem", "hits"})
            QVERIFY2(
                ttft->seriesByKey(QStringLiteral("overlay/%1/%2").arg(v2).arg(QLatin1String(name))),
                name);
        auto* gSsd = ttft->seriesByKey(QStringLiteral("overlay/%1/g_ssd").arg(v2));
        QCOMPARE(gSsd->count(), 3); // the knots above 0 tokens
        QCOMPARE(gSsd->at(2).x(), 16384.0);
        QVERIFY(sameValue(gSsd->at(2).y(), 0.12 * 1e3, 1e-12));
        auto* hits = ttft->seriesByKey(QStringLiteral("overlay/%1/hits").arg(v2));
        QCOMPARE(hits->count(), int(v2cal.hits.size() + v2cal.golden.size()));
        // The pareto file's hits are drawn as well.
        QVERIFY(ttft->seriesByKey(QStringLiteral("overlay/%1/hits").arg(pareto)));
    }

    // A folder of 14 files (three py-kvcache v2 files among them, two tiers each): each file's
    // tier has one legend entry on the break-even chart, its B* line, whose name also gives the
    // golden points and the level its load curve implies. Three entries per tier took ten legend
    // rows and squeezed the plot.
    void impliedCurvesTakeOneLegendEntryPerFileAndTier() {
        auto w = makeWindow();
        w->fitToScreen(QRect(0, 0, 1920, 1080));
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures}));
        QVERIFY(waitImport(fleet));
        w->refreshNow();
        QApplication::processEvents();
        auto* be = chartOf(w, QStringLiteral("breakeven"));
        ChartLegend* legend = legendOf(be);
        QVERIFY(legend);
        int implied = 0, withLevel = 0;
        for (const auto& e : legend->entries()) {
            if (!e.key.startsWith(QLatin1String("implied/"))) continue;
            ++implied;
            QVERIFY2(e.key.endsWith(QLatin1String("-bstar")), qPrintable(e.key));
            const QString levelKey = e.key.chopped(6) + QStringLiteral("-level");
            if (auto* level = be->seriesByKey(levelKey); level && level->count() > 0) {
                ++withLevel;
                const QString gbps = QString::number(level->at(0).y(), 'g', 4);
                QVERIFY2(e.name.contains(gbps + QStringLiteral(" GB/s from its load curve")),
                         qPrintable(e.name + " / " + gbps));
            }
            if (auto* golden = be->seriesByKey(e.key.chopped(6) + QStringLiteral("-golden"));
                golden && golden->count() > 0)
                QVERIFY2(e.name.contains(QLatin1String("golden points")), qPrintable(e.name));
        }
        QCOMPARE(implied, 6); // three v2 files, SSD and host memory each
        QCOMPARE(withLevel, 6);
        const QRectF plot = be->chart()->plotArea();
        const QRectF view = be->mapToScene(be->viewport()->rect()).boundingRect();
        qInfo("plot %.0f x %.0f px in a view of %.0f x %.0f px, %zu legend entries", plot.width(),
              plot.height(), view.width(), view.height(), legend->entries().size());
    }

    // A v2 file's curves imply B* and p*: on the break-even chart, B* at each knot and golden
    // point, the bandwidth each load curve implies and p* on it; on the minimum-fraction chart,
    // p* at (p*, 1). Values worked out by hand from the fixture's knots (131,072 B/token;
    // g_ssd = 0.02 s + KV / 13.1072 GB/s, g_mem = 0.002 s + KV / 52.4288 GB/s).
    void v2FileImpliesBreakevenAndPStar() {
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/pykvcache-v2-implied.json")}));
        QVERIFY(waitImport(fleet));
        QCOMPARE(fleet->model()->rowCount(), 1);
        w->refreshNow();
        auto* be = chartOf(w, QStringLiteral("breakeven"));
        const double kv = 131072, GB = 1e-9;
        const QString file = QStringLiteral("pykvcache-v2-implied.json");

        // SSD (t_fixed 0.02 s): f(64) and f(256) are below it, so B* starts at 1024 tokens.
        auto* ssd = be->seriesByKey(QStringLiteral("implied/0/ssd-bstar"));
        QVERIFY(ssd);
        QVERIFY2(ssd->name().contains(file) &&
                     ssd->name().contains(QStringLiteral("t_fixed 20 ms")),
                 qPrintable(ssd->name()));
        const QPointF ssdWant[] = {{1024, kv * 1024 / (0.08 - 0.02) * GB},   // 2.2370 GB/s
                                   {4096, kv * 4096 / (0.33 - 0.02) * GB},   // 1.7318 GB/s
                                   {16384, kv * 16384 / (1.4 - 0.02) * GB}}; // 1.5561 GB/s
        QCOMPARE(ssd->count(), int(std::size(ssdWant)));
        for (int i = 0; i < ssd->count(); ++i) {
            QCOMPARE(ssd->at(i).x(), ssdWant[i].x());
            QVERIFY2(sameValue(ssd->at(i).y(), ssdWant[i].y(), 1e-9),
                     qPrintable(QString::number(ssd->at(i).y())));
        }
        QVERIFY(sameValue(ssd->at(0).y(), 2.2369621333, 1e-9));
        // Host memory (t_fixed 0.002 s): from 256 tokens on.
        auto* mem = be->seriesByKey(QStringLiteral("implied/0/mem-bstar"));
        QVERIFY(mem);
        QCOMPARE(mem->count(), 4);
        QCOMPARE(mem->at(0).x(), 256.0);
        QVERIFY(sameValue(mem->at(0).y(), kv * 256 / (0.012 - 0.002) * GB, 1e-9)); // 3.3554 GB/s
        QVERIFY(sameValue(mem->at(3).y(), kv * 16384 / (1.4 - 0.002) * GB, 1e-9)); // 1.5361 GB/s
        // The golden point at 2048 tokens: f 0.16 s.
        auto* golden = be->seriesByKey(QStringLiteral("implied/0/ssd-golden"));
        QVERIFY(golden);
        QCOMPARE(golden->count(), 1);
        QCOMPARE(golden->at(0).x(), 2048.0);
        QVERIFY(sameValue(golden->at(0).y(), kv * 2048 / (0.16 - 0.02) * GB, 1e-9)); // 1.9174 GB/s
        // The bandwidths the load curves imply, and p* on them: py-kvcache's rule gives 272 (SSD)
        // and 80 (memory) tokens.
        auto* level = be->seriesByKey(QStringLiteral("implied/0/ssd-level"));
        QVERIFY(level && level->count() == 2);
        QVERIFY(sameValue(level->at(0).y(), 13.1072, 1e-9));
        auto* ssdP = be->seriesByKey(QStringLiteral("implied/0/ssd-pstar"));
        QVERIFY(ssdP && ssdP->count() == 1);
        QCOMPARE(ssdP->at(0).x(), 272.0);
        QVERIFY(sameValue(ssdP->at(0).y(), 13.1072, 1e-9));
        QVERIFY2(be->labelText(QStringLiteral("implied/0/ssd-pstar-label")).contains(file),
                 qPrintable(be->labelText(QStringLiteral("implied/0/ssd-pstar-label"))));
        auto* memP = be->seriesByKey(QStringLiteral("implied/0/mem-pstar"));
        QVERIFY(memP && memP->count() == 1);
        QCOMPARE(memP->at(0).x(), 80.0);
        QVERIFY(sameValue(memP->at(0).y(), 52.4288, 1e-9));

        auto* fraction = chartOf(w, QStringLiteral("fraction"));
        for (const auto& [tier, p] : {std::pair{"ssd", 272.0}, std::pair{"mem", 80.0}}) {
            auto* mark = fraction->seriesByKey(
                QStringLiteral("implied/0/%1-pstar").arg(QLatin1String(tier)));
            QVERIFY2(mark && mark->count() == 1, tier);
            QCOMPARE(mark->at(0), QPointF(p, 100.0)); // f* in per cent
            QVERIFY(mark->name().contains(file));
        }

        // An export renders them too: the state travels to the copy.
        BreakevenChart copy;
        copy.copyStateFrom(*be);
        QCOMPARE(copy.implied().size(), size_t(1));
    }

    void dropOfCalibrationsImports() {
        auto w = makeWindow();
        QMimeData mime;
        mime.setUrls({QUrl::fromLocalFile(kFixtures + QStringLiteral("/pareto-measure.csv")),
                      QUrl::fromLocalFile(kFixtures + QStringLiteral("/kvbe-node17.json"))});
        QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton,
                              Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &drop);
        QVERIFY(waitImport(fleetPanelOf(w)));
        QCOMPARE(fleetPanelOf(w)->model()->rowCount(), 2);

        // One dropped py-kvcache .json is a calibration, not a scenario.
        QMimeData one;
        one.setUrls({QUrl::fromLocalFile(kFixtures + QStringLiteral("/pykvcache-v2.json"))});
        QDragEnterEvent enter2(QPoint(10, 10), Qt::CopyAction, &one, Qt::LeftButton,
                               Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &enter2);
        QVERIFY(enter2.isAccepted());
        QDropEvent drop2(QPointF(10, 10), Qt::CopyAction, &one, Qt::LeftButton, Qt::NoModifier);
        QCoreApplication::sendEvent(w.get(), &drop2);
        QVERIFY(waitImport(fleetPanelOf(w)));
        QCOMPARE(fleetPanelOf(w)->model()->rowCount(), 3);
    }

    void fitAndAdopt() {
        auto w = makeWindow();
        auto* fleet = fleetPanelOf(w);
        QAbstractItemModelTester tester(fleet->model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(w->importCalibrations({kFixtures + QStringLiteral("/kvbe-node17.json")}));
        QVERIFY(waitImport(fleet));
        fleet->selectRow(0);
        const auto st = fleet->fitSelected();
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        const auto& fit = *fleet->lastFit();
        QVERIFY(fit.params.utilisation);
        const double u = *fit.params.utilisation;
        // The same fit as core's, against the same scenario.
        const auto ref = reference(explorerOf(w)->scenario());
        auto expect = fitCalibration(fleet->model()->at(0).calibration, ref.eval.cost.inputs(),
                                     ref.eval.tiers);
        QVERIFY(expect.ok());
        QCOMPARE(u, *expect->params.utilisation);
        QCOMPARE(fleet->residualTable()->rowCount(), int(fit.residuals.size()));
        QVERIFY(fleet->residualTable()->rowCount() > 0);
        QCOMPARE(fleet->model()
                     ->index(0, FleetModel::Utilisation)
                     .data(FleetModel::ValueRole)
                     .toDouble(),
                 u);

        // Fitted against nominal: the fitted recompute curve beside the scenario's.
        w->refreshNow();
        auto* fitted = chartOf(w, QStringLiteral("ttft"))
                           ->seriesByKey(QStringLiteral("overlay/fit/recompute"));
        QVERIFY(fitted);
        QCOMPARE(fitted->count(), int(ref.curves.tokens.size()));
        {
            CostInputs in = ref.eval.cost.inputs();
            in.utilisation = u;
            auto cost = CostModel::create(in);
            QVERIFY(cost.ok());
            const double oh = fit.params.overheadS;
            const size_t k = ref.curves.tokens.size() / 2;
            const double n = ref.curves.tokens[k];
            QVERIFY(sameValue(fitted->at(int(k)).y(), (cost->tMiss(n) + oh) * 1e3, 1e-12));
            const auto& [name, ft] = *fit.params.tiers.begin();
            auto* hit = chartOf(w, QStringLiteral("ttft"))
                            ->seriesByKey(QStringLiteral("overlay/fit/hit-0"));
            QVERIFY(hit);
            const double f = ref.eval.scenario.cachedFraction;
            QVERIFY(sameValue(
                hit->at(int(k)).y(),
                (cost->tHit({name, ft.bandwidthBps, ft.tFixedS}, n, f * n) + oh) * 1e3, 1e-12));
        }

        w->setAsk([](QWidget*, const Question&) { return QMessageBox::Yes; });
        QVERIFY(fleet->adoptFitted().ok());
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, u);
        // The default's name spoke of u = 50 %: the adopted scenario describes itself.
        Scenario adopted = adoptFit(ref.eval.scenario, fit.params);
        adopted.name.clear();
        QCOMPARE(explorerOf(w)->scenario(), adopted);

        fleet->model()->clear();
        QCOMPARE(fleet->model()->rowCount(), 0);
    }

    void exportPyKvcacheReadsBack() {
        auto w = makeWindow();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("breakeven.json"));
        QVERIFY(fleetPanelOf(w)->exportPyKvcache(path, false).ok());
        auto back = readCalibration(path.toStdString());
        QVERIFY(back.ok());
        QCOMPARE(back->format, std::string("py-kvcache-v1"));
        const auto ref = reference(explorerOf(w)->scenario());
        QCOMPARE(back->model, ref.eval.model.id);
        // The first NVMe and the first DRAM tier of the scenario, as the CLI picks them.
        std::map<std::string, double> expect;
        for (size_t i = 0; i < ref.eval.tiers.size(); ++i) {
            const auto* preset = presets().findTier(ref.eval.scenario.tiers[i].preset);
            const auto p = ref.eval.cost.breakevenPrefix(ref.eval.tiers[i]);
            if (!preset || !p) continue;
            const std::string key = preset->kind == TierKind::Nvme   ? "ssd"
                                    : preset->kind == TierKind::Dram ? "mem"
                                                                     : "";
            if (!key.empty() && !expect.count(key)) expect[key] = std::ceil(*p);
        }
        QVERIFY(!expect.empty());
        for (const auto& [key, v] : expect)
            QCOMPARE(back->breakevenPrefix.at(key), v);
        QVERIFY(!back->breakevenPrefix.empty());

        // And the selected calibration's thresholds.
        QVERIFY(w->importCalibrations(
            {kFixtures + QStringLiteral("/pykvcache-v1-qwen3-4b-h100.json")}));
        QVERIFY(waitImport(fleetPanelOf(w)));
        fleetPanelOf(w)->selectRow(0);
        const QString path2 = dir.filePath(QStringLiteral("qwen.json"));
        QVERIFY(fleetPanelOf(w)->exportPyKvcache(path2, true).ok());
        auto back2 = readCalibration(path2.toStdString());
        QVERIFY(back2.ok());
        QCOMPARE(back2->breakevenPrefix.at("ssd"), 6203.0);
        QCOMPARE(back2->breakevenPrefix.at("mem"), 825.0);
    }

    // A 50 MB node file parses on the worker: a 10 ms timer on the UI thread keeps ticking.
    void bigImportKeepsTheWindowResponsive() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("big-node.json"));
        {
            std::ofstream out(path.toStdString());
            out << R"({"kvbe_calibration":1,"host":"bignode","model":"meta-llama/Llama-3.2-3B","kv_dtype":"bf16","prefill":[)";
            std::string row;
            size_t written = 0;
            for (long i = 0; written < 50u * 1000 * 1000; ++i) {
                const double n = 256 + double(i % 131072);
                row = (i ? "," : "") + std::string("[") + std::to_string(n) + "," +
                      std::to_string(n * 3.1e-5 + 0.004) + "]";
                out << row;
                written += row.size();
            }
            out << "]}";
        }
        QVERIFY(QFileInfo(path).size() >= 50 * 1000 * 1000);
        auto w = makeWindow();
        QTest::qWait(50); // the window's first layout and paint are not the import's
        // The bound is on the longest single event the UI thread handles, timed with its own CPU
        // clock inside the event loop (ui_event_clock.h): the import's work done in one piece on
        // the UI thread, whatever else the machine is doing.
        QElapsedTimer clock;
        qint64 last = 0, worstGap = 0; // wall clock between 10 ms ticks: reported, not bounded
        QTimer tick;
        tick.setInterval(10);
        QObject::connect(&tick, &QTimer::timeout, [&] {
            const qint64 now = clock.elapsed();
            worstGap = std::max(worstGap, now - last);
            last = now;
        });
        clock.start();
        tick.start();
        UiEventClock::reset();
        QVERIFY(w->importCalibrations({path}));
        QVERIFY(waitImport(fleetPanelOf(w)));
        const auto longest = UiEventClock::longest();
        tick.stop();
        QCOMPARE(fleetPanelOf(w)->model()->rowCount(), 1);
        QVERIFY(fleetPanelOf(w)->model()->at(0).calibration.prefill.size() > 1000000);
        qInfo("longest UI-thread event during the import: %.1f ms of CPU (%s); longest wall-clock "
              "gap between 10 ms ticks %lld ms; %lld ms in all",
              longest.ms, qPrintable(longest.what), worstGap, clock.elapsed());
        const double bound = 100.0 * kSanitizerSlowdown;
        QVERIFY2(longest.ms <= bound, qPrintable(QStringLiteral("%1 ms (%2) > %3 ms")
                                                     .arg(longest.ms, 0, 'f', 1)
                                                     .arg(longest.what)
                                                     .arg(bound)));
    }
};

KVBE_UI_EVENT_CLOCK_MAIN(TestMeasuredImport)
#include "tst_ui_measured_import.moc"
