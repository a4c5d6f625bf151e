// The trace generator (kvbe/trace/trace_generate.h; docs/trace.md, "Generated traces"): the same
// bytes for the same seed, lines the Mooncake reader and Qt's JSON parser both accept with the
// block rule holding, arrivals at the rate asked, conversations that share their prefixes; and a
// generated trace that saturates one NVMe drive on 8 servers, where the load-aware rule keeps
// p99 within 5 % of GPU-only caching's while the static rules do not.
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/trace/trace_saturation.h"
#include "kvbe/trace/trace_sim.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>

#include <fstream>
#include <sstream>
#include <unordered_set>

using namespace kvbe;
using kvbe::test::llama3b;

namespace {

std::string generated(const TraceGeneratorSpec& spec) {
    std::string text;
    auto r = generateTrace(spec, [&](std::string_view c) -> Status {
        text.append(c);
        return Ok{};
    });
    if (!r) qFatal("%s", r.message().c_str());
    return text;
}

} // namespace

class TestTraceGenerate : public QObject {
    Q_OBJECT

  private slots:
    void sameSeedSameBytes() {
        TraceGeneratorSpec s;
        s.requests = 20000;
        s.seed = 7;
        const std::string a = generated(s), b = generated(s);
        QVERIFY(!a.empty());
        QVERIFY(a == b);
        s.seed = 8;
        QVERIFY(generated(s) != a);
        // The file holds the same bytes as the chunks.
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/g.jsonl").toStdString();
        s.seed = 7;
        auto st = generateTraceFile(s, path);
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        std::ifstream in(path, std::ios::binary);
        std::stringstream buf;
        buf << in.rdbuf();
        QVERIFY(buf.str() == a);
        QCOMPARE(st->bytes, std::uint64_t(a.size()));
        QCOMPARE(st->requests, s.requests);
    }

    // Every line parsed with Qt's JSON reader (not the production one): the fields, the block
    // rule (m − 1)·B < N ≤ m·B, arrivals in order at the rate asked, and turns that share the
    // full blocks of the prompt before them.
    void linesAreMooncakeAndShareTheirPrefixes() {
        TraceGeneratorSpec s;
        s.requests = 20000;
        s.seed = 3;
        s.waveShare = 0; // a steady rate, to compare with
        const std::string text = generated(s);
        std::istringstream in(text);
        std::unordered_set<qint64> seen;
        double last = -1, tokens = 0;
        std::size_t lines = 0, sharedBlocks = 0, blocks = 0;
        for (std::string line; std::getline(in, line);) {
            const QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(line)).object();
            QVERIFY2(o.contains("timestamp") && o.contains("input_length") &&
                         o.contains("output_length") && o.contains("hash_ids"),
                     line.c_str());
            const double t = o.value("timestamp").toDouble();
            QVERIFY(t >= last);
            last = t;
            const double n = o.value("input_length").toDouble();
            const QJsonArray ids = o.value("hash_ids").toArray();
            const double m = ids.size();
            QVERIFY2((m - 1) * 512 < n && n <= m * 512, line.c_str());
            QVERIFY(n <= s.maxTokens);
            tokens += n;
            // A prefix is shared exactly when every block before it is: once a block is new, the
            // rest are new too.
            bool fresh = false;
            for (const auto& v : ids) {
                const bool known = seen.count(v.toInteger()) > 0;
                QVERIFY2(!(fresh && known), line.c_str());
                fresh = fresh || !known;
                sharedBlocks += known;
                seen.insert(v.toInteger());
            }
            blocks += ids.size();
            ++lines;
        }
        QCOMPARE(lines, std::size_t(s.requests));
        // Poisson arrivals at 20 a second: 20,000 of them span 1,000 s give or take 1 %.
        const double rate = double(lines - 1) / (last / 1000);
        QVERIFY2(std::abs(rate / s.ratePerS - 1) < 0.03, qPrintable(QString::number(rate)));
        // Most blocks are shared: system prompts and the turns before.
        QVERIFY2(double(sharedBlocks) / double(blocks) > 0.6,
                 qPrintable(QString::number(double(sharedBlocks) / double(blocks))));
        const double mean = tokens / double(lines);
        QVERIFY2(mean > 5000 && mean < 20000, qPrintable(QString::number(mean)));

        // The production reader takes it too, with the same requests.
        auto t = loadTraceText(text, "generated.jsonl", {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QCOMPARE(t->size(), std::size_t(s.requests));
        QVERIFY(t->summary.format == TraceFormat::Mooncake);
    }

    void badSpecsAreSentences_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("expected");
        QTest::newRow("no requests") << "requests"
                                     << "requests: expected 1 or more";
        QTest::newRow("rate 0") << "rate"
                                << "rate: expected requests a second above 0";
        QTest::newRow("wave 1") << "wave"
                                << "wave: expected a share from 0 to below 1";
        QTest::newRow("turns 0") << "turns"
                                 << "mean turns: expected 1 or more";
    }
    void badSpecsAreSentences() {
        QFETCH(QString, field);
        QFETCH(QString, expected);
        TraceGeneratorSpec s;
        s.requests = 10;
        if (field == "requests") s.requests = 0;
        if (field == "rate") s.ratePerS = 0;
        if (field == "wave") s.waveShare = 1;
        if (field == "turns") s.meanTurns = 0;
        auto r = generateTrace(s, [](std::string_view) -> Status { return Ok{}; });
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).startsWith(expected), r.message().c_str());
    }

    // A generated trace of 40,000 requests (33 minutes at the default 20 a second, the rate
    // rising through its wave) on 8 servers and one mixed-use NVMe Gen5 drive (14 GB/s reads,
    // 10 GB/s writes, 7.68 TB; the default scenario's model and GPU cache): in a fifth of the
    // minutes the hits ask more reads than the drive carries. The static rules keep loading and
    // their p99 grows with the backlog; the load-aware rule stays within 5 % of GPU-only caching
    // (it is never slower for any request) and saves GPU time beyond it.
    void generatedTraceSaturatesOneDrive() {
        TraceGeneratorSpec s;
        s.requests = 40000;
        auto t = loadTraceText(generated(s), "generated.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 65.57e9; // 90 % of an H100's 80 GB less the weights
        SimTier nvme{"nvme-gen5-mu", 7.68e12, TierPath{"nvme-gen5-mu", 14e9, 1e-3}, 10e9};
        cfg.tiers.push_back(nvme);
        cfg.writeQueue = true;
        cfg.instances = 8;
        auto r = replayTrace(*t, cm, cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const TierReport& drive = r->tiers[1];
        QVERIFY2(drive.readOffered.binsOver >= 3,
                 qPrintable(QString::number(drive.readOffered.binsOver)));
        QVERIFY(drive.readOffered.peakShare > 1.1);
        const RuleResult& gpu = *r->rule("gpu-only");
        const RuleResult& opt = *r->rule("optimal");
        QVERIFY2(opt.ttft.p99 <= 1.05 * gpu.ttft.p99,
                 qPrintable(QString("%1 vs %2").arg(opt.ttft.p99).arg(gpu.ttft.p99)));
        QVERIFY(opt.gpuSecondsSaved > gpu.gpuSecondsSaved);
        QVERIFY(opt.tiers[1].blocksDeclinedForBacklog > 0);
        QVERIFY(r->rule("breakeven")->ttft.p99 > 10 * gpu.ttft.p99);
        QVERIFY(r->rule("always")->ttft.p99 > 10 * gpu.ttft.p99);
        const std::string sentence = saturationSentence(*r, "optimal", true, {true});
        QVERIFY2(sentence.find("nvme-gen5-mu is saturated in") == 0, sentence.c_str());
        QVERIFY2(sentence.find("drives striped") != std::string::npos, sentence.c_str());
    }
};

QTEST_GUILESS_MAIN(TestTraceGenerate)
#include "tst_trace_generate.moc"
