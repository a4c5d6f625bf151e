// The Workload view's Plan tab: on a trace whose writes are counted here (a 4-block prefix every
// request shares and 4 blocks of each request's own), the section plans on a worker, shows the
// recommended configuration's sentence, colours each front point by its drives' life worked out
// here, follows a change of the limits (one plan for edits in a row), stops on Cancel, and
// exports the table and the chart.
#include "plan_test_support.h"

#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_sample.h"
#include "kvbe/scenario/prices.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/workload/plan_section.h"

#include <QCheckBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// The blocks that reach an offload tier: at K = 1 every block at its first sighting; at K >= 2
// only the shared ones (seen by every request), each once; the own blocks are seen once only.
std::uint64_t blocksWrittenByHand(int storeAfter) {
    return storeAfter == 1 ? std::uint64_t(kShared + kOwn * kRequests)
                           : (storeAfter <= kRequests ? std::uint64_t(kShared) : 0);
}

// The band the point's colour must show: years to rated endurance = DWPD x warranty x installed
// bytes / (bytes written a day), against the warranty.
LifeBand bandByHand(const PlanPoint& p, double blockBytes) {
    if (p.drives <= 0) return LifeBand::NoDrives;
    const double days = (kRequests - 1) * 1.0 / 86400; // the trace's span
    const double perDay = double(blocksWrittenByHand(p.storeAfter)) * blockBytes / days;
    for (const auto& t : p.tiers) {
        const DriveRating& d = t.endurance.drive;
        if (!d.rated()) continue;
        if (perDay <= 0) return LifeBand::Long;
        const double years =
            *d.writesPerDay * *d.warrantyYears * double(p.drives) * *d.capacityBytes / perDay;
        return years < *d.warrantyYears       ? LifeBand::Short
               : years < 2 * *d.warrantyYears ? LifeBand::Fair
                                              : LifeBand::Long;
    }
    return LifeBand::Long;
}

// The generator's trace (kvbe/trace/trace_generate.h): shared system prompts, conversations and
// one-off requests, as a day of a service has them, at a size a test plans in seconds.
constexpr quint64 kGenerated = 8000;
QString writeGenerated(const QTemporaryDir& dir) {
    TraceGeneratorSpec spec;
    spec.requests = kGenerated;
    spec.seed = 42;
    const QString path = dir.filePath(QStringLiteral("generated.jsonl"));
    if (auto g = generateTraceFile(spec, path.toStdString()); !g) qFatal("%s", g.message().c_str());
    return path;
}

// The CLI's sampling with its threshold and sample size scaled down 25 times, so that the
// generated trace counts as large: 8,000 requests at or above 4,000, sampled at 2,400 / 8,000.
PlanSampleOptions scaledDown() {
    PlanSampleOptions o;
    o.exactBelow = 4000;
    o.sampleRequests = 2400;
    return o;
}

// The status line's texts while the section plans, each once.
struct StatusLog {
    QStringList texts;
    QTimer timer;
    StatusLog(PlanSection* s) {
        auto* status = child<QLabel>(s, QStringLiteral("planStatus"));
        timer.setInterval(2);
        QObject::connect(&timer, &QTimer::timeout, [this, s, status] {
            if (s->computing() && !texts.contains(status->text())) texts << status->text();
        });
        timer.start();
    }
};

// Counts the paint events of a widget and its children while `on` says so.
struct PaintCount : QObject {
    std::function<bool()> on;
    int paints = 0;
    bool eventFilter(QObject* o, QEvent* e) override {
        if (e->type() == QEvent::Paint && on()) ++paints;
        return QObject::eventFilter(o, e);
    }
    void watch(QWidget* w) {
        w->installEventFilter(this);
        for (auto* c : w->findChildren<QWidget*>())
            c->installEventFilter(this);
    }
};

} // namespace

class TestUiPlan : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void theSectionIsAWorkloadTab() {
        auto w = makeWindow();
        auto* tabs = child<QTabWidget>(viewOf(*w), QStringLiteral("workloadCharts"));
        auto* section = sectionOf(*w);
        const int i = tabs->indexOf(section);
        QVERIFY(i >= 0);
        QCOMPARE(tabs->tabText(i), QStringLiteral("Plan"));
        QCOMPARE(section->chart(), child<PlanChart>(section, QStringLiteral("plan")));
        tabs->setCurrentIndex(i);
        QCOMPARE(viewOf(*w)->visibleChart(), static_cast<WorkloadChart*>(section->chart()));
    }

    // The prices on screen (issue 40): DRAM per GiB, each drive and the GPU-hour, as the shipped
    // example table gives them, each with its source in the tooltip. An edit re-plans at the new
    // price (every point's DRAM costs its GiB at it), is saved in the scenario as `prices`, and
    // Edit > Undo takes it back.
    void pricesAreOnScreenAndEditable() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        QVERIFY(v->openTrace(writeSharedPrefix(dir)));
        QVERIFY(settle(*w));
        QVERIFY(s->plan() && s->plan()->result);
        const auto builtin = *builtinPriceTable();

        auto* dram = child<QLineEdit>(s, QStringLiteral("planPrice-dram"));
        QCOMPARE(dram->text(), QStringLiteral("18.80"));
        QVERIFY2(dram->toolTip().contains(QLatin1String("hi-tech.ua")),
                 qPrintable(dram->toolTip()));
        auto* drive = child<QLineEdit>(s, QStringLiteral("planPrice-drive-nvme-gen5"));
        QCOMPARE(drive->text(), QStringLiteral("2250"));
        QVERIFY(drive->toolTip().contains(QLatin1String("OSCOO")));
        auto* gpu = child<QLineEdit>(s, QStringLiteral("planPrice-gpu"));
        const std::string gpuKey = explorerOf(w)->scenario().gpu;
        QCOMPARE(gpu->text(), QString::number(builtin.gpuPerHour.at(gpuKey).usd, 'f', 2));
        QVERIFY(child<QLabel>(s, QStringLiteral("planPricesTitle"))
                    ->text()
                    .contains(QLatin1String("examples")));

        // DRAM at $10 a GiB: one undoable edit, re-planned at that price.
        const Scenario before = explorerOf(w)->scenario();
        dram->setText(QStringLiteral("10"));
        emit dram->editingFinished();
        QVERIFY(settle(*w));
        QVERIFY(explorerOf(w)->scenario().prices.dramPerGiB);
        QCOMPARE(explorerOf(w)->scenario().prices.dramPerGiB->usd, 10.0);
        QVERIFY(QString::fromStdString(scenarioToJson(explorerOf(w)->scenario()))
                    .contains(QLatin1String("\"dram_usd_per_GiB\": 10")));
        int withDram = 0;
        for (const PlanPoint& p : s->plan()->result->points) {
            if (p.dramBytes <= 0) continue;
            ++withDram;
            QVERIFY(sameValue(p.dramUsd, p.dramBytes / (1024.0 * 1024 * 1024) * 10, 1e-9));
        }
        QVERIFY(withDram > 0);
        QCOMPARE(dram->text(), QStringLiteral("10.00"));
        QVERIFY(dram->toolTip().contains(QLatin1String("Your price")));

        // A price that is not one: said, nothing changes.
        drive->setText(QStringLiteral("cheap"));
        emit drive->editingFinished();
        QVERIFY(child<QLabel>(s, QStringLiteral("planPricesError"))->isVisibleTo(s));
        QVERIFY(explorerOf(w)->scenario().prices.drive.empty());

        explorerOf(w)->undoStack()->undo();
        QVERIFY(settle(*w));
        QCOMPARE(explorerOf(w)->scenario(), before);
        QCOMPARE(dram->text(), QStringLiteral("18.80"));
        for (const PlanPoint& p : s->plan()->result->points)
            if (p.dramBytes > 0)
                QVERIFY(sameValue(p.dramUsd, p.dramBytes / (1024.0 * 1024 * 1024) * 18.80, 1e-9));
    }

    // The plan on the small trace: the sentence, the colours, a limit change, the exports.
    void plansColoursFollowsAndExports() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        QSignalSpy computed(s, &PlanSection::computed);
        // A GPU cache of 2 blocks: the shared prefix has to come from the offload tiers.
        WorkloadSettings set = v->settings();
        QVERIFY(v->openTrace(writeSharedPrefix(dir)));
        QVERIFY(settle(*w));
        set = v->settings();
        set.gpuCacheBytes = 2 * v->result()->config.blockBytes;
        v->setSettings(set);
        QVERIFY(settle(*w));
        QVERIFY(s->plan() && s->plan()->result);
        QCOMPARE(s->plan()->workload->settings.gpuCacheBytes, set.gpuCacheBytes);
        const PlanResult& r = *s->plan()->result;
        const double blockBytes = s->plan()->setup->base.blockBytes;

        // The sentence: the recommended configuration and why.
        QVERIFY(r.recommended);
        const QString sentence = child<QLabel>(s, "planSentence")->text();
        // The configuration in bold, then the reasons: core's sentence.
        const QString desc = QString::fromStdString(describePlanPoint(r.points[*r.recommended]));
        const QString why = QString::fromStdString(r.why);
        QVERIFY(why.startsWith(desc));
        QVERIFY2(sentence.startsWith(QStringLiteral("<b>Recommended: %1</b>").arg(desc)),
                 qPrintable(sentence));
        QVERIFY(sentence.endsWith(why.mid(desc.size()).toHtmlEscaped()));
        QVERIFY(child<QLabel>(s, "planDriveLife")->text().contains(QStringLiteral("Drive life")));
        QCOMPARE(child<QTableWidget>(s, "planTable")->rowCount(), int(r.front.size()));

        // Each front point sits in the series of its life band, worked out here.
        auto* chart = s->chart();
        int shortPoints = 0, frontPoints = 0;
        for (const PlanPoint& p : r.points) {
            if (!p.onTtftFront && !p.onGpuHoursFront) continue;
            ++frontPoints;
            const LifeBand band = bandByHand(p, blockBytes);
            QCOMPARE(int(lifeBand(p)), int(band));
            shortPoints += band == LifeBand::Short;
        }
        QVERIFY(frontPoints > 0);
        // K = 1 writes 84 blocks in 19 s: one drive wears out within its warranty (checked below
        // on every K = 1 point with drives, front or not).
        for (const PlanPoint& p : r.points)
            if (p.drives == 1 && p.storeAfter == 1)
                QCOMPARE(int(lifeBand(p)), int(LifeBand::Short));
        const QStringList bandKeys = {"life/0/points", "life/1/points", "life/2/points",
                                      "life/3/points"};
        const LifeBand order[] = {LifeBand::Short, LifeBand::Fair, LifeBand::Long,
                                  LifeBand::NoDrives};
        // The recommended configuration is coloured too, on a front or not.
        const PlanPoint& recommended = r.points[*r.recommended];
        int drawn = 0;
        for (int i = 0; i < 4; ++i) {
            auto* series = qobject_cast<QScatterSeries*>(chart->seriesByKey(bandKeys[i]));
            QVERIFY(series);
            QCOMPARE(series->color(), lifeBandColor(order[i]));
            for (const QPointF& pt : series->points()) {
                ++drawn;
                bool found = false;
                for (const PlanPoint& p : r.points)
                    if ((p.onTtftFront || p.onGpuHoursFront || &p == &recommended) &&
                        sameValue(p.capexUsd, pt.x(), 1e-9) &&
                        std::abs(PlanChart::ttftSavedS(r, p) * 1e3 - pt.y()) < 1e-9 &&
                        bandByHand(p, blockBytes) == order[i])
                        found = true;
                QVERIFY2(
                    found,
                    qPrintable(
                        QStringLiteral("point %1,%2 in band %3").arg(pt.x()).arg(pt.y()).arg(i)));
            }
        }
        QCOMPARE(drawn,
                 frontPoints + (recommended.onTtftFront || recommended.onGpuHoursFront ? 0 : 1));
        if (shortPoints > 0)
            QVERIFY(!qobject_cast<QScatterSeries*>(chart->seriesByKey("life/0/points"))
                         ->points()
                         .isEmpty());
        // The hover names the configuration under the cursor.
        const PlanPoint& rec = r.points[*r.recommended];
        const QString hover =
            chart->hoverText(QPointF(rec.capexUsd, PlanChart::ttftSavedS(r, rec) * 1e3));
        QVERIFY2(hover.contains(QString::fromStdString(describePlanPoint(rec))), qPrintable(hover));

        // A limit change plans again, once for two edits in a row.
        const int before = int(computed.count());
        s->setLimitsText(2, QString(), QString());
        s->setLimitsText(3, QString(), QStringLiteral("1000000"));
        QVERIFY(settle(*w));
        QCOMPARE(int(computed.count()), before + 1);
        QCOMPARE(s->plan()->limits.lifeYears, 3.0);
        QCOMPARE(s->plan()->limits.budgetUsd, std::optional<double>(1e6));
        // A bad field keeps the last limits and says why.
        QVERIFY(!s->setLimitsText(3, QStringLiteral("fast"), QString()));
        QVERIFY(child<QLabel>(s, "planError")->isVisible());
        QCOMPARE(s->limits().lifeYears, 3.0);
        // A value core refuses (checkPlanLimits) is shown against the control its field names.
        QVERIFY(!s->setLimitsText(3, QString(), QStringLiteral("-5")));
        const QString said = child<QLabel>(s, "planError")->text();
        QVERIFY2(said.startsWith(QLatin1String("Budget: '-5': expected US dollars")),
                 qPrintable(said));
        QCOMPARE(s->limits().budgetUsd, std::optional<double>(1e6));

        // The table as CSV (a header and one row per configuration) and the chart as PNG, SVG.
        const QString csv = dir.filePath(QStringLiteral("plan.csv"));
        QVERIFY(exportCsv(*chart, csv));
        QFile f(csv);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QStringList lines =
            QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1 + int(s->plan()->result->points.size()));
        const QString png = dir.filePath(QStringLiteral("plan.png"));
        QVERIFY(exportChart(*chart, png, QSize(800, 450)));
        QCOMPARE(QImage(png).size(), QSize(800, 450));
        const QString svg = dir.filePath(QStringLiteral("plan.svg"));
        QVERIFY(exportChart(*chart, svg, QSize(800, 450)));
        QFile sf(svg);
        QVERIFY(sf.open(QIODevice::ReadOnly));
        QVERIFY(sf.readAll().contains("<svg"));
    }

    // Cancel stops the worker on the conversation trace: nothing of it is kept.
    void cancelStopsThePlan() {
        auto w = shownOnPlan();
        auto* v = viewOf(*w);
        auto* s = sectionOf(*w);
        QSignalSpy cancelled(s, &PlanSection::cancelled);
        QVERIFY(v->openTrace(QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl")));
        QVERIFY(QTest::qWaitFor([&] { return s->computing(); }, 120000));
        QTest::mouseClick(child<QPushButton>(s, "planCancel"), Qt::LeftButton);
        QVERIFY(QTest::qWaitFor([&] { return !s->computing(); }, 60000));
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!s->plan());
        QVERIFY(child<QLabel>(s, "planStatus")->text().startsWith(QStringLiteral("Cancelled")));
        // Not started again by itself.
        QTest::qWait(PlanSection::kDebounceMs * 3);
        QVERIFY(!s->computing() && !s->scheduled());
    }

    // Fast mode (issue 41): a trace below the threshold is planned in full and the mode line
    // says why; at or above it, from two samples as `kvbe-cli trace plan` does, the line
    // giving the rate and the error bound (the plan's own figures), the status line naming each
    // stage and the rate while it runs, the recommendation a full replay.
    void largeTracesArePlannedFromSamples() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* s = sectionOf(*w);
        auto* mode = child<QLabel>(s, QStringLiteral("planMode"));
        QVERIFY(viewOf(*w)->openTrace(writeGenerated(dir)));
        // The first stage: the trace being read.
        QCOMPARE(child<QLabel>(s, QStringLiteral("planStatus"))->text(),
                 QStringLiteral("Reading generated.jsonl; the plan starts once it is read and "
                                "replayed"));
        QVERIFY(settle(*w));
        QVERIFY(s->plan() && s->plan()->result);
        QVERIFY(!s->plan()->result->sampling.sampled);
        QVERIFY(mode->isVisibleTo(s));
        QCOMPARE(mode->text(), QStringLiteral("Exact mode: every configuration replayed in full "
                                              "(below 200000 requests)."));

        StatusLog log(s);
        s->setSampleOptions(scaledDown());
        QVERIFY(settle(*w));
        const PlanResult& r = *s->plan()->result;
        const PlanSampling& m = r.sampling;
        QVERIFY(m.sampled);
        QCOMPARE(m.rate, 2400.0 / 8000);
        QVERIFY(m.sampleRequests[0] > 1000 && m.sampleRequests[0] < 4000);
        QVERIFY(mode->text().startsWith(
            QStringLiteral("Fast mode: sampled at 30.00 % of the prefix subtrees (%L1 and %L2 "
                           "requests in two samples;")
                .arg(m.sampleRequests[0])
                .arg(m.sampleRequests[1])));
        QVERIFY2(mode->text().contains(
                     QStringLiteral("Error bound (the two samples' largest difference): hit "
                                    "ratio %1 points, mean TTFT %2 %")
                         .arg(m.hitsError * 100, 0, 'f', 2)
                         .arg(m.ttftMeanError * 100, 0, 'f', 1)),
                 qPrintable(mode->text()));
        QVERIFY(m.hitsError > 0);
        // The status line leads with the mode in short.
        QVERIFY2(child<QLabel>(s, QStringLiteral("planStatus"))
                     ->text()
                     .startsWith(QStringLiteral("Fast mode, sampled at 30.00 % (hit ratio within "
                                                "%1 points): %2 replays in ")
                                     .arg(m.hitsError * 100, 0, 'f', 2)
                                     .arg(r.replays)),
                 qPrintable(child<QLabel>(s, QStringLiteral("planStatus"))->text()));
        QVERIFY(mode->text().contains(
            QStringLiteral("%1 configurations replayed in full").arg(m.shortlisted)));
        // Some configurations are the samples' estimates; the recommendation is not one.
        QVERIFY(std::any_of(r.points.begin(), r.points.end(),
                            [](const PlanPoint& p) { return p.sampled; }));
        QVERIFY(r.recommended);
        QVERIFY(!r.points[*r.recommended].sampled);
        auto* table = child<QTableWidget>(s, QStringLiteral("planTable"));
        for (int row = 0; row < table->rowCount(); ++row)
            QCOMPARE(table->item(row, 0)->text().contains(QLatin1String("[sampled]")),
                     r.points[r.front[std::size_t(row)]].sampled);

        // The status line while it ran: each stage with the rate.
        const QString all = log.texts.join(QLatin1Char('\n'));
        QVERIFY2(all.contains(QLatin1String("Fast mode, sample 1 of 2 at a rate of 30.00 %: "
                                            "replaying the grid, configuration ")) ||
                     all.contains(QLatin1String("Fast mode, sample 2 of 2 at a rate of 30.00 %: "
                                                "replaying the grid, configuration ")),
                 qPrintable(all));
        for (const QString& t : log.texts)
            QVERIFY2(t == QStringLiteral("Planning…") || t.contains(QLatin1String("30.00 %")),
                     qPrintable(t));
        // Every stage's line, as the section words it.
        PlanProgress p{PlanStage::Sample, 2, 0.0625, 268};
        p.stageDone = 0.5;
        QCOMPARE(PlanSection::progressText(p),
                 QStringLiteral("Fast mode, sample 2 of 2 at a rate of 6.25 %: replaying the "
                                "grid, configuration 135 of 268"));
        p = {PlanStage::Sampling, 1, 0.0625};
        QCOMPARE(PlanSection::progressText(p),
                 QStringLiteral("Fast mode: drawing sample 1 of 2 at a rate of 6.25 % of the "
                                "prefix subtrees"));
        p = {PlanStage::Shortlist, 0, 0.0625, 11};
        p.stageDone = 0.4;
        QCOMPARE(PlanSection::progressText(p),
                 QStringLiteral("Fast mode (sample rate 6.25 %): evaluating the 11 shortlisted "
                                "configurations in full (40 %)"));
        p = {PlanStage::DriveCounts, 0, 0.0625};
        QVERIFY(PlanSection::progressText(p).startsWith(
            QLatin1String("Fast mode, sample rate 6.25 %: replaying in full the configurations "
                          "the drive counts are read from")));
        p = {PlanStage::Full};
        p.stageDone = 0.25;
        QCOMPARE(PlanSection::progressText(p),
                 QStringLiteral("Exact mode: replaying every configuration in full (25 %)"));
    }

    // The Exact box replays every configuration in full whatever the trace's size; a tick is a
    // step of the window's undo stack, and undoing it plans from samples again.
    void exactIsTheUsersChoiceAndUndoable() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* s = sectionOf(*w);
        auto* box = child<QCheckBox>(s, QStringLiteral("planExact"));
        auto* mode = child<QLabel>(s, QStringLiteral("planMode"));
        QUndoStack* undo = explorerOf(w)->undoStack();
        s->setSampleOptions(scaledDown());
        QVERIFY(viewOf(*w)->openTrace(writeGenerated(dir)));
        QVERIFY(settle(*w));
        QVERIFY(s->plan()->result->sampling.sampled);
        const std::size_t points = s->plan()->result->points.size();
        const int steps = undo->count();

        QVERIFY(!box->isChecked());
        QTest::mouseClick(box, Qt::LeftButton);
        QVERIFY(box->isChecked() && s->exact());
        QVERIFY(settle(*w));
        const PlanResult& exact = *s->plan()->result;
        QVERIFY(!exact.sampling.sampled);
        QCOMPARE(exact.points.size(), points);
        for (const PlanPoint& p : exact.points)
            QVERIFY(!p.sampled);
        QCOMPARE(exact.replays, exact.points.size() + 1); // every one, and the floor
        QCOMPARE(mode->text(), QStringLiteral("Exact mode: every configuration replayed in full, "
                                              "as the Exact box asks."));
        QVERIFY(child<QLabel>(s, QStringLiteral("planStatus"))
                    ->text()
                    .startsWith(QStringLiteral("Exact mode: %1 replays in ").arg(exact.replays)));
        QCOMPARE(undo->count(), steps + 1);
        QCOMPARE(undo->undoText(), QStringLiteral("Exact plan"));

        undo->undo();
        QVERIFY(!box->isChecked());
        QVERIFY(settle(*w));
        QVERIFY(s->plan()->result->sampling.sampled);
        QVERIFY(mode->text().startsWith(QLatin1String("Fast mode: sampled at 30.00 %")));
        QCOMPARE(undo->count(), steps + 1); // undone, not a new step
        undo->redo();
        QVERIFY(box->isChecked());
        QVERIFY(settle(*w));
        QVERIFY(!s->plan()->result->sampling.sampled);
    }

    // The stage line changes several times a second while the plan runs; only it and the
    // progress bar repaint, not the window around them (its text once asked every layout up to
    // the window's for a new pass and repainted the Workload controls each time).
    void theStageLineRepaintsOnlyItself() {
        QTemporaryDir dir;
        auto w = shownOnPlan();
        auto* s = sectionOf(*w);
        auto* status = child<QLabel>(s, QStringLiteral("planStatus"));
        s->setSampleOptions(scaledDown());
        QVERIFY(viewOf(*w)->openTrace(writeGenerated(dir)));
        // From the first stage the worker reports to the plan's end.
        PaintCount controls, line;
        QStringList texts;
        auto staged = [&] {
            return s->computing() && status->text().startsWith(QLatin1String("Fast mode"));
        };
        controls.on = line.on = staged;
        controls.watch(child<QWidget>(w.get(), QStringLiteral("workloadControls")));
        line.watch(status);
        QTimer poll;
        QObject::connect(&poll, &QTimer::timeout, [&] {
            if (staged() && !texts.contains(status->text())) texts << status->text();
        });
        poll.start(2);
        QVERIFY(settle(*w));
        QVERIFY(s->plan()->result->sampling.sampled);
        QVERIFY2(texts.size() >= 3, qPrintable(texts.join(QLatin1Char('\n'))));
        QVERIFY2(line.paints >= 3, qPrintable(QString::number(line.paints)));
        QVERIFY2(controls.paints == 0,
                 qPrintable(QStringLiteral("the Workload controls were painted %1 times while %2 "
                                           "stage lines were shown")
                                .arg(controls.paints)
                                .arg(texts.size())));
    }
};

QTEST_MAIN(TestUiPlan)
#include "tst_ui_plan.moc"
