// The Workload tab under load (docs/workload-model.md, "Saturation"): each tier's links over the
// trace's time beside or under the TTFT distribution, drawn from the replay (the reads asked
// against a replay set up here), the saturation sentence, and the Plan section marking the
// bandwidth-bound configurations.
#include "workload_reference.h"
#include "workload_test_support.h"

#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/trace/trace_sim.h"
#include "kvbe/ui/charts/link_chart.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QCheckBox>
#include <QLabel>
#include <QLineSeries>
#include <QSlider>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// A generated trace at 60 requests a second (the generator's other defaults): more reads than
// one NVMe drive carries once the conversations come back.
QString writeGenerated(const QTemporaryDir& dir, std::uint64_t requests) {
    const QString path = dir.filePath(QStringLiteral("generated.jsonl"));
    TraceGeneratorSpec s;
    s.requests = requests;
    s.ratePerS = 60;
    auto r = generateTraceFile(s, path.toStdString());
    if (!r) qFatal("%s", r.message().c_str());
    return path;
}

} // namespace

class TestUiLinks : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // 12,000 requests, DRAM left out, NVMe 8 TiB, writes that keep up, 8 prefill servers on one
    // node: the links chart shares the TTFT tab, its dashed line is the reads the hits ask,
    // equal to a replay set up here; the solid one the reads under the rule; the sentence says
    // the drive is saturated.
    // Without servers there is no solid line, and the sentence says loads are not queued.
    void linksAndTheSentence() {
        QTemporaryDir dir;
        auto w = makeWindow();
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(writeGenerated(dir, 12000)));
        QVERIFY(settleWorkload(*w));
        child<QSlider>(v, QStringLiteral("workloadTier1"))->setValue(0); // no DRAM
        QVERIFY(settleWorkload(*w));
        child<QCheckBox>(v, QStringLiteral("workloadWriteQueue"))->setChecked(false);
        QVERIFY(settleWorkload(*w));
        child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(8);
        QVERIFY(settleWorkload(*w));
        child<QSpinBox>(v, QStringLiteral("workloadNodeServers"))->setValue(8); // one node
        QVERIFY(settleWorkload(*w));
        QVERIFY(v->result() && v->result()->replay);

        auto* tabs = child<QTabWidget>(v, QStringLiteral("workloadCharts"));
        auto* tab = child<QWidget>(v, QStringLiteral("workloadTtftTab"));
        QVERIFY(tabs->indexOf(tab) >= 0);
        auto* links = tab->findChild<LinkUseChart*>(QStringLiteral("workload-links"));
        QVERIFY(links);
        QVERIFY(tab->findChild<WorkloadChart*>(QStringLiteral("workload-ttft")));

        // The reads asked: the same fleet's (8 servers on one node, a GPU cache each,
        // round-robin, one drive and its link), replayed here.
        auto t = loadTrace(v->result()->file.toStdString(), {});
        QVERIFY(t.ok());
        const auto ref = reference(explorerOf(w)->scenario());
        const ReplayResult r = referenceReplay(*t, ref.eval, 0, 8 * 1024 * kGiB, false, 1, 8, 8);
        QCOMPARE(r.tiers.size(), std::size_t(2));
        const LinkUse& asked = r.tiers[1].readOffered;
        QVERIFY2(asked.binsOver > 0, "the case: the drive saturates");
        auto* dashed = qobject_cast<QLineSeries*>(links->seriesByKey(QStringLiteral("asked/0")));
        QVERIFY(dashed);
        QCOMPARE(dashed->count(), int(2 * asked.share.size()));
        for (int i = 0; i < dashed->count(); ++i)
            QVERIFY(std::abs(dashed->at(i).y() - double(asked.share[std::size_t(i / 2)]) * 100) <
                    1e-3);
        auto* solid = qobject_cast<QLineSeries*>(links->seriesByKey(QStringLiteral("reads/0")));
        QVERIFY(solid && solid->count() > 0);
        const auto& busy = v->result()->replay->rule("optimal")->tiers[1].read;
        for (int i = 0; i < solid->count(); ++i) {
            QVERIFY(solid->at(i).y() <= 100 + 1e-6); // a busy share
            QVERIFY(std::abs(solid->at(i).y() - double(busy.share[std::size_t(i / 2)]) * 100) <
                    1e-3);
        }

        auto* sentence = child<QLabel>(v, QStringLiteral("workloadSaturation"));
        QVERIFY2(sentence->text().startsWith(QStringLiteral("NVMe (PCIe 5.0) is saturated in ")),
                 qPrintable(sentence->text()));
        QVERIFY(sentence->text().contains(QStringLiteral("for the backlog")));

        child<QSpinBox>(v, QStringLiteral("workloadInstances"))->setValue(0);
        QVERIFY(settleWorkload(*w));
        auto* none = qobject_cast<QLineSeries*>(links->seriesByKey(QStringLiteral("reads/0")));
        QVERIFY(!none || none->count() == 0);
        QVERIFY2(sentence->text().contains(QStringLiteral("without prefill servers")),
                 qPrintable(sentence->text()));
    }

    // The Plan section on the same kind of trace: one drive alone is bandwidth-bound, its row in
    // the table says so and its point is ringed.
    void planMarksBandwidthBoundConfigurations() {
        QTemporaryDir dir;
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* v = workloadViewOf(*w);
        QVERIFY(v->openTrace(writeGenerated(dir, 12000)));
        QVERIFY(settleWorkload(*w));
        child<QCheckBox>(v, QStringLiteral("workloadWriteQueue"))->setChecked(false);
        QVERIFY(settleWorkload(*w));
        tabsOf(w)->setCurrentWidget(v);
        auto* section = child<PlanSection>(&*w, QStringLiteral("planSection"));
        child<QTabWidget>(v, QStringLiteral("workloadCharts"))->setCurrentWidget(section);
        QVERIFY(
            QTest::qWaitFor([&] { return section->plan() && section->plan()->result; }, 180000));
        QVERIFY(settleWorkload(*w));
        const PlanResult& r = *section->plan()->result;
        std::size_t bound = 0;
        for (const auto& p : r.points)
            bound += p.bandwidthBound;
        QVERIFY2(bound > 0, "the case: some configuration saturates a tier");
        auto* ring = section->chart()->seriesByKey(QStringLiteral("bandwidth-bound"));
        QVERIFY(ring);
        QCOMPARE(std::size_t(ring->count()), bound);
        auto* table = child<QTableWidget>(section, QStringLiteral("planTable"));
        for (int row = 0; row < table->rowCount(); ++row) {
            const PlanPoint& p = r.points[r.front[std::size_t(row)]];
            QCOMPARE(table->item(row, 0)->text().contains(QStringLiteral("[bandwidth-bound]")),
                     p.bandwidthBound);
        }
    }
};

QTEST_MAIN(TestUiLinks)
#include "tst_ui_links.moc"
