// The Probes dock runs the real `kvbe-cli probe serving` against the loopback stand-in server
// (tests/serving/standin_server.cpp, not vLLM), and the cold TTFTs it streams land on the TTFT
// chart as the run's measured points.
#include "ui_test_support.h"

#include "kvbe/ui/ttft_chart.h"

#include <QApplication>
#include <QDockWidget>
#include <QProcess>
#include <QTemporaryDir>
#include <QXYSeries>

#include <set>

using namespace kvbe;
using namespace kvbe::test;

class TestUiServing : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        qputenv("KVBE_CLI", KVBE_CLI_PATH);
    }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void servingRunFromTheProbesDockLandsOnTheTtftChart() {
        QProcess server;
        // However the test ends, the stand-in does not outlive it.
        struct Stop {
            QProcess& p;
            ~Stop() {
                p.kill();
                p.waitForFinished(5000);
            }
        } stop{server};
        server.start(QStringLiteral(KVBE_STANDIN_PATH),
                     {"--peak-tflops", "2000", "--lifetime", "120"});
        QVERIFY(server.waitForStarted(10000));
        QVERIFY(QTest::qWaitFor([&] { return server.canReadLine() || server.waitForReadyRead(50); },
                                10000));
        const QString line = QString::fromUtf8(server.readLine()).trimmed();
        const auto at = line.indexOf(QStringLiteral("http://127.0.0.1:"));
        QVERIFY2(at >= 0, qPrintable(line));

        auto w = makeWindow();
        QVERIFY(probePanelOf(w)->window() == w.get());
        QVERIFY(child<QDockWidget>(w.get(), QStringLiteral("probeDock"))
                    ->isAncestorOf(probePanelOf(w)));
        auto* panel = probePanelOf(w);
        QTemporaryDir out;
        panel->setProbe(QStringLiteral("serving"));
        panel->setEndpoint(line.mid(at)); // the stand-in prints its OpenAI base URL, …/v1
        panel->setServedModel(QStringLiteral("standin/llama-3.2-3b"));
        panel->setModel(QStringLiteral("meta-llama/Llama-3.2-3B"));
        panel->setLengths(QStringLiteral("512,1k,2k"));
        panel->setFractions(QStringLiteral("1"));
        panel->setOutFolder(out.path());
        ProbeRunner* run = panel->run();
        QVERIFY(QTest::qWaitFor([run] { return !run->isRunning(); }, 240000));
        QVERIFY2(run->outcome() == ProbeRunner::Outcome::Succeeded, qPrintable(run->message()));

        // The run's cold TTFTs, one or more per length, on the TTFT chart under the run's name.
        auto* ttft = qobject_cast<TtftChart*>(chartOf(w, QStringLiteral("ttft")));
        QVERIFY(ttft);
        w->refreshNow();
        auto* points = ttft->seriesByKey(QStringLiteral("imported"));
        QVERIFY(points);
        std::set<double> lengths;
        for (const QPointF& p : points->points()) {
            lengths.insert(p.x());
            QVERIFY2(p.y() > 0, "a cold TTFT of no time");
        }
        QCOMPARE(lengths, (std::set<double>{512, 1024, 2048}));
        QVERIFY2(points->name().startsWith(QStringLiteral("serving #1, measured")),
                 qPrintable(points->name()));
    }
};

QTEST_MAIN(TestUiServing)
#include "tst_ui_serving.moc"
