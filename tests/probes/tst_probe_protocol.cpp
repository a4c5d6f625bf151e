// The JSON Lines protocol: what the sinks write and what the reader accepts or refuses.
#include "kvbe/probes/probe.h"
#include "kvbe/probes/stream.h"

#include <QtTest>

#include <sstream>
#include <type_traits>

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
        sink.note("engine: psync: io_uring unavailable (forbidden by seccomp)");
        sink.result({{"best", 2.5}});
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(5));
        QCOMPARE(events.front().kind, ProbeEvent::Kind::Header);
        const auto* header = events.front().header();
        QCOMPARE(header->version, kvbe::kProbeProtocolVersion);
        QCOMPARE(header->probe, std::string("nvme-read"));
        QCOMPARE(header->params["engine"].get<std::string>(), std::string("psync"));
        QVERIFY(!header->host.empty());
        QVERIFY(!header->started.empty());
        QCOMPARE(events[2].point()->x, 1048576.0);
        QCOMPARE(events[2].point()->meta["queue_depth"].get<int>(), 32);
        // A note is a line of its own, where it happened: people see it while the probe runs.
        QCOMPARE(events[3].kind, ProbeEvent::Kind::Note);
        QCOMPARE(events[3].note()->message,
                 std::string("engine: psync: io_uring unavailable (forbidden by seccomp)"));
        QCOMPARE(events.back().kind, ProbeEvent::Kind::Result);
    }

    void noteLineRoundTrips() {
        const kvbe::ProbeNote note{"the server refused token-id prompts: \"ids\" → /tokenize"};
        const std::string line = kvbe::probeLine(note);
        QCOMPARE(QString::fromStdString(line),
                 J("{'type':'note','message':'the server refused token-id prompts: "
                   "\\'ids\\' → /tokenize'}"));
        const auto e = parseProbeLine(line);
        QVERIFY2(e.ok(), e.ok() ? "" : e.message().c_str());
        QCOMPARE(e->kind, ProbeEvent::Kind::Note);
        QVERIFY(e->note());
        QVERIFY(!e->progress());
        QCOMPARE(e->note()->message, note.message);
    }

    void errorBeforeBeginStillStartsWithAHeader() {
        std::ostringstream out;
        JsonlSink sink(out, "nvme-read");
        sink.error("--queue-depths 0: expected queue depths from 1 to 1024");
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(2));
        QCOMPARE(events[0].header()->probe, std::string("nvme-read"));
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
        // A version newer than this reader is refused by name, not read as if it were known.
        const int newer = kvbe::kProbeProtocolVersion + 1;
        QTest::newRow("newer version")
            << J("{'kvbe_probe':%1,'probe':'x'}\n").arg(newer)
            << QStringLiteral("protocol version %1; this reader knows versions 1 to %2")
                   .arg(newer)
                   .arg(kvbe::kProbeProtocolVersion);
        QTest::newRow("version 0") << J("{'kvbe_probe':0,'probe':'x'}\n") << "version 0";
        QTest::newRow("second header") << header + header << "second header";
        QTest::newRow("line after result") << header + J("{'type':'result','summary':{}}\n") +
                                                  J("{'type':'progress','fraction':1}\n")
                                           << "after the result";
        QTest::newRow("unknown type") << header + J("{'type':'banana'}\n") << "unknown line type";
        QTest::newRow("point without y")
            << header + J("{'type':'point','series':'s','x':1}\n") << "\"y\"";
        QTest::newRow("note without message")
            << header + J("{'type':'note'}\n") << "a note line needs \"message\"";
        QTest::newRow("note with a number for message")
            << header + J("{'type':'note','message':3}\n") << "a note line needs \"message\"";
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

    // Streams written before notes were a line of their own (version 1) are still read.
    void readerAcceptsVersionOneStreams() {
        const QString v1 = J("{'kvbe_probe':1,'probe':'nvme-read','host':'h','started':'t',"
                             "'params':{}}\n"
                             "{'type':'progress','fraction':0.5,'message':'QD 1'}\n"
                             "{'type':'point','series':'read_GBps','x':4096,'y':1.5,'unit':'GB/s',"
                             "'meta':{}}\n"
                             "{'type':'result','summary':{}}\n");
        QString problem;
        const auto events = readAll(v1.toStdString(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(4));
        QCOMPARE(events[0].header()->version, 1);
        QCOMPARE(events[2].point()->y, 1.5);
        QCOMPARE(events[3].kind, ProbeEvent::Kind::Result);
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

    // The reader hands out typed payloads: what a writer put in is what a reader gets back.
    void readerGivesTypedPayloads() {
        std::ostringstream out;
        JsonlSink sink(out, "nvme-read");
        sink.begin("nvme-read", {{"engine", "psync"}});
        sink.progress(0.25, "QD 1");
        sink.point(ProbePoint{"read_GBps", 4096, 1.5, "GB/s", {{"queue_depth", 1}}});
        sink.error("the drive went away");
        QString problem;
        const auto events = readAll(out.str(), &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.size(), size_t(4));
        QVERIFY(events[0].header());
        QCOMPARE(events[0].header()->probe, std::string("nvme-read"));
        QCOMPARE(events[0].header()->version, kvbe::kProbeProtocolVersion);
        QCOMPARE(events[0].header()->params["engine"].get<std::string>(), std::string("psync"));
        QVERIFY(!events[0].header()->host.empty());
        QVERIFY(events[1].progress());
        QCOMPARE(events[1].progress()->fraction, 0.25);
        QCOMPARE(events[1].progress()->message, std::string("QD 1"));
        QVERIFY(events[2].point());
        QCOMPARE(events[2].point()->series, std::string(kvbe::series::kDriveRead));
        QCOMPARE(events[2].point()->x, 4096.0);
        QCOMPARE(events[2].point()->y, 1.5);
        QCOMPARE(events[2].point()->unit, std::string("GB/s"));
        QCOMPARE(events[2].point()->meta["queue_depth"].get<int>(), 1);
        QVERIFY(!events[2].header());
        QVERIFY(events[3].error());
        QCOMPARE(events[3].error()->message, std::string("the drive went away"));
    }

    // Series names in one place: the probes build theirs from the same functions.
    void seriesNamesAndRoles_data() {
        QTest::addColumn<QString>("series");
        QTest::addColumn<int>("role");
        QTest::addColumn<bool>("tierLoad");
        using kvbe::SeriesRole;
        QTest::newRow("drive read") << QString::fromStdString(kvbe::driveSeries(false, false))
                                    << int(SeriesRole::DriveRead) << true;
        QTest::newRow("buffered read") << QString::fromStdString(kvbe::driveSeries(false, true))
                                       << int(SeriesRole::DriveRead) << true;
        QTest::newRow("drive write") << QString::fromStdString(kvbe::driveSeries(true, false))
                                     << int(SeriesRole::Other) << false;
        QTest::newRow("h2d pinned")
            << QString::fromStdString(kvbe::copySeries(kvbe::CopyDirection::HostToGpu, true))
            << int(SeriesRole::HostLink) << true;
        QTest::newRow("h2d pageable")
            << QString::fromStdString(kvbe::copySeries(kvbe::CopyDirection::HostToGpu, false))
            << int(SeriesRole::Other) << false;
        QTest::newRow("d2h pinned")
            << QString::fromStdString(kvbe::copySeries(kvbe::CopyDirection::GpuToHost, true))
            << int(SeriesRole::Other) << false;
        QTest::newRow("memcpy") << "memcpy_GBps" << int(SeriesRole::HostMemory) << true;
        QTest::newRow("prefill") << "t_prefill_s" << int(SeriesRole::Prefill) << false;
        QTest::newRow("cold ttft") << "ttft_cold_s" << int(SeriesRole::ColdTtft) << false;
        QTest::newRow("gemm") << "gemm_TFLOPs" << int(SeriesRole::Other) << false;
    }
    void seriesNamesAndRoles() {
        QFETCH(QString, series);
        QFETCH(int, role);
        QFETCH(bool, tierLoad);
        const auto r = kvbe::seriesRole(series.toStdString());
        QCOMPARE(int(r), role);
        QCOMPARE(kvbe::isTierLoad(r), tierLoad);
    }

    // Single loads (queue depth 1, or no depth) give (bytes, seconds); the bandwidth is the best
    // rate at any depth. Numbers by hand: 1 MiB at 2 GB/s takes 1048576 / 2e9 s.
    void measurementsFollowOneRule() {
        const std::vector<ProbePoint> points = {
            {"read_GBps", 1048576, 2.0, "GB/s", {{"queue_depth", 1}}},
            {"read_GBps", 1048576, 6.0, "GB/s", {{"queue_depth", 32}}},
            {"write_GBps", 1048576, 9.0, "GB/s", {{"queue_depth", 1}}},
            {"h2d_pinned_GBps", 4194304, 25.0, "GB/s", {}},
            {"h2d_pageable_GBps", 4194304, 40.0, "GB/s", {}},
            {"d2h_pinned_GBps", 4194304, 50.0, "GB/s", {}},
            {"t_prefill_s", 1024, 0.05, "s", {}},
            {"t_prefill_s", 2048, 0, "s", {}},
            {"ttft_cold_s", 1024, 0.08, "s", {}},
        };
        const auto m = kvbe::measurementsFromPoints(points);
        QVERIFY(m.drive);
        QCOMPARE(m.drive->name, std::string("nvme"));
        QCOMPARE(m.drive->reads.size(), size_t(1));
        QCOMPARE(m.drive->reads[0].bytes, 1048576.0);
        QCOMPARE(m.drive->reads[0].seconds, 1048576 / 2e9);
        QCOMPARE(*m.drive->readBps, 6e9);
        QVERIFY(m.hostLink);
        QCOMPARE(m.hostLink->name, std::string("dram"));
        QCOMPARE(m.hostLink->reads.size(), size_t(1));
        QCOMPARE(m.hostLink->reads[0].seconds, 4194304 / 25e9);
        QCOMPARE(*m.hostLink->readBps, 25e9);
        QCOMPARE(m.prefill.size(), size_t(1));
        QCOMPARE(m.prefill[0].tokens, 1024.0);
        QCOMPARE(m.coldTtft.size(), size_t(1));
        QCOMPARE(m.coldTtft[0].seconds, 0.08);
        QVERIFY(!kvbe::measurementsFromPoints({}).drive);
    }

    void exitCodesHaveOneListWithSentences() {
        using kvbe::ExitCode;
        for (ExitCode e : {ExitCode::Ok, ExitCode::BadInput, ExitCode::Usage, ExitCode::CannotRun,
                           ExitCode::Failed, ExitCode::Stopped}) {
            QCOMPARE(kvbe::exitCodeFromInt(kvbe::exitCode(e)), std::optional<ExitCode>(e));
            QVERIFY(!kvbe::exitCodeSentence(e).empty());
            QVERIFY(kvbe::exitCodeHelp().find(std::string(kvbe::exitCodeMeaning(e))) !=
                    std::string::npos);
        }
        QCOMPARE(kvbe::exitCode(ExitCode::Stopped), 130);
        QVERIFY(!kvbe::exitCodeFromInt(7));
    }

    // A probe step's result is core's Result failing with a ProbeOutcome: one template, whose
    // failure carries the exit code beside the sentence.
    void exitResultIsResultCarryingTheExitCode() {
        using namespace kvbe::probes;
        static_assert(std::is_same_v<ExitResult<int>, kvbe::Result<int, ProbeOutcome>>);
        static_assert(std::is_same_v<ExitStatus, kvbe::Result<kvbe::Ok, ProbeOutcome>>);
        const ExitResult<int> value = 42;
        QVERIFY(value.ok());
        QCOMPARE(*value, 42);
        const ExitResult<int> failed = ProbeOutcome{kvbe::ExitCode::CannotRun, "tmpfs"};
        QVERIFY(!failed);
        QCOMPARE(failed.error().exit, kvbe::ExitCode::CannotRun);
        QCOMPARE(failed.message(), std::string("tmpfs"));
        const kvbe::Result<int> plain = kvbe::Error{"no"};
        QCOMPARE(plain.message(), std::string("no"));
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
#include "tst_probe_protocol.moc"
