// The fleet (docs/workload-model.md, "The fleet"): a GPU cache per server behind a router, tiers
// on each node or pooled, checked against independent counts computed here, and the routers'
// choices on small traces worked out by hand in docs/routers.md.
#include "fleet_test_support.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/fleet.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sampled.h"
#include "kvbe/trace/trace_sim.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <map>
#include <tuple>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// Requests at the given times (seconds), each its prefix ids, whole 512-token blocks.
Trace timed(const std::vector<std::pair<double, std::vector<int>>>& requests) {
    std::string text;
    for (const auto& [at, ids] : requests) {
        std::string list;
        for (std::size_t j = 0; j < ids.size(); ++j)
            list += (j ? ", " : "") + std::to_string(ids[j]);
        text += R"({"timestamp": )" + std::to_string(static_cast<long long>(at * 1000)) +
                R"(, "input_length": )" + std::to_string(512 * ids.size()) + R"(, "hash_ids": [)" +
                list + "]}\n";
    }
    auto t = loadTraceText(text, "timed.jsonl", {});
    if (!t) qFatal("%s", t.message().c_str());
    return std::move(*t);
}

std::vector<std::uint64_t> routed(const Trace& t, const ReplayConfig& cfg) {
    auto r = replayTrace(t, llama3b(), cfg);
    if (!r) qFatal("%s", r.message().c_str());
    // Each request's server, from the per-server counts of growing prefixes of the trace.
    std::vector<std::uint64_t> out;
    std::vector<std::uint64_t> before(static_cast<std::size_t>(cfg.instances), 0);
    for (std::size_t n = 1; n <= t.size(); ++n) {
        Trace head = t;
        head.arrivalS.resize(n);
        head.inputTokens.resize(n);
        head.outputTokens.resize(n);
        head.blockOffset.resize(n + 1);
        head.blocks.resize(head.blockOffset.back());
        auto h = replayTrace(head, llama3b(), cfg);
        if (!h) qFatal("%s", h.message().c_str());
        for (std::size_t s = 0; s < before.size(); ++s)
            if (h->fleet->requests[s] != before[s]) out.push_back(s);
        before = h->fleet->requests;
    }
    return out;
}

} // namespace

class TestTraceFleet : public QObject {
    Q_OBJECT
  private slots:
    // The conversation trace on 8 servers of 4,000 blocks each behind round-robin: request i
    // meets server i mod 8's cache, so the fleet's hits are those of 8 independent LRUs, each
    // fed its share in arrival order.
    void roundRobinIsEightIndependentLrus() {
        const auto& reqs = realTrace();
        if (reqs.empty()) QFAIL(kNoRealTrace);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        ReplayConfig cfg = fleetConfig(cm, 8, "round-robin");
        cfg.gpuCapacityBytes = 4000 * cfg.blockBytes;
        auto r = replayTrace(*t, cm, cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());

        const double want = referenceHits(reqs, 8, 4000, [](std::size_t i) { return i % 8; });
        QVERIFY(near(r->tiers[0].hits.tokenWeighted, want, 1e-12));
        QCOMPARE(QString::number(100 * want, 'f', 2), QStringLiteral("10.00"));
        QCOMPARE(r->fleet->requests[0], std::uint64_t((reqs.size() + 7) / 8));

        // 64 servers of 300 blocks: the trace's shared blocks sit in many caches at once (more
        // than a block's record has room for, the rest in each cache's own map) and each cache
        // evicts and compacts its queue many times over.
        cfg = fleetConfig(cm, 64, "round-robin");
        cfg.gpuCapacityBytes = 300 * cfg.blockBytes;
        r = replayTrace(*t, cm, cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double want64 = referenceHits(reqs, 64, 300, [](std::size_t i) { return i % 64; });
        QVERIFY(near(r->tiers[0].hits.tokenWeighted, want64, 1e-12));
        QVERIFY(want64 > 0.01);
    }

    // trace sweep on a fleet: a replay at each capacity; at 2,000 and 4,000 blocks a server
    // behind round-robin, the counts of eight reference LRUs of each size.
    void aFleetSweepIsAReplayAtEachCapacity() {
        const auto& reqs = realTrace();
        if (reqs.empty()) QFAIL(kNoRealTrace);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        ReplayConfig cfg = fleetConfig(cm, 8, "round-robin");
        SweepRequest q;
        q.varyTier = 0;
        q.capacitiesTokens = {2000.0 * 512, 4000.0 * 512};
        auto run = sweepTrace(*t, cm, cfg, q);
        QVERIFY2(run.ok(), run.ok() ? "" : run.message().c_str());
        QCOMPARE(run->sweep.points.size(), std::size_t(2));
        for (std::size_t p = 0; p < 2; ++p) {
            const std::size_t blocks = p == 0 ? 2000 : 4000;
            const double want = referenceHits(reqs, 8, blocks, [](std::size_t i) { return i % 8; });
            QVERIFY(near(run->sweep.points[p].anyTier.tokenWeighted, want, 1e-12));
        }
        q.sampling.rate = 0.5;
        QVERIFY(!sweepTrace(*t, cm, cfg, q).ok()); // a sample would change the routing
    }

    // trace capacity on a fleet: the servers each rule needs are a count whose replay holds
    // the target and one fewer does not, each replayed here; on the first 20 minutes of the
    // conversation trace, sglang needs no more servers than round-robin under GPU-only caching.
    void aFleetsServersAreReplayedCounts() {
        auto full = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(full.ok());
        const Trace t = tracePrefix(*full, 1200);
        const CostModel cm = llama3b();
        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=5s");
        q.rateScale = 2;
        std::map<std::string, int> needed;
        for (const char* router : {"round-robin", "sglang"}) {
            ReplayConfig cfg = fleetConfig(cm, 2, router);
            cfg.gpuCapacityBytes = 4000 * cfg.blockBytes;
            auto r = traceCapacity(t, cm, cfg, q);
            QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
            const RuleServers* g = r->serversOf("gpu-only");
            QVERIFY(g && g->servers);
            needed[router] = *g->servers;
            auto p99 = [&](int n) {
                ReplayConfig c = cfg;
                c.instances = n;
                c.rateScale = 2;
                RequestTimes times;
                auto rr = replayTrace(t, cm, c, &times);
                if (!rr) qFatal("%s", rr.message().c_str());
                return latencyStatistic(q.target, times.queuedGpuOnly);
            };
            QVERIFY(p99(*g->servers) <= 5);
            if (*g->servers > 1) QVERIFY(p99(*g->servers - 1) > 5);
            // No server per request on a fleet: its floor, every prefix hit free with no wait
            // (an unlimited GPU cache, no offload tier, no servers), at the same load.
            ReplayConfig free = cfg;
            free.tiers.clear();
            free.gpuCapacityBytes = kUnlimited;
            free.instances = 0;
            free.fleet.enabled = false;
            free.rateScale = 2;
            RequestTimes freeTimes;
            QVERIFY(replayTrace(t, cm, free, &freeTimes).ok());
            const double floor = latencyStatistic(q.target, freeTimes.gpuOnly);
            QCOMPARE(g->statisticUnlimited, floor);
            QVERIFY(floor <= p99(*g->servers));
        }
        QVERIFY(needed["sglang"] <= needed["round-robin"]);
    }

    // A pooled tier of 32,000 blocks and no GPU cache: every server reads the one pool, so the
    // fleet's hits are one LRU's of 32,000 blocks over the whole trace, whatever the router.
    void pooledTierIsOneCache() {
        const auto& reqs = realTrace();
        if (reqs.empty()) QFAIL(kNoRealTrace);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        const double want = referenceHits(reqs, 1, 32000, [](std::size_t) { return 0; });
        for (const char* router : {"round-robin", "random", "sglang", "dynamo"}) {
            ReplayConfig cfg = fleetConfig(cm, 8, router);
            cfg.gpuCapacityBytes = 0;
            cfg.tiers.push_back(SimTier{"dram", 32000 * cfg.blockBytes, {"dram", 50e9, 1e-3}, 0});
            cfg.fleet.pooled = {true};
            auto r = replayTrace(*t, cm, cfg);
            QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
            QVERIFY2(near(r->anyTier.tokenWeighted, want, 1e-12), router);
            QCOMPARE(r->tiers[1].copies, 1u);
            QVERIFY(r->tiers[1].pooled);
        }
    }

    // A pool's writes come over its nodes' links: the pool takes them at most at the links'
    // write bandwidth together, for the nodes of the servers replayed (and at its own where it
    // has one), so that a search that tries several counts gives each its own links; one server
    // too, though it is no fleet.
    void aPoolsLinksAreItsNodes() {
        const Trace t = generatedTrace(500, 3);
        const CostModel cm = llama3b();
        for (const auto& [servers, ownBps, want] :
             std::vector<std::tuple<int, double, double>>{{1, 0.0, 5e9},
                                                          {2, 0.0, 2 * 5e9},
                                                          {8, 0.0, 8 * 5e9},
                                                          {8, 12e9, 12e9},
                                                          {6, 0.0, 3 * 5e9}}) {
            ReplayConfig cfg = fleetConfig(cm, servers, "round-robin");
            if (servers == 6) cfg.fleet.nodeServers = 2;
            cfg.tiers.push_back(
                SimTier{"dram", 1000 * cfg.blockBytes, {"dram", 50e9, 1e-3}, ownBps});
            cfg.fleet.pooled = {true};
            cfg.fleet.poolLinkWriteBps = {5e9};
            auto r = replayTrace(t, cm, cfg);
            QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
            QCOMPARE(r->tiers[1].writeBps, want);
        }
        ReplayConfig bad = fleetConfig(cm, 2, "round-robin");
        bad.fleet.poolLinkWriteBps = {-1};
        auto r = replayTrace(t, cm, bad);
        QVERIFY(!r.ok());
        QVERIFY2(r.message().find("pool link write bandwidth") != std::string::npos,
                 r.message().c_str());
    }

    // A local tier is one per node: with 2 servers a node and round-robin, servers 0 and 1 share
    // node 0's tier. No GPU cache: node n's tier is an LRU fed requests i with i mod 4 in
    // {2n, 2n + 1}.
    void localTiersArePerNode() {
        const auto& reqs = realTrace();
        if (reqs.empty()) QFAIL(kNoRealTrace);
        auto t = loadTrace(realTracePath().toStdString(), {});
        QVERIFY(t.ok());
        const CostModel cm = llama3b();
        ReplayConfig cfg = fleetConfig(cm, 4, "round-robin");
        cfg.gpuCapacityBytes = 0;
        cfg.fleet.nodeServers = 2;
        cfg.tiers.push_back(SimTier{"dram", 3000 * cfg.blockBytes, {"dram", 50e9, 1e-3}, 0});
        auto r = replayTrace(*t, cm, cfg);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        const double want = referenceHits(reqs, 2, 3000, [](std::size_t i) { return (i % 4) / 2; });
        QVERIFY(near(r->tiers[1].hits.tokenWeighted, want, 1e-12));
        QCOMPARE(r->tiers[1].copies, 2u);
        QCOMPARE(r->fleet->nodes, 2);
    }

    // One server is the replay as it always was, fleet or not, figure for figure.
    void oneServerIsTheReplay() {
        const Trace t = generatedTrace(3000, 7);
        const CostModel cm = llama3b();
        ReplayConfig a;
        a.blockBytes = cm.kvBytesPerToken() * t.summary.blockTokens;
        a.gpuCapacityBytes = 2000 * a.blockBytes;
        a.tiers.push_back(SimTier{"dram", 20000 * a.blockBytes, {"dram", 50e9, 1e-3}, 0});
        a.instances = 1;
        ReplayConfig b = a;
        b.fleet.enabled = true;
        auto ra = replayTrace(t, cm, a), rb = replayTrace(t, cm, b);
        QVERIFY(ra.ok() && rb.ok());
        QVERIFY(!rb->fleet);
        QCOMPARE(rb->anyTier.tokenWeighted, ra->anyTier.tokenWeighted);
        for (std::size_t k = 0; k < ra->rules.size(); ++k) {
            QCOMPARE(rb->rules[k].ttft.mean, ra->rules[k].ttft.mean);
            QCOMPARE(rb->rules[k].ttft.p99, ra->rules[k].ttft.p99);
        }
    }

    // docs/routers.md, SGLang example A (the CLI's defaults): [S0, S0, S1, S0, S2, S1].
    // llama.cpp's servers (ReplayConfig::llamaCpp): one slot and a prompt cache of 6,400 tokens,
    // worked by hand from llama.cpp's rules. r0 A fills the slot. r1 B saves A (cache [A]).
    // r2 A' saves B ([A, B]) and loads A, which keeps 3 of its 4 blocks: 3 blocks from RAM.
    // r3 A'' keeps all of the slot's A' (similar, keeping more than half): 4 blocks from the
    // slot. r4 C saves A'' ([B, A''], 4,608 tokens). r5 B saves C (6,144 tokens): B and A'' go
    // to make room, so B misses. r6 A'' saves B, C goes: A'' misses.
    void llamaCppSlotAndPromptCache() {
        const std::vector<std::vector<int>> reqs = {
            {1, 2, 3, 4},
            {5, 6, 7, 8},
            {1, 2, 3, 9},
            {1, 2, 3, 9, 10},
            {11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22},
            {5, 6, 7, 8},
            {1, 2, 3, 9, 10}};
        const Trace t = atOnce(reqs);
        const CostModel cm = llama3b();
        ReplayConfig cfg = fleetConfig(cm, 1, "round-robin");
        cfg.tiers.push_back(SimTier{"dram", kUnlimited, TierPath{"dram", 30e9, 1e-3}, 0});
        cfg.llamaCpp = ReplayConfig::LlamaCpp{6400 * cm.kvBytesPerToken(), 0.1};
        RequestTimes times;
        auto r = replayTrace(t, cm, cfg, &times);
        QVERIFY2(r.ok(), r.ok() ? "" : r.message().c_str());
        QCOMPARE(times.hitBlocks, (std::vector<std::uint32_t>{0, 0, 3, 4, 0, 0, 0}));
        QCOMPARE(times.hitTiers, (std::vector<std::uint8_t>{1, 1, 1, 0, 0, 0, 0}));
        // Without the cache only the slot: r3 alone hits, all of the slot's A' kept.
        cfg.llamaCpp = ReplayConfig::LlamaCpp{0, 0.1};
        RequestTimes slot;
        QVERIFY(replayTrace(t, cm, cfg, &slot).ok());
        QCOMPARE(slot.hitBlocks, (std::vector<std::uint32_t>{0, 0, 0, 4, 0, 0, 0}));
        // A prompt cache needs an offload tier to be read from.
        cfg.tiers.clear();
        cfg.llamaCpp = ReplayConfig::LlamaCpp{6400 * cm.kvBytesPerToken(), 0.1};
        auto bad = replayTrace(t, cm, cfg);
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("name it with --tier") != std::string::npos);
    }

    // An entry of llama.cpp's prompt cache holds 12 bytes a token beyond its KV (each cell's
    // position, sequence count and sequence id, llama_kv_cache::state_write_meta): a cache of
    // exactly two 2,048-token prompts' KV holds one such prompt. r1 B saves A; r2 C saves B, and A
    // goes to make room ([B]); r3 B saves C, and B goes: B finds nothing. With 12 bytes a token
    // more, r2 leaves [A, B], r3's save of C takes A only, and B is loaded (its 4 blocks).
    void llamaCppEntriesCountTheirCells() {
        const Trace t = atOnce({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}, {5, 6, 7, 8}});
        const CostModel cm = llama3b();
        ReplayConfig cfg = fleetConfig(cm, 1, "round-robin");
        cfg.tiers.push_back(SimTier{"dram", kUnlimited, TierPath{"dram", 30e9, 1e-3}, 0});
        const double kv = cm.kvBytesPerToken();
        cfg.llamaCpp = ReplayConfig::LlamaCpp{2 * 2048 * kv, 0.1};
        RequestTimes tight, room;
        QVERIFY(replayTrace(t, cm, cfg, &tight).ok());
        QCOMPARE(tight.hitBlocks, (std::vector<std::uint32_t>{0, 0, 0, 0}));
        cfg.llamaCpp = ReplayConfig::LlamaCpp{2 * 2048 * (kv + 12), 0.1};
        QVERIFY(replayTrace(t, cm, cfg, &room).ok());
        QCOMPARE(room.hitBlocks, (std::vector<std::uint32_t>{0, 0, 0, 4}));
    }

    void sglangExampleA() {
        const Trace t = atOnce({{1, 2, 3, 4},
                                {1, 2, 3, 4, 5, 6},
                                {7, 8, 9},
                                {1, 2, 10, 11},
                                {20, 21, 22, 23, 24},
                                {7, 8, 30, 31}});
        const ReplayConfig cfg = fleetConfig(llama3b(), 3, "sglang");
        QCOMPARE(routed(t, cfg), (std::vector<std::uint64_t>{0, 0, 1, 0, 2, 1}));
    }

    // docs/routers.md, SGLang example B (balance_abs_threshold 1): [S0, S0, S1, S2, S0, S1].
    void sglangExampleB() {
        const Trace t = atOnce({{1, 2, 3, 4},
                                {1, 2, 3, 4, 5, 6},
                                {1, 2, 3, 4},
                                {1, 2, 3, 4},
                                {1, 2, 3, 4, 5, 6, 7, 8},
                                {1, 2, 3, 4, 9}});
        const ReplayConfig cfg = fleetConfig(llama3b(), 3, "sglang:balance_abs_threshold=1");
        QCOMPARE(routed(t, cfg), (std::vector<std::uint64_t>{0, 0, 1, 2, 0, 1}));
    }

    // Round-robin in turn; least-loaded to the first server with the fewest outstanding
    // requests (everyone arrives at once, so each takes one in turn too); session keeps a key on
    // one server.
    void simpleRouters() {
        const Trace t = atOnce({{1}, {2}, {3}, {4}, {5}});
        QCOMPARE(routed(t, fleetConfig(llama3b(), 3, "round-robin")),
                 (std::vector<std::uint64_t>{0, 1, 2, 0, 1}));
        QCOMPARE(routed(t, fleetConfig(llama3b(), 3, "least-loaded")),
                 (std::vector<std::uint64_t>{0, 1, 2, 0, 1}));
        const Trace s = atOnce({{1, 2}, {1, 3}, {1, 2, 4}, {5}, {1, 6}});
        const auto got = routed(s, fleetConfig(llama3b(), 3, "session:key_blocks=1"));
        QCOMPARE(got[1], got[0]);
        QCOMPARE(got[2], got[0]);
        QCOMPARE(got[4], got[0]);
    }

    // Dynamo, T = 0: with S0 holding 1..4 from an earlier request that has finished, a request
    // for 1..6 costs S0 (6 − 4) + 6 = 8 blocks and an empty server 6 + 6 = 12: S0.
    void dynamoCreditsTheOverlap() {
        const std::string text = lines({
            R"({"timestamp": 0, "input_length": 2048, "hash_ids": [1, 2, 3, 4]})",
            R"({"timestamp": 600000, "input_length": 3072, "hash_ids": [1, 2, 3, 4, 5, 6]})",
            R"({"timestamp": 600000, "input_length": 1536, "hash_ids": [7, 8, 9]})",
        });
        auto t = loadTraceText(text, "dynamo.jsonl", {});
        QVERIFY(t.ok());
        ReplayConfig cfg = fleetConfig(llama3b(), 3, "dynamo:seed=1");
        const auto got = routed(*t, cfg);
        QCOMPARE(got[1], got[0]);
        // The third has no overlap anywhere: the busy server costs more (its 2 prefill blocks
        // and 6 decode blocks): it goes elsewhere.
        QVERIFY(got[2] != got[1]);
    }

    // llm-d's precise profile with its queue and KV-utilisation scorers. Two servers, GPU caches
    // of 1,000 blocks, requests of 128 blocks (64k tokens: seconds of prefill, still running
    // when the next arrives). R1 (t = 0) ties everywhere and lands on some server a. R2
    // (t = 0.5 s) shares R1's first 4 blocks: a scores 2 × 1 (the only holder) + queue 1 (no one
    // waits) + KV 1 − 128/1000 = 3.872, the other 0 + 1 + 1 = 2: a. R3 (t = 1 s) shares nothing:
    // R1 and R2 both run at a (256 of its 1,000 blocks), so no one waits anywhere (queue 1 each),
    // and a's KV score 1 − 0.256 loses to the idle server's 1: the other server.
    void llmdScoresPrefixQueueAndKv() {
        auto request = [](double t, int first, int tail) {
            std::vector<int> ids{first, first + 1, first + 2, first + 3};
            for (int j = 0; j < 124; ++j)
                ids.push_back(tail + j);
            return std::pair{t, ids};
        };
        const Trace t = timed({request(0, 1, 100), request(0.5, 1, 300), request(1, 9, 500)});
        ReplayConfig cfg = fleetConfig(llama3b(), 2, "llm-d:seed=3");
        cfg.gpuCapacityBytes = 1000 * cfg.blockBytes;
        const auto got = routed(t, cfg);
        QCOMPARE(got[1], got[0]);
        QVERIFY(got[2] != got[0]);
        // With the KV events 1 s late, R2 does not see R1's blocks at a: the idle server wins
        // (0 + 1 + 1 against a's 0 + 1 + 0.872).
        cfg.fleet.router = *parseRouter("llm-d:seed=3,event_lag=1");
        const auto late = routed(t, cfg);
        QVERIFY(late[1] != late[0]);
    }

    // random: seeded (the same seed, the same servers), and even.
    void randomIsSeededAndEven() {
        std::vector<std::vector<int>> reqs;
        for (int i = 0; i < 2000; ++i)
            reqs.push_back({i + 1});
        const Trace t = atOnce(reqs);
        auto counts = [&](const char* router) {
            auto r = replayTrace(t, llama3b(), fleetConfig(llama3b(), 4, router));
            if (!r) qFatal("%s", r.message().c_str());
            return r->fleet->requests;
        };
        const auto a = counts("random:seed=7"), b = counts("random:seed=7"), c = counts("random");
        QCOMPARE(a, b);
        QVERIFY(a != c);
        for (auto n : a)
            QVERIFY2(n > 430 && n < 570, std::to_string(n).c_str()); // 500 ± 3 standard deviations
    }

    void parseRouterNamesWhatIsWrong() {
        QVERIFY(parseRouter("sglang").ok());
        auto p = parseRouter("sglang:cache_threshold=0.5,balance_abs_threshold=8");
        QVERIFY(p.ok());
        QCOMPARE(p->cacheThreshold, 0.5);
        QCOMPARE(p->balanceAbsThreshold, 8.0);
        const RouterConfig d;
        QCOMPARE(d.cacheThreshold, 0.3); // sgl-model-gateway 0.3.2's CLI defaults
        QCOMPARE(d.balanceAbsThreshold, 64.0);
        QCOMPARE(d.balanceRelThreshold, 1.5);
        QCOMPARE(d.evictionIntervalS, 120.0);
        QCOMPARE(d.maxTreeSize, 67108864.0);
        QCOMPARE(d.prefixWeight, 2.0); // llm-d v0.8.0's precise profile
        QCOMPARE(d.queueWeight, 1.0);
        QCOMPARE(d.kvWeight, 1.0);
        QCOMPARE(d.cpuTierWeight, 0.8);
        QCOMPARE(d.refreshS, 0.05);
        QCOMPARE(d.hostCacheHitWeight, 0.75); // Dynamo's KV router
        QCOMPARE(d.diskCacheHitWeight, 0.25);
        QCOMPARE(d.overlapScoreCredit, 1.0);
        QCOMPARE(d.prefillLoadScale, 1.0);
        QCOMPARE(d.eventLagS, 0.0); // the routers see the caches as they are unless asked
        QCOMPARE(d.keyBlocks, 4);   // session: ours (a trace names no session)
        QCOMPARE(d.seed, std::uint64_t(0));
        QVERIFY(routerParameters(RouterKind::Session) == std::vector<std::string>{"key_blocks=4"});
        QCOMPARE(routerNames().size(), std::size_t(7));
        auto bad = parseRouter("nginx");
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("expected one of round-robin, random") != std::string::npos);
        bad = parseRouter("sglang:threshold=1");
        QVERIFY(!bad.ok());
        QVERIFY(bad.message().find("cache_threshold") != std::string::npos);
        bad = parseRouter("sglang:cache_threshold=2");
        QVERIFY(bad.message().find("out of range") != std::string::npos);
        bad = parseRouter("random:seed=x");
        QVERIFY(bad.message().find("not a number") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestTraceFleet)
#include "tst_trace_fleet.moc"
