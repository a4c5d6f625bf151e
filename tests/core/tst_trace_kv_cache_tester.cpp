// kv-cache-tester's agentic-session traces (core/src/trace/formats/kv_cache_tester.cpp): five real
// sessions of its repository (tests/fixtures/traces/kv-cache-tester/, README there), read one at a
// time and as a folder, against figures computed apart from kvbe by this Python over the same
// files (run in that folder; it follows trace_replay_tester.py's rules: a sub-agent's t counts from
// its marker's, every session and every sub-agent has its own ids, requests in arrival order):
//
//   import json, glob
//   def flatten(reqs, base, ctx, out, newctx):
//       for r in reqs:
//           if r.get('type') == 'subagent':
//               flatten(r['requests'], base + r['t'], newctx(), out, newctx)
//           else:
//               out.append((base + r['t'], r['in'], r['out'], [(ctx, h) for h in r['hash_ids']]))
//   def read(files):
//       nxt = [0]
//       def newctx():
//           nxt[0] += 1; return nxt[0]
//       allr = []
//       for f in files:
//           one = []
//           flatten(json.load(open(f))['requests'], 0.0, newctx(), one, newctx)
//           one.sort(key=lambda r: r[0]); allr += one
//       allr.sort(key=lambda r: r[0])
//       return allr
//   def report(rs):  # unlimited cache: a request's hit run is its prefix of blocks seen before
//       seen = set(); hitBlk = blk = 0; perReq = 0.0
//       for t, n, o, ids in rs:
//           h = 0
//           while h < len(ids) and ids[h] in seen: h += 1
//           hitBlk += h; blk += len(ids); perReq += h * 64 / n; seen.update(ids)
//       N = sum(r[1] for r in rs)
//       print(len(rs), N, sum(r[2] for r in rs), len(seen), hitBlk, blk, hitBlk * 64 / N,
//             hitBlk / blk, perReq / len(rs), [r[0] for r in rs[:6]])
//   report(read(sorted(glob.glob('*.json'))))
//   for f in sorted(glob.glob('*.json')): report(read([f]))
//
// It prints, for the folder: 44 requests, 2,429,208 prompt and 30,950 generated tokens, 4,808
// distinct blocks, 33,128 of 37,936 blocks hit (0.8727914612499218 token-, 0.8732602277520034
// block-weighted, 0.7532557066175226 per request), arrivals 0, 0, 0, 0, 0, 6. For trace_0291.json
// alone (two sub-agents of 5 and 7 requests): 32 requests, 2,254,119 and 19,504 tokens (the file's
// own "totals": combined_tokens input 2254119, output 19504), 3,780 distinct blocks, 31,429 of
// 35,209 hit (0.8923468548022531, 0.892641086085944, 0.8131423056272149).
#include "kvbe/files/file_kind.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"
#include "trace_test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <set>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const std::string kDir = KVBE_FIXTURES "/traces/kv-cache-tester";
const TraceFormat kFormat{"kv-cache-tester"};

ReplayResult unlimited(const Trace& t) {
    ReplayConfig cfg;
    cfg.blockBytes = 1;
    auto r = replayTrace(t, llama3b(), cfg);
    if (!r) qFatal("%s", r.message().c_str());
    return *r;
}

double sum(const std::vector<std::uint32_t>& v) {
    double s = 0;
    for (auto x : v)
        s += x;
    return s;
}

// A session of two requests and a sub-agent of one, in the format's shape; scope as given.
std::string session(const std::string& scope) {
    return R"({"id":"x","block_size":64,"hash_id_scope":")" + scope +
           R"(","requests":[{"t":0,"type":"n","in":130,"out":5,"hash_ids":[1,2]},)"
           R"({"t":10,"type":"subagent","requests":[{"t":1,"type":"n","in":200,"out":3,"hash_ids":[1,2,3]}]},)"
           R"({"t":20,"type":"s","in":192,"out":4,"hash_ids":[1,2,4]}]})";
}

} // namespace

class TestTraceKvCacheTester : public QObject {
    Q_OBJECT

  private slots:
    void detectsTheFormatFromTheFilesFirstLine() {
        auto c = classifyFile(kDir + "/trace_0291.json");
        QCOMPARE(c.kind, FileKind::Trace);
        QCOMPARE(c.format, std::string("kv-cache-tester"));
        auto t = loadTrace(kDir + "/trace_0504.json", {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QVERIFY(t->summary.format == kFormat);
        QCOMPARE(t->summary.blockTokens, 64u);
        QCOMPARE(t->summary.secondsPerUnit, 1.0);
    }

    void aFolderOfSessionsIsOneTrace() {
        auto t = loadTrace(kDir, {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QVERIFY(t->summary.format == kFormat);
        QCOMPARE(t->size(), std::size_t(44));
        QCOMPARE(t->summary.requests, std::uint64_t(44));
        QCOMPARE(sum(t->inputTokens), 2429208.0);
        QCOMPARE(sum(t->outputTokens), 30950.0);
        // trace_0026 and trace_0242 open with the same ids (1 … 238): local, so not shared.
        QCOMPARE(t->distinctBlocks, 4808u);
        QCOMPARE(t->blocks.size(), std::size_t(37936));
        const std::vector<double> first(t->arrivalS.begin(), t->arrivalS.begin() + 6);
        QCOMPARE(first, (std::vector<double>{0, 0, 0, 0, 0, 6}));
        QVERIFY(std::is_sorted(t->arrivalS.begin(), t->arrivalS.end()));
        const auto r = unlimited(*t);
        QCOMPARE(r.anyTier.tokenWeighted, 0.8727914612499218);
        QCOMPARE(r.anyTier.blockWeighted, 0.8732602277520034);
        QCOMPARE(r.anyTier.perRequest, 0.7532557066175226);
    }

    void subAgentsStartAtTheirMarkerWithIdsOfTheirOwn() {
        auto t = loadTrace(kDir + "/trace_0291.json", {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QCOMPARE(t->size(), std::size_t(32));
        QCOMPARE(sum(t->inputTokens), 2254119.0);
        QCOMPARE(sum(t->outputTokens), 19504.0);
        QCOMPARE(t->distinctBlocks, 3780u);
        QCOMPARE(t->blocks.size(), std::size_t(35209));
        const std::vector<double> first(t->arrivalS.begin(), t->arrivalS.begin() + 6);
        QCOMPARE(first, (std::vector<double>{0, 19, 114, 126, 197, 752}));
        const auto r = unlimited(*t);
        QCOMPARE(r.anyTier.tokenWeighted, 0.8923468548022531);
        QCOMPARE(r.anyTier.blockWeighted, 0.892641086085944);
        QCOMPARE(r.anyTier.perRequest, 0.8131423056272149);
    }

    // By hand: the sub-agent's request arrives at 10 + 1 s, between its parent's two. Local: its
    // ids 1, 2, 3 are its own (nothing hit), and the parent's last request hits 1, 2 (128 of
    // 192 tokens). Global: the sub-agent hits the parent's 1, 2 as well (128 of 200 tokens).
    void theScopeSaysWhetherSubAgentsShareIds() {
        auto local = loadTraceText(session("local"), "s.json", {.format = kFormat});
        QVERIFY2(local.ok(), local.ok() ? "" : local.message().c_str());
        QCOMPARE(local->arrivalS, (std::vector<double>{0, 11, 20}));
        QCOMPARE(local->inputTokens, (std::vector<std::uint32_t>{130, 200, 192}));
        QCOMPARE(local->distinctBlocks, 6u);
        QCOMPARE(unlimited(*local).anyTier.tokenWeighted, 128.0 / (130 + 200 + 192));
        auto global = loadTraceText(session("global"), "s.json", {.format = kFormat});
        QVERIFY2(global.ok(), global.ok() ? "" : global.message().c_str());
        QCOMPARE(global->distinctBlocks, 4u);
        QCOMPARE(unlimited(*global).anyTier.tokenWeighted, (128.0 + 128.0) / (130 + 200 + 192));
        // Auto-detected from the first line, as a file's would be.
        auto detected = loadTraceText(session("local"), "s.json", {});
        QVERIFY(detected.ok() && detected->summary.format == kFormat);
    }

    void badSessionsNameTheFileAndTheField_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const QString ok = R"({"t":0,"type":"n","in":64,"out":1,"hash_ids":[1]})";
        QTest::newRow("in") << R"({"block_size":64,"requests":[)" + ok +
                                   R"(,{"t":1,"in":"ten","out":1,"hash_ids":[]}]})"
                            << "s.json: requests[1]: field 'in': expected a whole number";
        QTest::newRow("ids")
            << R"({"block_size":64,"requests":[{"t":0,"in":200,"out":1,"hash_ids":[1,2]}]})"
            << "s.json: requests[0]: field 'hash_ids': 2 block ids for 200 "
               "prompt tokens; expected 3";
        QTest::newRow("t")
            << R"({"block_size":64,"requests":[{"t":-1,"in":64,"out":1,"hash_ids":[1]}]})"
            << "s.json: requests[0]: field 't': expected seconds";
        QTest::newRow("sub-agent")
            << R"({"block_size":64,"requests":[{"t":0,"type":"subagent","requests":[{"t":0,"in":64,"out":1}]}]})"
            << "s.json: requests[0].requests[0]: field 'hash_ids' is "
               "missing";
        QTest::newRow("block size") << R"({"block_size":32,"requests":[)" + ok + "]}"
                                    << "s.json: field 'block_size': 32 tokens; expected 64";
        QTest::newRow("scope") << R"({"block_size":64,"hash_id_scope":"team","requests":[)" + ok +
                                      "]}"
                               << "s.json: field 'hash_id_scope': expected";
        QTest::newRow("requests") << R"({"block_size":64,"requests":{}})"
                                  << "s.json: field 'requests': expected the session's requests";
        QTest::newRow("json") << "{\"block_size\":64,\n\"requests\":[" + ok + "\n"
                              << "s.json: not valid JSON";
    }
    void badSessionsNameTheFileAndTheField() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        auto t = loadTraceText(text.toStdString(), "s.json", {.format = kFormat});
        QVERIFY(!t);
        QVERIFY2(t.message().find(expected.toStdString()) == 0, t.message().c_str());
    }

    // In a folder, the bad file is the one named.
    void aBadFileInAFolderIsNamed() {
        QTemporaryDir dir;
        QVERIFY(
            QFile::copy(QString::fromStdString(kDir + "/trace_0504.json"), dir.filePath("a.json")));
        QFile bad(dir.filePath("b.json"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write(R"({"block_size":64,"requests":[{"t":0,"in":64,"out":1,"hash_ids":[1,2]}]})");
        bad.close();
        auto t = loadTrace(dir.path().toStdString(), {});
        QVERIFY(!t);
        const std::string want =
            dir.filePath("b.json").toStdString() + ": requests[0]: field 'hash_ids'";
        QVERIFY2(t.message().find(want) == 0, t.message().c_str());
        // An empty file there is named too.
        QVERIFY(bad.open(QIODevice::WriteOnly | QIODevice::Truncate));
        bad.close();
        t = loadTrace(dir.path().toStdString(), {});
        QVERIFY(!t);
        QCOMPARE(t.message(), dir.filePath("b.json").toStdString() +
                                  ": the file is empty; expected one kv-cache-tester session");
    }
};

QTEST_GUILESS_MAIN(TestTraceKvCacheTester)
#include "tst_trace_kv_cache_tester.moc"
