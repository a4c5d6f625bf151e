// Replays every input the fuzzers have failed on (tests/fuzz/regressions/<target>/), and the
// seed corpora, through the fuzz targets' own property checks. A violated property aborts.
#include "../fuzz/fuzz_bodies.h"
#include "../fuzz/fuzz_trace_body.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QTest>

class TestFuzzRegressions : public QObject {
    Q_OBJECT
  private:
    static int replay(const QStringList& dirs, int (*body)(const uint8_t*, size_t)) {
        int n = 0;
        for (const auto& dir : dirs) {
            QDirIterator it(QStringLiteral(KVBE_SOURCE_DIR "/") + dir, QDir::Files,
                            QDirIterator::Subdirectories);
            while (it.hasNext()) {
                QFile f(it.next());
                if (!f.open(QIODevice::ReadOnly) || f.fileName().endsWith(".expect")) continue;
                const QByteArray data = f.readAll();
                body(reinterpret_cast<const uint8_t*>(data.constData()),
                     static_cast<size_t>(data.size()));
                ++n;
            }
        }
        return n;
    }

  private slots:
    void configReader() {
        const int n =
            replay({"tests/fuzz/regressions/fuzz_config_reader", "tests/bad-inputs/config",
                    "resources/models", "tests/fuzz/seeds/config_reader"},
                   kvbe::fuzz::fuzzConfigReader);
        QVERIFY(n >= 40);
    }
    void calibrationImporters() {
        const int n =
            replay({"tests/fuzz/regressions/fuzz_calibration", "tests/bad-inputs/calibration",
                    "tests/fixtures/calibration", "tests/fuzz/seeds/calibration"},
                   kvbe::fuzz::fuzzCalibration);
        QVERIFY(n >= 10);
    }
    void probeStreamReader() {
        const int n =
            replay({"tests/fuzz/regressions/fuzz_probe_stream", "tests/fuzz/seeds/probe_stream"},
                   kvbe::fuzz::fuzzProbeStream);
        QVERIFY(n >= 3);
    }
    void scenarioLoader() {
        const int n = replay({"tests/fuzz/regressions/fuzz_scenario", "tests/bad-inputs/scenario",
                              "resources/scenarios"},
                             kvbe::fuzz::fuzzScenario);
        QVERIFY(n >= 20);
    }
    void traceReaders() {
        const int n = replay({"tests/fuzz/regressions/fuzz_trace", "tests/bad-inputs/trace",
                              "tests/fixtures/traces", "tests/fuzz/seeds/trace"},
                             kvbe::fuzz::fuzzTrace);
        QVERIFY(n >= 28);
    }
    // Every registered trace format has a seed in tests/fuzz/seeds/trace that it reads, read as
    // that format by name, with requests and block ids: the fuzzer starts inside each reader.
    void everyTraceFormatHasASeed() {
        QStringList seeds;
        QDirIterator it(QStringLiteral(KVBE_SOURCE_DIR "/tests/fuzz/seeds/trace"), QDir::Files);
        while (it.hasNext())
            seeds << it.next();
        QVERIFY(seeds.size() >= 5);
        for (const auto& info : kvbe::traceFormats()) {
            QStringList readBy;
            for (const auto& path : seeds) {
                QFile f(path);
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QByteArray data = f.readAll();
                kvbe::TraceReadOptions opt;
                opt.format = kvbe::TraceFormat{info.name};
                auto t = kvbe::loadTraceText(std::string_view(data.constData(), data.size()),
                                             path.toStdString(), opt);
                if (t && t->size() > 0) readBy << QFileInfo(path).fileName();
            }
            QVERIFY2(!readBy.isEmpty(),
                     qPrintable(QStringLiteral("no seed in tests/fuzz/seeds/trace is read as '%1'")
                                    .arg(QString::fromUtf8(info.name.data(), info.name.size()))));
        }
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "tst_fuzz_regressions.moc"
