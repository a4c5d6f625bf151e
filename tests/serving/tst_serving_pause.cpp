// kvbe-cli probe serving --pause against kvbe-serving-standin (a loopback STAND-IN, not a real
// server): the sweep idles that long before each timed request, as a replay's requests that find
// their server idle do, and says so in its parameters; a pause out of range is a sentence.
#include "standin_process.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runProbe(const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(KVBE_CLI_PATH), QStringList{"probe", "serving"} + args);
    Run r;
    if (!p.waitForStarted(10000)) return r;
    p.waitForFinished(180000);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// Three lengths, one fraction, one repeat: with the drift reference (5 samples at each end) and
// the per-request floor (2 prompts), at least 15 timed requests.
const QStringList kQuick = {"--model",       "standin/llama-3.2-3b",
                            "--config",      "meta-llama/Llama-3.2-3B",
                            "--peak-tflops", "2000",
                            "--lengths",     "512,1k,2k",
                            "--fractions",   "1",
                            "--repeats",     "1",
                            "--warmup",      "1",
                            "--tiers",       "offload",
                            "--drift-limit", "10"};

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
