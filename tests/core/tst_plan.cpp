// Planning what to buy (kvbe/plan/plan.h): each configuration's figures against a replay of its
// own and the arithmetic of cost, value and drive life done here by hand; the Pareto fronts and
// the recommendation against a brute-force search; the limits; the price tables; the serving
// stack's settings.
#include "kvbe/base/units.h"
#include "kvbe/cost/cost_model.h"
#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_setup.h"
#include "kvbe/plan/serving_settings.h"
#include "kvbe/scenario/prices.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "plan_test_support.h"
#include "queueing_by_hand.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QRegularExpression>
#include <QTest>

#include <cmath>

using namespace kvbe;

namespace {

const Trace& conversation() {
    return kvbe::test::conversationTrace();
}

const CostModel& llama3b() {
    return kvbe::test::llama3bModel();
}

constexpr double kGiB = kvbe::test::kPlanGiB;

// DRAM at $10 a GiB, a 6.4 TB drive rated 3 DWPD for 5 years at $500, the GPU at $2 an hour and
// two GPUs an instance; DRAM 0 or 64 GiB, 0 or 1 drive, K 1 or 2.
PlanSetup smallSetup() {
    PlanSetup s = kvbe::test::smallPlanSetup({0, 64 * kGiB}, {0, 1});
    return s;
}

ReplayConfig configOf(const PlanSetup& s, const PlanPoint& p) {
    ReplayConfig c = s.base;
    c.storeAfter = p.storeAfter;
    if (p.dramBytes > 0) {
        SimTier t = *s.dram;
        t.capacityBytes = p.dramBytes;
        c.tiers.push_back(t);
    }
    if (p.drives > 0) {
        SimTier t = s.driveTiers[0];
        t.capacityBytes = double(p.drives) * 6.4e12;
        c.tiers.push_back(t);
    }
    return c;
}

// The servers case: 200 requests of a 32-block shared prefix and 1 block of their own, one every
// T = s / 2.5 (s: a miss of all 33 blocks), no GPU cache, no write queue; GPU-only caching or a
// 64 GiB DRAM tier storing every block; p99 within 1.05 s; two GPUs a server, $2 an hour each.
struct ServersCase {
    Trace trace;
    double miss = 0, gap = 0;
    TierPath dram{"dram", 55e9, 0.5e-3};
    PlanSetup setup;
};
ServersCase serversCase() {
    ServersCase c;
    c.miss = llama3b().tMiss(33 * 512);
    c.gap = c.miss / 2.5;
    std::vector<double> arrival;
    for (int i = 0; i < 200; ++i)
        arrival.push_back(i * c.gap);
    c.trace = kvbe::test::makeTrace(arrival, 32, 1);
    PlanSetup& s = c.setup; // its trace is set where the case stays put
    s.cost = &llama3b();
    s.base.blockBytes = traceBlockBytes(llama3b(), 512);
    s.base.gpuCapacityBytes = 0;
    s.base.writeQueue = false;
    s.dram = SimTier{"dram", 0, c.dram, 55e9};
    s.prices.origin = "the test";
    s.prices.dramPerGiB = Price{10, ""};
    s.prices.gpuPerHour["h100-sxm"] = Price{2, ""};
    s.gpuKey = "h100-sxm";
    s.gpusPerInstance = 2;
    s.grid.dramBytes = {0, 64 * kGiB};
    s.grid.drives = {0};
    s.grid.storeAfter = {1};
    s.limits.sloP99S = 1.05 * c.miss;
    return c;
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
}

} // namespace

class TestPlan : public QObject {
    Q_OBJECT
  private slots:
    // GPU-only caching, then DRAM × drives × K: 1 + (1 × 1 + 1 × 1 + 1 × 1) × 2 = 7 points.
    // Each against its own replay: capex = 64 GiB × $10 + drives × $500; GPU-hours a day =
    // (saved under optimal − saved under GPU-only) × 86,400 / duration / 3,600 × 2 GPUs; value
    // a month = hours × 365 / 12 × $2; payback = capex / value; net = value × 12 × 5 − capex;
    // drive life = 3 × 5 × 6.4 TB / (stored bytes × 86,400 / duration).
    void pointsFollowTheirReplays() {
        const PlanSetup s = smallSetup();
        auto plan = planTrace(s);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
        QCOMPARE(plan->points.size(), std::size_t(7));
        QVERIFY(!plan->points[0].offload());
        for (const auto& p : plan->points) {
            auto r = replayTrace(conversation(), llama3b(), configOf(s, p));
            QVERIFY(r.ok());
            const auto& opt = *r->rule("optimal");
            const auto& gpu = *r->rule("gpu-only");
            QCOMPARE(p.ttftMeanS, opt.ttft.mean);
            QCOMPARE(p.ttftP99S, opt.ttft.p99);
            const double capex = (p.dramBytes > 0 ? 640.0 : 0) + 500.0 * double(p.drives);
            QCOMPARE(p.capexUsd, capex);
            const double hours =
                (opt.gpuSecondsSaved - gpu.gpuSecondsSaved) * 86400 / r->durationS / 3600 * 2;
            QVERIFY(close(p.gpuHoursSavedPerDay, hours));
            const double value = hours * 365.0 / 12 * 2;
            QVERIFY(close(p.valuePerMonthUsd, value));
            QVERIFY(close(p.netUsdOverLife, value * 60 - capex));
            if (capex > 0 && value > 0)
                QVERIFY(close(*p.paybackMonths, capex / value));
            else
                QVERIFY(!p.paybackMonths);
            if (p.drives > 0) {
                const double perDay = r->tiers.back().bytesStored * 86400 / r->durationS;
                QVERIFY(close(*p.shortestLifeYears, 3 * 5 * 6.4e12 / perDay));
            } else {
                QVERIFY(!p.shortestLifeYears);
            }
        }
        // K = 2 with a drive carries the drive life of the same sizes at K = 1 (what LMCache,
        // which stores every chunk, would do to them).
        for (const auto& p : plan->points) {
            if (p.storeAfter != 2 || p.drives == 0) continue;
            ReplayConfig all = configOf(s, p);
            all.storeAfter = 1;
            auto r = replayTrace(conversation(), llama3b(), all);
            QVERIFY(r.ok());
            const double perDay = r->tiers.back().bytesStored * 86400 / r->durationS;
            QVERIFY(close(*p.lifeIfEveryBlockStored, 3 * 5 * 6.4e12 / perDay));
            QVERIFY(*p.lifeIfEveryBlockStored < *p.shortestLifeYears);
        }
    }

    // Servers at the latency limit, by hand. GPU-only caching recomputes every request in s:
    // D/D/n, its fewest servers from the closed form (3: two fall behind by s − 2T a request).
    // With the DRAM tier, request 0 misses (s) and every later one loads the prefix and
    // recomputes one block, in at most t_hit < T; on one server request i then starts at most
    // s − T after it arrives and its TTFT is at most s − T + t_hit < s: one server holds p99
    // within 1.05 s. GPUs saved (3 − 1) × 2 = 4, worth 4 × 24 × 365 / 12 × $2 a month.
    void serversAtTheLatencyLimitByHand() {
        ServersCase c = serversCase();
        c.setup.trace = &c.trace;
        const double hit = llama3b().tHit(c.dram, 33 * 512, 32 * 512);
        QVERIFY(hit < c.gap); // the case's premise
        int gpuOnly = 0;
        for (int n = 1; gpuOnly == 0; ++n)
            if (kvbe::test::percentileByHand(kvbe::test::ddcTtfts(200, c.gap, c.miss, n), 99) <=
                *c.setup.limits.sloP99S)
                gpuOnly = n;
        QCOMPARE(gpuOnly, 3);
        auto plan = planTrace(c.setup);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
        QVERIFY(plan->serversSearched);
        QCOMPARE(plan->gpuOnlyServers, std::optional<int>(gpuOnly));
        QCOMPARE(plan->points.size(), std::size_t(2));
        const PlanPoint& none = plan->points[0];
        QCOMPARE(none.serversAtSlo, std::optional<int>(gpuOnly));
        QCOMPARE(none.gpusSaved, std::optional<int>(0));
        QCOMPARE(none.valuePerMonthUsd, 0.0);
        const PlanPoint& dram = plan->points[1];
        QCOMPARE(dram.serversAtSlo, std::optional<int>(1));
        QCOMPARE(dram.gpusSaved, std::optional<int>(4));
        QVERIFY(dram.valueFromGpusSaved);
        const double value = 4 * 24 * 365.0 / 12 * 2;
        QVERIFY(close(dram.valuePerMonthUsd, value));
        QVERIFY(close(dram.netUsdOverLife, value * 12 * 5 - 640));
        QVERIFY(close(*dram.paybackMonths, 640 / value));
        QVERIFY(dram.fails.empty());
        QCOMPARE(plan->recommended, std::optional<std::size_t>(1));
        QVERIFY2(QString::fromStdString(plan->why).contains("on 1 server where GPU-only caching "
                                                            "needs 3 servers: 4 GPUs saved"),
                 plan->why.c_str());
    }

    // Servers counted up to 2 only: GPU-only caching holds the limit at no count (it fails the
    // latency limit, saying so), the DRAM tier on 1, and with no count for GPU-only caching the
    // GPUs saved are unknown: the value is the GPU-hours saved. Without a limit nothing is
    // counted.
    void serversBeyondTheBoundAndWithoutALimit() {
        ServersCase c = serversCase();
        c.setup.trace = &c.trace;
        c.setup.maxServers = 2;
        auto plan = planTrace(c.setup);
        QVERIFY2(plan.ok(), plan.ok() ? "" : plan.message().c_str());
        QVERIFY(!plan->gpuOnlyServers);
        const PlanPoint& none = plan->points[0];
        QVERIFY(!none.serversAtSlo);
        QVERIFY2(QString::fromStdString(none.serversNote).contains("no count up to 2 servers"),
                 none.serversNote.c_str());
        QCOMPARE(none.fails.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(none.fails[0]).startsWith("latency: no count up to 2"));
        const PlanPoint& dram = plan->points[1];
        QCOMPARE(dram.serversAtSlo, std::optional<int>(1));
        QVERIFY(!dram.gpusSaved);
        QVERIFY(!dram.valueFromGpusSaved);
        QVERIFY(close(dram.valuePerMonthUsd, dram.gpuHoursSavedPerDay * 365.0 / 12 * 2));

        c.setup.limits.sloP99S.reset();
        auto free = planTrace(c.setup);
        QVERIFY(free.ok());
        QVERIFY(!free->serversSearched);
        for (const auto& p : free->points) {
            QVERIFY(!p.serversAtSlo && !p.gpusSaved && !p.valueFromGpusSaved);
        }
        // The answer says what it values: prefill time, with no servers counted.
        QVERIFY(free->recommended && free->points[*free->recommended].offload());
        QVERIFY2(QString::fromStdString(free->why).contains(
                     "valued as prefill time a smaller fleet could drop: with no "
                     "p99 limit, servers are not counted"),
                 free->why.c_str());
        // An offload tier names its store-after K, every block included.
        PlanPoint k1;
        k1.drive = "nvme-gen5";
        k1.drives = 4;
        k1.storeAfter = 1;
        k1.tiers.push_back(PlanTier{"nvme-gen5"});
        QCOMPARE(describePlanPoint(k1), std::string("4 x nvme-gen5, store every block"));
        k1.storeAfter = 2;
        QCOMPARE(describePlanPoint(k1), std::string("4 x nvme-gen5, store at the 2nd sighting"));
    }

    // The fronts against a brute-force check of every pair, and the recommendation against
    // the best net value among the points within the limits.
    void frontsAndRecommendationAgreeWithABruteForceSearch() {
        PlanSetup s = smallSetup();
        s.limits.lifeYears = 2;
        auto plan = planTrace(s);
        QVERIFY(plan.ok());
        const auto& pts = plan->points;
        for (const auto& p : pts) {
            bool ttftBeaten = false, hoursBeaten = false;
            for (const auto& q : pts) {
                if (&q == &p) continue;
                const bool cheaper = q.capexUsd < p.capexUsd;
                const bool asCheap = q.capexUsd <= p.capexUsd;
                if ((cheaper && q.ttftMeanS <= p.ttftMeanS) ||
                    (asCheap && q.ttftMeanS < p.ttftMeanS))
                    ttftBeaten = true;
                if ((cheaper && q.gpuHoursSavedPerDay >= p.gpuHoursSavedPerDay) ||
                    (asCheap && q.gpuHoursSavedPerDay > p.gpuHoursSavedPerDay))
                    hoursBeaten = true;
            }
            QCOMPARE(p.onTtftFront, !ttftBeaten);
            QCOMPARE(p.onGpuHoursFront, !hoursBeaten);
            QCOMPARE(p.fails.empty(), !p.shortestLifeYears || *p.shortestLifeYears >= 2);
        }
        const PlanPoint* best = nullptr;
        for (const auto& p : pts)
            if (p.fails.empty() && (!best || p.netUsdOverLife > best->netUsdOverLife)) best = &p;
        QVERIFY(plan->recommended);
        QCOMPARE(&pts[*plan->recommended], best);
        QVERIFY(!plan->why.empty());
        QVERIFY(plan->unmet.empty());
        for (std::size_t i = 1; i < plan->front.size(); ++i)
            QVERIFY(pts[plan->front[i - 1]].capexUsd <= pts[plan->front[i]].capexUsd);
    }

    // A p99 limit between the floor and GPU-only caching's p99, and no budget: GPU-only caching
    // fails the latency limit and every offload point the budget. The sentence says by how much:
    // the budget by the cheapest capex among the points within the latency and life limits.
    void noPointWithinTheLimitsSaysWhichFailsAndByHowMuch() {
        PlanSetup s = smallSetup();
        auto free = planTrace(s);
        QVERIFY(free.ok());
        const PlanPoint& gpuOnly = free->points[0];
        double bestP99 = gpuOnly.ttftP99S;
        for (const auto& p : free->points)
            bestP99 = std::min(bestP99, p.ttftP99S);
        QVERIFY(bestP99 < gpuOnly.ttftP99S);
        s.limits.sloP99S = (bestP99 + gpuOnly.ttftP99S) / 2;
        s.limits.budgetUsd = 0;
        s.limits.lifeYears = 0.001;
        auto plan = planTrace(s);
        QVERIFY(plan.ok());
        QVERIFY(!plan->recommended);
        double cheapest = 1e300;
        for (const auto& p : plan->points)
            if (p.ttftP99S <= *s.limits.sloP99S) cheapest = std::min(cheapest, p.capexUsd);
        const QString unmet = QString::fromStdString(plan->unmet);
        QVERIFY2(unmet.contains("budget limit fails by $" +
                                QString::fromStdString(formatTokens(cheapest))),
                 qPrintable(unmet));
        QVERIFY2(unmet.contains("latency limit fails by"), qPrintable(unmet));
    }

    void impossibleLimitsAndMissingPricesAreRefused_data() {
        QTest::addColumn<QString>("what");
        QTest::addColumn<QString>("expected");
        QTest::newRow("life 0") << "life"
                                << "the life limit";
        QTest::newRow("p99 below the floor") << "slo"
                                             << "no configuration can meet it";
        QTest::newRow("negative budget") << "budget"
                                         << "the budget";
        QTest::newRow("no GPU price") << "gpu"
                                      << "no price per hour for the GPU";
        QTest::newRow("no drive price") << "drive"
                                        << "no price for the drive nvme";
        QTest::newRow("no DRAM price") << "dram"
                                       << "no DRAM price";
    }
    void impossibleLimitsAndMissingPricesAreRefused() {
        QFETCH(QString, what);
        QFETCH(QString, expected);
        PlanSetup s = smallSetup();
        if (what == "life") s.limits.lifeYears = 0;
        if (what == "slo") s.limits.sloP99S = 1e-3;
        if (what == "budget") s.limits.budgetUsd = -1;
        if (what == "gpu") s.prices.gpuPerHour.clear();
        if (what == "drive") s.prices.drive.clear();
        if (what == "dram") s.prices.dramPerGiB.reset();
        auto plan = planTrace(s);
        QVERIFY(!plan.ok());
        QVERIFY2(QString::fromStdString(plan.message()).contains(expected), plan.message().c_str());
    }

    void threadsDoNotChangeThePlanAndProgressCancels() {
        PlanSetup one = smallSetup(), two = smallSetup();
        one.threads = 1;
        two.threads = 2;
        auto a = planTrace(one), b = planTrace(two);
        QVERIFY(a.ok() && b.ok());
        QCOMPARE(a->points.size(), b->points.size());
        for (std::size_t i = 0; i < a->points.size(); ++i) {
            QCOMPARE(a->points[i].ttftMeanS, b->points[i].ttftMeanS);
            QCOMPARE(a->points[i].netUsdOverLife, b->points[i].netUsdOverLife);
        }
        QCOMPARE(a->recommended, b->recommended);
        auto c = planTrace(two, [](double) { return false; });
        QVERIFY(c.ok());
        QVERIFY(c->cancelled);
    }

    // The shipped prices: examples, each with a source; a negative price names its field; a
    // scenario's prices replace single values.
    void priceTables() {
        auto t = builtinPriceTable();
        QVERIFY2(t.ok(), t.ok() ? "" : t.message().c_str());
        QVERIFY(t->example);
        QVERIFY(QString::fromStdString(t->note).contains("EXAMPLE"));
        QVERIFY(t->dramPerGiB && !t->dramPerGiB->source.empty());
        for (const auto& [k, p] : t->gpuPerHour)
            QVERIFY2(!p.source.empty(), k.c_str());
        for (const auto& [k, p] : t->drive)
            QVERIFY2(!p.source.empty(), k.c_str());
        QVERIFY(t->drive.count("nvme-gen5") && t->drive.count("nvme-gen5-mu"));
        auto bad = parsePriceTable(R"({"drive_usd": {"nvme-gen5": {"usd": -1}}})", "p.json");
        QVERIFY(!bad.ok());
        QVERIFY2(bad.message().find("p.json") != std::string::npos &&
                     bad.message().find("drive_usd.nvme-gen5.usd") != std::string::npos,
                 bad.message().c_str());
        auto s = scenarioFromJson(R"({"kvbe_scenario": 1, "prices": {"gpu_usd_per_hour":
            {"h100-sxm": 4}, "drive_usd": {"nvme-gen5": 1200}}})",
                                  "s.kvbe.json", kvbe::test::presets());
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        const PriceTable merged = overridePrices(*t, s->prices);
        QCOMPARE(merged.gpuPerHour.at("h100-sxm").usd, 4.0);
        QCOMPARE(merged.drive.at("nvme-gen5").usd, 1200.0);
        QCOMPARE(merged.dramPerGiB->usd, t->dramPerGiB->usd);
        auto again = scenarioFromJson(scenarioToJson(*s), "again.kvbe.json", kvbe::test::presets());
        QVERIFY(again.ok());
        QCOMPARE(again->prices, s->prices);
        auto negative = scenarioFromJson(R"({"kvbe_scenario": 1, "prices":
            {"dram_usd_per_GiB": -3}})",
                                         "n.kvbe.json", kvbe::test::presets());
        QVERIFY(!negative.ok());
        QVERIFY2(negative.message().find("prices.dram_usd_per_GiB") != std::string::npos,
                 negative.message().c_str());
    }

    // The default scenario's setup: its DRAM tier, and the NVMe presets with a full rating and
    // a price (nvme-gen4's warranty is unknown, so it is left out); a drive asked for without a
    // price is refused.
    void setupFromTheDefaultScenario() {
        const auto& presets = kvbe::test::presets();
        auto sc = defaultScenario(presets);
        QVERIFY(sc.ok());
        auto e = evaluate(*sc, presets);
        QVERIFY(e.ok());
        auto s = planSetup(*e, presets, conversation(), PlanRequest{});
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QVERIFY(s->dram && s->dram->name == "dram-pcie5");
        QStringList drives;
        for (const auto& d : s->driveTiers)
            drives << QString::fromStdString(d.name);
        QCOMPARE(drives, QStringList({"nvme-gen5", "nvme-gen5-mu"}));
        QCOMPARE(s->gpuKey, std::string("h100-sxm"));
        PlanRequest req;
        req.drives = {"nvme-gen5"};
        PriceTable noDrive = *builtinPriceTable();
        noDrive.drive.clear();
        req.prices = noDrive;
        auto refused = planSetup(*e, presets, conversation(), req);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find("no price for the drive 'nvme-gen5'") != std::string::npos,
                 refused.message().c_str());
    }

    // vLLM's settings, per kind of configuration, on a 2-GPU instance (the keys as vLLM's own
    // source reads them: --kv-offloading-size in GiB over all ranks; the OffloadingConnector's
    // kv_connector_extra_config keys cpu_bytes_to_use, block_size, store_threshold and
    // max_tracker_size in vllm/v1/kv_offload/cpu/spec.py and reuse_manager.py).
    //   64 GiB DRAM, K = 1: the two flags, 64.
    //   K = 2, 512-token blocks: cpu_bytes_to_use 64 × 2^30 = 68,719,476,736, block_size 512
    //   (a whole number of vLLM's 16-token blocks), store_threshold 2, max_tracker_size the
    //   182,790 distinct blocks. 100-token blocks are not whole vLLM blocks: no block_size, and
    //   the tracker counts vLLM's blocks, 182,790 × ceil(100 / 16) = 182,790 × 7 = 1,279,530.
    //   With a drive: LMCache's connector, no offload flags. GPU-only: no flags at all.
    void vllmSettings() {
        const PlanSetup s = smallSetup();
        const auto& presets = kvbe::test::presets();
        auto e = evaluate(*defaultScenario(presets), presets);
        QVERIFY(e.ok());
        auto flagLines = [](const std::string& text) {
            QStringList out;
            for (const auto& l : QString::fromStdString(text).split('\n'))
                if (!l.isEmpty() && !l.startsWith('#')) out << l;
            return out;
        };
        PlanPoint p;
        p.dramBytes = 64 * kGiB;
        p.tiers = {PlanTier{"dram", 64 * kGiB, 0, 0, {}}};
        auto v = servingSettings(ServingStack::Vllm, p, s, *e, presets, 512, 182790);
        QVERIFY(v.ok());
        QCOMPARE(flagLines(*v),
                 QStringList{"--kv-offloading-backend native --kv-offloading-size 64"});
        QVERIFY2(v->find("summed over the 2 tensor-parallel ranks") != std::string::npos,
                 v->c_str());

        p.storeAfter = 2;
        auto connectorConfig = [&](std::uint32_t blockTokens) {
            auto text = servingSettings(ServingStack::Vllm, p, s, *e, presets, blockTokens, 182790);
            const QStringList flags = flagLines(*text);
            [&] { QCOMPARE(flags.size(), 1); }();
            const QString line = flags.value(0);
            const QString prefix = "--kv-transfer-config '";
            [&] { QVERIFY2(line.startsWith(prefix) && line.endsWith('\''), qPrintable(line)); }();
            const QString json = line.mid(prefix.size(), line.size() - prefix.size() - 1);
            return QJsonDocument::fromJson(json.toUtf8()).object();
        };
        QJsonObject c = connectorConfig(512);
        QCOMPARE(c.keys(), QStringList({"kv_connector", "kv_connector_extra_config", "kv_role"}));
        QCOMPARE(c["kv_connector"].toString(), QString("OffloadingConnector"));
        QCOMPARE(c["kv_role"].toString(), QString("kv_both"));
        QJsonObject x = c["kv_connector_extra_config"].toObject();
        QCOMPARE(x.keys(), QStringList({"block_size", "cpu_bytes_to_use", "max_tracker_size",
                                        "store_threshold"}));
        QCOMPARE(x["cpu_bytes_to_use"].toInteger(), qint64(68719476736));
        QCOMPARE(x["block_size"].toInt(), 512);
        QCOMPARE(x["store_threshold"].toInt(), 2);
        QCOMPARE(x["max_tracker_size"].toInteger(), qint64(182790));
        x = connectorConfig(100)["kv_connector_extra_config"].toObject();
        QVERIFY(!x.contains("block_size"));
        QCOMPARE(x["max_tracker_size"].toInteger(), qint64(1279530));

        p.drive = "nvme";
        p.drives = 1;
        p.tiers.push_back(PlanTier{"nvme", 6.4e12, 0, 0, {}});
        v = servingSettings(ServingStack::Vllm, p, s, *e, presets, 512, 182790);
        QCOMPARE(flagLines(*v), QStringList{"--kv-transfer-config "
                                            "'{\"kv_connector\":\"LMCacheConnectorV1\","
                                            "\"kv_role\":\"kv_both\"}'"});
        QVERIFY(v->find("LMCACHE_CONFIG_FILE") != std::string::npos);
        QVERIFY2(v->find("so expect the writes of the 1st sighting.") != std::string::npos,
                 v->c_str());
        p.lifeIfEveryBlockStored = 1.5; // the K = 1 point's drive life: short of the 5-year limit
        v = servingSettings(ServingStack::Vllm, p, s, *e, presets, 512, 182790);
        QVERIFY2(v->find("expect the writes of the 1st sighting: the 1 x nvme drives would then "
                         "reach their rated endurance in 1.50 years, short of the 5.0 years") !=
                     std::string::npos,
                 v->c_str());

        v = servingSettings(ServingStack::Vllm, PlanPoint{}, s, *e, presets, 512, 182790);
        QVERIFY(v.ok());
        QVERIFY(flagLines(*v).isEmpty());
    }

    // LMCache's file: only keys of its configuration (lmcache/v1/config.py), sizes in GiB per
    // rank rounded down to 0.1: 64 GiB / 2 = 32.0 of DRAM, 6.4e12 B / 2^30 / 2 = 2980.23 → 2980.2
    // of disk; a local_disk its parser takes ("file://…/"). Without DRAM, local_cpu false and
    // LMCache's default 5.0 GiB staging buffer.
    void lmcacheSettings() {
        const PlanSetup s = smallSetup();
        const auto& presets = kvbe::test::presets();
        auto e = evaluate(*defaultScenario(presets), presets);
        QVERIFY(e.ok());
        auto fields = [&](const PlanPoint& p) {
            auto text = servingSettings(ServingStack::LMCache, p, s, *e, presets, 512, 182790);
            QMap<QString, QString> out;
            for (const auto& l : QString::fromStdString(*text).split('\n')) {
                if (l.isEmpty() || l.startsWith('#')) continue;
                const int colon = int(l.indexOf(": "));
                out[l.left(colon)] = l.mid(colon + 2);
            }
            return out;
        };
        PlanPoint p;
        p.dramBytes = 64 * kGiB;
        p.drive = "nvme";
        p.drives = 1;
        p.tiers = {PlanTier{"dram", 64 * kGiB, 0, 0, {}}, PlanTier{"nvme", 6.4e12, 0, 0, {}}};
        auto f = fields(p);
        QCOMPARE(f.keys(), QStringList({"chunk_size", "local_cpu", "local_disk",
                                        "max_local_cpu_size", "max_local_disk_size"}));
        QCOMPARE(f["chunk_size"], QString("512"));
        QCOMPARE(f["local_cpu"], QString("true"));
        QCOMPARE(f["max_local_cpu_size"], QString("32.0"));
        QCOMPARE(f["max_local_disk_size"], QString("2980.2"));
        QVERIFY(QRegularExpression("^\"file://(.*)/\"$").match(f["local_disk"]).hasMatch());
        p.dramBytes = 0;
        p.tiers.erase(p.tiers.begin());
        f = fields(p);
        QCOMPARE(f["local_cpu"], QString("false"));
        QCOMPARE(f["max_local_cpu_size"], QString("5.0"));
        QCOMPARE(f["max_local_disk_size"], QString("2980.2"));
    }

    // py-kvcache's thresholds for a plan's tiers: only the keys of its v1 format (the format
    // page's own example, tests/fixtures/calibration/pykvcache-v1-format-page.json), each of the
    // same JSON type there, the thresholds the tiers' break-even prefixes rounded up to whole
    // tokens; GPU-only caching has nothing to gate and is refused.
    void pykvcacheSettings() {
        const auto& presets = kvbe::test::presets();
        auto e = evaluate(*defaultScenario(presets), presets);
        QVERIFY(e.ok());
        PlanSetup s = smallSetup();
        s.dram->name = "dram-pcie5";
        PlanPoint p;
        p.dramBytes = 64 * kGiB;
        p.drive = "nvme-gen5";
        p.drives = 1;
        p.tiers = {PlanTier{"dram-pcie5", 64 * kGiB, 0, 0, {}},
                   PlanTier{"nvme-gen5", 7.68e12, 0, 0, {}}};
        auto y = servingSettings(ServingStack::PyKvcache, p, s, *e, presets, 512, 182790);
        QVERIFY2(y.ok(), y.ok() ? "" : y.message().c_str());
        const auto doc = QJsonDocument::fromJson(QByteArray::fromStdString(*y)).object();
        QFile page(QStringLiteral(KVBE_FIXTURES "/calibration/pykvcache-v1-format-page.json"));
        QVERIFY(page.open(QIODevice::ReadOnly));
        const auto format = QJsonDocument::fromJson(page.readAll()).object();
        QCOMPARE(doc.keys(), format.keys());
        for (const auto& k : doc.keys())
            QCOMPARE(doc[k].type(), format[k].type());
        auto pStar = [&](const char* tier) {
            for (std::size_t i = 0; i < e->scenario.tiers.size(); ++i)
                if (e->scenario.tiers[i].preset == tier)
                    return std::ceil(*e->cost.breakevenPrefix(e->tiers[i]));
            return -1.0;
        };
        QCOMPARE(doc["break_even_mem_tokens"].toDouble(), pStar("dram-pcie5"));
        QCOMPARE(doc["break_even_ssd_tokens"].toDouble(), pStar("nvme-gen5"));
        auto none = servingSettings(ServingStack::PyKvcache, PlanPoint{}, s, *e, presets, 512, 1);
        QVERIFY(!none.ok());
        QVERIFY(none.message().find("GPU-only") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestPlan)
#include "tst_plan.moc"
