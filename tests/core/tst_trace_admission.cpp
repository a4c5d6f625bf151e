// Store admission (docs/workload-model.md, "Store admission"): a block is written to the offload
// tiers at its K-th sighting. Counted by hand on a five-request trace for K = 1, 2, 3 under both
// placements, and on the conversation trace against an independent count (the reference figures
// of the workload model) and a reference pair of LRUs with finite capacities.
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_sim.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <unordered_map>
#include <unordered_set>

using namespace kvbe;
using namespace kvbe::test;

namespace {

SimTier dram(double capacityBlocks) {
    return SimTier{"dram", capacityBlocks, TierPath{"dram", 55e9, 0.5e-3}, 55e9};
}

// Store after K with one unlimited offload tier and no GPU cache, counted directly: a block is
// stored once it has been seen K times, and a request hits the longest run of stored blocks it
// starts with (ids name prefixes).
struct GatedCount {
    std::uint64_t written = 0;
    double hitTokens = 0, tokens = 0;
};
GatedCount countStoreAfter(const std::vector<RealRequest>& reqs, int k) {
    std::unordered_map<qint64, int> seen;
    std::unordered_set<qint64> stored;
    GatedCount c;
    for (const auto& r : reqs) {
        std::size_t h = 0;
        while (h < r.ids.size() && stored.count(r.ids[h]))
            ++h;
        c.hitTokens += std::min(double(h) * 512, r.n);
        c.tokens += r.n;
        for (auto id : r.ids)
            if (++seen[id] >= k && stored.insert(id).second) ++c.written;
    }
    return c;
}

// Write-through LRU in a GPU and one offload tier, each a plain ordered-dictionary LRU; the
// offload tier takes a block only from its K-th sighting on. Hit blocks per tier (the fastest
// holder) and the offload tier's writes.
struct TwoTierCount {
    double gpuHits = 0, dramHits = 0;
    std::uint64_t dramWritten = 0;
};
TwoTierCount referenceGatedWriteThrough(const std::vector<RealRequest>& reqs, std::size_t gpuCap,
                                        std::size_t dramCap, int k) {
    ReferenceLru gpu(gpuCap), dram(dramCap);
    std::unordered_map<qint64, int> seen;
    TwoTierCount c;
    for (const auto& r : reqs) {
        for (auto id : r.ids) {
            if (gpu.holds(id))
                c.gpuHits += 1;
            else if (dram.holds(id))
                c.dramHits += 1;
            else
                break;
        }
        for (auto id : r.ids) {
            gpu.use(id);
            if (++seen[id] >= k && dram.use(id)) ++c.dramWritten;
        }
    }
    return c;
}

} // namespace

class TestTraceAdmission : public QObject {
    Q_OBJECT
  private slots:

    // Five requests, 512-token blocks, a 2-block GPU and an unlimited DRAM tier:
    //   r1 [1,2]  r2 [1,2,3]  r3 [1,4]  r4 [1,2,3]  r5 [1,2,5]
    // The GPU is never gated, so it holds the same blocks whatever K: {1,2} after r1, {2,3}
    // after r2, {1,4} after r3, {2,3} after r4, {2,5} after r5; its hits are r2's 1 and 2, r4's
    // 1 and r5's 2: 4 blocks in every row.
    // Write-through, K = 1: DRAM takes 1, 2 (r1), 3 (r2), 4 (r3), 5 (r5): 5 writes; it serves
    //   r3's 1, r4's 2 and 3, r5's 1: 4 blocks.
    // K = 2: sightings reach 2 for 1 and 2 at r2, for 3 at r4 (4 and 5 are seen once): 3 writes;
    //   DRAM serves r3's 1, r4's 2 (3 is written by r4 itself), r5's 1: 3 blocks.
    // K = 3: 1 at r3, 2 at r4: 2 writes; DRAM serves r5's 1 only (r3 finds nothing: 1 is
    //   written by r3 itself; r4's run stops at 2).
    // Cascade writes a block to DRAM when the GPU evicts it, if it has been seen K times then:
    //   K = 1: r2 evicts 1; r3 moves 1 up and evicts 2, 3; r4 moves 2, 3 up and evicts 4, 1;
    //   r5 moves 1, 2 up and evicts 2, 3, then 5 evicts 1: 8 writes, the same runs as
    //   write-through (DRAM 4 blocks).
    //   K = 2: r2 evicts 1 (seen 2); r3 evicts 2 (2) and drops 3 (1); r4 drops 4 (1) and evicts
    //   1 (4); r5 evicts 2 (3), 3 (2), 1 (5): 6 writes; DRAM serves r3's 1, r4's 2 and r5's 1.
    //   K = 3: r2 drops 1 (seen 2); r3 drops 2 (2) and 3 (1); r4 drops 4 and evicts 1 (4); r5
    //   evicts 2 (4), drops 3 (2), evicts 1 (5): 3 writes; DRAM serves r5's 1 only.
    void storeAfterByHand_data() {
        QTest::addColumn<int>("placement");
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("dramWrites");
        QTest::addColumn<int>("dramHitBlocks");
        const int wt = int(Placement::WriteThrough), cascade = int(Placement::Cascade);
        QTest::newRow("write-through K=1") << wt << 1 << 5 << 4;
        QTest::newRow("write-through K=2") << wt << 2 << 3 << 3;
        QTest::newRow("write-through K=3") << wt << 3 << 2 << 1;
        QTest::newRow("cascade K=1") << cascade << 1 << 8 << 4;
        QTest::newRow("cascade K=2") << cascade << 2 << 6 << 3;
        QTest::newRow("cascade K=3") << cascade << 3 << 3 << 1;
    }
    void storeAfterByHand() {
        QFETCH(int, placement);
        QFETCH(int, k);
        QFETCH(int, dramWrites);
        QFETCH(int, dramHitBlocks);
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 1024, "hash_ids": [1, 2]})",
            R"({"timestamp": 1000, "input_length": 1536, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 2000, "input_length": 1024, "hash_ids": [1, 4]})",
            R"({"timestamp": 3000, "input_length": 1536, "hash_ids": [1, 2, 3]})",
            R"({"timestamp": 4000, "input_length": 1536, "hash_ids": [1, 2, 5]})",
        });
        auto t = loadTraceText(text, "hand.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 2;
        cfg.placement = static_cast<Placement>(placement);
        cfg.storeAfter = k;
        cfg.tiers.push_back(dram(kUnlimited));
        auto r = replayTrace(*t, llama3b(), cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double blocks = 2 + 3 + 2 + 3 + 3;
        QCOMPARE(r->tiers[1].blocksWritten, std::uint64_t(dramWrites));
        QCOMPARE(r->tiers[1].blocksStored, std::uint64_t(dramWrites)); // no write queue
        QCOMPARE(r->tiers[1].bytesStored, double(dramWrites));
        QCOMPARE(r->tiers[0].hits.blockWeighted, 4 / blocks);
        QCOMPARE(r->tiers[1].hits.blockWeighted, dramHitBlocks / blocks);
        QCOMPARE(r->tiers[0].blocksWritten, std::uint64_t(0)); // the GPU's writes are not counted
    }

    void storeAfterOutOfRangeIsRefused_data() {
        QTest::addColumn<int>("k");
        QTest::newRow("0") << 0;
        QTest::newRow("-1") << -1;
        QTest::newRow("256") << 256;
    }
    void storeAfterOutOfRangeIsRefused() {
        QFETCH(int, k);
        auto t = loadTraceText(R"({"timestamp": 0, "input_length": 10, "hash_ids": [1]})"
                               "\n",
                               "one.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.storeAfter = k;
        auto r = replayTrace(*t, llama3b(), cfg);
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find("store after") != std::string::npos, r.message().c_str());
    }

    // The workload model's reference figures: one unlimited offload tier, no GPU cache, no
    // write queue. K = 1 stores 182,790 blocks and hits 0.3736 token-weighted; K = 2 44,144 and
    // 0.2177; K = 3 18,689 and 0.1516.
    void conversationTraceStoreAfterEqualsAnIndependentCount_data() {
        QTest::addColumn<int>("k");
        QTest::addColumn<int>("published");
        QTest::addColumn<double>("publishedHits");
        QTest::newRow("K=1") << 1 << 182790 << 0.3736;
        QTest::newRow("K=2") << 2 << 44144 << 0.2177;
        QTest::newRow("K=3") << 3 << 18689 << 0.1516;
    }
    void conversationTraceStoreAfterEqualsAnIndependentCount() {
        QFETCH(int, k);
        QFETCH(int, published);
        QFETCH(double, publishedHits);
        const auto& reqs = realTrace();
        QVERIFY2(!reqs.empty(), "tests/fixtures/traces/mooncake-conversation.jsonl is missing");
        const GatedCount ref = countStoreAfter(reqs, k);
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(trace.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = 0;
        cfg.storeAfter = k;
        cfg.tiers.push_back(dram(kUnlimited));
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        QCOMPARE(r->tiers[1].blocksWritten, ref.written);
        QCOMPARE(r->anyTier.tokenWeighted, ref.hitTokens / ref.tokens);
        QCOMPARE(r->tiers[1].blocksWritten, std::uint64_t(published));
        QVERIFY(std::abs(r->anyTier.tokenWeighted - publishedHits) < 5e-5);
    }

    // Finite capacities: the replay's pair of recency structures (the GPU's stream and the
    // offload tier's admitted stream) against two plain LRUs, block for block.
    void finiteCapacitiesEqualReferenceLrus_data() {
        QTest::addColumn<int>("gpu");
        QTest::addColumn<int>("dram");
        QTest::addColumn<int>("k");
        QTest::newRow("K=2, 500 + 6000") << 500 << 6000 << 2;
        QTest::newRow("K=3, 2000 + 30000") << 2000 << 30000 << 3;
        QTest::newRow("K=2, no GPU, 6000") << 0 << 6000 << 2;
        // A GPU holding a fifth of the trace's 182,790 distinct blocks.
        QTest::newRow("K=2, 40000 + 60000") << 40000 << 60000 << 2;
    }
    void finiteCapacitiesEqualReferenceLrus() {
        QFETCH(int, gpu);
        QFETCH(int, dram);
        QFETCH(int, k);
        const auto& reqs = realTrace();
        QVERIFY(!reqs.empty());
        const TwoTierCount ref =
            referenceGatedWriteThrough(reqs, std::size_t(gpu), std::size_t(dram), k);
        double blocks = 0;
        for (const auto& r : reqs)
            blocks += double(r.ids.size());
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(trace.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 1;
        cfg.gpuCapacityBytes = gpu;
        cfg.storeAfter = k;
        cfg.tiers.push_back(::dram(dram));
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        QCOMPARE(r->tiers[1].blocksWritten, ref.dramWritten);
        QCOMPARE(r->tiers[0].hits.blockWeighted, ref.gpuHits / blocks);
        QCOMPARE(r->tiers[1].hits.blockWeighted, ref.dramHits / blocks);
    }

    // With a write queue the writes that reach a tier are those offered less the ones its full
    // queue dropped (and less any that joined a queued write of the same block).
    void storedWritesLeaveOutTheDroppedOnes() {
        auto trace = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(trace.ok());
        ReplayConfig cfg;
        cfg.blockBytes = 58.7e6;
        cfg.gpuCapacityBytes = 0;
        cfg.writeQueue = true;
        SimTier slow = dram(kUnlimited);
        slow.writeBps = 2e9;
        slow.writeBufferBytes = 4 * cfg.blockBytes;
        cfg.tiers.push_back(slow);
        auto r = replayTrace(*trace, llama3b(), cfg);
        QVERIFY(r.ok());
        const auto& t = r->tiers[1];
        QVERIFY(t.writesDropped > 0);
        QVERIFY(t.blocksStored + t.writesDropped <= t.blocksWritten);
        QVERIFY(t.blocksStored > 0);
        QCOMPARE(t.bytesStored, double(t.blocksStored) * cfg.blockBytes);
    }
};

QTEST_GUILESS_MAIN(TestTraceAdmission)
#include "tst_trace_admission.moc"
