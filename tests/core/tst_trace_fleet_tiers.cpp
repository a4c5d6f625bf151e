// A fleet's offload tiers (docs/workload-model.md, "The fleet"): each copy of each tier is an LRU
// of its own, whichever tiers the replay keeps in one order, checked against independent LRUs
// counted here (fleet_test_support.h).
#include "fleet_test_support.h"

#include <map>
#include <random>

using namespace kvbe;
using namespace kvbe::test;

class TestTraceFleetTiers : public QObject {
    Q_OBJECT
  private slots:
    // Offload tiers written through beside the GPU: each copy of each tier is an LRU of its own,
    // whichever tiers the replay keeps in one order. Per tier, the hit tokens and the blocks
    // written equal independent LRUs' counted here: a server's GPU, DRAM and NVMe (one order), the
    // same with stores from the 2nd sighting (the GPU apart), DRAM and NVMe on nodes of 2 (apart
    // from the GPU), a pool beside a node's tier, and 64 servers whose blocks sit in more copies
    // than their records have room for.
    void tiersWrittenThroughAreEachAnLru() {
        const auto& reqs = realTrace();
        if (reqs.empty()) QFAIL(kNoRealTrace);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        struct Case {
            int servers, nodeServers, storeAfter;
            std::vector<std::size_t> caps; // GPU, then the offload tiers
            std::vector<bool> pooled;
        };
        const Case cases[] = {
            {8, 1, 1, {300, 1000, 3000}, {false, false}},
            {8, 1, 2, {300, 1000, 3000}, {false, false}},
            {8, 2, 1, {300, 1500, 4000}, {false, false}},
            {8, 2, 1, {300, 2000, 6000}, {false, true}},
            {64, 1, 1, {100, 200, 800}, {false, false}},
        };
        for (const Case& c : cases) {
            ReplayConfig cfg = fleetConfig(cm, c.servers, "round-robin");
            cfg.fleet.nodeServers = c.nodeServers;
            cfg.storeAfter = c.storeAfter;
            cfg.gpuCapacityBytes = double(c.caps[0]) * cfg.blockBytes;
            std::vector<int> spans{1};
            for (std::size_t k = 1; k < c.caps.size(); ++k) {
                cfg.tiers.push_back(SimTier{k == 1 ? "dram" : "nvme",
                                            double(c.caps[k]) * cfg.blockBytes,
                                            {"x", 50e9 / double(k), 1e-3},
                                            0});
                spans.push_back(c.pooled[k - 1] ? c.servers : c.nodeServers);
            }
            cfg.fleet.pooled = c.pooled;
            auto r = replayTrace(*t, cm, cfg);
            QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
            const TierCounts want = referenceTiers(reqs, c.servers, c.caps, spans, c.storeAfter);
            const QByteArray what = QByteArray::number(c.servers) + " servers, " +
                                    QByteArray::number(c.nodeServers) + " a node, store after " +
                                    QByteArray::number(c.storeAfter);
            for (std::size_t k = 0; k < c.caps.size(); ++k) {
                QVERIFY2(near(r->tiers[k].hits.tokenWeighted, want.hitTokens[k], 1e-12), what);
                if (k > 0) QCOMPARE(r->tiers[k].blocksWritten, want.written[k]);
                QVERIFY2(want.hitTokens[k] > 0.001, what); // every tier is read
            }
        }
    }

    // The same on a small random forest of prefixes with caches of a few blocks, so that every
    // tier evicts at almost every request: tiers of equal capacities, a smaller tier after a
    // larger one, a tier of capacity 0, 1 server and 3.
    void tinyTiersEachAnLru() {
        std::mt19937 rng(11);
        std::map<std::pair<int, int>, int> node;
        std::vector<std::vector<int>> ids;
        std::vector<RealRequest> reqs;
        for (int i = 0; i < 3000; ++i) {
            std::vector<int> r;
            int parent = -1;
            for (int d = 0, n = 1 + int(rng() % 6); d < n; ++d) {
                const auto key = std::make_pair(parent, int(rng() % (d == 0 ? 4 : 3)));
                const auto it = node.try_emplace(key, int(node.size())).first;
                parent = it->second;
                r.push_back(parent);
            }
            ids.push_back(r);
            reqs.push_back({512.0 * double(r.size()), std::vector<qint64>(r.begin(), r.end())});
        }
        const Trace t = atOnce(ids);
        const CostModel cm = llama3b();
        for (const int servers : {1, 3})
            for (const std::vector<std::size_t>& caps : std::vector<std::vector<std::size_t>>{
                     {1, 2, 5}, {2, 2, 3}, {3, 1, 4}, {2, 0, 3}, {1, 3, 3}})
                for (const int after : {1, 2}) {
                    ReplayConfig cfg = fleetConfig(cm, servers, "round-robin");
                    cfg.storeAfter = after;
                    cfg.gpuCapacityBytes = double(caps[0]) * cfg.blockBytes;
                    for (std::size_t k = 1; k < 3; ++k)
                        cfg.tiers.push_back(SimTier{k == 1 ? "dram" : "nvme",
                                                    double(caps[k]) * cfg.blockBytes,
                                                    {"x", 50e9 / double(k), 1e-3},
                                                    0});
                    auto r = replayTrace(t, cm, cfg);
                    QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
                    const TierCounts want = referenceTiers(reqs, servers, caps, {1, 1, 1}, after);
                    const QByteArray what = QByteArray::number(servers) + " servers, caps " +
                                            QByteArray::number(qulonglong(caps[0])) + "," +
                                            QByteArray::number(qulonglong(caps[1])) + "," +
                                            QByteArray::number(qulonglong(caps[2])) +
                                            ", store after " + QByteArray::number(after);
                    for (std::size_t k = 0; k < 3; ++k) {
                        QVERIFY2(near(r->tiers[k].hits.tokenWeighted, want.hitTokens[k], 1e-12),
                                 what);
                        if (k > 0) QVERIFY2(r->tiers[k].blocksWritten == want.written[k], what);
                    }
                }
    }
};

QTEST_APPLESS_MAIN(TestTraceFleetTiers)
#include "tst_trace_fleet_tiers.moc"
