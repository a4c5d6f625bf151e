// The JSON Lines protocol: what the sinks write and what the reader accepts or refuses.
#include "kvbe/probes/stream.h"

#include <QtTest>

#include <sstream>

using namespace kvbe::probes;

namespace {
// JSON with single quotes, for readable test data: J("{'type':'result'}").
QString J(const char* text) {
    return QString(text).replace('\'', '"');
}
} // namespace

class ProbeStreamTest : public QObject {
    Q_OBJECT

  private:
    static std::vector<ProbeEvent> readAll(const std::string& text, QString* problem) {
        ProbeStreamReader reader;
        auto events = reader.feed(text);
        if (!events) {
            *problem = QString::fromStdString(events.message());
            return {};
        }
        if (auto done = reader.finish(); !done) *problem = QString::fromStdString(done.message());
        return *events;
    }

  private slots:
    void sinkWritesHeaderFirstAndResultLast() {
        std::ostringstream out;
        JsonlSink sink(out, "nvme-read");
        sink.begin("nvme-read", {{"engine", "psync"}});
        sink.progress(0.5, "QD 32, 1 MiB blocks");
        ProbePoint p{"read_GBps", 1048576, 2.5, "GB/s", {{"queue_depth", 32}}};
        sink.point(p);
        sink.note("ignored by the stream");
        sink.result({{"best", 2.5}});
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(4));
        QCOMPARE(events.front().kind, ProbeEvent::Kind::Header);
        QCOMPARE(events.front().json["kvbe_probe"].get<int>(), 1);
        QCOMPARE(events.front().json["probe"].get<std::string>(), std::string("nvme-read"));
        QCOMPARE(events.front().json["params"]["engine"].get<std::string>(), std::string("psync"));
        QVERIFY(events.front().json.contains("host"));
        QVERIFY(events.front().json.contains("started"));
        QCOMPARE(events[2].json["x"].get<double>(), 1048576.0);
        QCOMPARE(events[2].json["meta"]["queue_depth"].get<int>(), 32);
        QCOMPARE(events.back().kind, ProbeEvent::Kind::Result);
    }

    void errorBeforeBeginStillStartsWithAHeader() {
        std::ostringstream out;
        JsonlSink sink(out, "nvme-read");
        sink.error("--queue-depths 0: expected queue depths from 1 to 1024");
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(2));
        QCOMPARE(events[0].json["probe"].get<std::string>(), std::string("nvme-read"));
        QCOMPARE(events[1].kind, ProbeEvent::Kind::Error);
    }

    void nothingIsWrittenAfterTheLastLine() {
        std::ostringstream out;
        JsonlSink sink(out, "nvme-read");
        sink.error("stopped by SIGTERM before the probe finished; no scratch file is left behind");
        sink.error("stopped by SIGTERM before the probe finished; no scratch file is left behind");
        sink.progress(1, "late");
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(2));
    }

    void readerAcceptsChunksOfAnySize() {
        std::ostringstream out;
        JsonlSink sink(out, "host-memcpy");
        sink.progress(0, "start");
        sink.result({{"ok", true}});
        const std::string text = out.str();
        ProbeStreamReader reader;
        size_t count = 0;
        for (char c : text) {
            auto events = reader.feed(std::string_view(&c, 1));
            QVERIFY(events.ok());
            count += events->size();
        }
        QCOMPARE(count, size_t(3));
        QVERIFY(reader.finish().ok());
    }

    void readerRefusesMalformedStreams_data() {
        QTest::addColumn<QString>("stream");
        QTest::addColumn<QString>("expected");
        const QString header = J("{'kvbe_probe':1,'probe':'nvme-read','params':{}}\n");
        QTest::newRow("no header first") << (J("{'type':'progress','fraction':0.1}\n")) << "header";
        QTest::newRow("newer version") << (J("{'kvbe_probe':2,'probe':'x'}\n")) << "version 2";
        QTest::newRow("second header") << header + header << "second header";
        QTest::newRow("line after result") << header + J("{'type':'result','summary':{}}\n") +
                                                  J("{'type':'progress','fraction':1}\n")
                                           << "after the result";
        QTest::newRow("unknown type") << header + J("{'type':'banana'}\n") << "unknown line type";
        QTest::newRow("point without y")
            << header + J("{'type':'point','series':'s','x':1}\n") << "\"y\"";
        QTest::newRow("not json") << header + "hello\n"
                                  << "not a JSON object";
    }
    void readerRefusesMalformedStreams() {
        QFETCH(QString, stream);
        QFETCH(QString, expected);
        ProbeStreamReader reader;
        auto events = reader.feed(stream.toStdString());
        QVERIFY(!events.ok());
        QVERIFY2(QString::fromStdString(events.message()).contains(expected),
                 qPrintable(QString::fromStdString(events.message())));
    }

    void finishReportsCutOffAndUnfinishedStreams_data() {
        QTest::addColumn<QString>("stream");
        QTest::addColumn<QString>("expected");
        const QString header = J("{'kvbe_probe':1,'probe':'nvme-read','params':{}}\n");
        QTest::newRow("empty") << QString() << "empty";
        QTest::newRow("killed mid-run")
            << header + J("{'type':'progress','fraction':0.3}\n") << "without a result or error";
        QTest::newRow("cut line") << header + J("{'type':'res") << "cut off";
    }
    void finishReportsCutOffAndUnfinishedStreams() {
        QFETCH(QString, stream);
        QFETCH(QString, expected);
        ProbeStreamReader reader;
        QVERIFY(reader.feed(stream.toStdString()).ok());
        const auto done = reader.finish();
        QVERIFY(!done.ok());
        QVERIFY2(QString::fromStdString(done.message()).contains(expected),
                 qPrintable(QString::fromStdString(done.message())));
    }

    void tableLinesUpColumns() {
        TextTable t;
        t.columns = {"block", "GB/s"};
        t.rows = {{"128 KiB", "0.61"}, {"28 MiB", "12.70"}};
        const std::string text = renderTable(t);
        QCOMPARE(QString::fromStdString(text),
                 QString("block     GB/s\n-------  -----\n128 KiB   0.61\n28 MiB   12.70\n"));
    }
};

QTEST_GUILESS_MAIN(ProbeStreamTest)
#include "probe_stream_test.moc"
