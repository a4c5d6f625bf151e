// kvbe-cli probe serving --pause against kvbe-serving-standin (a loopback STAND-IN, not a real
// server): the sweep idles that long before each timed request, as a replay's requests that find
// their server idle do, and says so in its parameters; a pause out of range is a sentence.
#include "probe_run.h"
#include "standin_process.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

namespace {
using kvbe::test::runProbe;
const QStringList& kQuick = kvbe::test::kQuickSweep;
} // namespace

class TestServingPause : public QObject {
    Q_OBJECT

  private slots:
    // A sleep never ends early, so the run takes at least its 15 pauses of 100 ms, whatever the
    // machine's load; without --pause the same sweep takes a fraction of that.
    void pauseIdlesBeforeEachTimedRequest() {
        Standin server({});
        QVERIFY(!server.url().isEmpty());
        QTemporaryDir out;
        QElapsedTimer t;
        t.start();
        const auto run =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path(),
                                          "--pause", "100ms", "--format", "jsonl"});
        const qint64 ms = t.elapsed();
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        QVERIFY2(ms >= 1500, qPrintable(QString::number(ms) + " ms"));
        const auto first = nlohmann::json::parse(run.out.left(run.out.indexOf('\n')).toStdString(),
                                                 nullptr, false);
        QVERIFY2(first.is_object() && first.contains("params"), run.out.constData());
        QCOMPARE(first["params"]["pause_s"].get<double>(), 0.1);
    }

    void aPauseOutOfRangeIsASentence_data() {
        QTest::addColumn<QString>("pause");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("negative") << "-1s"
                                  << "--pause '-1s' is not a positive duration";
        QTest::newRow("past a minute") << "61s"
                                       << "--pause 61s: expected a time from 0 to 60s";
        QTest::newRow("not a time") << "soon"
                                    << "--pause 'soon' is not a duration";
    }
    void aPauseOutOfRangeIsASentence() {
        QFETCH(QString, pause);
        QFETCH(QString, sentence);
        const auto r =
            runProbe(kQuick + QStringList{"--endpoint", "http://127.0.0.1:1/v1", "--pause", pause});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(sentence.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestServingPause)
#include "tst_serving_pause.moc"
