// The Plan and the Capacity tab say which value each counts. A plan with no p99 limit values the
// prefill time a configuration saves; the Capacity tab counts whole servers at its target. Where
// the two differ, a sentence under the plan's answer says so and offers to plan at the Capacity
// tab's target; the plan's limit changes only when the user takes that offer.
#include "plan_test_support.h"

#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/plan_capacity_note.h"

#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

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
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        QVERIFY(v->openTrace(writeSharedPrefix(dir, 40)));
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
