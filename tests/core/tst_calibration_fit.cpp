// Fitting calibration files: utilisation, fixed costs and the tier, per layer and across models,
// implied break-even from py-kvcache curves, amplification and ramp, and adopting a fit.
#include "calibration_test_support.h"
#include "illustrative_scenario.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/calibration/pykvcache.h"
#include "pykvcache_format_check.h"
#include "test_support.h"

#include <QDir>
#include <QPointF>
#include <QTemporaryDir>
#include <random>

using namespace kvbe;
using kvbe::test::fixture;
using kvbe::test::kFixtures;
using kvbe::test::parse;
using kvbe::test::presets;

namespace {

// The inputs synthetic measurements are made with: a preset at u of an H100's 989 TFLOP/s.
CostInputs h100Inputs(const char* model, double u) {
    CostInputs in;
    in.model = test::preset(model);
    in.peakFlops = 989e12;
    in.utilisation = u;
    return in;
}

} // namespace

class TestCalibrationFit : public QObject {
    Q_OBJECT
  private slots:
    // Synthetic TTFTs from known parameters with 1 % multiplicative noise: the fit must recover
    // utilisation within 3 %, the shared overhead within 0.5 ms, the tier's bandwidth within 5 %
    // and its fixed cost within 0.5 ms.
    void fitRecoversUtilisationOverheadAndTier() {
        const double u = 0.42, overhead = 0.004, bw = 11e9, tFixed = 0.002;
        const CostInputs truth = h100Inputs("meta-llama/Llama-3.2-3B", u);
        const auto model = *CostModel::create(truth);
        std::mt19937 rng(20261129);
        std::normal_distribution<double> noise(0, 0.01);
        Calibration c;
        for (double n :
             {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0})
            c.prefill.push_back({n, (overhead + model.tMiss(n)) * (1 + noise(rng))});
        const TierPath tier{"nvme", bw, tFixed};
        for (double n : {1024.0, 4096.0, 16384.0, 65536.0})
            for (double f : {0.25, 0.5, 0.9})
                c.hits.push_back(
                    {n, n * f, "nvme", (overhead + model.tHit(tier, n, n * f)) * (1 + noise(rng))});
        CostInputs start = truth;
        start.utilisation = 0.5;
        auto fit = fitCalibration(c, start, {});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        const auto& p = fit->params;
        KVBE_COMPARE_REL(*p.utilisation, u, 0.03);
        QVERIFY(!p.rampHalfTokens);
        QVERIFY2(std::abs(p.overheadS - overhead) < 5e-4, qPrintable(QString::number(p.overheadS)));
        KVBE_COMPARE_REL(p.tiers.at("nvme").bandwidthBps, bw, 0.05);
        QVERIFY2(std::abs(p.tiers.at("nvme").tFixedS - tFixed) < 5e-4,
                 qPrintable(QString::number(p.tiers.at("nvme").tFixedS)));
        QVERIFY(p.rmsRelativeResidual < 0.03);
        QCOMPARE(fit->residuals.size(), c.prefill.size() + c.hits.size());
        QVERIFY(fit->breakevenPrefix.at("nvme").has_value());
    }

    // Hits whose times do not grow with the prefix give no bandwidth: the nominal tier's is
    // used, and the fit names the tier in bandwidthNominal so that no reader shows it as fitted.
    void aBandwidthNoHitGaveIsNamed() {
        const CostInputs truth = h100Inputs("meta-llama/Llama-3.2-3B", 0.42);
        const auto model = *CostModel::create(truth);
        Calibration c;
        for (double n : {1024.0, 4096.0, 16384.0})
            c.prefill.push_back({n, model.tMiss(n)});
        // The same hit time at every prefix: the load is lost in it.
        for (double n : {4096.0, 16384.0, 65536.0})
            c.hits.push_back({n, n / 2, "dram", model.tMiss(n / 2) + 0.004});
        const std::vector<TierPath> nominal = {TierPath{"dram", 55e9, 0.002}};
        auto fit = fitCalibration(c, truth, nominal, FitOptions{false, false});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        QCOMPARE(fit->bandwidthNominal, std::set<std::string>{"dram"});
        QCOMPARE(fit->params.tiers.at("dram").bandwidthBps, 55e9);
    }

    // One model's fit states the per-layer form for tiers fitted from hits: t_layer = t_fixed /
    // 28 on Llama 3.2 3B (every layer holds KV), t0 = 0. A tier known only from its transfers
    // keeps a constant fixed cost (a drive's latency is no per-layer cost). adoptFit carries the
    // form and the model fitted on into the scenario.
    void calibrationFitIsPerLayer() {
        const CostInputs truth = h100Inputs("meta-llama/Llama-3.2-3B", 0.42);
        const auto model = *CostModel::create(truth);
        Calibration c;
        for (double n : {1024.0, 4096.0, 16384.0, 65536.0})
            c.prefill.push_back({n, model.tMiss(n)});
        const TierPath tier{"nvme", 11e9, 0.0056};
        for (double n : {4096.0, 16384.0, 65536.0})
            c.hits.push_back({n, n / 2, "nvme", model.tHit(tier, n, n / 2)});
        c.tiers.push_back(
            {"dram", {{1e6, 0.0005 + 1e6 / 50e9}, {1e9, 0.0005 + 1e9 / 50e9}}, {}, {}});
        auto fit = fitCalibration(c, truth, {}, FitOptions{false, false});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        QVERIFY(fit->fixedCostForm == FixedCostForm::PerLayer);
        QCOMPARE(fit->fixedCostWhy, std::string(kOneModelFixedCostForm));
        QCOMPARE(fit->fixedFromHits, std::set<std::string>{"nvme"});
        QVERIFY(fit->bandwidthNominal.empty()); // nvme's from its hits, dram's from transfers
        const auto& nvme = fit->params.tiers.at("nvme");
        QVERIFY2(std::abs(nvme.tFixedS - 0.0056) < 1e-6, qPrintable(QString::number(nvme.tFixedS)));
        QCOMPARE(nvme.layers, 28);
        KVBE_COMPARE_REL(nvme.tLayerS, nvme.tFixedS / 28, 1e-12);
        const auto& dram = fit->params.tiers.at("dram");
        QCOMPARE(dram.tLayerS, 0.0);
        KVBE_COMPARE_REL(dram.tFixedS, 0.0005, 1e-6);
        QCOMPARE(fit->params.fittedOn, (std::vector<FittedModel>{{"meta-llama/Llama-3.2-3B", 28}}));
        bool said = false;
        for (const auto& n : fit->notes)
            said = said || n == std::string("fixed cost: ") + kOneModelFixedCostForm;
        QVERIFY(said);

        Scenario s = *defaultScenario(presets());
        s.tiers.push_back({"nvme", "", 5, 1});
        s.tiers.push_back({"dram", "", 5, 1});
        const auto adopted = adoptFit(s, fit->params);
        QCOMPARE(adopted.fittedOn, fit->params.fittedOn);
        const auto& an = adopted.tiers[adopted.tiers.size() - 2];
        QCOMPARE(an.tFixedMs, 0.0);
        KVBE_COMPARE_REL(an.tLayerUs, nvme.tFixedS / 28 * 1e6, 1e-12);
        const auto& ad = adopted.tiers.back();
        KVBE_COMPARE_REL(ad.tFixedMs, 0.5, 1e-6);
        QCOMPARE(ad.tLayerUs, 0.0);
    }

    // The two parts from fixed costs on models of different depths, least squares on [1, L]
    // worked out here in closed form; one depth gives the per-layer form; a negative part is
    // refitted at 0. Times in ms.
    void fixedCostLineByHand_data() {
        QTest::addColumn<QList<QPointF>>("samples"); // (layers, t_fixed ms)
        QTest::addColumn<double>("t0");
        QTest::addColumn<double>("tLayer");
        QTest::addColumn<int>("form");
        const int perLayer = int(FixedCostForm::PerLayer), both = int(FixedCostForm::Both);
        QTest::newRow("one model") << QList<QPointF>{{28, 5.6}} << 0.0 << 0.2 << perLayer;
        QTest::newRow("one model twice")
            << QList<QPointF>{{28, 5.0}, {28, 6.2}} << 0.0 << 5.6 / 28 << perLayer;
        QTest::newRow("two models") << QList<QPointF>{{28, 4.8}, {36, 5.6}} << 2.0 << 0.1 << both;
        // Three depths: slope Sxy / Sxx and intercept ȳ − slope · x̄, by hand below.
        const double xm = (28 + 36 + 40) / 3.0, ym = (4.8 + 5.6 + 6.4) / 3;
        const double sxx = (28 - xm) * (28 - xm) + (36 - xm) * (36 - xm) + (40 - xm) * (40 - xm);
        const double sxy = (28 - xm) * (4.8 - ym) + (36 - xm) * (5.6 - ym) + (40 - xm) * (6.4 - ym);
        QTest::newRow("three models") << QList<QPointF>{{28, 4.8}, {36, 5.6}, {40, 6.4}}
                                      << ym - sxy / sxx * xm << sxy / sxx << both;
        // Slope 0.2, intercept −2.8: t0 held at 0, t_layer = Σ L·t / Σ L².
        QTest::newRow("negative t0") << QList<QPointF>{{28, 2.8}, {36, 4.4}} << 0.0
                                     << (28 * 2.8 + 36 * 4.4) / (28.0 * 28 + 36 * 36) << perLayer;
        QTest::newRow("falls with depth")
            << QList<QPointF>{{28, 5.0}, {36, 4.0}} << 4.5 << 0.0 << int(FixedCostForm::Constant);
    }

    void fixedCostLineByHand() {
        QFETCH(QList<QPointF>, samples);
        QFETCH(double, t0);
        QFETCH(double, tLayer);
        QFETCH(int, form);
        std::vector<FixedCostSample> in;
        for (const auto& p : samples)
            in.push_back({int(p.x()), p.y() * 1e-3});
        const auto line = fitFixedCostLine(in);
        QCOMPARE(int(line.form), form);
        QVERIFY2(std::abs(line.t0S - t0 * 1e-3) < 1e-12, qPrintable(QString::number(line.t0S)));
        QVERIFY2(std::abs(line.tLayerS - tLayer * 1e-3) < 1e-12,
                 qPrintable(QString::number(line.tLayerS)));
        QVERIFY(!line.why.empty());
    }

    // One node, two models: each calibration fitted with its own model, then t0 and t_layer
    // across them. Hits made with t_fixed = 2 ms + L × 0.1 ms: 4.8 ms on Llama 3.2 3B (28
    // layers), 5.6 ms on Qwen3 4B (36).
    void fitAcrossModelsSeparatesParts() {
        std::vector<ModelFit> fits;
        for (const auto& [id, layers] : {std::pair{"meta-llama/Llama-3.2-3B", 28},
                                         std::pair{"Qwen/Qwen3-4B-Instruct-2507", 36}}) {
            const CostInputs truth = h100Inputs(id, 0.45);
            const auto model = *CostModel::create(truth);
            const TierPath tier{"nvme", 11e9, 0.002 + layers * 0.0001};
            Calibration c;
            c.source = id;
            for (double n : {1024.0, 4096.0, 16384.0, 65536.0})
                c.prefill.push_back({n, model.tMiss(n)});
            for (double n : {4096.0, 16384.0, 65536.0})
                c.hits.push_back({n, n / 2, "nvme", model.tHit(tier, n, n / 2)});
            auto fit = fitCalibration(c, truth, {}, FitOptions{false, false});
            QVERIFY(fit.ok());
            fits.push_back({id, {id, layers}, *fit});
        }
        const auto lines = fixedCostsAcrossModels(fits);
        QCOMPARE(lines.size(), size_t(1));
        const auto& l = lines.at("nvme");
        QVERIFY(l.form == FixedCostForm::Both);
        QVERIFY2(std::abs(l.t0S - 0.002) < 1e-6, qPrintable(QString::number(l.t0S)));
        QVERIFY2(std::abs(l.tLayerS - 0.0001) < 1e-8, qPrintable(QString::number(l.tLayerS)));
        const auto p = withFixedCostLines(fits[0], lines, fits);
        const auto& t = p.tiers.at("nvme");
        QCOMPARE(t.layers, 28);
        KVBE_COMPARE_REL(t.tFixedS, l.t0S + 28 * l.tLayerS, 1e-12);
        KVBE_COMPARE_REL(t.t0(), l.t0S, 1e-9);
        QCOMPARE(p.fittedOn.size(), size_t(2));
        QCOMPARE(p.fittedOn[1].layers, 36);
        // Adopted into a scenario: t0 and t_layer, and on Qwen3 4B the fixed cost of 36 layers.
        Scenario s = *defaultScenario(presets());
        s.tiers = {{"nvme", "", 11, 1}};
        Scenario adopted = adoptFit(s, p);
        adopted.model = "Qwen/Qwen3-4B-Instruct-2507";
        const auto e = evaluate(adopted, presets());
        QVERIFY(e.ok());
        QVERIFY(std::abs(e->cost.tFixed(e->tiers[0]) - 0.0056) < 1e-6);
    }

    // Calibration files keep the per-layer part with the layers it was fitted at, and the
    // models fitted on; files without them read as before.
    void perLayerPartInCalibrationFiles() {
        Calibration c;
        c.model = "meta-llama/Llama-3.2-3B";
        FittedParameters p;
        p.utilisation = 0.5;
        p.tiers["nvme"] = {11e9, 0.0056, 1, 0.0002, 28};
        p.tiers["dram"] = {50e9, 0.0005};
        p.fittedOn = {{"meta-llama/Llama-3.2-3B", 28}};
        c.fitted = p;
        const auto text = calibrationToJson(c);
        const auto back = parse(text.c_str());
        QVERIFY(back.fitted);
        QCOMPARE(*back.fitted, p);
        QCOMPARE(QString::fromStdString(text).count("t_layer_s"), 1); // none for a constant tier
        const auto old = parse(R"({"kvbe_calibration": 1, "fitted": {"tiers": {"nvme":
            {"bandwidth_Bps": 1.1e10, "t_fixed_s": 0.005}}}})");
        QCOMPARE(old.fitted->tiers.at("nvme").tLayerS, 0.0);
        QCOMPARE(old.fitted->tiers.at("nvme").t0(), 0.005);
        QVERIFY(old.fitted->fittedOn.empty());
    }

    void perLayerPartRefusedWhenInconsistent_data() {
        QTest::addColumn<QByteArray>("tier");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("no layers") << QByteArray(R"({"bandwidth_Bps": 1e10, "t_fixed_s": 0.005,
            "t_layer_s": 0.0001})") << "fitted.tiers.nvme.layers";
        QTest::newRow("more than t_fixed") << QByteArray(R"({"bandwidth_Bps": 1e10,
            "t_fixed_s": 0.001, "t_layer_s": 0.0001, "layers": 28})")
                                           << "t0 ≥ 0";
        QTest::newRow("negative") << QByteArray(R"({"bandwidth_Bps": 1e10, "t_fixed_s": 0.005,
            "t_layer_s": -1, "layers": 28})")
                                  << "fitted.tiers.nvme.t_layer_s";
    }

    void perLayerPartRefusedWhenInconsistent() {
        QFETCH(QByteArray, tier);
        QFETCH(QString, fragment);
        const QByteArray text =
            R"({"kvbe_calibration": 1, "fitted": {"tiers": {"nvme": )" + tier + "}}}";
        const auto r = parseCalibration(text.constData(), "c.json");
        QVERIFY(!r.ok());
        QVERIFY2(QString::fromStdString(r.message()).contains(fragment), r.message().c_str());
    }

    // A v2 file's curves feed the fit: utilisation from f, and per tier t_fixed and bandwidth
    // from g_ssd and g_mem (hits whose whole prompt came from the tier).
    void fitFromPyKvcacheV2Curves() {
        const CostInputs truth = h100Inputs("meta-llama/Llama-3.2-3B", 0.42);
        const auto model = *CostModel::create(truth);
        const TierPath ssd{"ssd", 11e9, 0.002}, mem{"mem", 50e9, 0.0005};
        QString f, gs, gm;
        for (double m : {0.0, 1024.0, 4096.0, 16384.0, 65536.0}) {
            const QString key = QString::number(qint64(m));
            f += QStringLiteral("\"%1\": %2, ").arg(key).arg(model.tMiss(m), 0, 'g', 17);
            gs += QStringLiteral("\"%1\": %2, ")
                      .arg(key)
                      .arg(m > 0 ? model.tHit(ssd, m, m) : ssd.tFixedS, 0, 'g', 17);
            gm += QStringLiteral("\"%1\": %2, ")
                      .arg(key)
                      .arg(m > 0 ? model.tHit(mem, m, m) : mem.tFixedS, 0, 'g', 17);
        }
        f.chop(2), gs.chop(2), gm.chop(2);
        const QByteArray text =
            QStringLiteral(
                R"({"schema_version": 2, "model_name": "meta-llama/Llama-3.2-3B", "kv_dtype": "auto",
            "curves": {"f": {"floor": 0, "knots": {%1}}, "g_ssd": {"floor": 0.002, "knots": {%2}},
                       "g_mem": {"floor": 0.0005, "knots": {%3}}}})")
                .arg(f, gs, gm)
                .toUtf8();
        const auto c = parse(text.constData());
        CostInputs start = truth;
        start.utilisation = 0.6;
        auto fit = fitCalibration(c, start, {});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        KVBE_COMPARE_REL(*fit->params.utilisation, 0.42, 1e-3);
        KVBE_COMPARE_REL(fit->params.tiers.at("ssd").bandwidthBps, 11e9, 1e-3);
        QVERIFY(std::abs(fit->params.tiers.at("ssd").tFixedS - 0.002) < 1e-5);
        KVBE_COMPARE_REL(fit->params.tiers.at("mem").bandwidthBps, 50e9, 1e-3);
        QVERIFY(std::abs(fit->params.tiers.at("mem").tFixedS - 0.0005) < 1e-5);
        QVERIFY(std::abs(fit->params.overheadS) < 1e-4);
    }

    // The B* and p* a v2 file's own curves imply, worked out by hand from the fixture's knots.
    // Its g curves are exactly t_fixed + KV / B (131,072 B/token): g_ssd = 0.02 s + 1e-5 s per
    // token (13.1072 GB/s), g_mem = 0.002 s + 2.5e-6 s per token (52.4288 GB/s).
    void impliedBreakevenFromV2Knots() {
        const auto c = fixture("pykvcache-v2-implied.json");
        auto implied = pyKvcacheImplied(c);
        QVERIFY2(implied.ok(), implied.ok() ? "" : implied.message().c_str());
        QCOMPARE(implied->kvBytesPerToken, 131072.0);
        QCOMPARE(implied->tiers.size(), size_t(2));
        const auto& ssd = implied->tiers[0];
        const auto& mem = implied->tiers[1];
        QCOMPARE(ssd.tier, std::string("ssd"));
        QCOMPARE(mem.tier, std::string("mem"));

        // t_fixed and bandwidth from the knots p > 0 (the fit's hit step; exact on a straight
        // line).
        QVERIFY(ssd.tFixedFitted && mem.tFixedFitted);
        QVERIFY(std::abs(ssd.tFixedS - 0.02) < 1e-12);
        QVERIFY(std::abs(mem.tFixedS - 0.002) < 1e-12);
        KVBE_COMPARE_REL(*ssd.bandwidthBps, 131072 / 1e-5, 1e-9);   // 13.1072 GB/s
        KVBE_COMPARE_REL(*mem.bandwidthBps, 131072 / 2.5e-6, 1e-9); // 52.4288 GB/s

        // B*_T(p) = 131072 p / (f(p) − t_fixed_T) at every knot p > 0, then the golden point.
        const double kv = 131072;
        struct Row {
            double p, f, bSsd, bMem;
        };
        const Row rows[] = {
            {64, 0.0015, 0, 0},                          // f < t_fixed for both: none
            {256, 0.012, 0, kv * 256 / (0.012 - 0.002)}, // 3.3554432 GB/s from memory
            {1024, 0.08, kv * 1024 / (0.08 - 0.02), kv * 1024 / (0.08 - 0.002)},
            {4096, 0.33, kv * 4096 / (0.33 - 0.02), kv * 4096 / (0.33 - 0.002)},
            {16384, 1.4, kv * 16384 / (1.4 - 0.02), kv * 16384 / (1.4 - 0.002)},
            {2048, 0.16, kv * 2048 / (0.16 - 0.02), kv * 2048 / (0.16 - 0.002)}, // golden
        };
        QCOMPARE(ssd.points.size(), std::size(rows));
        QCOMPARE(mem.points.size(), std::size(rows));
        for (size_t i = 0; i < std::size(rows); ++i) {
            const auto& r = rows[i];
            for (const auto* t : {&ssd, &mem}) {
                const auto& pt = t->points[i];
                QCOMPARE(pt.tokens, r.p);
                QCOMPARE(pt.golden, i == 5);
                QCOMPARE(pt.fS, r.f);
                const double want = t == &ssd ? r.bSsd : r.bMem;
                QVERIFY2(pt.breakevenBps.has_value() == (want > 0),
                         qPrintable(QString("p = %1").arg(r.p)));
                if (want > 0) KVBE_COMPARE_REL(*pt.breakevenBps, want, 1e-9);
            }
        }
        KVBE_COMPARE_REL(*ssd.points[2].breakevenBps, 2.2369621333e9,
                         1e-9); // by hand: 134,217,728 B / 0.06 s
        KVBE_COMPARE_REL(*mem.points[1].breakevenBps, 3.3554432e9, 1e-12); // 33,554,432 B / 0.010 s
        QCOMPARE(ssd.points[3].gS, 0.06096);
        QCOMPARE(mem.points[5].gS, 0.00712);

        // p*: py-kvcache's rule. SSD: f ≤ g at 0, 64 and 256 (0.012 ≤ 0.02256), f > g from 1024
        // on, so the block after 256 = 272. Memory: f ≤ g at 0 and 64 (0.0015 ≤ 0.00216), f > g
        // from 256 on: 80. Both equal the file's scalar thresholds, so the reader warns of nothing.
        QCOMPARE(ssd.pStarTokens, 272.0);
        QCOMPARE(mem.pStarTokens, 80.0);
        QVERIFY(ssd.paysWithinKnots && mem.paysWithinKnots);
        QCOMPARE(c.breakevenPrefix.at("ssd"), 272.0);
        QCOMPARE(c.breakevenPrefix.at("mem"), 80.0);
        QVERIFY(c.warnings.empty());

        // Without kv_bytes_per_token the model's is needed; files that are not v2 imply nothing.
        auto bare = c;
        bare.kvBytesPerToken.reset();
        QVERIFY(!pyKvcacheImplied(bare).ok());
        KVBE_COMPARE_REL(*pyKvcacheImplied(bare, 65536.0)->tiers[0].points[2].breakevenBps,
                         65536.0 * 1024 / 0.06, 1e-9);
        QVERIFY(!pyKvcacheImplied(fixture("pykvcache-v1-format-page.json")).ok());
    }

    // A curve with one positive knot or times that do not grow: t_fixed is the curve's floor, no
    // bandwidth; a tier that never pays within the knots says so.
    void impliedBreakevenFallsBackToTheFloor() {
        const auto c = parse(R"({"schema_version": 2, "kv_bytes_per_token": 1000,
            "curves": {"f": {"floor": 0, "knots": {"0": 0, "1000": 0.5, "2000": 1.0}},
                       "g_ssd": {"floor": 0.1, "knots": {"0": 0.1, "1000": 0.2, "2000": 0.15}},
                       "g_mem": {"floor": 0.01, "knots": {"0": 2, "2000": 2}}}})");
        auto implied = pyKvcacheImplied(c);
        QVERIFY(implied.ok());
        const auto& ssd = implied->tiers[0];
        QVERIFY(!ssd.tFixedFitted);
        QVERIFY(!ssd.bandwidthBps);
        QCOMPARE(ssd.tFixedS, 0.1);
        KVBE_COMPARE_REL(*ssd.points[0].breakevenBps, 1000.0 * 1000 / (0.5 - 0.1),
                         1e-12); // 2.5 MB/s
        const auto& mem = implied->tiers[1];
        QVERIFY(!mem.tFixedFitted);
        QCOMPARE(mem.tFixedS, 0.01);
        QVERIFY(!mem.paysWithinKnots);          // f(2000) = 1 s ≤ 2 s
        QCOMPARE(mem.pStarTokens, 2016.0);      // the rule: one block past 2000
        QCOMPARE(mem.points.size(), size_t(2)); // 1000 (f's knot, g read between its own) and 2000
        QCOMPARE(mem.points[0].gS, 2.0);
    }

    // Hits that see less than the probe's bandwidth: the fit keeps the probe's bandwidth and
    // explains the rest as amplification (bytes moved per useful byte), within 5 %; hits as fast
    // as the probe leave it at 1. adoptFit carries it into the scenario.
    void fitRecoversAmplification() {
        const double u = 0.45, probeBw = 13.5e9, amp = 10.0 / 4.4, tFixed = 0.002;
        const CostInputs truth = h100Inputs("meta-llama/Llama-3.2-3B", u);
        const auto model = *CostModel::create(truth);
        std::mt19937 rng(18);
        std::normal_distribution<double> noise(0, 0.01);
        auto calibration = [&](double trueAmp) {
            Calibration c;
            for (double n : {512.0, 2048.0, 8192.0, 32768.0, 131072.0})
                c.prefill.push_back({n, model.tMiss(n) * (1 + noise(rng))});
            TierMeasurement probe{"nvme", {}, std::nullopt, std::nullopt};
            for (double bytes : {1e6, 1e7, 1e8, 1e9})
                probe.reads.push_back({bytes, 1e-4 + bytes / probeBw});
            c.tiers.push_back(probe);
            const TierPath seen{"nvme", probeBw, tFixed, trueAmp};
            for (double n : {2048.0, 8192.0, 32768.0})
                for (double f : {0.3, 0.6, 0.95})
                    c.hits.push_back(
                        {n, n * f, "nvme", model.tHit(seen, n, n * f) * (1 + noise(rng))});
            return c;
        };
        CostInputs start = truth;
        start.utilisation = 0.5;
        auto fit = fitCalibration(calibration(amp), start, {}, FitOptions{false, false});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        const auto& t = fit->params.tiers.at("nvme");
        KVBE_COMPARE_REL(t.bandwidthBps, probeBw, 1e-6);
        KVBE_COMPARE_REL(t.amplification, amp, 0.05);
        QVERIFY2(std::abs(t.tFixedS - tFixed) < 5e-4, qPrintable(QString::number(t.tFixedS)));
        bool noted = false;
        for (const auto& n : fit->notes)
            noted = noted || n.find("amplification") != std::string::npos;
        QVERIFY(noted);

        auto plain = fitCalibration(calibration(1.0), start, {}, FitOptions{false, false});
        QVERIFY(plain.ok());
        KVBE_COMPARE_REL(plain->params.tiers.at("nvme").amplification, 1.0, 0.03);

        Scenario s = *defaultScenario(presets());
        const auto adopted = adoptFit(s, fit->params);
        QCOMPARE(adopted.tiers[1].amplification, t.amplification); // "nvme" is the first NVMe tier
        QCOMPARE(adopted.tiers[1].bandwidthGBps, probeBw / 1e9);

        // The calibration file keeps it.
        Calibration withFit;
        withFit.fitted = fit->params;
        auto back = parseCalibration(calibrationToJson(withFit), "fit.json");
        QVERIFY(back.ok());
        QCOMPARE(back->fitted->tiers.at("nvme").amplification, t.amplification);
    }

    // Prefill timings without overhead (as the GPU probe measures them), generated with a ramp:
    // utilisation within 3 % and n_half within 15 %.
    void fitRecoversRamp() {
        const double u = 0.6, nHalf = 2000;
        CostInputs truth = h100Inputs("Qwen/Qwen3-8B", u);
        truth.rampHalfTokens = nHalf;
        const auto model = *CostModel::create(truth);
        std::mt19937 rng(7);
        std::normal_distribution<double> noise(0, 0.01);
        Calibration c;
        for (double n : {128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0})
            c.prefill.push_back({n, model.tMiss(n) * (1 + noise(rng))});
        CostInputs start = truth;
        start.utilisation = 0.3;
        start.rampHalfTokens.reset();
        auto fit = fitCalibration(c, start, {}, FitOptions{true, false});
        QVERIFY(fit.ok());
        KVBE_COMPARE_REL(*fit->params.utilisation, u, 0.03);
        KVBE_COMPARE_REL(*fit->params.rampHalfTokens, nHalf, 0.15);
        QCOMPARE(fit->params.overheadS, 0.0);
    }

    void fitWithFewPointsSaysWhatItLeftOut() {
        Calibration c;
        c.prefill = {{1024, 0.02}, {8192, 0.15}};
        CostInputs base;
        base.model = test::preset("meta-llama/Llama-3.2-3B");
        base.peakFlops = 989e12;
        auto fit = fitCalibration(c, base, {});
        QVERIFY(fit.ok());
        QVERIFY(fit->params.utilisation.has_value());
        QVERIFY(!fit->params.rampHalfTokens.has_value());
        QCOMPARE(fit->notes.size(), size_t(1)); // two lengths: no overhead
    }

    void adoptFitIntoScenario() {
        Scenario s = test::illustrative(); // three tiers: the third is left as it was
        FittedParameters p;
        p.utilisation = 0.37;
        p.rampHalfTokens = 900;
        p.tiers["ssd"] = {12.1e9, 0.0025};
        p.tiers["Host DRAM (PCIe 5.0)"] = {51e9, 0.0007};
        const auto adopted = adoptFit(s, p);
        QCOMPARE(adopted.utilisation, 0.37);
        QCOMPARE(*adopted.rampHalfTokens, 900.0);
        QCOMPARE(adopted.tiers[0].bandwidthGBps, 51.0);
        QCOMPARE(adopted.tiers[1].bandwidthGBps, 12.1); // "ssd" is the first NVMe tier
        QCOMPARE(adopted.tiers[1].tFixedMs, 2.5);
        QCOMPARE(adopted.tiers[2], s.tiers[2]);
    }
};

QTEST_GUILESS_MAIN(TestCalibrationFit)
#include "tst_calibration_fit.moc"
