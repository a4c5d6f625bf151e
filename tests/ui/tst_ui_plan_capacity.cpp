// The Plan and the Capacity tab say which value each counts. A plan with no p99 limit values the
// prefill time a configuration saves; the Capacity tab counts whole servers at its target. Where
// the two differ, a sentence under the plan's answer says so and offers to plan at the Capacity
// tab's target; the plan's limit changes only when the user takes that offer.
#include "ui_test_support.h"

#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/plan_capacity_note.h"
#include "kvbe/ui/workload/plan_section.h"

#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

WorkloadView* viewOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}
PlanSection* sectionOf(MainWindow& w) {
    return child<PlanSection>(&w, QStringLiteral("planSection"));
}

// 40 requests a second apart, each with 4 shared blocks and 4 of its own.
QString writeTrace(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("shared.jsonl"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    int own = 1000;
    for (int i = 0; i < 40; ++i) {
        QStringList ids = {"0", "1", "2", "3"};
        for (int b = 0; b < 4; ++b)
            ids << QString::number(own++);
        f.write(QStringLiteral("{\"timestamp\": %1, \"input_length\": 4096, \"output_length\": 1, "
                               "\"hash_ids\": [%2]}\n")
                    .arg(i * 1000)
                    .arg(ids.join(QStringLiteral(", ")))
                    .toUtf8());
    }
    return path;
}

bool settle(MainWindow& w) {
    auto* v = viewOf(w);
    auto* s = sectionOf(w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !s->computing() && !s->scheduled() &&
                   !explorerOf(&w)->recomputePending();
        },
        180000);
}

LatencyTarget target(const char* text) {
    auto t = parseLatencyTarget(text);
    if (!t) qFatal("%s", t.message().c_str());
    return *t;
}

} // namespace

class TestUiPlanCapacity : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    // The sentence for each pair of the plan's limit and the Capacity tab's target.
    void theNoteSaysWhatEachCounts() {
        const auto p99 = target("p99=5s");
        QCOMPARE(PlanCapacityNote::text(std::nullopt, p99),
                 QStringLiteral("The Capacity tab counts whole servers at p99 ≤ 5 s; this plan "
                                "has no p99 limit, so it values the prefill time saved, not "
                                "servers."));
        QVERIFY(PlanCapacityNote::text(5.0, p99).isEmpty()); // they agree
        QCOMPARE(PlanCapacityNote::text(2.0, p99),
                 QStringLiteral("The Capacity tab counts servers at p99 ≤ 5 s; this plan at p99 "
                                "≤ 2 s."));
        QVERIFY(PlanCapacityNote::text(2.0, target("p90=500ms"))
                    .contains(QLatin1String("against different statistics")));
        QVERIFY(PlanCapacityNote::text(std::nullopt, std::nullopt).isEmpty());
    }

    // In the window: the note follows the Capacity tab's target without touching the plan's
    // limit; its button plans at that target, after which the plan counts servers and the note
    // goes.
    void thePlanTakesTheCapacityTargetOnlyWhenAsked() {
        QTemporaryDir dir;
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        tabsOf(w)->setCurrentWidget(v);
        child<QTabWidget>(v, QStringLiteral("workloadCharts"))->setCurrentWidget(s);
        QVERIFY(v->openTrace(writeTrace(dir)));
        QVERIFY(settle(*w));
        QVERIFY(s->plan() && s->plan()->result);
        QVERIFY(!s->limits().sloP99S);
        QVERIFY(!s->plan()->result->serversSearched);

        auto* note = child<PlanCapacityNote>(s, QStringLiteral("planCapacityNote"));
        auto* text = child<QLabel>(note, QStringLiteral("planCapacityNoteText"));
        auto* use = child<QPushButton>(note, QStringLiteral("planUseCapacityTarget"));
        QVERIFY(note->isVisibleTo(s));
        QVERIFY2(text->text().contains(QStringLiteral("p99 ≤ 5 s; this plan has no p99 limit")),
                 qPrintable(text->text()));

        // Another target on the Capacity tab: the note follows, the plan's limit stays.
        auto* capacity = child<CapacityPanel>(w.get(), QStringLiteral("capacityPanel"));
        QVERIFY(capacity->setTargetText(QStringLiteral("p99=2s")));
        QVERIFY2(text->text().contains(QStringLiteral("p99 ≤ 2 s; this plan has no p99 limit")),
                 qPrintable(text->text()));
        QVERIFY(!s->limits().sloP99S);
        QCOMPARE(use->text(), QStringLiteral("Plan at p99 ≤ 2 s"));

        // Taken: the plan's field and limit, a plan that counts servers, no note.
        use->click();
        QCOMPARE(child<QLineEdit>(s, QStringLiteral("planSlo"))->text(), QStringLiteral("2s"));
        QVERIFY(s->limits().sloP99S);
        QCOMPARE(*s->limits().sloP99S, 2.0);
        QVERIFY(!note->isVisibleTo(s));
        QVERIFY(settle(*w));
        QVERIFY(s->plan()->result->serversSearched);

        // A p90 target: said, with nothing to take.
        QVERIFY(capacity->setTargetText(QStringLiteral("p90=1s")));
        QVERIFY(note->isVisibleTo(s));
        QVERIFY(!use->isVisibleTo(s));
        QVERIFY(text->text().contains(QLatin1String("against different statistics")));
    }
};

QTEST_MAIN(TestUiPlanCapacity)
#include "tst_ui_plan_capacity.moc"
