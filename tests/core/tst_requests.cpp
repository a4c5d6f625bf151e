// One request per command (kvbe/trace/replay_request.h, kvbe/plan/plan_setup.h): core assembles
// the replay from a request and checks it once, and every failure names the field it is about,
// which is what the CLI maps to its flag and the window to its control.
#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_setup.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/replay_request.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "plan_test_support.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <QTest>

using namespace kvbe;

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

const Evaluation& defaultEvaluation() {
    static const Evaluation e = [] {
        auto sc = defaultScenario(kvbe::test::presets());
        if (!sc) qFatal("%s", sc.message().c_str());
        auto ev = evaluate(*sc, kvbe::test::presets());
        if (!ev) qFatal("%s", ev.message().c_str());
        return std::move(*ev);
    }();
    return e;
}

const Trace& conversation() {
    return kvbe::test::conversationTrace();
}

} // namespace

class TestRequests : public QObject {
    Q_OBJECT
  private slots:
    // The replay from a request: the block's bytes, the GPU's capacity and each tier's as asked
    // (bytes as given, blocks times the block's bytes), the scenario's tiers by preset key, the
    // per-tier settings, and the rest as asked.
    void replayFromARequest() {
        const Evaluation& e = defaultEvaluation();
        QVERIFY(e.scenario.tiers.size() >= 2);
        ReplayRequest r;
        r.gpuCache = Capacity{Capacity::Unit::Bytes, 40e9};
        r.tierCapacities = {Capacity{Capacity::Unit::Blocks, 1000}, std::nullopt};
        r.writeBufferBytes = 2 * kGiB;
        r.sharedLinks = {e.scenario.tiers[0].preset};
        r.tierWrites = {{e.scenario.tiers[1].preset, 3e9}};
        r.policy = EvictionPolicy::S3Fifo;
        r.placement = Placement::Cascade;
        r.writeQueue = false;
        r.instances = 4;
        r.storeAfter = 3;
        r.rateScale = 2;
        auto s = replaySetup(r, e, 512);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        const ReplayConfig& c = s->config;
        const double block = traceBlockBytes(e.cost, 512);
        QCOMPARE(c.blockBytes, block);
        QCOMPARE(c.gpuCapacityBytes, 40e9);
        QCOMPARE(c.tiers.size(), e.scenario.tiers.size());
        QCOMPARE(c.tiers[0].name, e.scenario.tiers[0].preset);
        QCOMPARE(c.tiers[0].capacityBytes, 1000 * block);
        QCOMPARE(c.tiers[1].capacityBytes, kUnlimited);
        QVERIFY(c.tiers[0].sharedLink && !c.tiers[1].sharedLink);
        QCOMPARE(c.tiers[1].writeBps, 3e9);
        for (const auto& t : c.tiers)
            QCOMPARE(t.writeBufferBytes, 2 * kGiB);
        QVERIFY(c.policy == EvictionPolicy::S3Fifo);
        QVERIFY(c.placement == Placement::Cascade);
        QVERIFY(!c.writeQueue);
        QCOMPARE(c.instances, 4);
        QCOMPARE(c.storeAfter, 3);
        QCOMPARE(c.rateScale, 2.0);
        std::vector<int> every;
        for (std::size_t i = 0; i < e.scenario.tiers.size(); ++i)
            every.push_back(int(i));
        QCOMPARE(s->scenarioTierOf, every);
        // Without a GPU cache: vLLM's default, as defaultGpuCacheBytes gives it.
        auto d = replaySetup(ReplayRequest{}, e, 512);
        QVERIFY(d.ok());
        QCOMPARE(d->config.gpuCapacityBytes, *defaultGpuCacheBytes(e));
        QVERIFY(d->config.writeQueue);
    }

    // The window's way: a tier of capacity 0 is left out, the others named as the scenario
    // names them, and each replay tier knows its scenario tier.
    void emptyTiersLeftOutAndNamedAsTheScenario() {
        const Evaluation& e = defaultEvaluation();
        ReplayRequest r;
        r.leaveOutEmptyTiers = true;
        r.tiersNamedAsScenario = true;
        r.everyLinkShared = true;
        // The second tier 8 GiB, every other one 0.
        for (std::size_t i = 0; i < e.scenario.tiers.size(); ++i)
            r.tierCapacities.push_back(Capacity{Capacity::Unit::Bytes, i == 1 ? 8 * kGiB : 0});
        auto s = replaySetup(r, e, 512);
        QVERIFY(s.ok());
        QCOMPARE(s->config.tiers.size(), std::size_t(1));
        QCOMPARE(s->config.tiers[0].name, e.tiers[1].name);
        QCOMPARE(s->config.tiers[0].capacityBytes, 8 * kGiB);
        QVERIFY(s->config.tiers[0].sharedLink);
        QCOMPARE(s->scenarioTierOf, (std::vector<int>{1}));
    }

    // Each bad field fails naming that field, the value in the sentence.
    void eachReplayFieldNamesItself_data() {
        QTest::addColumn<int>("field");
        QTest::addColumn<QString>("says");
        QTest::newRow("store after 0") << int(RequestField::StoreAfter) << "'0': expected";
        QTest::newRow("store after 256") << int(RequestField::StoreAfter) << "'256'";
        QTest::newRow("rate scale 0") << int(RequestField::RateScale) << "'0': expected a load";
        QTest::newRow("write buffer 0") << int(RequestField::WriteBuffer) << "'0'";
        QTest::newRow("tier write to no tier")
            << int(RequestField::TierWrite) << "tape: not a tier of this replay";
        QTest::newRow("shared link of no tier")
            << int(RequestField::SharedLink) << "tape: not a tier of this replay";
        QTest::newRow("instances -1") << int(RequestField::Instances) << "'-1'";
        QTest::newRow("too many capacities") << int(RequestField::Tiers) << "tier capacities";
        QTest::newRow("no GPU memory") << int(RequestField::GpuCache) << "not a preset";
    }
    void eachReplayFieldNamesItself() {
        QFETCH(int, field);
        QFETCH(QString, says);
        Evaluation e = defaultEvaluation();
        ReplayRequest r;
        const QString row = QTest::currentDataTag();
        if (row == "store after 0") r.storeAfter = 0;
        if (row == "store after 256") r.storeAfter = kMaxStoreAfter + 1;
        if (row == "rate scale 0") r.rateScale = 0;
        if (row == "write buffer 0") r.writeBufferBytes = 0;
        if (row == "tier write to no tier") r.tierWrites = {{"tape", 1e9}};
        if (row == "shared link of no tier") r.sharedLinks = {"tape"};
        if (row == "instances -1") r.instances = -1;
        if (row == "too many capacities") r.tierCapacities.resize(e.scenario.tiers.size() + 1);
        if (row == "no GPU memory") e.gpu.reset();
        auto s = replaySetup(r, e, 512);
        QVERIFY(!s.ok());
        QCOMPARE(int(s.error().field), field);
        QVERIFY2(QString::fromStdString(s.message()).contains(says), s.message().c_str());
    }

    // The plan's limits and grid, each checked by core and named.
    void eachPlanFieldNamesItself_data() {
        QTest::addColumn<int>("field");
        QTest::addColumn<QString>("says");
        QTest::newRow("life 0") << int(RequestField::Life) << "'0': expected the years";
        QTest::newRow("life 101") << int(RequestField::Life) << "'101'";
        QTest::newRow("p99 -1") << int(RequestField::SloP99) << "'-1'";
        QTest::newRow("budget -5") << int(RequestField::Budget) << "'-5': expected US dollars";
        QTest::newRow("K 0") << int(RequestField::StoreAfterGrid) << "'1,0': 0 is out of range";
        QTest::newRow("drives -1") << int(RequestField::DriveCounts) << "'0,-1'";
        QTest::newRow("DRAM -1") << int(RequestField::DramSizes) << "expected sizes";
    }
    void eachPlanFieldNamesItself() {
        QFETCH(int, field);
        QFETCH(QString, says);
        PlanRequest req;
        PlanGrid g = defaultPlanGrid();
        const QString row = QTest::currentDataTag();
        if (row == "life 0") req.limits.lifeYears = 0;
        if (row == "life 101") req.limits.lifeYears = 101;
        if (row == "p99 -1") req.limits.sloP99S = -1;
        if (row == "budget -5") req.limits.budgetUsd = -5;
        if (row == "K 0") g.storeAfter = {1, 0};
        if (row == "drives -1") g.drives = {0, -1};
        if (row == "DRAM -1") g.dramBytes = {-1};
        req.grid = g;
        auto ok = checkPlanRequest(req);
        QVERIFY(!ok.ok());
        QCOMPARE(int(ok.error().field), field);
        QVERIFY2(QString::fromStdString(ok.message()).contains(says), ok.message().c_str());
        // planSetup checks the same, first.
        auto s = planSetup(defaultEvaluation(), kvbe::test::presets(), conversation(), req);
        QVERIFY(!s.ok());
        QCOMPARE(int(s.error().field), field);
        QVERIFY(checkPlanLimits(PlanLimits{}).ok());
    }

    // A drive that is no NVMe preset is the drives' field; the replay's fields pass through.
    void planSetupNamesTheDrivesAndTheReplay() {
        PlanRequest req;
        req.drives = {"dram-pcie5"};
        auto s = planSetup(defaultEvaluation(), kvbe::test::presets(), conversation(), req);
        QVERIFY(!s.ok());
        QVERIFY(s.error().field == RequestField::Drives);
        QVERIFY2(s.message().find("'dram-pcie5': not an NVMe tier preset") != std::string::npos,
                 s.message().c_str());
        PlanRequest bad;
        bad.replay.rateScale = -1;
        auto r = planSetup(defaultEvaluation(), kvbe::test::presets(), conversation(), bad);
        QVERIFY(!r.ok());
        QVERIFY(r.error().field == RequestField::RateScale);
    }

    // The plan's tiers take the request's per-tier settings (they were dropped before: the
    // plan rebuilt its tiers from the scenario and left the write buffer at 8 GiB); the base
    // replay is the request's, without tiers and storing every block.
    void planTiersTakeTheRequestsSettings() {
        PlanRequest req;
        req.replay.writeBufferBytes = 1 * kGiB;
        req.replay.everyLinkShared = true;
        req.replay.gpuCache = Capacity{Capacity::Unit::Bytes, 30e9};
        req.replay.instances = 3;
        req.replay.storeAfter = 4; // the plan's to choose: not read
        req.replay.tierCapacities = {Capacity{Capacity::Unit::Bytes, 1}}; // likewise
        auto s = planSetup(defaultEvaluation(), kvbe::test::presets(), conversation(), req);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QVERIFY(s->dram);
        QCOMPARE(s->dram->writeBufferBytes, 1 * kGiB);
        QVERIFY(s->dram->sharedLink);
        QCOMPARE(s->dram->capacityBytes, kUnlimited);
        QVERIFY(!s->driveTiers.empty());
        for (const auto& d : s->driveTiers) {
            QCOMPARE(d.writeBufferBytes, 1 * kGiB);
            QVERIFY(d.sharedLink);
        }
        QVERIFY(s->base.tiers.empty());
        QCOMPARE(s->base.gpuCapacityBytes, 30e9);
        QCOMPARE(s->base.instances, 3);
        QCOMPARE(s->base.storeAfter, 1);
        QCOMPARE(s->base.blockBytes,
                 traceBlockBytes(defaultEvaluation().cost, conversation().summary.blockTokens));
    }

    // The limit below what any configuration can meet is the latency field's, as the CLI's
    // --slo-p99 and the window's p99 field show it.
    void planBelowTheFloorNamesTheLatencyLimit() {
        PlanRequest req;
        req.limits.sloP99S = 1e-6;
        PlanGrid g;
        g.dramBytes = {0};
        g.drives = {0};
        g.storeAfter = {1};
        req.grid = g;
        auto s = planSetup(defaultEvaluation(), kvbe::test::presets(), conversation(), req);
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        auto p = planTrace(*s);
        QVERIFY(!p.ok());
        QVERIFY(p.error().field == RequestField::SloP99);
        QVERIFY(p.message().find("no configuration can meet it") != std::string::npos);
    }

    // An Error converts to a RequestError about no field.
    void anErrorNamesNoField() {
        RequestResult<int> r = Error{"the trace"};
        QVERIFY(!r.ok());
        QVERIFY(r.error().field == RequestField::None);
        QCOMPARE(r.message(), std::string("the trace"));
        QCOMPARE(toString(RequestField::StoreAfter), std::string_view("store after"));
    }
};

QTEST_GUILESS_MAIN(TestRequests)
#include "tst_requests.moc"
