// Capacity at a latency target: the target's grammar and statistic, the load's scaling and
// prefix, and the two searches against queueing worked out in closed form (D/D/1 and D/D/n), a
// full replay at the same load, a case where offload holds what GPU-only caching cannot, and the
// statistic's rise with the load on the conversation trace.
#include "illustrative_scenario.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"
#include "queueing_by_hand.h"
#include "test_support.h"

#include <algorithm>
#include <cmath>

using namespace kvbe;
using kvbe::test::ddcTtfts;
using kvbe::test::makeTrace;
using kvbe::test::percentileByHand;

namespace {

// The illustrative scenario's cost model (Llama 3.2 3B on an H100 SXM at u = 0.5) and its
// evaluation: the numbers worked out here do not move with the default scenario's fit.
const Evaluation& defaultEvaluation() {
    static const Evaluation e = [] {
        const Scenario scenario = kvbe::test::illustrative();
        auto ev = evaluate(scenario, kvbe::test::presets());
        if (!ev) qFatal("%s", ev.message().c_str());
        return *ev;
    }();
    return e;
}
CostModel defaultCost() {
    return defaultEvaluation().cost;
}

// n requests, one every T seconds, no reuse: every rule recomputes everything.
Trace fixedRate(std::size_t n, double T, std::uint32_t blocks) {
    std::vector<double> a;
    for (std::size_t i = 0; i < n; ++i)
        a.push_back(double(i) * T);
    return makeTrace(a, 0, blocks);
}

ReplayConfig plainConfig(const CostModel& cm) {
    ReplayConfig c;
    c.blockBytes = cm.kvBytesPerToken() * 512;
    c.gpuCapacityBytes = 0;
    return c;
}

// The conversation trace's tiered set-up: 2,000 blocks of GPU, 20,000 of DRAM (withDram) and
// 200,000 of NVMe, each with its write bandwidth.
ReplayConfig tieredConfig(const CostModel& cm, bool withDram) {
    ReplayConfig c;
    c.blockBytes = cm.kvBytesPerToken() * 512;
    c.gpuCapacityBytes = 2000 * c.blockBytes;
    if (withDram)
        c.tiers.push_back(
            SimTier{"dram", 20000 * c.blockBytes, TierPath{"dram", 55e9, 0.5e-3}, 5e9});
    c.tiers.push_back(SimTier{"nvme", 200000 * c.blockBytes, TierPath{"nvme", 13.5e9, 1e-3}, 2e9});
    return c;
}

QString realTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}

} // namespace

class TestTraceCapacity : public QObject {
    Q_OBJECT
  private slots:
    void latencyTargetsParse_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("mean");
        QTest::addColumn<double>("percentile");
        QTest::addColumn<double>("seconds");
        QTest::addColumn<QString>("shown");
        QTest::newRow("p99 in s") << "p99=2s" << false << 99.0 << 2.0 << "p99 ≤ 2 s";
        QTest::newRow("p90 in ms") << "p90=500ms" << false << 90.0 << 0.5 << "p90 ≤ 500 ms";
        QTest::newRow("p50") << "p50=1.5s" << false << 50.0 << 1.5 << "p50 ≤ 1.5 s";
        QTest::newRow("mean") << "mean=300ms" << true << 99.0 << 0.3 << "mean ≤ 300 ms";
        QTest::newRow("p99.9") << "p99.9=3s" << false << 99.9 << 3.0 << "p99.9 ≤ 3 s";
        QTest::newRow("upper case, minutes")
            << "P95=2min" << false << 95.0 << 120.0 << "p95 ≤ 120 s";
    }
    void latencyTargetsParse() {
        QFETCH(QString, text);
        auto t = parseLatencyTarget(text.toStdString());
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QFETCH(bool, mean);
        QFETCH(double, percentile);
        QFETCH(double, seconds);
        QFETCH(QString, shown);
        QCOMPARE(t->mean, mean);
        if (!mean) QCOMPARE(t->percentile, percentile);
        QCOMPARE(t->seconds, seconds);
        QCOMPARE(QString::fromStdString(t->text()), shown);
    }

    // Each refusal is one sentence that quotes what was given and says what was expected.
    void badLatencyTargetsAreRefused_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("says");
        QTest::newRow("no unit") << "p99=2"
                                 << "has no unit";
        QTest::newRow("percentile 100") << "p100=2s"
                                        << "outside 0–100";
        QTest::newRow("percentile 0") << "p0=2s"
                                      << "outside 0–100";
        QTest::newRow("percentile 150") << "p150=1s"
                                        << "outside 0–100";
        QTest::newRow("not a statistic") << "max=2s"
                                         << "neither mean nor a percentile";
        QTest::newRow("no value") << "p99"
                                  << "expected STATISTIC=DURATION";
        QTest::newRow("negative") << "p99=-1s"
                                  << "positive duration";
        QTest::newRow("unknown unit") << "p99=2h"
                                      << "unknown unit";
    }
    void badLatencyTargetsAreRefused() {
        QFETCH(QString, text);
        QFETCH(QString, says);
        auto t = parseLatencyTarget(text.toStdString());
        QVERIFY(!t.ok());
        const QString m = QString::fromStdString(t.message());
        QVERIFY2(m.contains(says) && m.contains("'" + text + "'"), qPrintable(m));
        QVERIFY2(!m.contains('\n'), qPrintable(m));
    }

    // {4, 1, 3, 2}: sorted 1 2 3 4; p50 at rank 1.5 = 2.5, p90 at rank 2.7 = 3.7, mean 2.5.
    void statisticInterpolatesBetweenOrderStatistics() {
        std::vector<double> v{4, 1, 3, 2};
        LatencyTarget t;
        t.percentile = 50;
        QCOMPARE(latencyStatistic(t, v), 2.5);
        t.percentile = 90;
        QVERIFY(kvbe::test::near(latencyStatistic(t, v), 3.7, 1e-12));
        t.mean = true;
        QCOMPARE(latencyStatistic(t, v), 2.5);
    }

    // hand.jsonl-like ids: the first 1.5 s hold two requests and four blocks, renumbered 0-3;
    // 2.5 s adds the third, whose blocks are the first request's two and a new one.
    void prefixKeepsTheFirstSecondsAndRenumbersIds() {
        const std::string text =
            "{\"timestamp\": 0, \"input_length\": 1024, \"hash_ids\": [7, 8]}\n"
            "{\"timestamp\": 1000, \"input_length\": 1024, \"hash_ids\": [3, "
            "4]}\n"
            "{\"timestamp\": 2000, \"input_length\": 1500, \"hash_ids\": [7, "
            "8, 5]}\n";
        auto t = loadTraceText(text, "prefix.jsonl", {});
        QVERIFY(t.ok());
        const Trace two = tracePrefix(*t, 1.5);
        QCOMPARE(two.size(), std::size_t(2));
        QCOMPARE(two.distinctBlocks, 4u);
        QCOMPARE(two.blocks, (std::vector<std::uint32_t>{0, 1, 2, 3}));
        const Trace three = tracePrefix(*t, 2.5);
        QCOMPARE(three.size(), std::size_t(3));
        QCOMPARE(three.distinctBlocks, 5u);
        QCOMPARE(std::vector<std::uint32_t>(three.blocksOf(2).begin(), three.blocksOf(2).end()),
                 (std::vector<std::uint32_t>{0, 1, 4}));
        QCOMPARE(three.arrivalS[2], 2.0);
        // 3 requests over 2 s.
        QCOMPARE(traceRequestRate(three), 1.5);
    }

    void traceWithoutArrivalTimesIsRefused() {
        const Trace burst = makeTrace({0, 0, 0}, 0, 2);
        auto ok = checkArrivals(burst, "burst.jsonl");
        QVERIFY(!ok);
        QVERIFY2(
            QString::fromStdString(ok.message()).contains("burst.jsonl: every request arrives"),
            ok.message().c_str());
        const CostModel cm = defaultCost();
        CapacityRequest q;
        auto r = traceCapacity(burst, cm, plainConfig(cm), q);
        QVERIFY(!r.ok());
    }

    void badRequestsAreRefused_data() {
        QTest::addColumn<double>("rateScale");
        QTest::addColumn<int>("maxInstances");
        QTest::addColumn<int>("instances");
        QTest::newRow("S = 0") << 0.0 << 8 << 0;
        QTest::newRow("S < 0") << -1.0 << 8 << 0;
        QTest::newRow("bound 0") << 1.0 << 0 << 0;
        QTest::newRow("N < 0") << 1.0 << 8 << -1;
    }
    void badRequestsAreRefused() {
        QFETCH(double, rateScale);
        QFETCH(int, maxInstances);
        QFETCH(int, instances);
        const CostModel cm = defaultCost();
        const Trace t = fixedRate(10, 1, 2);
        CapacityRequest q;
        q.rateScale = rateScale;
        q.maxInstances = maxInstances;
        q.instances = instances;
        auto r = traceCapacity(t, cm, plainConfig(cm), q);
        QVERIFY(!r.ok());
        ReplayConfig c = plainConfig(cm);
        c.rateScale = rateScale;
        if (rateScale <= 0) QVERIFY(!replayTrace(t, cm, c).ok());
    }

    // The replay at rate scale S: request i arrives at i·T/S, so on one server it waits
    // i·(s − T/S) (D/D/1).
    void rateScaleDividesArrivalsInTheReplay() {
        const CostModel cm = defaultCost();
        const std::size_t n = 50;
        const double T = 1.0;
        const Trace t = fixedRate(n, T, 8);
        const double s = cm.tMiss(8 * 512);
        ReplayConfig c = plainConfig(cm);
        c.instances = 1;
        c.rateScale = 1.25 * T / s; // a request every 0.8·s
        RequestTimes times;
        auto r = replayTrace(t, cm, c, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double gap = T / c.rateScale;
        for (std::size_t i = 0; i < n; ++i)
            QVERIFY(kvbe::test::near(times.queuedGpuOnly[i], double(i) * (s - gap) + s, 1e-9));
        QVERIFY(kvbe::test::near(r->durationS, double(n - 1) * gap, 1e-12));
        const double r99 = 0.99 * double(n - 1);
        QVERIFY(kvbe::test::near(r->rule("gpu-only")->ttft.p99, r99 * (s - gap) + s, 1e-9));
    }

    // D/D/1 in closed form: N requests every T seconds, each served in s. At load S request i
    // waits i·(s − T/S) when s > T/S, so the p-th percentile (rank r = p/100·(N − 1)) is
    // r·(s − T/S) + s, and the largest S with that at most X is T / (s − (X − s)/r).
    void loadHeldOnOneServerIsTheClosedForm_data() {
        QTest::addColumn<QString>("slo");
        QTest::newRow("p99") << "p99=2s";
        QTest::newRow("p90") << "p90=1s";
        QTest::newRow("p50") << "p50=500ms";
    }
    void loadHeldOnOneServerIsTheClosedForm() {
        QFETCH(QString, slo);
        const CostModel cm = defaultCost();
        const std::size_t N = 101;
        const double T = 1.0;
        const Trace t = fixedRate(N, T, 8);
        const double s = cm.tMiss(8 * 512);
        CapacityRequest q;
        q.target = *parseLatencyTarget(slo.toStdString());
        q.instances = 1;
        q.serversNeeded = false;
        q.threads = 2;
        auto r = traceCapacity(t, cm, plainConfig(cm), q);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double rank = q.target.percentile / 100 * double(N - 1);
        const double X = q.target.seconds;
        QVERIFY(X > s);
        const double expected = T / (s - (X - s) / rank);
        auto closedForm = [&](double S) { return rank * std::max(0.0, s - T / S) + s; };
        QCOMPARE(r->loadHeld.size(), std::size_t(4));
        for (const auto& h : r->loadHeld) {
            // No request reuses a block: every rule recomputes everything, the same answer.
            QCOMPARE(int(h.outcome), int(RuleLoadHeld::Outcome::Found));
            QVERIFY2(h.rateScale <= expected * (1 + 1e-12) && expected <= h.failsAt,
                     qPrintable(QString("%1: %2 .. %3, expected %4")
                                    .arg(h.rule.c_str())
                                    .arg(h.rateScale)
                                    .arg(h.failsAt)
                                    .arg(expected)));
            QVERIFY(h.failsAt <= h.rateScale * (1 + q.precision) * (1 + 1e-12));
            QVERIFY(h.falls.empty());
            for (const auto& p : h.evaluated)
                QVERIFY(kvbe::test::near(p.statistic, closedForm(p.rateScale), 1e-9));
            QVERIFY(h.vsGpuOnly && kvbe::test::near(*h.vsGpuOnly, 1, 1e-12));
        }
        // The curve runs from below to above the answer, the same closed form at every point.
        QVERIFY(r->curveRateScale.front() < expected && r->curveRateScale.back() > expected);
        for (std::size_t p = 0; p < r->curveRateScale.size(); ++p)
            QVERIFY(
                kvbe::test::near(r->curveStatistic[0][p], closedForm(r->curveRateScale[p]), 1e-9));
    }

    // D/D/n: at load S the fewest servers whose p99 (computed here from the closed-form TTFTs)
    // holds the target, and the statistic with one fewer.
    void serversNeededIsTheClosedForm_data() {
        QTest::addColumn<double>("rateScale");
        QTest::addColumn<QString>("slo");
        QTest::newRow("S 20, p99 500 ms") << 20.0 << "p99=500ms";
        QTest::newRow("S 45, p90 300 ms") << 45.0 << "p90=300ms";
        QTest::newRow("S 3, one server") << 3.0 << "p99=2s";
    }
    void serversNeededIsTheClosedForm() {
        QFETCH(double, rateScale);
        QFETCH(QString, slo);
        const CostModel cm = defaultCost();
        const std::size_t N = 200;
        const double T = 1.0, s = cm.tMiss(8 * 512);
        const Trace t = fixedRate(N, T, 8);
        const LatencyTarget target = *parseLatencyTarget(slo.toStdString());
        int expected = 0;
        double atExpected = 0, oneFewer = 0;
        for (int c = 1; expected == 0; ++c) {
            const double v = percentileByHand(ddcTtfts(N, T / rateScale, s, c), target.percentile);
            if (v <= target.seconds) {
                expected = c;
                atExpected = v;
            } else {
                oneFewer = v;
            }
        }
        auto r = serversNeeded(t, cm, plainConfig(cm), target, rateScale, 64);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(r->size(), std::size_t(4));
        for (const auto& rs : *r) {
            QVERIFY(rs.servers.has_value());
            QCOMPARE(*rs.servers, expected);
            QVERIFY(kvbe::test::near(rs.statistic, atExpected, 1e-9));
            QCOMPARE(rs.statisticOneFewer.has_value(), expected > 1);
            if (expected > 1) QVERIFY(kvbe::test::near(*rs.statisticOneFewer, oneFewer, 1e-9));
            QVERIFY(kvbe::test::near(rs.statisticUnlimited, s, 1e-9));
        }
    }

    // When not even a server per request holds the target (the prefill alone is longer), no
    // number does: the answer names the bound and the statistic there.
    void noNumberOfServersHoldsATargetBelowThePrefill() {
        const CostModel cm = defaultCost();
        const Trace t = fixedRate(20, 1.0, 8);
        const double s = cm.tMiss(8 * 512);
        LatencyTarget target;
        target.seconds = s / 2;
        auto r = serversNeeded(t, cm, plainConfig(cm), target, 1, 16);
        QVERIFY(r.ok());
        for (const auto& rs : *r) {
            QVERIFY(!rs.servers);
            QVERIFY(kvbe::test::near(rs.statistic, s, 1e-9));
            QVERIFY(kvbe::test::near(rs.statisticUnlimited, s, 1e-9));
        }
    }

    // Offload: every request shares a 16-block prefix (8,192 tokens) that the GPU cannot keep
    // (no HBM for KV) and DRAM holds. GPU-only caching recomputes the whole prompt, optimal
    // loads the prefix and recomputes one block, so at a load where GPU-only's queue grows
    // optimal's does not: optimal holds the target there and GPU-only does not. The first
    // request (which computes the prefix) arrives a minute before the rest.
    void offloadHoldsALoadGpuOnlyCannot() {
        const CostModel cm = defaultCost();
        std::vector<double> arrival{0};
        for (int i = 0; i < 100; ++i)
            arrival.push_back(60 + i * 1.0);
        const Trace t = makeTrace(arrival, 16, 1);
        ReplayConfig c = plainConfig(cm);
        const TierPath dram{"dram", 50e9, 0.5e-3};
        c.tiers.push_back(SimTier{"dram", kUnlimited, dram, 0});
        const double sGpu = cm.tMiss(17 * 512);
        const double sOpt = cm.tLoad(dram, 16 * 512) + cm.tRecompute(512, 16 * 512);
        QVERIFY(sOpt < sGpu / 2);
        // At S with a request every 0.75·sGpu seconds, GPU-only's waits grow by 0.25·sGpu a
        // request; optimal's requests take sOpt and find the server free (p99 is the 100th of
        // 101 TTFTs: the first request's sGpu is the last).
        const double S = 1 / (0.75 * sGpu);
        LatencyTarget target;
        target.seconds = 1.5 * sGpu;

        ReplayConfig at = c;
        at.rateScale = S;
        at.instances = 1;
        auto replay = replayTrace(t, cm, at);
        QVERIFY(replay.ok());
        QVERIFY(replay->rule("gpu-only")->ttft.p99 > target.seconds);
        QVERIFY(kvbe::test::near(replay->rule("optimal")->ttft.p99, sOpt, 1e-9));

        CapacityRequest q;
        q.target = target;
        q.instances = 1;
        q.rateScale = S;
        auto r = traceCapacity(t, cm, c, q);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        using O = RuleLoadHeld::Outcome;
        const RuleLoadHeld& g = *r->loadHeldOf("gpu-only");
        const RuleLoadHeld& o = *r->loadHeldOf("optimal");
        QCOMPARE(int(g.outcome), int(O::Found));
        QCOMPARE(int(o.outcome), int(O::Found));
        QVERIFY(g.rateScale < S && S <= o.rateScale);
        QVERIFY(o.vsGpuOnly && *o.vsGpuOnly > 1);
        QCOMPARE(r->serversOf("optimal")->servers, std::optional<int>(1));
        QVERIFY(*r->serversOf("gpu-only")->servers > 1);

        // A target below GPU-only's prefill time: GPU-only holds it at no load (down to the
        // search's lowest, where nobody waits), optimal still does.
        q.target.seconds = 2 * sOpt;
        r = traceCapacity(t, cm, c, q);
        QVERIFY(r.ok());
        const RuleLoadHeld& never = *r->loadHeldOf("gpu-only");
        QCOMPARE(int(never.outcome), int(O::NeverHolds));
        QCOMPARE(never.failsAt, q.minRateScale);
        QVERIFY(kvbe::test::near(never.statisticFails, sGpu, 1e-9));
        QCOMPARE(int(r->loadHeldOf("optimal")->outcome), int(O::Found));
        QVERIFY(!r->loadHeldOf("optimal")->vsGpuOnly);
        QVERIFY(!r->serversOf("gpu-only")->servers);
        QCOMPARE(r->serversOf("optimal")->servers, std::optional<int>(1));
    }

    // The statistic at a load, from the search's reused pass, equals a full replay at that load
    // (with write queues, whose passes depend on the load, and without).
    void searchPointsEqualFullReplays_data() {
        QTest::addColumn<bool>("writeQueue");
        QTest::newRow("no write queue") << false;
        QTest::newRow("write queues") << true;
    }
    void searchPointsEqualFullReplays() {
        QFETCH(bool, writeQueue);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str()); // the fixture ships with the tests
        const Trace part = tracePrefix(*t, 900);
        const CostModel cm = defaultCost();
        ReplayConfig c = tieredConfig(cm, true);
        c.writeQueue = writeQueue;
        CapacityRequest q;
        q.target = *parseLatencyTarget("p90=1s");
        q.instances = 2;
        q.serversNeeded = false;
        q.curvePoints = 5;
        auto r = traceCapacity(part, cm, c, q);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(r->passes > 1, writeQueue);
        for (std::size_t p = 0; p < r->curveRateScale.size(); p += 2) {
            ReplayConfig at = c;
            at.instances = 2;
            at.rateScale = r->curveRateScale[p];
            auto full = replayTrace(part, cm, at);
            QVERIFY(full.ok());
            for (std::size_t k = 0; k < kCapacityRules.size(); ++k)
                QVERIFY(kvbe::test::near(r->curveStatistic[k][p],
                                         full->rule(kCapacityRules[k])->ttft.p90, 1e-12));
        }
    }

    // A plan reads two rules of each replay and keeps only their columns (8 bytes a request
    // each: at 10^7 requests the other three took 240 MB): their figures are those of the replay
    // of every rule, exactly, and the result lists them alone. The servers search of one rule
    // keeps that rule's queueing inputs alone, with the same answer as the search of them all.
    void replaysAndSearchesOfSomeRulesEqualThoseOfEvery() {
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        const Trace part = tracePrefix(*t, 900);
        const CostModel cm = defaultCost();
        ReplayConfig c = tieredConfig(cm, false);
        c.writeQueue = true;
        auto all = replayTrace(part, cm, c);
        QVERIFY(all.ok());
        QCOMPARE(all->rules.size(), std::size_t(5));
        ReplayConfig two = c;
        two.reportRules = {"optimal", "gpu-only"};
        auto some = replayTrace(part, cm, two);
        QVERIFY2(some.ok(), some.ok() ? "" : some.message().c_str());
        QCOMPARE(some->rules.size(), std::size_t(2));
        QVERIFY(!some->rule("always") && !some->rule("none") && !some->rule("breakeven"));
        for (const char* name : {"optimal", "gpu-only"}) {
            const RuleResult& a = *all->rule(name);
            const RuleResult& b = *some->rule(name);
            QCOMPARE(b.ttft.mean, a.ttft.mean);
            QCOMPARE(b.ttft.p99, a.ttft.p99);
            QCOMPARE(b.gpuSecondsSaved, a.gpuSecondsSaved);
            QCOMPARE(b.gainShare, a.gainShare);
            QCOMPARE(b.tiers.back().tokensServed, a.tiers.back().tokensServed);
        }
        QVERIFY(some->rule("optimal")->ttft.mean > 0);
        QCOMPARE(some->anyTier.tokenWeighted, all->anyTier.tokenWeighted);

        two.reportRules = {"optimal", "fastest"};
        auto bad = replayTrace(part, cm, two);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.message().find("'fastest'") != std::string::npos &&
                     bad.message().find("gpu-only, always, breakeven or optimal") !=
                         std::string::npos,
                 bad.message().c_str());

        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=6s"); // 4.3 s with a server per request
        q.threads = 1;
        auto every = traceCapacity(part, cm, c, q);
        QVERIFY(every.ok());
        for (const char* name : {"optimal", "always", "gpu-only"}) {
            q.serversRules = {name};
            auto one = traceCapacity(part, cm, c, q);
            QVERIFY(one.ok());
            QVERIFY(one->serversOf(name)->servers.has_value());
            QCOMPARE(*one->serversOf(name)->servers, *every->serversOf(name)->servers);
            QCOMPARE(one->serversOf(name)->statistic, every->serversOf(name)->statistic);
        }
    }

    // On the conversation trace with the default scenario (its three tiers unlimited, 4
    // servers): without write queues p99 rises with the load under every rule, replay by replay,
    // and the search finds no fall either. With write queues the hits move with the load, and
    // every fall the search reports is there in full replays at its two loads too. (Below
    // S = 0.5 p99 stays flat within rounding: the trace's arrivals come in buckets of one
    // timestamp, and a bucket's requests queue together at any load.)
    void p99RisesWithTheLoadOnTheConversationTrace() {
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str()); // the fixture ships with the tests
        const Evaluation& e = defaultEvaluation();
        const CostModel& cm = e.cost;
        ReplayConfig c;
        c.blockBytes = traceBlockBytes(cm, 512);
        c.gpuCapacityBytes = *defaultGpuCacheBytes(e);
        c.tiers = scenarioSimTiers(e);
        c.writeQueue = false;
        c.instances = 4;
        std::vector<double> last(kCapacityRules.size(), 0);
        for (double S : {0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0}) {
            c.rateScale = S;
            auto r = replayTrace(*t, cm, c);
            QVERIFY(r.ok());
            for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
                const double p99 = r->rule(kCapacityRules[k])->ttft.p99;
                QVERIFY2(p99 >= last[k] * (1 - 1e-9),
                         qPrintable(QString("%1 at S %2: p99 %3 after %4")
                                        .arg(kCapacityRules[k].data())
                                        .arg(S)
                                        .arg(p99)
                                        .arg(last[k])));
                last[k] = p99;
            }
        }
        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=5s");
        q.instances = 4;
        auto r = traceCapacity(*t, cm, c, q);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        for (const auto& h : r->loadHeld) {
            QVERIFY2(h.falls.empty(), h.rule.c_str());
            QVERIFY(h.evaluated.size() > 30);
        }
        // One thread gives the same answers.
        q.threads = 1;
        auto one = traceCapacity(*t, cm, c, q);
        QVERIFY(one.ok());
        for (std::size_t k = 0; k < kCapacityRules.size(); ++k) {
            QCOMPARE(one->loadHeld[k].rateScale, r->loadHeld[k].rateScale);
            QCOMPARE(one->servers[k].servers, r->servers[k].servers);
        }

        c.writeQueue = true;
        q.threads = 0;
        q.serversNeeded = false;
        r = traceCapacity(*t, cm, c, q);
        QVERIFY(r.ok());
        const RuleLoadHeld& always = *r->loadHeldOf("always");
        QVERIFY(!always.falls.empty());
        for (const auto& [a, b] : always.falls) {
            ReplayConfig at = c;
            at.rateScale = a.rateScale;
            const double before = replayTrace(*t, cm, at)->rule("always")->ttft.p99;
            at.rateScale = b.rateScale;
            const double after = replayTrace(*t, cm, at)->rule("always")->ttft.p99;
            QVERIFY(kvbe::test::near(before, a.statistic, 1e-12));
            QVERIFY(after < before);
        }
    }

    void progressCancels() {
        const CostModel cm = defaultCost();
        const Trace t = fixedRate(2000, 1.0, 8);
        CapacityRequest q;
        q.instances = 1;
        int calls = 0;
        auto r = traceCapacity(t, cm, plainConfig(cm), q, [&](double f) {
            ++calls;
            return f < 0 && calls < 0; // cancel at once
        });
        QVERIFY(r.ok());
        QVERIFY(r->cancelled);
        QVERIFY(calls >= 1);
    }
};

QTEST_GUILESS_MAIN(TestTraceCapacity)
#include "tst_trace_capacity.moc"
