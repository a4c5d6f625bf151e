// Traces: the four readers, Bailian chaining, the tiered cache replay against hand counts and an
// independent reference LRU, the one-pass capacity sweep against replays, and the admission rules.
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

// A plain ordered-dictionary LRU (std::list + hash map): an independent reference for the
// simulator's LRU.
double referenceLruTokenHits(const std::vector<RealRequest>& reqs, std::size_t capacity, double B,
                             double* blockHits = nullptr) {
    std::list<qint64> order; // front: most recent
    std::unordered_map<qint64, std::list<qint64>::iterator> where;
    double hitTokens = 0, hitBlocks = 0;
    for (const auto& r : reqs) {
        std::size_t h = 0;
        while (h < r.ids.size() && where.count(r.ids[h]))
            ++h;
        hitTokens += std::min(double(h) * B, r.n);
        hitBlocks += double(h);
        for (auto id : r.ids) {
            auto it = where.find(id);
            if (it != where.end()) order.erase(it->second);
            order.push_front(id);
            where[id] = order.begin();
            if (order.size() > capacity) {
                where.erase(order.back());
                order.pop_back();
            }
        }
    }
    if (blockHits) *blockHits = hitBlocks;
    return hitTokens;
}

// Write-through LRU in several tiers, each a plain ordered-dictionary LRU of its own: the
// reference for the replay's one-structure version. Counts, per tier, the blocks each request's
// hit run takes from it (the fastest tier holding the block) and the blocks written to it.
struct MultiTierCounts {
    std::vector<double> hitBlocks;
    std::vector<std::uint64_t> written;
};
MultiTierCounts referenceWriteThrough(const std::vector<RealRequest>& reqs,
                                      const std::vector<std::size_t>& caps) {
    const std::size_t K = caps.size();
    std::vector<std::list<qint64>> order(K);
    std::vector<std::unordered_map<qint64, std::list<qint64>::iterator>> where(K);
    MultiTierCounts c{std::vector<double>(K, 0), std::vector<std::uint64_t>(K, 0)};
    for (const auto& r : reqs) {
        for (auto id : r.ids) {
            std::size_t f = K;
            for (std::size_t k = 0; k < K && f == K; ++k)
                if (where[k].count(id)) f = k;
            if (f == K) break;
            c.hitBlocks[f] += 1;
        }
        for (auto id : r.ids) {
            for (std::size_t k = 0; k < K; ++k) {
                if (caps[k] == 0) continue;
                auto it = where[k].find(id);
                if (it != where[k].end())
                    order[k].erase(it->second);
                else
                    ++c.written[k];
                order[k].push_front(id);
                where[k][id] = order[k].begin();
                if (order[k].size() > caps[k]) {
                    where[k].erase(order[k].back());
                    order[k].pop_back();
                }
            }
        }
    }
    return c;
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

    // Two tiers by hand: GPU 2 blocks, DRAM 4 blocks (block bytes 1), 512-token blocks.
    //   r1 [1,2] N=1024, r2 [3,4] N=1024, r3 [1,2,5] N=1500, r4 [1,2,5,6] N=2000.
    // Write-through: before r3 the GPU holds {3,4}, DRAM {1,2,3,4}: r3's run is 1,2 from DRAM.
    // After r3 the GPU holds {2,5}, DRAM {4,1,2,5}: r4's run is 1 (DRAM), 2 and 5 (GPU).
    // Cascade reaches the same runs (see the test body for its writes).
    void twoTierHitsByHand_data() {
        QTest::addColumn<int>("placement");
        QTest::addColumn<int>("dramWrites");
        // Write-through: r1 2, r2 2, r3 1 (block 5), r4 1 (block 6).
        QTest::newRow("write-through") << int(Placement::WriteThrough) << 6;
        // Cascade: r2 demotes 1, 2; r3 demotes 3, 4, 1; r4 demotes 2, 5, 1, 2.
        QTest::newRow("cascade") << int(Placement::Cascade) << 9;
    }
    void twoTierHitsByHand() {
        QFETCH(int, placement);
        QFETCH(int, dramWrites);
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1000, "input_length": 1024, "hash_ids": [3, 4]})",
            R"({"timestamp": 2000, "input_length": 1500, "hash_ids": [1, 2, 5]})",
            R"({"timestamp": 3000, "input_length": 2000, "hash_ids": [1, 2, 5, 6]})",
        });
        auto t = loadTraceText(text, "hand.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 2;
        cfg.placement = static_cast<Placement>(placement);
        cfg.tiers.push_back(SimTier{"dram", 4, TierPath{"dram", 55e9, 0.5e-3}, 55e9});
        auto r = replayTrace(*t, llama3b(), cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double totalN = 1024 + 1024 + 1500 + 2000;
        QCOMPARE(r->tiers[0].hits.tokenWeighted, 1024.0 / totalN);
        QCOMPARE(r->tiers[1].hits.tokenWeighted, (1024.0 + 512.0) / totalN);
        QCOMPARE(r->tiers[0].hits.blockWeighted, 2.0 / 11.0);
        QCOMPARE(r->tiers[1].hits.blockWeighted, 3.0 / 11.0);
        QCOMPARE(r->tiers[0].hits.perRequest, (1024.0 / 2000) / 4);
        QCOMPARE(r->tiers[1].hits.perRequest, (1024.0 / 1500 + 512.0 / 2000) / 4);
        QCOMPARE(r->anyTier.blockWeighted, 5.0 / 11.0);
        QCOMPARE(r->tiers[1].blocksWritten, std::uint64_t(dramWrites));
    }

    // A tier of size 0 stores nothing: no writes, no hits. With the GPU's 2 blocks alone, r3 and
    // r4 above both start with block 1, which the GPU has lost: no hit anywhere.
    void zeroCapacityTierStoresNothing() {
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1000, "input_length": 1024, "hash_ids": [3, 4]})",
            R"({"timestamp": 2000, "input_length": 1500, "hash_ids": [1, 2, 5]})",
            R"({"timestamp": 3000, "input_length": 2000, "hash_ids": [1, 2, 5, 6]})",
        });
        auto t = loadTraceText(text, "hand.jsonl", {});
        QVERIFY(t.ok());
        for (auto placement : {Placement::WriteThrough, Placement::Cascade}) {
            ReplayConfig cfg;
            cfg.blockBytes = 1;
            cfg.gpuCapacityBytes = 2;
            cfg.placement = placement;
            cfg.tiers.push_back(SimTier{"dram", 0, TierPath{"dram", 55e9, 0.5e-3}, 55e9});
            auto r = replayTrace(*t, llama3b(), cfg);
            QVERIFY(r.ok());
            QCOMPARE(r->tiers[1].blocksWritten, std::uint64_t(0));
            QCOMPARE(r->anyTier.blockWeighted, 0.0);
        }
    }

    // A hybrid model's block carries one state snapshot (docs/workload-model.md, "Tiers and
    // capacity": capacity in blocks is C_T / (B · kv_bytes_per_token + state_bytes), and writes
    // include the state).
    // Nemotron 3 Nano 30B-A3B by hand from its config: 6 attention layers × 2 (K, V) × 2 KV heads
    // × head_dim 128 × 2 B (BF16) per token; state per snapshot: 23 Mamba-2 layers × (64 heads ×
    // head_dim 64 × d_state 128) SSM elements in FP32 (mamba_ssm_cache_dtype) + 23 × conv (64·64 +
    // 2·8·128 groups·d_state) × (kernel 4 − 1) elements in BF16.
    void hybridBlocksCarryTheStateSnapshot() {
        CostInputs in;
        in.model = preset("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16");
        in.kvDtype = KvDtype::BF16;
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        auto cost = CostModel::create(in);
        QVERIFY2(cost.ok(), cost.ok() ? "" : cost.message().c_str());
        const double kvPerToken = 6.0 * 2 * 2 * 128 * 2;                  // 6,144 B
        const double ssm = 23.0 * 64 * 64 * 128 * 4;                      // FP32
        const double conv = 23.0 * (64 * 64 + 2 * 8 * 128) * (4 - 1) * 2; // BF16
        const double B = 512;
        const double expected = B * kvPerToken + ssm + conv; // 52,228,096 B
        QCOMPARE(expected, 52228096.0);
        QCOMPARE(traceBlockBytes(*cost, 512), expected);
        // A dense model has no state: the block is its KV only.
        QCOMPARE(traceBlockBytes(llama3b(), 512), 512.0 * 28 * 2 * 8 * 128 * 2);

        // Through the replay: a GPU cache of 2.5 hybrid blocks holds 2 of them (the KV alone
        // would be 41 blocks), and every written block costs the whole block with its state.
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1000, "input_length": 1024, "hash_ids": [3, 4]})",
            R"({"timestamp": 2000, "input_length": 1500, "hash_ids": [1, 2, 5]})",
        });
        auto t = loadTraceText(text, "hybrid.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = traceBlockBytes(*cost, t->summary.blockTokens);
        cfg.gpuCapacityBytes = 2.5 * expected;
        cfg.tiers.push_back(SimTier{"dram", 4.5 * expected, TierPath{"dram", 55e9, 0.5e-3}, 55e9});
        auto r = replayTrace(*t, *cost, cfg);
        QVERIFY(r.ok());
        QCOMPARE(r->tiers[0].capacityBlocks, std::uint64_t(2));
        QCOMPARE(r->tiers[1].capacityBlocks, std::uint64_t(4));
        // DRAM (write-through, 4 blocks): r1 writes 1, 2; r2 writes 3, 4; r3 finds 1, 2 and
        // writes 5 (evicting 3): 5 blocks written, each with its state.
        QCOMPARE(r->tiers[1].blocksWritten, std::uint64_t(5));
        QCOMPARE(r->tiers[1].bytesWritten, 5 * expected);
    }

    // The simulator's tiers are the scenario's: a tier that sets its own write bandwidth is
    // written at it (calc reports the same), one that does not at its preset's (DRAM PCIe 5.0:
    // 55 GB/s in resources/tiers.json), a custom tier without one at 0 (unknown, not queued).
    void simTiersTakeTheScenarioTiersWriteBandwidth() {
        std::optional<Scenario> s = kvbe::test::illustrative();
        QCOMPARE(s->tiers.size(), std::size_t(3));
        s->tiers[1].writeGBps = 1.5; // the nvme-gen5 preset's is 6.75
        TierConfig ssd;
        ssd.name = "ssd";
        ssd.bandwidthGBps = 12;
        s->tiers.push_back(ssd);
        auto e = evaluate(*s, kvbe::test::presets());
        QVERIFY2(e.ok(), e.ok() ? "" : e.message().c_str());
        const auto sim = scenarioSimTiers(*e);
        QCOMPARE(sim.size(), std::size_t(4));
        QCOMPARE(sim[0].name, std::string("dram-pcie5"));
        QCOMPARE(sim[0].writeBps, 55e9);
        QCOMPARE(sim[1].name, std::string("nvme-gen5"));
        QCOMPARE(sim[1].writeBps, 1.5e9);
        QCOMPARE(sim[3].name, std::string("ssd"));
        QCOMPARE(sim[3].writeBps, 0.0);
        QCOMPARE(sim[3].path.bandwidthBps, 12e9);
        for (const auto& t : sim)
            QVERIFY(std::isinf(t.capacityBytes));
    }

    // A tier whose reads and writes share one link (SimTier::sharedLink): a load holds the link
    // for its transfer time and the tier's queued writes wait. By hand, with 1-second block
    // writes (blockBytes 1, 1 B/s) and a DRAM path slow enough that one 512-token block takes
    // 0.8 s to read: r1 (t = 0, blocks 1, 2) issues its writes when its prefill ends (p1, a few
    // ms): block 1 is written at p1 + 1, block 2 at p1 + 2. r2 (t = 1.5, blocks 1, 5) loads block
    // 1 from DRAM: on a shared link block 2's write is pushed back by the read, to p1 + 2.8.
    // r3 (t = 2.5, blocks 1, 2) then finds block 2 written on separate links (a 2-block hit run)
    // but still queued on a shared one (a 1-block run and one late lookup).
    void sharedLinkReadsDelayWritesByHand_data() {
        QTest::addColumn<bool>("shared");
        QTest::addColumn<double>("hitBlocks");
        QTest::addColumn<int>("late");
        QTest::newRow("separate links") << false << 3.0 << 0;
        QTest::newRow("one shared link") << true << 2.0 << 1;
    }
    void sharedLinkReadsDelayWritesByHand() {
        QFETCH(bool, shared);
        QFETCH(double, hitBlocks);
        QFETCH(int, late);
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1500, "input_length": 1024, "hash_ids": [1, 5]})",
            R"({"timestamp": 2500, "input_length": 1024, "hash_ids": [1, 2]})",
        });
        auto t = loadTraceText(text, "shared.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cost = llama3b();
        const double kvBlock = 512.0 * 28 * 2 * 8 * 128 * 2; // Llama 3.2 3B, BF16: 512 tokens
        const TierPath dram{"dram", kvBlock / 0.8, 0.5e-3};
        QVERIFY(std::abs(cost.tLoad(dram, 512) - dram.tFixedS - 0.8) < 1e-9);
        QVERIFY(cost.tMiss(1024) < 0.05); // p1: block 2's write ends near 2.0 s, well before 2.5 s
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 0;
        cfg.writeQueue = true;
        SimTier tier{"dram", kUnlimited, dram, 1.0};
        tier.sharedLink = shared;
        cfg.tiers.push_back(tier);
        auto r = replayTrace(*t, cost, cfg);
        QVERIFY(r.ok());
        // Block-weighted any-tier hits: (r2's 1 + r3's run) over 6 blocks.
        QCOMPARE(r->anyTier.blockWeighted * 6, hitBlocks);
        QCOMPARE(r->tiers[1].lookupsLate, std::uint64_t(late));
        QCOMPARE(r->tiers[1].writesDropped, std::uint64_t(0));
    }

    // Times of one request by hand through the cost model's public functions: r3 above loads
    // 1024 tokens from DRAM (always) or recomputes all 1500 (GPU-only has no run).
    void ruleTimesFollowTheCostModel() {
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1000, "input_length": 1024, "hash_ids": [3, 4]})",
            R"({"timestamp": 2000, "input_length": 1500, "hash_ids": [1, 2, 5]})",
        });
        auto t = loadTraceText(text, "hand.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const TierPath dram{"dram", 55e9, 0.5e-3};
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 2;
        cfg.tiers.push_back(SimTier{"dram", 4, dram, 55e9});
        RequestTimes times;
        auto r = replayTrace(*t, cm, cfg, &times);
        QVERIFY(r.ok());
        const double tAlways = cm.tLoad(dram, 1024) + cm.tRecompute(1500 - 1024, 1024);
        QCOMPARE(times.none[2], cm.tMiss(1500));
        QCOMPARE(times.gpuOnly[2], cm.tMiss(1500));
        QCOMPARE(times.always[2], tAlways);
        QCOMPARE(times.optimal[2],
                 std::min({tAlways, cm.tMiss(1500),
                           cm.tLoad(dram, 512) + cm.tRecompute(1500 - 512, 512)}));
        QCOMPARE(times.hitBlocks[2], 2u);
        // p* of DRAM for this model is above 512 tokens? The breakeven cut follows it.
        const auto pStar = cm.breakevenPrefix(dram);
        QVERIFY(pStar.has_value());
        const double expectBe = *pStar <= 1024 ? tAlways : cm.tMiss(1500);
        QCOMPARE(times.breakeven[2], expectBe);
    }

    // The replay keeps write-through LRU in one structure for all tiers; three separate
    // reference LRUs must give the same hits per tier and the same writes, block for block.
    void writeThroughLruEqualsSeparateReferenceLrus_data() {
        QTest::addColumn<qint64>("gpu");
        QTest::addColumn<qint64>("dram");
        QTest::addColumn<qint64>("nvme");
        QTest::newRow("nested") << qint64(700) << qint64(3000) << qint64(20000);
        QTest::newRow("equal lower tiers") << qint64(700) << qint64(3000) << qint64(3000);
        QTest::newRow("no gpu, unlimited nvme") << qint64(0) << qint64(5000) << qint64(-1);
        QTest::newRow("one-block gpu") << qint64(1) << qint64(2) << qint64(100000);
    }
    void writeThroughLruEqualsSeparateReferenceLrus() {
        QFETCH(qint64, gpu);
        QFETCH(qint64, dram);
        QFETCH(qint64, nvme);
        const auto& reqs = realTrace();
        QVERIFY2(!reqs.empty(), kNoRealTrace);
        auto cap = [](qint64 v) {
            return v < 0 ? std::numeric_limits<std::size_t>::max() : std::size_t(v);
        };
        const auto ref = referenceWriteThrough(reqs, {cap(gpu), cap(dram), cap(nvme)});
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(trace.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = double(gpu);
        cfg.tiers.push_back(SimTier{"dram", double(dram), TierPath{"dram", 55e9, 0.5e-3}, 55e9});
        cfg.tiers.push_back(SimTier{"nvme", nvme < 0 ? kUnlimited : double(nvme),
                                    TierPath{"nvme", 13.5e9, 1e-3}, 10e9});
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        for (std::size_t k = 0; k < 3; ++k) {
            QCOMPARE(r->tiers[k].hits.blockWeighted * double(r->blocks), ref.hitBlocks[k]);
            if (k > 0) QCOMPARE(r->tiers[k].blocksWritten, ref.written[k]);
        }
    }

    // The write queue by hand. 1 GB blocks, DRAM written at 1 GB/s (1 s a block), a buffer of
    // 2 blocks, no GPU cache (so every hit is DRAM's). Writes are issued when their request's
    // prefill ends, a few ms after its arrival (p below); the trace leaves room for it:
    //   r1 t=0     [1,2]    writes 1 (done p+1.0 s), 2 (done p+2.0 s)
    //   r2 t=1.5   [1,2,3]  1 hits; 2 is still being written: a late lookup, the run ends (h=1);
    //                       3 is queued behind 2
    //   r3 t=1.6   [4,5,6]  queue 2,3 + 4: over the bound, the oldest (2) is dropped; + 5 drops 3,
    //                       + 6 drops 4 (3 writes dropped); 5 is written from 1.6+p, then 6
    //   r4 t=10    [1,2,3]  1 hits; 2's copy was dropped: the run ends (h=1); 2 and 3 are written
    //                       again (done 11.0+p and 12.0+p)
    //   r5 t=11.5  [1,2,3]  1 and 2 hit, 3 is late (h=2)
    // DRAM hits 1+1+2 = 4 of 14 blocks; 8 blocks written (2+1+3+2); the longest backlog 2 s (r1).
    // Without the queue: r2 2, r4 3, r5 3 = 8 hits.
    void writeQueueDelaysAndDropsBlocksByHand_data() {
        QTest::addColumn<int>("policy");
        QTest::newRow("lru") << int(EvictionPolicy::Lru);
        QTest::newRow("s3fifo") << int(EvictionPolicy::S3Fifo);
    }
    void writeQueueDelaysAndDropsBlocksByHand() {
        QFETCH(int, policy);
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1500, "input_length": 1500, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 1600, "input_length": 1536, "hash_ids": [4, 5, 6]})",
            R"({"timestamp": 10000, "input_length": 1536, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 11500, "input_length": 1536, "hash_ids": [1, 2, 3]})",
        });
        auto t = loadTraceText(text, "queue.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1e9;
        cfg.gpuCapacityBytes = 0;
        cfg.policy = static_cast<EvictionPolicy>(policy);
        SimTier dram{"dram", kUnlimited, TierPath{"dram", 55e9, 0.5e-3}, 1e9};
        dram.writeBufferBytes = 2e9;
        cfg.tiers.push_back(dram);
        cfg.writeQueue = true;
        RequestTimes times;
        auto r = replayTrace(*t, llama3b(), cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const std::vector<std::uint32_t> runs{0, 1, 0, 1, 2};
        QCOMPARE(times.hitBlocks, runs);
        const auto& d = r->tiers[1];
        QCOMPARE(d.hits.blockWeighted, 4.0 / 14.0);
        QCOMPARE(d.blocksWritten, std::uint64_t(8));
        QCOMPARE(d.writesDropped, std::uint64_t(3));
        QCOMPARE(d.lookupsLate, std::uint64_t(2));
        QCOMPARE(d.lookupsDropped, std::uint64_t(1));
        QVERIFY(std::abs(d.maxBacklogS - 2.0) < 1e-12);

        cfg.writeQueue = false;
        auto free = replayTrace(*t, llama3b(), cfg, &times);
        QVERIFY(free.ok());
        const std::vector<std::uint32_t> freeRuns{0, 2, 0, 3, 3};
        QCOMPARE(times.hitBlocks, freeRuns);
        QCOMPARE(free->tiers[1].blocksWritten, std::uint64_t(6));
        QCOMPARE(free->tiers[1].writesDropped, std::uint64_t(0));
    }

    // Prefill servers by hand: r1 and r2 arrive together, r3 later. No GPU cache; r2's first two
    // blocks are in DRAM (written by r1, no write queue). One server: r2 waits for r1's prefill
    // C1 while its load L2 runs, then recomputes the rest: TTFT2 = max(C1, L2) + C2.
    void instancesQueueFirstComeFirstServedAndHideLoads() {
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 0, "input_length": 1500, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 60000, "input_length": 100, "hash_ids": [9]})",
        });
        auto t = loadTraceText(text, "servers.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const TierPath slow{"dram", 2e9,
                            2e-3}; // slow enough that the load outlasts part of the wait
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 0;
        cfg.tiers.push_back(SimTier{"dram", kUnlimited, slow, 0});
        const double C1 = cm.tMiss(1024), L2 = cm.tLoad(slow, 1024),
                     C2 = cm.tRecompute(1500 - 1024, 1024);
        const double C3 = cm.tMiss(100);

        cfg.instances = 1;
        RequestTimes times;
        auto r = replayTrace(*t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(times.always[1], L2 + C2); // the prefill time alone is unchanged
        QVERIFY(kvbe::test::near(times.queuedAlways[0], C1, 1e-12));
        QVERIFY(kvbe::test::near(times.queuedAlways[1], std::max(C1, L2) + C2, 1e-12));
        QVERIFY(kvbe::test::near(times.queuedAlways[2], C3, 1e-12));
        QVERIFY(kvbe::test::near(times.queuedNone[1], C1 + cm.tMiss(1500), 1e-12));
        const RuleResult& always = *r->rule("always");
        QVERIFY(kvbe::test::near(always.ttft.mean, (C1 + std::max(C1, L2) + C2 + C3) / 3, 1e-12));
        QVERIFY(kvbe::test::near(always.meanWaitS, C1 / 3, 1e-12));
        QVERIFY(kvbe::test::near(always.hiddenLoadS, std::min(L2, C1), 1e-12));
        QCOMPARE(r->rule("none")->hiddenLoadS, 0.0);

        // Two servers: nobody waits, so TTFT is the prefill time.
        cfg.instances = 2;
        r = replayTrace(*t, cm, cfg, &times);
        QVERIFY(r.ok());
        QVERIFY(kvbe::test::near(times.queuedAlways[1], L2 + C2, 1e-12));
        QCOMPARE(r->rule("always")->meanWaitS, 0.0);
    }

    // Loads queue on the tier's link one after the other (FIFO). r1 and r2 (4 ms apart) each
    // load the same two DRAM blocks (1024 tokens, w = 10 ms of transfer at the whole bandwidth,
    // after t_fixed). By hand: r1's transfer runs from t_fixed to t_fixed + w; r2's starts when
    // it ends, 4 ms after r2 arrived less t_fixed: r1's load takes t_fixed + w, r2's
    // t_fixed + 2w − 4 ms, w − 4 ms of it behind r1.
    void loadsQueueOnTheTierLinkInArrivalOrder() {
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 60000, "input_length": 1500, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 60004, "input_length": 1500, "hash_ids": [1, 2, 4]})",
        });
        auto t = loadTraceText(text, "shared.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const double tf = 2e-3, w = 10e-3, d = 4e-3;
        const TierPath dram{"dram", cm.loadBytes(1024) / w, tf};
        QVERIFY(kvbe::test::near(cm.tLoad(dram, 1024), tf + w, 1e-12));
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 0;
        cfg.tiers.push_back(SimTier{"dram", kUnlimited, dram, 0});
        cfg.instances = 2; // nobody waits for a server
        RequestTimes times;
        auto r = replayTrace(*t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double C = cm.tRecompute(1500 - 1024, 1024);
        QVERIFY(kvbe::test::near(times.always[1], tf + w + C, 1e-12)); // alone, unqueued
        QVERIFY(kvbe::test::near(times.queuedAlways[1], tf + w + C, 1e-9));
        QVERIFY(kvbe::test::near(times.queuedAlways[2], tf + 2 * w - d + C, 1e-9));
        QVERIFY(kvbe::test::near(r->rule("always")->sharedLoadS, w - d, 1e-9));
        QCOMPARE(r->rule("always")->meanWaitS, 0.0);
        QCOMPARE(r->rule("gpu-only")->sharedLoadS, 0.0);

        // 20 ms apart the loads do not overlap: each takes t_fixed + w, as alone.
        auto apart = loadTraceText(
            lines({
                R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
                R"({"timestamp": 60000, "input_length": 1500, "hash_ids": [1, 2, 3]})",
                R"({"timestamp": 60020, "input_length": 1500, "hash_ids": [1, 2, 4]})",
            }),
            "apart.jsonl", {});
        QVERIFY(apart.ok());
        r = replayTrace(*apart, cm, cfg, &times);
        QVERIFY(r.ok());
        QVERIFY(kvbe::test::near(times.queuedAlways[2], tf + w + C, 1e-9));
        QVERIFY(std::abs(r->rule("always")->sharedLoadS) < 1e-12);
    }

    // The same queueing against a reference written here the plain way (each request's transfer
    // starts at max(arrival + t_fixed, the end of the one before)), on 300 generated requests
    // with overlapping loads.
    void fifoLoadsMatchAReference() {
        std::mt19937 rng(7);
        std::string text;
        for (int i = 0; i < 300; ++i) {
            const int conv = static_cast<int>(rng() % 12), len = 1 + static_cast<int>(rng() % 8);
            std::string ids;
            for (int b = 0; b < len; ++b)
                ids += (b ? ", " : "") + std::to_string(conv * 100 + b);
            text += "{\"timestamp\": " + std::to_string(i * 3 + static_cast<int>(rng() % 5)) +
                    ", \"input_length\": " + std::to_string(len * 512) + ", \"hash_ids\": [" + ids +
                    "]}\n";
        }
        auto t = loadTraceText(text, "overlap.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const TierPath dram{"dram", 20e9, 1e-3};
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 0;
        cfg.tiers.push_back(SimTier{"dram", kUnlimited, dram, 0});
        cfg.instances = 1000; // a server for everyone: only the loads interact
        RequestTimes times;
        auto r = replayTrace(*t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());

        const std::size_t n = t->size();
        std::vector<double> end(n), alone(n);
        std::vector<std::size_t> order(n);
        for (std::size_t i = 0; i < n; ++i)
            order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return t->arrivalS[a] < t->arrivalS[b];
        });
        double linkFree = 0;
        for (const std::size_t i : order) {
            const double tok = std::min(times.hitBlocks[i] * 512.0, double(t->inputTokens[i]));
            alone[i] = cm.tLoad(dram, tok);
            end[i] = t->arrivalS[i];
            if (alone[i] == 0) continue;
            const double start = std::max(t->arrivalS[i] + dram.tFixedS, linkFree);
            end[i] = linkFree = start + alone[i] - dram.tFixedS;
        }
        int overlapped = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double recompute = times.always[i] - alone[i];
            const double expected = (end[i] - t->arrivalS[i]) + recompute;
            QVERIFY2(kvbe::test::near(times.queuedAlways[i], expected, 1e-9),
                     qPrintable(QString("request %1: %2 vs %3")
                                    .arg(i)
                                    .arg(times.queuedAlways[i])
                                    .arg(expected)));
            if (end[i] - t->arrivalS[i] > alone[i] * (1 + 1e-9)) ++overlapped;
        }
        QVERIFY2(overlapped > 50, qPrintable(QString::number(overlapped))); // the case is tested
    }

    void s3FifoKeepsARepeatedlyUsedBlockThatLruDrops() {
        // One-block requests; capacity 10 (small FIFO 1). Block 1 is used three times in a row,
        // then 12 one-time blocks pass, then block 1 returns. LRU (10 most recent) has lost it;
        // S3-FIFO moved it to main on its way out of the small FIFO (seen more than once) and
        // one-time blocks leave through the small FIFO, so it is still there.
        std::string text;
        auto add = [&](int id) {
            text += "{\"timestamp\": 0, \"input_length\": 512, \"hash_ids\": [" +
                    std::to_string(id) + "]}\n";
        };
        add(1);
        add(1);
        add(1);
        for (int i = 100; i < 112; ++i)
            add(i);
        add(1);
        auto t = loadTraceText(text, "s3.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 10;
        RequestTimes lru, s3;
        QVERIFY(replayTrace(*t, llama3b(), cfg, &lru).ok());
        cfg.policy = EvictionPolicy::S3Fifo;
        QVERIFY(replayTrace(*t, llama3b(), cfg, &s3).ok());
        QCOMPARE(lru.hitBlocks.back(), 0u);
        QCOMPARE(s3.hitBlocks.back(), 1u);
        QCOMPARE(lru.hitBlocks[2], 1u);
        QCOMPARE(s3.hitBlocks[2], 1u);
    }

    // --- the real conversation trace ---------------------------------------------------------

    void conversationTraceUnlimitedHitsEqualAnIndependentCount() {
        const auto& reqs = realTrace();
        QVERIFY2(!reqs.empty(), kNoRealTrace);
        QCOMPARE(reqs.size(), size_t(12031));
        // Independent count: a block hits when every block before it in the request has been
        // seen in an earlier request (ids already name prefixes).
        std::unordered_set<qint64> seen;
        double hitTok = 0, hitBlk = 0, tok = 0, blk = 0, perReq = 0;
        for (const auto& r : reqs) {
            std::size_t h = 0;
            while (h < r.ids.size() && seen.count(r.ids[h]))
                ++h;
            const double t = std::min(double(h) * 512, r.n);
            hitTok += t;
            hitBlk += double(h);
            perReq += t / r.n;
            tok += r.n;
            blk += double(r.ids.size());
            for (auto id : r.ids)
                seen.insert(id);
        }
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
        QVERIFY(trace->summary.format == TraceFormat::Mooncake);
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        QCOMPARE(r->anyTier.tokenWeighted, hitTok / tok);
        QCOMPARE(r->anyTier.blockWeighted, hitBlk / blk);
        QVERIFY(std::abs(r->anyTier.perRequest - perReq / double(reqs.size())) < 1e-12);
        // docs/workload-model.md, "Reference figures".
        QVERIFY(std::abs(r->anyTier.tokenWeighted - 0.3736) < 5e-5);
        QVERIFY(std::abs(r->anyTier.blockWeighted - 0.3664) < 5e-5);
        QVERIFY(std::abs(tok / double(reqs.size()) - 12035) < 1);
    }

    void lruAtFixedCapacitiesEqualsTheReferenceLru_data() {
        QTest::addColumn<int>("capacity");
        QTest::addColumn<double>("published");
        QTest::newRow("6000 blocks") << 6000 << 0.1413;
        QTest::newRow("30000 blocks") << 30000 << 0.3321;
        QTest::newRow("500 blocks") << 500 << -1.0;
    }
    void lruAtFixedCapacitiesEqualsTheReferenceLru() {
        QFETCH(int, capacity);
        QFETCH(double, published);
        const auto& reqs = realTrace();
        QVERIFY2(!reqs.empty(), kNoRealTrace);
        double refBlocks = 0, tok = 0, blk = 0;
        const double refTok = referenceLruTokenHits(reqs, std::size_t(capacity), 512, &refBlocks);
        for (const auto& r : reqs) {
            tok += r.n;
            blk += double(r.ids.size());
        }
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(trace.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = capacity;
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        QCOMPARE(r->anyTier.tokenWeighted, refTok / tok);
        QCOMPARE(r->anyTier.blockWeighted, refBlocks / blk);
        if (published > 0) QVERIFY(std::abs(r->anyTier.tokenWeighted - published) < 5e-5);
        // The one-pass sweep gives the same figure at this capacity.
        auto s = sweepCapacity(*trace, llama3b(), cfg, 0, {double(capacity) * 512});
        QVERIFY(s.ok());
        QCOMPARE(s->points[0].anyTier.tokenWeighted, refTok / tok);
    }

    // Multi-tier write-through LRU: the one-pass sweep equals a replay at every grid point.
    void sweepEqualsReplaysAtEveryGridPoint_data() {
        QTest::addColumn<int>("varyTier");
        QTest::newRow("vary dram") << 1;
        QTest::newRow("vary gpu") << 0;
        QTest::newRow("vary nvme") << 2;
    }
    void sweepEqualsReplaysAtEveryGridPoint() {
        QFETCH(int, varyTier);
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
        const CostModel cm = llama3b();
        ReplayConfig cfg;
        cfg.blockBytes = 512; // capacities below in tokens
        cfg.gpuCapacityBytes = 2000 * 512;
        cfg.tiers.push_back(SimTier{"dram", 10000 * 512, TierPath{"dram", 55e9, 0.5e-3}, 55e9});
        cfg.tiers.push_back(SimTier{"nvme", 40000 * 512, TierPath{"nvme", 13.5e9, 1e-3}, 10e9});
        const auto grid = logGrid(1e4, 1e8, 9);
        auto s = sweepCapacity(*trace, cm, cfg, std::size_t(varyTier), grid);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(s->points.size(), grid.size());
        for (std::size_t g = 0; g < grid.size(); ++g) {
            ReplayConfig c = cfg;
            const double bytes = std::floor(grid[g] / 512 * (1 + 1e-12)) * 512;
            if (varyTier == 0)
                c.gpuCapacityBytes = bytes;
            else
                c.tiers[std::size_t(varyTier) - 1].capacityBytes = bytes;
            auto r = replayTrace(*trace, cm, c);
            QVERIFY(r.ok());
            const auto& p = s->points[g];
            for (std::size_t k = 0; k < 3; ++k) {
                QVERIFY2(std::abs(p.tiers[k].tokenWeighted - r->tiers[k].hits.tokenWeighted) <
                             1e-12,
                         qPrintable(QString("grid %1 tier %2: %3 vs %4")
                                        .arg(g)
                                        .arg(k)
                                        .arg(p.tiers[k].tokenWeighted)
                                        .arg(r->tiers[k].hits.tokenWeighted)));
                QVERIFY(std::abs(p.tiers[k].blockWeighted - r->tiers[k].hits.blockWeighted) <
                        1e-12);
                QVERIFY(std::abs(p.tiers[k].perRequest - r->tiers[k].hits.perRequest) < 1e-12);
            }
            QVERIFY(kvbe::test::near(p.meanTtftAlways, r->rule("always")->ttft.mean, 1e-9));
            QVERIFY(kvbe::test::near(p.meanTtftGpuOnly, r->rule("gpu-only")->ttft.mean, 1e-9));
            QVERIFY(kvbe::test::near(p.meanTtftNone, r->rule("none")->ttft.mean, 1e-12));
        }
    }

    void optimalIsNeverSlowerThanAlwaysOrGpuOnly_data() {
        QTest::addColumn<int>("placement");
        QTest::addColumn<int>("policy");
        QTest::newRow("write-through lru")
            << int(Placement::WriteThrough) << int(EvictionPolicy::Lru);
        QTest::newRow("cascade lru") << int(Placement::Cascade) << int(EvictionPolicy::Lru);
        QTest::newRow("write-through s3fifo")
            << int(Placement::WriteThrough) << int(EvictionPolicy::S3Fifo);
        QTest::newRow("cascade s3fifo") << int(Placement::Cascade) << int(EvictionPolicy::S3Fifo);
    }
    void optimalIsNeverSlowerThanAlwaysOrGpuOnly() {
        QFETCH(int, placement);
        QFETCH(int, policy);
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
        const CostModel cm = llama3b();
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 2000 * cfg.blockBytes;
        cfg.placement = static_cast<Placement>(placement);
        cfg.policy = static_cast<EvictionPolicy>(policy);
        cfg.tiers.push_back(
            SimTier{"dram", 8000 * cfg.blockBytes, TierPath{"dram", 55e9, 0.5e-3}, 55e9});
        cfg.tiers.push_back(
            SimTier{"nvme", 60000 * cfg.blockBytes, TierPath{"nvme", 4e9, 1e-3}, 4e9});
        RequestTimes t;
        auto r = replayTrace(*trace, cm, cfg, &t);
        QVERIFY(r.ok());
        std::size_t declined = 0;
        for (std::size_t i = 0; i < trace->size(); ++i) {
            QVERIFY(t.optimal[i] <= t.always[i]);
            QVERIFY(t.optimal[i] <= t.gpuOnly[i]);
            QVERIFY(t.optimal[i] <= t.breakeven[i]);
            QVERIFY(t.gpuOnly[i] <= t.none[i]);
            if (t.optimal[i] < t.always[i]) ++declined;
        }
        QCOMPARE(r->rule("optimal")->declinedRequests >= declined, true);
        QVERIFY(r->rule("optimal")->ttft.mean <= r->rule("always")->ttft.mean);
        QVERIFY(r->rule("optimal")->lossShare == 0);
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
