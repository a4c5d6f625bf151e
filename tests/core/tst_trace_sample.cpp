// Spatial samples of a trace (kvbe/trace/trace_sample.h): whole prefix subtrees kept or dropped
// together, the trunk above them, the kept share, and the capacity a sample's replay gets.
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/trace/trace_sample.h"

#include "test_support.h"
#include "trace_test_support.h"

#include <QTest>

#include <map>
#include <set>
#include <string>

using namespace kvbe;

namespace {

// A generated trace of n requests (docs/trace.md, "Generated traces"), loaded as a replay holds it.
Trace generated(std::uint64_t n, double rate = 20) {
    return kvbe::test::generatedTrace(n, 7, rate);
}

const Trace& day() {
    static const Trace t = generated(20000);
    return t;
}

// Every request's blocks as the original ids, to compare a sample with the requests it kept.
std::vector<std::vector<std::uint32_t>> requestsOf(const Trace& t) {
    std::vector<std::vector<std::uint32_t>> out;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const auto b = t.blocksOf(i);
        out.emplace_back(b.begin(), b.end());
    }
    return out;
}

} // namespace

class TestTraceSample : public QObject {
    Q_OBJECT
  private slots:
    void rateOneKeepsEverything() {
        const Trace& t = day();
        const TraceSample s = sampleTrace(t, 1, 3);
        QCOMPARE(s.trace.size(), t.size());
        QCOMPARE(s.trace.distinctBlocks, t.distinctBlocks);
        QVERIFY(s.trace.blocks == t.blocks); // first-appearance numbering is kept
        QVERIFY(s.trace.arrivalS == t.arrivalS);
        QCOMPARE(s.subtreesKept, s.subtrees);
    }

    // A prefix and its extensions stay together: requests that share a block outside the trunk
    // are all kept or all dropped; the trunk is the blocks at least trunkMinRequests requests
    // hold, counted here independently.
    void subtreesStayWhole() {
        const Trace& t = day();
        const std::uint64_t trunkMin = 64;
        const TraceSample s = sampleTrace(t, 0.25, 11, trunkMin);
        std::map<std::uint32_t, int> holders;
        for (const auto& r : requestsOf(t))
            for (auto b : std::set<std::uint32_t>(r.begin(), r.end()))
                ++holders[b];
        std::uint64_t trunk = 0;
        for (const auto& [b, n] : holders)
            if (n >= int(trunkMin)) ++trunk;
        QCOMPARE(s.trunkBlocks, trunk);
        QVERIFY(trunk > 0); // the system prompts
        QVERIFY(trunk < 2000);

        // Which requests were kept: the sample holds them in order, so match by arrival and size.
        std::vector<bool> kept(t.size(), false);
        std::size_t j = 0;
        for (std::size_t i = 0; i < t.size() && j < s.trace.size(); ++i)
            if (t.arrivalS[i] == s.trace.arrivalS[j] &&
                t.inputTokens[i] == s.trace.inputTokens[j] &&
                t.blocksOf(i).size() == s.trace.blocksOf(j).size()) {
                kept[i] = true;
                ++j;
            }
        QCOMPARE(j, s.trace.size());
        std::map<std::uint32_t, int> status; // non-trunk block: 1 kept, 0 dropped
        std::size_t shared = 0;
        for (std::size_t i = 0; i < t.size(); ++i)
            for (auto b : t.blocksOf(i)) {
                if (holders[b] >= int(trunkMin)) continue;
                auto [it, fresh] = status.emplace(b, kept[i] ? 1 : 0);
                if (!fresh) {
                    ++shared;
                    QCOMPARE(it->second, kept[i] ? 1 : 0);
                }
            }
        QVERIFY(shared > 1000); // conversations share their earlier turns' blocks

        // The share kept is near the rate (the subtrees are many and small).
        const double share = double(s.trace.size()) / double(t.size());
        QVERIFY2(std::abs(share - 0.25) < 0.03, qPrintable(QString::number(share)));
        // Another salt, another sample.
        const TraceSample other = sampleTrace(t, 0.25, 12, trunkMin);
        QVERIFY(other.trace.blocks != s.trace.blocks);
    }

    // rate · c + (1 − rate) · min(c, trunk bytes), by hand: 100 trunk blocks of 2 bytes.
    void capacityKeepsTheTrunkWhole() {
        TraceSample s;
        s.rate = 0.1;
        s.trunkBlocks = 100;
        QCOMPARE(s.capacity(1000, 2), 0.1 * 1000 + 0.9 * 200);
        QCOMPARE(s.capacity(50, 2), 50.0);
        QVERIFY(std::isinf(s.capacity(std::numeric_limits<double>::infinity(), 2)));
        QCOMPARE(defaultTrunkMinRequests(1000), std::uint64_t(64));
        QCOMPARE(defaultTrunkMinRequests(10000000), std::uint64_t(10000));
    }
};

QTEST_GUILESS_MAIN(TestTraceSample)
#include "tst_trace_sample.moc"
