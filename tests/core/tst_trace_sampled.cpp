// trace sweep and trace capacity from samples (kvbe/trace/trace_sampled.h): the sampled sweep
// against the exact one within its stated bound, its figures the mean of two samples swept here
// by hand, the sweep in full by default and with --exact exactly as sweepCapacity gives it; the
// capacity searches started from a guess giving the same servers as from 1, and the sampled
// capacity run giving the exact servers with the samples' own answers within one of them.
#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_generate.h"
#include "kvbe/trace/trace_sample.h"
#include "kvbe/trace/trace_sampled.h"
#include "kvbe/trace/trace_sim.h"
#include "test_support.h"
#include "trace_test_support.h"

#include <QTest>

#include <cmath>
#include <string>

using namespace kvbe;

namespace {

// A generated trace of n requests (docs/trace.md, "Generated traces"): shared system prompts,
// conversations and one-off requests, at rate requests a second.
Trace generated(std::uint64_t n, double rate = 20) {
    return kvbe::test::generatedTrace(n, 11, rate);
}

const Trace& day() {
    static const Trace t = generated(40000);
    return t;
}

const CostModel& cost() {
    static const CostModel cm = kvbe::test::llama3b();
    return cm;
}

// The GPU's cache alone, swept (the classic single-cache curve).
ReplayConfig singleCache() {
    ReplayConfig c;
    c.blockBytes = cost().kvBytesPerToken() * 512;
    c.gpuCapacityBytes = 0;
    return c;
}

SampleMode sampledAt(double rate) {
    SampleMode m;
    m.rate = rate;
    m.exactBelow = 0;
    return m;
}

const std::vector<double>& grid() {
    static const std::vector<double> g = logGrid(2e4, 2e8, 13);
    return g;
}

} // namespace

class TestTraceSampled : public QObject {
    Q_OBJECT
  private slots:
    void sampledSweepWithinItsBound() {
        const SweepRequest q{0, grid(), sampledAt(0.25)};
        auto run = sweepTrace(day(), cost(), singleCache(), q);
        QVERIFY2(run, run ? "" : run.message().c_str());
        auto exact = sweepCapacity(day(), cost(), singleCache(), 0, grid());
        QVERIFY(exact);
        QVERIFY(run->sampling.sampled);
        QCOMPARE(run->sampling.rate, 0.25);
        QVERIFY(run->sampling.mode.find("sampled") == 0);
        QCOMPARE(run->sweep.points.size(), grid().size());
        QCOMPARE(run->hitsBound.size(), grid().size());
        for (std::size_t g = 0; g < grid().size(); ++g) {
            const double s = run->sweep.points[g].anyTier.tokenWeighted;
            const double e = exact->points[g].anyTier.tokenWeighted;
            QVERIFY2(std::abs(s - e) <= run->hitsBound[g],
                     qPrintable(QString("capacity %1: sampled %2, exact %3, bound %4")
                                    .arg(grid()[g])
                                    .arg(s)
                                    .arg(e)
                                    .arg(run->hitsBound[g])));
            QVERIFY(run->hitsBound[g] <= run->hitsError);
            // The capacities reported are the full trace's, not the samples'.
            QCOMPARE(run->sweep.points[g].capacityTokens, grid()[g]);
        }
        // Where the cache holds everything the trunk adds nothing: twice the samples' spread.
        QVERIFY(run->hitsBound.back() < 0.05 && run->hitsBound.back() < run->hitsError / 2);
    }

    void sampledSweepIsTheMeanOfTwoSamples() {
        const SweepRequest q{0, grid(), sampledAt(0.25)};
        auto run = sweepTrace(day(), cost(), singleCache(), q);
        QVERIFY(run);
        // Each sample swept by hand at capacity R·c + (1 − R)·min(c, trunk tokens).
        std::vector<double> hits[2];
        for (int k = 0; k < 2; ++k) {
            const TraceSample t = sampleTrace(day(), 0.25, std::uint64_t(k + 1));
            const double trunk = double(t.trunkBlocks) * 512;
            std::vector<double> g;
            for (const double c : grid())
                g.push_back(0.25 * c + 0.75 * std::min(c, trunk));
            auto s = sweepCapacity(t.trace, cost(), singleCache(), 0, g);
            QVERIFY(s);
            for (const auto& p : s->points)
                hits[k].push_back(p.anyTier.tokenWeighted);
            QCOMPARE(run->sampling.sampleRequests[k], t.trace.size());
        }
        for (std::size_t g = 0; g < grid().size(); ++g)
            QCOMPARE(run->sweep.points[g].anyTier.tokenWeighted, (hits[0][g] + hits[1][g]) / 2);
    }

    void sweepIsFullByDefaultAndWithExact() {
        auto exact = sweepCapacity(day(), cost(), singleCache(), 0, grid());
        QVERIFY(exact);
        SampleMode big; // the defaults: a 40,000-request trace is below them anyway
        SampleMode forced = sampledAt(0);
        forced.exact = true;
        for (const SampleMode& m : {big, forced}) {
            auto run = sweepTrace(day(), cost(), singleCache(), {0, grid(), m});
            QVERIFY(run);
            QVERIFY(!run->sampling.sampled);
            QCOMPARE(run->sampling.rate, 1.0);
            QVERIFY(run->sampling.mode.find("every request") != std::string::npos);
            QCOMPARE(run->hitsError, 0.0);
            QCOMPARE(run->sweep.points.size(), exact->points.size());
            for (std::size_t g = 0; g < grid().size(); ++g) {
                const auto& a = run->sweep.points[g];
                const auto& b = exact->points[g];
                QCOMPARE(a.anyTier.tokenWeighted, b.anyTier.tokenWeighted);
                QCOMPARE(a.anyTier.perRequest, b.anyTier.perRequest);
                QCOMPARE(a.meanTtftAlways, b.meanTtftAlways);
                QCOMPARE(a.ttftSavedVsGpuOnly, b.ttftSavedVsGpuOnly);
            }
        }
        // --exact with a rate too: in full, and it says --exact.
        SampleMode both = sampledAt(0.25);
        both.exact = true;
        auto run = sweepTrace(day(), cost(), singleCache(), {0, grid(), both});
        QVERIFY(run && !run->sampling.sampled);
        QVERIFY(run->sampling.mode.find("--exact") == 0);
    }

    void serversSearchFromAGuessFindsTheSameCount() {
        const Trace t = generated(4000, 40);
        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=1s");
        q.threads = 1;
        auto from1 = traceCapacity(t, cost(), singleCache(), q);
        QVERIFY2(from1, from1 ? "" : from1.message().c_str());
        const int n = from1->serversOf("gpu-only")->servers.value_or(0);
        QVERIFY2(n >= 3, qPrintable(QString::number(n))); // a count worth guessing at
        for (const int guess : {n, n - 1, n + 1, n + 7, 2 * n + 30}) {
            CapacityRequest g = q;
            g.serversFrom.assign(kCapacityRules.size(), guess);
            auto r = traceCapacity(t, cost(), singleCache(), g);
            QVERIFY(r);
            for (std::size_t i = 0; i < kCapacityRules.size(); ++i) {
                QCOMPARE(r->servers[i].servers, from1->servers[i].servers);
                QCOMPARE(r->servers[i].statistic, from1->servers[i].statistic);
                QCOMPARE(r->servers[i].statisticOneFewer, from1->servers[i].statisticOneFewer);
            }
            // The right guess: the count and the one below it, and the unlimited one, per rule.
            if (guess == n) QVERIFY(r->evaluations < from1->evaluations);
        }
    }

    void sampledCapacityGivesTheExactServers() {
        const Trace t = generated(20000, 40);
        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=1s");
        q.threads = 2;
        auto exact = traceCapacity(t, cost(), singleCache(), q);
        QVERIFY(exact);
        auto run = traceCapacityRun(t, cost(), singleCache(), q, sampledAt(0.25));
        QVERIFY2(run, run ? "" : run.message().c_str());
        QVERIFY(run->sampling.sampled);
        QCOMPARE(run->samples.size(), std::size_t(2));
        QVERIFY(run->sampling.mode.find("confirmed on the whole trace") != std::string::npos);
        QCOMPARE(run->result.requests, t.size());
        int spread = 0;
        for (std::size_t i = 0; i < kCapacityRules.size(); ++i) {
            const auto& e = exact->servers[i];
            QCOMPARE(run->result.servers[i].servers, e.servers);
            QCOMPARE(run->result.servers[i].statistic, e.statistic);
            QVERIFY(e.servers);
            // Each sample's own count (its arrivals R times closer: the full trace's load a
            // second) is the exact one or its neighbour.
            for (const auto& s : run->samples) {
                QVERIFY(s.servers[i].servers);
                QVERIFY2(std::abs(*s.servers[i].servers - *e.servers) <= 1,
                         qPrintable(QString("%1: sample %2, exact %3")
                                        .arg(e.rule.c_str())
                                        .arg(*s.servers[i].servers)
                                        .arg(*e.servers)));
            }
            spread = std::max(spread, std::abs(*run->samples[0].servers[i].servers -
                                               *run->samples[1].servers[i].servers));
        }
        QCOMPARE(run->serversError, spread);
        // In full below the threshold, as traceCapacity gives it.
        auto full = traceCapacityRun(t, cost(), singleCache(), q, SampleMode{});
        QVERIFY(full && !full->sampling.sampled && full->samples.empty());
        QCOMPARE(full->result.evaluations, exact->evaluations);
    }

    void sampledLoadHeldIsFoundInFull() {
        const Trace t = generated(20000, 40);
        CapacityRequest q;
        q.target = *parseLatencyTarget("p99=1s");
        q.instances = 2;
        q.serversNeeded = false;
        q.curvePoints = 4;
        q.threads = 2;
        auto exact = traceCapacity(t, cost(), singleCache(), q);
        QVERIFY(exact);
        auto run = traceCapacityRun(t, cost(), singleCache(), q, sampledAt(0.25));
        QVERIFY2(run, run ? "" : run.message().c_str());
        for (std::size_t i = 0; i < kCapacityRules.size(); ++i) {
            const auto& e = exact->loadHeld[i];
            const auto& s = run->result.loadHeld[i];
            QCOMPARE(int(s.outcome), int(e.outcome));
            // Both bisected to q.precision around the same boundary: each holds where it says
            // and fails just above.
            QVERIFY(s.rateScale <= e.failsAt * (1 + 1e-12));
            QVERIFY(e.rateScale <= s.failsAt * (1 + 1e-12));
            QVERIFY(s.statistic <= 1.0 && s.statisticFails > 1.0);
        }
        QVERIFY(run->loadError >= 0 && run->loadError < 1);
    }
};

QTEST_GUILESS_MAIN(TestTraceSampled)
#include "tst_trace_sampled.moc"
