// File ▸ Export report…: the window's sign-off report of what is open. With a trace open and
// planned and a calibration file imported, the HTML names the Plan section's recommended
// configuration, the trace's SHA-256 (computed here), the imported file and that it was made in
// the window, with every chart inline; the PDF is written too.
#include "ui_test_support.h"

#include "kvbe/plan/plan.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/workload/plan_section.h"

#include <QCryptographicHash>
#include <QFile>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// 30 requests two seconds apart: a 3-block prefix they share and 3 blocks of each one's own.
QString writeTrace(const QTemporaryDir& dir) {
    const QString path = dir.filePath(QStringLiteral("report-trace.jsonl"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    int own = 500;
    for (int i = 0; i < 30; ++i) {
        QStringList ids = {"0", "1", "2"};
        for (int b = 0; b < 3; ++b)
            ids << QString::number(own++);
        f.write(QStringLiteral("{\"timestamp\": %1, \"input_length\": 3072, \"output_length\": 1, "
                               "\"hash_ids\": [%2]}\n")
                    .arg(i * 2000)
                    .arg(ids.join(QStringLiteral(", ")))
                    .toUtf8());
    }
    return path;
}

QString sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromLatin1(
        QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex());
}

} // namespace

class TestUiReport : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void exportsWhatIsOpen() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto w = makeWindow();
        w->show();
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QVERIFY(menuAction(w.get(), QStringLiteral("Export report")));
        auto* view = child<WorkloadView>(w.get(), QStringLiteral("workloadView"));
        auto* section = child<PlanSection>(w.get(), QStringLiteral("planSection"));
        tabsOf(w)->setCurrentWidget(view);
        child<QTabWidget>(view, QStringLiteral("workloadCharts"))->setCurrentWidget(section);
        const QString calibration = QStringLiteral(KVBE_FIXTURES "/calibration/kvbe-node17.json");
        QVERIFY(w->importCalibrations({calibration}));
        const QString trace = writeTrace(dir);
        QVERIFY(view->openTrace(trace));
        QVERIFY(QTest::qWaitFor(
            [&] {
                return !view->loading() && !view->replaying() && !section->computing() &&
                       !section->scheduled() && section->plan() && section->plan()->result &&
                       !fleetPanelOf(w)->importing();
            },
            180000));
        const PlanResult& plan = *section->plan()->result;

        const QString html = dir.filePath(QStringLiteral("report.html"));
        const auto st = w->exportReportTo(html);
        QVERIFY2(st, st ? "" : st.message().c_str());
        QFile f(html);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        const QString answer =
            plan.recommended
                ? QStringLiteral("Recommended: ") +
                      QString::fromStdString(describePlanPoint(plan.points[*plan.recommended]))
                : QStringLiteral("No configuration meets the limits");
        QVERIFY2(text.contains(answer.toHtmlEscaped()), qPrintable(answer));
        QVERIFY(text.contains(sha256(trace) + QStringLiteral("  ") + trace));
        QVERIFY(text.contains(QStringLiteral("kvbe-node17.json")));
        QVERIFY(text.contains(QStringLiteral("in the window")));
        QVERIFY(text.contains(QStringLiteral("&quot;kvbe_scenario&quot;")));
        QVERIFY(text.count(QStringLiteral("<svg")) >= 7);

        const QString pdf = dir.filePath(QStringLiteral("report.pdf"));
        QVERIFY(w->exportReportTo(pdf));
        QFile p(pdf);
        QVERIFY(p.open(QIODevice::ReadOnly));
        QVERIFY(p.read(5) == "%PDF-");
    }
};

QTEST_MAIN(TestUiReport)
#include "tst_ui_report.moc"
