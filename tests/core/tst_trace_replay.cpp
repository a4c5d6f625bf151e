// The tiered cache replay by hand: two tiers, a tier of size 0, hybrid blocks' state, the tiers'
// write bandwidth, shared links, the rules' times, write-through LRU against separate reference
// LRUs, and the write queues.
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

class TestTraceReplay : public QObject {
    Q_OBJECT
  private slots:
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
};

QTEST_GUILESS_MAIN(TestTraceReplay)
#include "tst_trace_replay.moc"
