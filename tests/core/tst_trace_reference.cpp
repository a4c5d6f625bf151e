// The tiered cache replay against references: queueing on prefill servers and on the tiers'
// links, S3-FIFO against LRU, the real conversation trace against an independent reference LRU,
// the one-pass capacity sweep against replays, and the admission rules.
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

} // namespace

class TestTraceReference : public QObject {
    Q_OBJECT
  private slots:
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
};

QTEST_GUILESS_MAIN(TestTraceReference)
#include "tst_trace_reference.moc"
