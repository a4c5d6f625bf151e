// The load-aware admission rule and the saturation figures (docs/workload-model.md, "Admission
// under load" and "Saturation"): the closed-form case of issue 39 against its closed form, the
// rule against a brute force over every cut written here, never slower than GPU-only caching,
// and the links' busy shares by hand.
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_saturation.h"
#include "kvbe/trace/trace_sim.h"
#include "queueing_by_hand.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <algorithm>
#include <random>

using namespace kvbe;
using kvbe::test::llama3b;
using kvbe::test::realTracePath;

namespace {

// n requests of the same `prefix` full blocks (ids 0 …) and `own` tokens of their own (one block
// each), one every `gap` seconds, built field by field.
Trace sharedPrefixTrace(std::size_t n, double gap, std::uint32_t prefix, std::uint32_t own) {
    Trace t;
    t.summary.format = TraceFormat::Mooncake;
    t.summary.blockTokens = 512;
    t.summary.requests = n;
    t.blockOffset.push_back(0);
    t.distinctBlocks = prefix;
    for (std::size_t i = 0; i < n; ++i) {
        t.arrivalS.push_back(double(i) * gap);
        t.inputTokens.push_back(prefix * 512 + own);
        t.outputTokens.push_back(1);
        for (std::uint32_t j = 0; j < prefix; ++j)
            t.blocks.push_back(j);
        t.blocks.push_back(t.distinctBlocks++);
        t.blockOffset.push_back(t.blocks.size());
    }
    return t;
}

// Conversations that come back turn after turn, with arrivals close enough that the links back
// up: a trace written as Mooncake lines (prefix ids), each request a new turn of one of 24
// conversations.
std::string conversationsText(unsigned seed, int requests, int gapMs) {
    std::mt19937 rng(seed);
    std::vector<std::vector<int>> convs(24);
    int next = 0;
    std::string text;
    for (int i = 0; i < requests; ++i) {
        auto& c = convs[rng() % convs.size()];
        if (c.empty() || c.size() > 30) {
            c.clear();
            for (int b = 0; b < 3; ++b)
                c.push_back(b); // a shared system prompt
        }
        const int fresh = 1 + int(rng() % 4);
        for (int b = 0; b < fresh; ++b)
            c.push_back(1000 + next++);
        std::string ids;
        for (std::size_t b = 0; b < c.size(); ++b)
            ids += (b ? ", " : "") + std::to_string(c[b]);
        const int n = int(c.size() - 1) * 512 + 1 + int(rng() % 512);
        text += "{\"timestamp\": " + std::to_string(i * gapMs + int(rng() % gapMs)) +
                ", \"input_length\": " + std::to_string(n) + ", \"hash_ids\": [" + ids + "]}\n";
    }
    return text;
}

} // namespace

class TestTraceLoadAware : public QObject {
    Q_OBJECT

  private slots:
    // Issue 39's closed-form case: 2,000 identical requests every 32 ms, each 8,292 tokens with
    // an 8,192-token cached prefix; no GPU cache, 8 servers, one tier with no fixed cost whose
    // load of the prefix alone takes half a recompute of it (14.48 GB/s for Llama 3.2 3B on an
    // H100 at 50 %). Each load takes about twice the gap between arrivals, so the link can carry
    // about half of them.
    void closedFormCase() {
        const CostModel cm = llama3b();
        const std::size_t n = 2000;
        const double gap = 0.032, N = 8292, P = 8192;
        const double bw = cm.loadBytes(P) / (cm.tRecompute(P, 0) / 2);
        QVERIFY2(std::abs(bw / 14.48e9 - 1) < 0.005, qPrintable(QString::number(bw / 1e9)));
        const double r0 = cm.tRecompute(N, 0), rh = cm.tRecompute(N - P, P);
        const double tl = cm.loadBytes(P) / bw; // a load of the prefix, alone
        QVERIFY(tl > 2 * gap && tl < 2.1 * gap);
        QVERIFY(r0 < 8 * gap); // recomputing alone, nobody waits for one of the 8 servers

        const Trace t = sharedPrefixTrace(n, gap, 16, 100);
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 0;
        cfg.tiers.push_back(SimTier{"tier", kUnlimited, TierPath{"tier", bw, 0}, 0});
        cfg.instances = 8;
        RequestTimes times;
        auto r = replayTrace(t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());

        // Recompute alone: every TTFT is r0.
        QVERIFY(kvbe::test::near(r->rule("none")->ttft.p99, r0, 1e-12));
        QVERIFY(kvbe::test::near(r->rule("gpu-only")->ttft.p99, r0, 1e-12));
        // The best rule: p99 within 5 % of recompute alone (a load is made only when it ends in
        // time, so no TTFT exceeds r0).
        const RuleResult& opt = *r->rule("optimal");
        QVERIFY2(opt.ttft.p99 <= 1.05 * r0, qPrintable(QString::number(opt.ttft.p99)));
        for (std::size_t i = 0; i < n; ++i)
            QVERIFY(times.queuedOptimal[i] <= r0 * (1 + 1e-12));

        // The GPU seconds the bandwidth allows: the link works at most from the first hit's
        // arrival (request 1, at one gap) until the last load that still beats recompute ends
        // (the last arrival + r0 − rh); each load of the prefix takes tl of it and saves r0 − rh,
        // and a partial load saves less per second of the link (r0 − t_re(p) is convex in p).
        const double linkS = double(n - 1) * gap + (r0 - rh) - gap;
        const double bound = std::min(double(n - 1), linkS / tl) * (r0 - rh);
        const double saved = opt.gpuSecondsSaved - r->rule("gpu-only")->gpuSecondsSaved;
        qInfo("closed form: %.2f GB/s, recompute %.1f ms, load %.1f ms; optimal p99 %.1f ms, "
              "breakeven p99 %.1f s; GPU s saved %.2f of %.2f the bandwidth allows (%.1f %%)",
              bw / 1e9, r0 * 1e3, tl * 1e3, opt.ttft.p99 * 1e3, r->rule("breakeven")->ttft.p99,
              saved, bound, saved / bound * 100);
        QVERIFY2(saved >= 0.8 * bound && saved <= bound * (1 + 1e-9),
                 qPrintable(QString("%1 of %2").arg(saved).arg(bound)));
        // Every load it made was of the whole prefix and beat recompute: the loads counted.
        std::size_t loaded = 0;
        for (std::size_t i = 1; i < n; ++i) {
            QVERIFY(times.optimalCut[i] == 0 || times.optimalCut[i] == 16);
            loaded += times.optimalCut[i] == 16;
        }
        QVERIFY(kvbe::test::near(saved, double(loaded) * (r0 - rh), 1e-9));

        // The static threshold keeps loading: p* is 0 here (no fixed cost), so breakeven loads
        // every hit and the link's backlog grows by about tl − gap a request.
        const RuleResult& be = *r->rule("breakeven");
        QVERIFY(be.ttft.p99 > 0.9 * 0.99 * double(n) * (tl - gap));
        QVERIFY(r->rule("always")->ttft.p99 == be.ttft.p99);

        // Saturation: the hits ask tl / gap of the link's time, twice what it has; the rule
        // served the loads it made and declined the rest for the backlog (alone it would load
        // every hit), its reads keeping the link busy.
        const TierReport& tier = r->tiers[1];
        QVERIFY(kvbe::test::near(tier.readOffered.meanShare, tl / gap, 1e-9));
        QCOMPARE(tier.readOffered.binsOver, std::uint64_t(tier.readOffered.share.size()));
        const RuleTierUse& use = opt.tiers[1];
        QVERIFY(kvbe::test::near(use.tokensOffered, double(n - 1) * P, 1e-12));
        QVERIFY(kvbe::test::near(use.tokensServed, double(loaded) * P, 1e-12));
        QCOMPARE(use.requestsDeclinedForBacklog, std::uint64_t(n - 1 - loaded));
        QCOMPARE(use.blocksDeclinedForBacklog, std::uint64_t(16 * (n - 1 - loaded)));
        QVERIFY(kvbe::test::near(use.read.busyS, double(loaded) * tl, 1e-9));
        QVERIFY2(use.read.meanShare > 0.95, qPrintable(QString::number(use.read.meanShare)));
        const std::string sentence = saturationSentence(*r, "optimal", true);
        QVERIFY2(sentence.find("tier is saturated in 100 % of the minutes") != std::string::npos,
                 sentence.c_str());
        QVERIFY2(sentence.find("3x its bandwidth") != std::string::npos, sentence.c_str());
    }

    // The rule against a brute force written here: at each arrival, in arrival order, every cut
    // j = 0 … h of the run evaluated on the test's own servers and links (per tier in turn,
    // fastest first: max(end of the one before + t_fixed, the link's end) + transfer), the
    // fastest taken (ties: the smaller cut), its transfers booked.
    void loadAwareEqualsBruteForce_data() {
        QTest::addColumn<int>("servers");
        QTest::addColumn<int>("gapMs");
        QTest::addColumn<int>("placement");
        QTest::addColumn<int>("policy");
        QTest::addColumn<double>("fixedMs");
        QTest::newRow("2 servers, busy links, cascade s3fifo")
            << 2 << 20 << int(Placement::Cascade) << int(EvictionPolicy::S3Fifo) << 1.0;
        QTest::newRow("3 servers, write-through lru, no fixed cost")
            << 3 << 12 << int(Placement::WriteThrough) << int(EvictionPolicy::Lru) << 0.0;
        QTest::newRow("1 server, long waits, cascade lru")
            << 1 << 60 << int(Placement::Cascade) << int(EvictionPolicy::Lru) << 2.0;
        QTest::newRow("16 servers, links alone decide")
            << 16 << 5 << int(Placement::WriteThrough) << int(EvictionPolicy::S3Fifo) << 0.5;
    }
    void loadAwareEqualsBruteForce() {
        QFETCH(int, servers);
        QFETCH(int, gapMs);
        QFETCH(int, placement);
        QFETCH(int, policy);
        QFETCH(double, fixedMs);
        auto t = loadTraceText(conversationsText(11, 400, gapMs), "conv.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 6 * cfg.blockBytes;
        cfg.placement = static_cast<Placement>(placement);
        cfg.policy = static_cast<EvictionPolicy>(policy);
        cfg.tiers.push_back(
            SimTier{"dram", 40 * cfg.blockBytes, TierPath{"dram", 8e9, fixedMs * 0.5e-3}, 0});
        cfg.tiers.push_back(SimTier{"nvme", kUnlimited, TierPath{"nvme", 2e9, fixedMs * 1e-3}, 0});
        cfg.instances = servers;
        RequestTimes times;
        auto r = replayTrace(*t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());

        const std::size_t n = t->size();
        std::vector<std::size_t> first(n + 1, 0), order(n);
        for (std::size_t i = 0; i < n; ++i) {
            first[i + 1] = first[i] + times.hitBlocks[i];
            order[i] = i;
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return t->arrivalS[a] < t->arrivalS[b];
        });
        std::vector<double> freeAt(std::size_t(servers), 0.0), tail(3, 0.0);
        int declinedForLinks = 0, mixed = 0;
        for (const std::size_t i : order) {
            const double a = t->arrivalS[i], N = t->inputTokens[i];
            const auto earliest = std::min_element(freeAt.begin(), freeAt.end());
            const double W = std::max(0.0, *earliest - a);
            const std::size_t h = times.hitBlocks[i];
            auto tokensOf = [&](std::size_t j) {
                std::array<double, 3> tok{};
                for (std::size_t b = 0; b < j; ++b)
                    tok[times.hitTiers[first[i] + b]] +=
                        std::min(double(b + 1) * 512, N) - double(b) * 512;
                return tok;
            };
            auto endOf = [&](const std::array<double, 3>& tok, bool book) {
                double e = a;
                for (std::size_t k = 1; k <= 2; ++k) {
                    if (tok[k] <= 0) continue;
                    const TierPath& path = cfg.tiers[k - 1].path;
                    e = std::max(e + path.tFixedS, tail[k]) + cm.tLoad(path, tok[k]) - path.tFixedS;
                    if (book) tail[k] = e;
                }
                return e;
            };
            std::size_t bestJ = 0;
            double best = W + cm.tRecompute(N, 0);
            for (std::size_t j = 1; j <= h; ++j) {
                const double p = std::min(double(j) * 512, N);
                const double v =
                    std::max(W, endOf(tokensOf(j), false) - a) + cm.tRecompute(N - p, p);
                if (v < best) {
                    best = v;
                    bestJ = j;
                }
            }
            endOf(tokensOf(bestJ), true);
            *earliest = a + best;
            QVERIFY2(kvbe::test::near(times.queuedOptimal[i], best, 1e-9),
                     qPrintable(QString("request %1: %2 vs %3 (cut %4 vs %5 of %6)")
                                    .arg(i)
                                    .arg(times.queuedOptimal[i])
                                    .arg(best)
                                    .arg(times.optimalCut[i])
                                    .arg(bestJ)
                                    .arg(h)));
            if (bestJ < h && bestJ > 0) ++declinedForLinks;
            const auto tok = tokensOf(h);
            if (tok[1] > 0 && tok[2] > 0) ++mixed;
        }
        // The cases are there: partial cuts, and runs read from both tiers.
        QVERIFY2(declinedForLinks > 5, qPrintable(QString::number(declinedForLinks)));
        QVERIFY2(mixed > 5, qPrintable(QString::number(mixed)));
    }

    // With prefill servers the load-aware rule is never slower than GPU-only caching for any
    // request: each of its choices holds the server no longer than GPU-only's (the GPU's cut is
    // one of its candidates), so no request waits longer either (first come first served).
    void optimalNeverSlowerThanGpuOnlyWithServers_data() {
        QTest::addColumn<int>("servers");
        QTest::addColumn<double>("nvmeGBps");
        QTest::newRow("2 servers, a slow drive") << 2 << 1.0;
        QTest::newRow("4 servers, gen4") << 4 << 6.0;
        QTest::newRow("8 servers, a very slow drive") << 8 << 0.3;
    }
    void optimalNeverSlowerThanGpuOnlyWithServers() {
        QFETCH(int, servers);
        QFETCH(double, nvmeGBps);
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY2(trace.ok(), trace.ok() ? "" : trace.message().c_str());
        const CostModel cm = llama3b();
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 2000 * cfg.blockBytes;
        cfg.tiers.push_back(
            SimTier{"dram", 8000 * cfg.blockBytes, TierPath{"dram", 25e9, 0.5e-3}, 25e9});
        cfg.tiers.push_back(
            SimTier{"nvme", 60000 * cfg.blockBytes, TierPath{"nvme", nvmeGBps * 1e9, 1e-3}, 4e9});
        cfg.writeQueue = true;
        cfg.instances = servers;
        RequestTimes t;
        auto r = replayTrace(*trace, cm, cfg, &t);
        QVERIFY(r.ok());
        for (std::size_t i = 0; i < trace->size(); ++i)
            QVERIFY2(t.queuedOptimal[i] <= t.queuedGpuOnly[i] * (1 + 1e-12) + 1e-12,
                     qPrintable(QString("request %1: %2 vs %3")
                                    .arg(i)
                                    .arg(t.queuedOptimal[i])
                                    .arg(t.queuedGpuOnly[i])));
        QVERIFY(r->rule("optimal")->ttft.p99 <= r->rule("gpu-only")->ttft.p99);
        QCOMPARE(r->rule("optimal")->lossShare, 0.0);
        QVERIFY(r->rule("optimal")->gpuSecondsSaved >= r->rule("gpu-only")->gpuSecondsSaved);
    }

    // The links' busy time by hand. Three requests load the same 2 blocks from one tier (1024
    // tokens, w = 20 s of transfer: a slow link), at 0 (a miss that writes them), 50 s and 70 s
    // and 200 s; with a server each, `always` queues them: r2's transfer [50, 70], r3's [70, 90],
    // r4's [200, 220]. Busy per minute: 10, 30, 0, 20 s.
    void linkBusySharesByHand() {
        const std::string text = kvbe::test::lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 50000, "input_length": 1100, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 70000, "input_length": 1100, "hash_ids": [1, 2, 4]})",
            R"({"timestamp": 200000, "input_length": 1100, "hash_ids": [1, 2, 5]})",
        });
        auto t = loadTraceText(text, "busy.jsonl", {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const double w = 20;
        const TierPath slow{"slow", cm.loadBytes(1024) / w, 0};
        ReplayConfig cfg;
        cfg.blockBytes = cm.kvBytesPerToken() * 512;
        cfg.gpuCapacityBytes = 0;
        cfg.tiers.push_back(SimTier{"slow", kUnlimited, slow, 0});
        cfg.instances = 4;
        auto r = replayTrace(*t, cm, cfg);
        QVERIFY(r.ok());
        const LinkUse& busy = r->rule("always")->tiers[1].read;
        QCOMPARE(busy.share.size(), std::size_t(4));
        const std::vector<double> expected{10.0 / 60, 30.0 / 60, 0, 20.0 / 40};
        for (std::size_t b = 0; b < 4; ++b)
            QVERIFY2(std::abs(busy.share[b] - expected[b]) < 1e-6,
                     qPrintable(QString("bin %1: %2").arg(b).arg(busy.share[b])));
        QVERIFY(kvbe::test::near(busy.busyS, 60, 1e-9));
        QVERIFY(kvbe::test::near(busy.meanShare, 60.0 / 220, 1e-9)); // the span: the last end
        QVERIFY(kvbe::test::near(busy.peakShare, 0.5, 1e-6));
        // Offered: each hit's 20 s in the minute of its arrival (the last bin: 200 … 200 s).
        const LinkUse& asked = r->tiers[1].readOffered;
        QVERIFY(kvbe::test::near(asked.busyS, 60, 1e-9));
        QVERIFY(std::abs(asked.share[0] - 20.0 / 60) < 1e-6);
        QVERIFY(std::abs(asked.share[1] - 20.0 / 60) < 1e-6);
        // Recompute of 1,024 tokens takes far less than 20 s: the load-aware rule loads none.
        QCOMPARE(r->rule("optimal")->tiers[1].tokensServed, 0.0);
        QCOMPARE(r->rule("optimal")->gpuSecondsSaved, 0.0);
        // Nor does a load that loses to recompute count as GPU time saved for `always`.
        QCOMPARE(r->rule("always")->gpuSecondsSaved, 0.0);
        QVERIFY(r->rule("always")->tiers[1].tokensServed == 3 * 1024);
    }
};

QTEST_GUILESS_MAIN(TestTraceLoadAware)
#include "tst_trace_load_aware.moc"
