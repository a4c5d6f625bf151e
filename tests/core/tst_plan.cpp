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
#include "test_support.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>

#include <cmath>

using namespace kvbe;

namespace {

const Trace& conversation() {
    static const Trace t = [] {
        auto r = loadTrace(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl", {});
        if (!r) qFatal("%s", r.message().c_str());
        return std::move(*r);
    }();
    return t;
}

const CostModel& llama3b() {
    static const CostModel c = [] {
        CostInputs in;
        in.model = kvbe::test::preset("meta-llama/Llama-3.2-3B");
        in.kvDtype = KvDtype::BF16;
        in.peakFlops = 989e12;
        in.utilisation = 0.5;
        auto cm = CostModel::create(in);
        if (!cm) qFatal("%s", cm.message().c_str());
        return *cm;
    }();
    return c;
}

constexpr double kGiB = 1024.0 * 1024 * 1024;

// DRAM at $10 a GiB, a 6.4 TB drive rated 3 DWPD for 5 years at $500, the GPU at $2 an hour and
// two GPUs an instance; DRAM 0 or 64 GiB, 0 or 1 drive, K 1 or 2.
PlanSetup smallSetup() {
    PlanSetup s;
    s.trace = &conversation();
    s.cost = &llama3b();
    s.base.blockBytes = traceBlockBytes(llama3b(), 512);
    s.base.gpuCapacityBytes = 40e9;
    s.base.writeQueue = true;
    s.dram = SimTier{"dram", 0, TierPath{"dram", 55e9, 0.5e-3}, 55e9};
    SimTier nvme{"nvme", 0, TierPath{"nvme", 14e9, 1e-3}, 10e9};
    nvme.drive.model = "mixed use";
    nvme.drive.writesPerDay = 3;
    nvme.drive.warrantyYears = 5;
    nvme.drive.capacityBytes = 6.4e12;
    s.driveTiers = {nvme};
    s.prices.origin = "the test";
    s.prices.dramPerGiB = Price{10, ""};
    s.prices.gpuPerHour["h100-sxm"] = Price{2, ""};
    s.prices.drive["nvme"] = Price{500, ""};
    s.gpuKey = "h100-sxm";
    s.gpusPerInstance = 2;
    s.grid.dramBytes = {0, 64 * kGiB};
    s.grid.drives = {0, 1};
    s.grid.storeAfter = {1, 2};
    s.limits.lifeYears = 5;
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
            const double hours = (opt.gpuSecondsSaved - gpu.gpuSecondsSaved) * 86400 /
                                 r->durationS / 3600 * 2;
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
        QTest::newRow("life 0") << "life" << "the life limit";
        QTest::newRow("p99 below the floor") << "slo" << "no configuration can meet it";
        QTest::newRow("negative budget") << "budget" << "the budget";
        QTest::newRow("no GPU price") << "gpu" << "no price per hour for the GPU";
        QTest::newRow("no drive price") << "drive" << "no price for the drive nvme";
        QTest::newRow("no DRAM price") << "dram" << "no DRAM price";
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
        QVERIFY2(QString::fromStdString(plan.message()).contains(expected),
                 plan.message().c_str());
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
        ReplayConfig base;
        base.blockBytes = traceBlockBytes(e->cost, 512);
        auto s = planSetup(*e, presets, conversation(), base, PlanRequest{});
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
        auto refused = planSetup(*e, presets, conversation(), base, req);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find("no price for the drive 'nvme-gen5'") !=
                     std::string::npos,
                 refused.message().c_str());
    }

    // The serving stack's settings: vLLM's size in GiB summed over the tensor-parallel ranks
    // (64 GiB), and with K = 2 the connector's store_threshold with the bytes (64 × 2^30);
    // LMCache's sizes per rank (64 / 2 = 32 GiB of DRAM; 6.4e12 B / 2^30 / 2 = 2980.2 GiB of
    // disk); py-kvcache's thresholds as JSON.
    void servingSettingsForAPoint() {
        const PlanSetup s = smallSetup();
        PlanPoint p;
        p.dramBytes = 64 * kGiB;
        p.drive = "nvme";
        p.drives = 1;
        p.tiers = {PlanTier{"dram", 64 * kGiB, 0, 0, {}}, PlanTier{"nvme", 6.4e12, 0, 0, {}}};
        const auto& presets = kvbe::test::presets();
        auto e = evaluate(*defaultScenario(presets), presets);
        QVERIFY(e.ok());
        auto v = servingSettings(ServingStack::Vllm, p, s, *e, presets, 512, 182790);
        QVERIFY(v.ok());
        QVERIFY2(v->find("--kv-offloading-backend native --kv-offloading-size 64\n") !=
                     std::string::npos,
                 v->c_str());
        QVERIFY(v->find("lmcache") != std::string::npos); // the NVMe tier needs LMCache
        p.storeAfter = 2;
        v = servingSettings(ServingStack::Vllm, p, s, *e, presets, 512, 182790);
        QVERIFY(v.ok());
        QVERIFY2(v->find("\"cpu_bytes_to_use\":68719476736,\"store_threshold\":2,"
                         "\"max_tracker_size\":182790") != std::string::npos,
                 v->c_str());
        auto l = servingSettings(ServingStack::LMCache, p, s, *e, presets, 512, 182790);
        QVERIFY(l.ok());
        for (const char* want : {"\nchunk_size: 512\n", "\nlocal_cpu: true\n",
                                 "\nmax_local_cpu_size: 32.0\n", "\nlocal_disk: \"file://",
                                 "\nmax_local_disk_size: 2980.2\n"})
            QVERIFY2(l->find(want) != std::string::npos, l->c_str());
        PlanSetup named = s;
        named.dram->name = "dram-pcie5";
        p.tiers[0].name = "dram-pcie5";
        p.drive = p.tiers[1].name = "nvme-gen5";
        auto y = servingSettings(ServingStack::PyKvcache, p, named, *e, presets, 512, 182790);
        QVERIFY2(y.ok(), y.ok() ? "" : y.message().c_str());
        const auto doc = QJsonDocument::fromJson(QByteArray::fromStdString(*y)).object();
        QVERIFY(doc.contains("break_even_ssd_tokens") && doc.contains("break_even_mem_tokens"));
    }
};

QTEST_GUILESS_MAIN(TestPlan)
#include "tst_plan.moc"
