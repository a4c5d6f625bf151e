// The Probes dock runs the real `kvbe-cli probe serving` against the loopback stand-in server
// (tests/serving/standin_server.cpp, not vLLM), and the cold TTFTs it streams land on the TTFT
// chart as the run's measured points.
#include "ui_test_support.h"

#include "kvbe/ui/charts/ttft_chart.h"

#include <QApplication>
#include <QDockWidget>
#include <QProcess>
#include <QScatterSeries>
#include <QTemporaryDir>
#include <QXYSeries>

#include <set>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// The stand-in server for one test; however the test ends, it does not outlive it.
class Standin {
  public:
    explicit Standin(const QStringList& args) {
        m_p.start(QStringLiteral(KVBE_STANDIN_PATH),
                  args + QStringList{"--peak-tflops", "2000", "--lifetime", "120"});
        if (!m_p.waitForStarted(10000)) return;
        // No line within 10 s leaves the URL empty, which the tests check.
        (void)QTest::qWaitFor([&] { return m_p.canReadLine() || m_p.waitForReadyRead(50); }, 10000);
        // It prints its OpenAI base URL, …/v1.
        const QString line = QString::fromUtf8(m_p.readLine()).trimmed();
        const auto at = line.indexOf(QStringLiteral("http://127.0.0.1:"));
        if (at >= 0) m_url = line.mid(at);
    }
    ~Standin() {
        m_p.kill();
        m_p.waitForFinished(5000);
    }
    QString url() const { return m_url; }

  private:
    QProcess m_p;
    QString m_url;
};

// The dock's serving form for the stand-in's model, fully cached prompts of these lengths; false
// where the form has no row for one of the options (the run would go without it).
bool fillServingForm(ProbePanel* panel, const QString& url, const QString& lengths,
                     const QString& served = QStringLiteral("standin/llama-3.2-3b")) {
    panel->setProbe(QStringLiteral("serving"));
    return panel->setOption(QStringLiteral("--endpoint"), url) &&
           panel->setOption(QStringLiteral("--model"), served) &&
           // The model geometry for the fit, when the served name is not a preset.
           panel->setOption(QStringLiteral("--config"),
                            QStringLiteral("meta-llama/Llama-3.2-3B")) &&
           panel->setOption(QStringLiteral("--lengths"), lengths) &&
           panel->setOption(QStringLiteral("--fractions"), QStringLiteral("1")) &&
           // Not about drift: the stand-in's few-millisecond reference point on a busy machine
           // drifts past the default limit, which would withhold the thresholds (exit 4).
           panel->setOption(QStringLiteral("--drift-limit"), QStringLiteral("10"));
}

} // namespace

class TestUiServing : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        qputenv("KVBE_CLI", KVBE_CLI_PATH);
    }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void servingRunFromTheProbesDockLandsOnTheTtftChart() {
        Standin server({});
        QVERIFY2(!server.url().isEmpty(), "the stand-in printed no URL");

        auto w = makeWindow();
        QVERIFY(probePanelOf(w)->window() == w.get());
        QVERIFY(child<QDockWidget>(w.get(), QStringLiteral("probeDock"))
                    ->isAncestorOf(probePanelOf(w)));
        auto* panel = probePanelOf(w);
        QTemporaryDir out;
        QVERIFY(fillServingForm(panel, server.url(), QStringLiteral("512,1k,2k")));
        QVERIFY(panel->setOption(QStringLiteral("--out"), out.path()));
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

    // Issue 40, item 7: a server whose served name is "standin", run with --config the
    // scenario's model. Its points are the scenario model's: not marked "[another model:
    // standin]", not dimmed, and drawn at the size of the other measured points (8 px, as the
    // Fleet files' points; they were 6 px).
    void servingPointsOfTheScenariosModelAreItsOwn() {
        Standin server({"--model", "standin"});
        QVERIFY2(!server.url().isEmpty(), "the stand-in printed no URL");
        auto w = makeWindow();
        auto* panel = probePanelOf(w);
        QVERIFY(fillServingForm(panel, server.url(), QStringLiteral("512,1k"),
                                QStringLiteral("standin")));
        QCOMPARE(panel->runModel(), QStringLiteral("meta-llama/Llama-3.2-3B"));
        ProbeRunner* run = panel->run();
        QVERIFY(QTest::qWaitFor([run] { return !run->isRunning(); }, 240000));
        QVERIFY2(run->outcome() == ProbeRunner::Outcome::Succeeded, qPrintable(run->message()));
        w->refreshNow();
        auto* ttft = qobject_cast<TtftChart*>(chartOf(w, QStringLiteral("ttft")));
        QVERIFY(ttft);
        auto* points = qobject_cast<QScatterSeries*>(ttft->seriesByKey(QStringLiteral("imported")));
        QVERIFY(points);
        QVERIFY(!points->points().isEmpty());
        QVERIFY2(!points->name().contains(QStringLiteral("another model")),
                 qPrintable(points->name()));
        QCOMPARE(points->color().alphaF(), 1.0);
        QCOMPARE(points->markerSize(), 8.0);
        // The B* chart's measured points likewise.
        auto* bstar =
            chartOf(w, QStringLiteral("breakeven"))->seriesByKey(QStringLiteral("measured-bstar"));
        if (bstar)
            QVERIFY2(!bstar->name().contains(QStringLiteral("another model")),
                     qPrintable(bstar->name()));
        // Left empty, the geometry field runs with the scenario's model.
        QVERIFY(panel->setOption(QStringLiteral("--config"), QString()));
        QCOMPARE(panel->runModel(), QStringLiteral("meta-llama/Llama-3.2-3B"));
    }

    // A server that refuses token-id prompts: the probe falls back to text measured by
    // /tokenize and says so, and the dock shows that note under the run, kept in its history.
    void probeNotesShowInTheDock() {
        Standin server({"--refuse-ids"});
        QVERIFY2(!server.url().isEmpty(), "the stand-in printed no URL");
        auto w = makeWindow();
        auto* panel = probePanelOf(w);
        QVERIFY(fillServingForm(panel, server.url(), QStringLiteral("512,1k")));
        ProbeRunner* run = panel->run();
        auto* notes = child<QLabel>(panel, QStringLiteral("runNotes0"));
        QVERIFY(QTest::qWaitFor([run] { return !run->isRunning(); }, 240000));
        QVERIFY2(run->outcome() == ProbeRunner::Outcome::Succeeded, qPrintable(run->message()));
        QVERIFY(!notes->isHidden());
        QVERIFY2(notes->text().contains(QStringLiteral("refused token-id prompts")),
                 qPrintable(notes->text()));
        QVERIFY2(notes->text().contains(QStringLiteral("/tokenize")), qPrintable(notes->text()));
    }
};

QTEST_MAIN(TestUiServing)
#include "tst_ui_serving.moc"
