// Traces: the readers (each format, bad lines, chunk boundaries, cancelling, gzip and zstd),
// Bailian chaining, and the formats' table.
#include "illustrative_scenario.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>

#include <limits>
#include <list>
#include <random>
#include <unordered_map>
#include <unordered_set>

using namespace kvbe;
using kvbe::test::preset;
using namespace kvbe::test;

namespace {

std::vector<TraceRecord> readAll(const std::string& text, TraceReadOptions opt = {},
                                 TraceReadSummary* sum = nullptr) {
    std::vector<TraceRecord> out;
    std::vector<std::vector<std::uint64_t>> ids;
    auto r = readTraceText(text, "t.jsonl", opt, [&](const TraceRecord& rec) {
        out.push_back(rec);
        ids.emplace_back(rec.blockIds.begin(), rec.blockIds.end());
    });
    if (!r) qFatal("%s", r.message().c_str());
    if (sum) *sum = *r;
    static std::vector<std::vector<std::uint64_t>> keep; // spans point into these
    keep = std::move(ids);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i].blockIds = keep[i];
    return out;
}

} // namespace

class TestTrace : public QObject {
    Q_OBJECT
  private slots:
    void mooncakeLinesGiveMillisecondArrivalsAndPrefixIds() {
        const auto recs = readAll(lines({
            R"({"timestamp": 0, "input_length": 600, "output_length": 5, "hash_ids": [0, 1]})",
            R"({"timestamp": 3000, "input_length": 512, "output_length": 7, "hash_ids": [0]})",
        }));
        QCOMPARE(recs.size(), size_t(2));
        QCOMPARE(recs[1].arrivalS, 3.0);
        QCOMPARE(recs[0].inputTokens, 600u);
        QCOMPARE(recs[1].outputTokens, 7u);
        QCOMPARE(recs[0].blockIds.size(), size_t(2));
        QCOMPARE(recs[0].blockIds[1], std::uint64_t(1));
        QCOMPARE(recs[1].line, std::uint64_t(2));
    }

    void formatIsDetectedFromContent_data() {
        QTest::addColumn<QString>("line");
        QTest::addColumn<QString>("format");
        QTest::newRow("mooncake")
            << R"({"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0]})"
            << "mooncake";
        QTest::newRow("bailian")
            << R"({"chat_id": 159, "parent_chat_id": -1, "timestamp": 61.11, "input_length": 16, "output_length": 2, "type": "text", "turn": 1, "hash_ids": [1089]})"
            << "bailian";
        QTest::newRow("azure") << "TIMESTAMP,ContextTokens,GeneratedTokens"
                               << "azure";
        QTest::newRow("kvbe csv") << "timestamp_s,input_tokens,output_tokens,cached_tokens"
                                  << "csv";
    }

    void formatIsDetectedFromContent() {
        QFETCH(QString, line);
        QFETCH(QString, format);
        auto f = detectTraceFormat(line.toStdString(), "t");
        QVERIFY2(f.ok(), f.ok() ? "" : f.message().c_str());
        QCOMPARE(QString::fromStdString(std::string(toString(*f))), format);
    }

    void badLinesNameFileLineAndField_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const QString ok = R"({"timestamp": 0, "input_length": 10, "hash_ids": [1]})"
                           "\n";
        QTest::newRow("missing length") << ok + R"({"timestamp": 1, "hash_ids": [1]})"
                                        << "t.jsonl:2: field 'input_length' is missing";
        QTest::newRow("too few blocks")
            << ok + R"({"timestamp": 1, "input_length": 1025, "hash_ids": [1, 2]})"
            << "t.jsonl:2: field 'hash_ids': 2 blocks of 512 tokens for input_length 1025";
        QTest::newRow("too many blocks")
            << ok + R"({"timestamp": 1, "input_length": 512, "hash_ids": [1, 2]})"
            << "t.jsonl:2: field 'hash_ids': 2 blocks";
        QTest::newRow("truncated") << ok + R"({"timestamp": 1, "input_length": 10, "hash_ids": [1)"
                                   << "t.jsonl:2: field 'hash_ids': expected ',' or ']'";
        QTest::newRow("negative id")
            << ok + R"({"timestamp": 1, "input_length": 10, "hash_ids": [-1]})"
            << "t.jsonl:2: field 'hash_ids': expected an array of non-negative";
        QTest::newRow("fractional length")
            << ok + R"({"timestamp": 1, "input_length": 10.5, "hash_ids": [1]})"
            << "t.jsonl:2: field 'input_length': expected a whole number";
        QTest::newRow("text timestamp")
            << ok + R"({"timestamp": "x", "input_length": 10, "hash_ids": [1]})"
            << "t.jsonl:2: field 'timestamp': expected an arrival time in milliseconds";
        QTest::newRow("csv columns") << "timestamp_s,input_tokens,output_tokens\n0,10,1\n1,10\n"
                                     << "t.jsonl:3: 2 columns; expected 3";
        QTest::newRow("csv length") << "timestamp_s,input_tokens,output_tokens\n0,ten,1\n"
                                    << "t.jsonl:2: field 'input_tokens'";
        QTest::newRow("azure time")
            << "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-13-16 18:15:46.68,10,1\n"
            << "t.jsonl:2: field 'TIMESTAMP': expected a date and time";
        QTest::newRow("unknown") << "hello\n"
                                 << "t.jsonl:1: not a known trace format";
        QTest::newRow("empty") << "\n\n"
                               << "t.jsonl: the file is empty";
    }

    void badLinesNameFileLineAndField() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const std::string t = text.toStdString();
        auto r = readTraceText(t, "t.jsonl", {}, [](const TraceRecord&) {});
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find(expected.toStdString()) != std::string::npos,
                 r.message().c_str());
    }

    void skipBadCountsAndReportsLines() {
        TraceReadOptions opt;
        opt.skipBad = true;
        TraceReadSummary sum;
        const auto recs = readAll(lines({
                                      R"({"timestamp": 0, "input_length": 10, "hash_ids": [1]})",
                                      R"({"timestamp": 1, "input_length": 10, "hash_ids": [1)",
                                      R"({"timestamp": 2, "input_length": 2000, "hash_ids": [1]})",
                                      R"({"timestamp": 3, "input_length": 10, "hash_ids": [2]})",
                                  }),
                                  opt, &sum);
        QCOMPARE(recs.size(), size_t(2));
        QCOMPARE(sum.skippedLines, std::uint64_t(2));
        QCOMPARE(sum.skippedExamples.size(), size_t(2));
        QVERIFY(sum.skippedExamples[1].find("t.jsonl:3:") == 0);
    }

    void blockSizeAndTimeUnitOverride() {
        TraceReadOptions opt;
        opt.blockTokens = 16;
        opt.secondsPerUnit = 1.0;
        const auto recs =
            readAll(lines({R"({"timestamp": 2.5, "input_length": 17, "hash_ids": [4, 5]})"}), opt);
        QCOMPARE(recs.size(), size_t(1));
        QCOMPARE(recs[0].arrivalS, 2.5);
    }

    // Lines cut by the 4 MiB read chunks, CRLF endings and a last line without a newline.
    void linesAcrossChunkBoundariesAreWhole() {
        std::string text;
        std::uint64_t expectIds = 0;
        const int n = 120000;
        for (int i = 0; i < n; ++i) {
            text += "{\"timestamp\": " + std::to_string(i) +
                    ", \"input_length\": 600, \"hash_ids\": [" + std::to_string(i) + ", " +
                    std::to_string(i + 1) + "]}" + (i + 1 < n ? "\r\n" : "");
            expectIds += std::uint64_t(2 * i + 1);
        }
        QVERIFY(text.size() > (5u << 20));
        std::uint64_t count = 0, ids = 0;
        double lastArrival = -1;
        bool ordered = true;
        auto r = readTraceText(text, "big.jsonl", {}, [&](const TraceRecord& rec) {
            ++count;
            for (auto id : rec.blockIds)
                ids += id;
            ordered = ordered && rec.arrivalS > lastArrival && rec.line == count;
            lastArrival = rec.arrivalS;
        });
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(count, std::uint64_t(n));
        QCOMPARE(ids, expectIds);
        QVERIFY(ordered);
        QCOMPARE(r->bytes, std::uint64_t(text.size()));
    }

    void cancelStopsTheRead() {
        std::string text;
        for (int i = 0; i < 100000; ++i)
            text += R"({"timestamp": 0, "input_length": 10, "hash_ids": [1]})"
                    "\n";
        TraceReadOptions opt;
        opt.progress = [](double) { return false; };
        std::size_t seen = 0;
        auto r = readTraceText(text, "t", opt, [&](const TraceRecord&) { ++seen; });
        QVERIFY(r.ok());
        QVERIFY(r->cancelled);
        QVERIFY(seen < 100000);
    }

    // Bailian ids hash a block's content only: content 2 follows 1 in two requests and 5 in a
    // third, so it names two different prefixes.
    void bailianChainsContentHashesIntoPrefixIds() {
        const std::string text = lines({
            R"({"chat_id": 1, "parent_chat_id": -1, "timestamp": 0.5, "input_length": 48, "output_length": 3, "type": "text", "turn": 1, "hash_ids": [1, 2, 3]})",
            R"({"chat_id": 2, "parent_chat_id": 1, "timestamp": 1.0, "input_length": 40, "output_length": 3, "type": "text", "turn": 2, "hash_ids": [1, 2, 4]})",
            R"({"chat_id": 3, "parent_chat_id": -1, "timestamp": 2.0, "input_length": 48, "output_length": 3, "type": "text", "turn": 1, "hash_ids": [5, 2, 3]})",
            R"({"chat_id": 4, "parent_chat_id": -1, "timestamp": 3.0, "input_length": 33, "output_length": 3, "type": "text", "turn": 1, "hash_ids": [5, 2, 3]})",
        });
        const auto recs = readAll(text);
        QCOMPARE(recs.size(), size_t(4));
        QCOMPARE(recs[1].arrivalS, 1.0);
        QCOMPARE(recs[0].blockIds[0], recs[1].blockIds[0]);
        QCOMPARE(recs[0].blockIds[1], recs[1].blockIds[1]);
        QVERIFY(recs[0].blockIds[2] != recs[1].blockIds[2]);
        QVERIFY(recs[2].blockIds[1] != recs[0].blockIds[1]); // same content, other predecessor
        QVERIFY(recs[2].blockIds[2] != recs[0].blockIds[2]);
        QCOMPARE(recs[0].blockIds[1], chainPrefixId(chainPrefixId(0, 1), 2));

        // Unlimited cache, by hand: request 2 reuses blocks 1-2 (32 of 40 tokens), request 3
        // nothing, request 4 all three blocks of request 3 (33 of 33 tokens).
        auto trace = loadTraceText(text, "b.jsonl", {});
        QVERIFY(trace.ok());
        QCOMPARE(trace->summary.blockTokens, 16u);
        QCOMPARE(trace->distinctBlocks, 7u);
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(r->anyTier.tokenWeighted, (32.0 + 33.0) / (48 + 40 + 48 + 33));
        QCOMPARE(r->anyTier.blockWeighted, 5.0 / 12.0);
        QCOMPARE(r->anyTier.perRequest, (32.0 / 40 + 1.0) / 4);
    }

    // Azure's format as traces/README.md describes it: a date-time TIMESTAMP, lengths, no ids.
    void azureCsvGivesLengthsAndArrivalsOnly() {
        const std::string text = "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                 "2023-11-16 18:15:46.6805900,374,44\n"
                                 "2023-11-16 18:15:50.9951690,396,109\n"
                                 "2023-11-17 00:00:01.0000000,879,20\n";
        auto t = loadTraceText(text, "azure.csv", {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QVERIFY(t->summary.format == TraceFormat::Azure);
        QVERIFY(!t->summary.hasBlocks());
        QCOMPARE(t->size(), size_t(3));
        QVERIFY(std::abs(t->arrivalS[1] - 4.314579) < 1e-6);
        // 18:15:46.68059 to 00:00:01 the next day: 5 h 44 min 14.31941 s.
        QVERIFY(std::abs(t->arrivalS[2] - (5 * 3600 + 44 * 60 + 14.31941)) < 1e-5);
        QCOMPARE(t->inputTokens[2], 879u);
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        auto r = replayTrace(*t, llama3b(), cfg);
        QVERIFY(!r.ok());
        QVERIFY(r.message().find("no block ids") != std::string::npos);
    }

    void plainCsvReadsOptionalCachedTokens() {
        const auto recs = readAll("timestamp_s,input_tokens,output_tokens,cached_tokens\n"
                                  "0.0,1000,10,512\n"
                                  "1.5,2000,20,\n");
        QCOMPARE(recs.size(), size_t(2));
        QCOMPARE(recs[0].cachedTokens.value_or(0), 512u);
        QVERIFY(!recs[1].cachedTokens);
        QCOMPARE(recs[1].arrivalS, 1.5);
    }

    void gzipTracesAreReadDirectly() {
        QTemporaryDir dir;
        const QString plain = dir.filePath("t.jsonl");
        kvbe::test::writeFile(plain, R"({"timestamp": 0, "input_length": 10, "hash_ids": [1]})"
                                     "\n"
                                     R"({"timestamp": 5, "input_length": 10, "hash_ids": [1]})"
                                     "\n");
        if (QProcess::execute("gzip", {"-k", plain}) != 0) QSKIP("gzip is not installed");
        auto t = loadTrace((plain + ".gz").toStdString(), {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QCOMPARE(t->size(), size_t(2));
        QCOMPARE(t->arrivalS[1], 0.005);
    }

    // .zst through libzstd, streamed: a file of several MiB (more than one read chunk and many zstd
    // blocks) gives the same trace as the plain one; a cut file is a sentence, not a short trace.
    void zstdTracesAreReadDirectly() {
        QTemporaryDir dir;
        const QString plain = dir.filePath("t.jsonl");
        std::string text;
        for (int i = 0; i < 60000; ++i)
            text += "{\"timestamp\": " + std::to_string(i) +
                    ", \"input_length\": 600, \"hash_ids\": [" + std::to_string(i % 977) + ", " +
                    std::to_string(i) + "]}\n";
        kvbe::test::writeFile(plain, QByteArray::fromStdString(text));
        if (QProcess::execute("zstd", {"-q", "-k", plain}) != 0) QSKIP("zstd is not installed");
        auto z = loadTrace((plain + ".zst").toStdString(), {});
        if (!z.ok() && z.message().find("need libzstd") != std::string::npos)
            QSKIP("this build has no libzstd");
        QVERIFY2(z.ok(), z.ok() ? "" : z.message().c_str());
        auto p = loadTraceText(text, "t.jsonl", {});
        QVERIFY(p.ok());
        QCOMPARE(z->size(), size_t(60000));
        QCOMPARE(z->blocks, p->blocks);
        QCOMPARE(z->arrivalS, p->arrivalS);
        QCOMPARE(z->distinctBlocks, p->distinctBlocks);
        QCOMPARE(z->summary.bytes, std::uint64_t(text.size()));

        QFile f(plain + ".zst");
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray all = f.readAll();
        kvbe::test::writeFile(dir.filePath("cut.jsonl.zst"), all.left(all.size() / 2));
        auto cut = loadTrace(dir.filePath("cut.jsonl.zst").toStdString(), {});
        QVERIFY(!cut.ok());
        QVERIFY2(cut.message().find("zstd") != std::string::npos, cut.message().c_str());
        kvbe::test::writeFile(dir.filePath("junk.jsonl.zst"), "not zstd at all\n");
        auto junk = loadTrace(dir.filePath("junk.jsonl.zst").toStdString(), {});
        QVERIFY(!junk.ok());
        QVERIFY2(junk.message().find("not a valid zstd stream") != std::string::npos,
                 junk.message().c_str());
    }

    // The formats' table (traceFormats) gives the help texts and messages the CLI, the window
    // and classifyFile print; they open with the words they had when each was written by hand
    // for these four formats (a format added later adds its words after them).
    void formatTableGivesTheHelpTexts() {
        auto startsWith = [](const std::string& s, const std::string& head) {
            if (s.rfind(head, 0) == 0) return true;
            qWarning("'%s' does not start with '%s'", s.c_str(), head.c_str());
            return false;
        };
        QVERIFY(startsWith(traceFormatChoices(), "auto, mooncake, bailian, azure"));
        QVERIFY(startsWith(traceFormatsSentence(),
                           "Mooncake or Bailian JSON Lines, Azure or kvbe CSV"));
        QVERIFY(startsWith(traceBlockDefaults(), "512 Mooncake, 16 Bailian"));
        QCOMPARE(traceTimeUnitDefaults(), std::string("ms Mooncake, s otherwise"));
        auto json = detectTraceFormat("{\"model\": \"llama\"}", "t.jsonl");
        QVERIFY(!json);
        QVERIFY(startsWith(json.message(),
                           "t.jsonl:1: a JSON line without 'hash_ids' or 'chat_id'; expected a "
                           "Mooncake (timestamp, input_length, output_length, hash_ids) or "
                           "Bailian (chat_id, parent_chat_id, timestamp, ..., hash_ids) "
                           "request"));
        auto text = detectTraceFormat("hello", "t.jsonl");
        QVERIFY(!text);
        QVERIFY(startsWith(text.message(),
                           "t.jsonl:1: not a known trace format; expected JSON lines "
                           "(Mooncake, Bailian) or a CSV header (Azure: "
                           "TIMESTAMP,ContextTokens,GeneratedTokens; kvbe: "
                           "timestamp_s,input_tokens,output_tokens[,cached_tokens])"));
        // Every entry has a name that round-trips, a detection and extensions; the choices end
        // with the last entry's name.
        for (const auto& f : traceFormats()) {
            QCOMPARE(toString(*parseTraceFormat(f.name)), f.name);
            QVERIFY(f.detect != nullptr);
            QVERIFY(!f.extensions.empty());
        }
        const std::string last = " or " + std::string(traceFormats().back().name);
        QVERIFY(traceFormatChoices().size() > last.size());
        QCOMPARE(traceFormatChoices().substr(traceFormatChoices().size() - last.size()), last);
        QVERIFY(!parseTraceFormat("jsonl"));
        // A code-made format no entry has is refused with the names there are.
        TraceReadOptions bad;
        bad.format = TraceFormat{"nonesuch"};
        auto r = loadTraceText("{}\n", "t.jsonl", bad);
        QVERIFY(!r);
        QVERIFY2(r.message().find("t.jsonl: no trace format is named 'nonesuch'; expected auto, "
                                  "mooncake") == 0,
                 r.message().c_str());
    }

    // A folder is one trace only for a format whose entry says so; Mooncake's does not.
    void aFolderOfLineFormatFilesIsRefused() {
        QTemporaryDir dir;
        QFile f(dir.filePath("a.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("{\"timestamp\": 0, \"input_length\": 1, \"hash_ids\": [1]}\n");
        f.close();
        for (auto format : {TraceFormat::Auto, TraceFormat::Mooncake}) {
            TraceReadOptions opt;
            opt.format = format;
            auto r = loadTrace(dir.path().toStdString(), opt);
            QVERIFY(!r);
            QVERIFY2(r.message().find(dir.path().toStdString() + ": a folder") == 0,
                     r.message().c_str());
            QVERIFY2(r.message().find("trace is one file") != std::string::npos,
                     r.message().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
