// The published reference (resources/published/) against the text it quotes, and the fitted
// scenario (resources/scenarios/) against the published figures, with B* worked out again here.
#include "illustrative_scenario.h"
#include "kvbe/calibration/published.h"
#include "kvbe/scenario/scenario.h"
#include "test_support.h"

#include <QFile>
#include <QRegularExpression>
#include <cstdlib>
#include <map>

using namespace kvbe;
using kvbe::test::presets;

namespace {

const char* kFittedName = "Llama 3.2 3B on the study's H100 node, fitted";

const PublishedReference& reference() {
    static const PublishedReference r = [] {
        auto refs = builtinPublishedReferences(presets());
        if (!refs || refs->size() != 1) qFatal("expected one shipped published reference");
        return refs->front();
    }();
    return r;
}

const PublishedPoint& point(const char* id) {
    for (const auto& p : reference().points)
        if (p.id == id) return p;
    qFatal("no published point %s", id);
    std::abort();
}

QString squeeze(QString s) {
    return s.replace(QRegularExpression(QStringLiteral("\\s+")), QStringLiteral(" "));
}

QString readText(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(f.readAll());
}

Scenario fittedScenarioShipped() {
    auto all = builtinScenarios(presets());
    if (!all) qFatal("%s", all.message().c_str());
    for (const auto& n : *all)
        if (n.name == kFittedName) return n.scenario;
    qFatal("no shipped scenario named %s", kFittedName);
    std::abort();
}

Evaluation evaluated(const Scenario& s) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("%s", e.message().c_str());
    return *e;
}

const TierPath& tierLike(const Evaluation& e, const char* publishedTier) {
    const int i = tierIndexFor(e.tiers, publishedTier);
    if (i < 0) qFatal("no %s tier", publishedTier);
    return e.tiers[size_t(i)];
}

} // namespace

class TestPublished : public QObject {
    Q_OBJECT
  private slots:
    // Every value of the reference file, typed here from the seed article and cost-model.md, in
    // the units the sources print.
    void referenceValues_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("value"); // as published: GB/s, tokens, %
        QTest::addColumn<double>("low");
        QTest::addColumn<double>("high");
        QTest::addColumn<double>("tokens");
        QTest::newRow("B* 1k") << "bstar-1k" << 23.2 << 0.0 << 0.0 << 1024.0;
        QTest::newRow("B* 8k") << "bstar-8k" << 10.4 << 0.0 << 0.0 << 8192.0;
        QTest::newRow("B* 80k") << "bstar-80k" << 3.5 << 0.0 << 0.0 << 81920.0;
        QTest::newRow("GPU to CPU copy") << "copy-gpu-cpu" << 55.0 << 54.0 << 56.0 << 0.0;
        QTest::newRow("disk path 1k") << "disk-path-1k" << 9.0 << 0.0 << 0.0 << 1024.0;
        QTest::newRow("disk path larger") << "disk-path-large" << 11.6 << 11.2 << 12.0 << 0.0;
        QTest::newRow("fio PCIe 5.0") << "fio-gen5" << 13.5 << 0.0 << 0.0 << 0.0;
        QTest::newRow("fio PCIe 4.0") << "fio-gen4" << 6.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("f* 8k") << "fstar-8k" << 77.8 << 0.0 << 0.0 << 8192.0;
        QTest::newRow("f* 80k") << "fstar-80k" << 7.8 << 0.0 << 0.0 << 81920.0;
        QTest::newRow("p* SSD Llama") << "pstar-ssd-llama" << 6057.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("p* DRAM Llama") << "pstar-mem-llama" << 736.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("p* SSD Qwen H100") << "pstar-ssd-qwen-h100" << 6203.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("p* DRAM Qwen H100") << "pstar-mem-qwen-h100" << 825.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("p* SSD Qwen Ada") << "pstar-ssd-qwen-ada" << 559.0 << 0.0 << 0.0 << 0.0;
        QTest::newRow("p* DRAM Qwen Ada") << "pstar-mem-qwen-ada" << 481.0 << 0.0 << 0.0 << 0.0;
    }
    void referenceValues() {
        QFETCH(QString, id);
        QFETCH(double, value);
        QFETCH(double, low);
        QFETCH(double, high);
        QFETCH(double, tokens);
        const auto& p = point(id.toUtf8().constData());
        const double si = p.unit == "GB/s" ? 1e9 : p.unit == "%" ? 0.01 : 1;
        QVERIFY2(std::abs(p.value - value * si) <= 1e-9 * value * si, p.id.c_str());
        if (low > 0) {
            QVERIFY(p.low && p.high);
            QCOMPARE(*p.low, low * si);
            QCOMPARE(*p.high, high * si);
        } else {
            QVERIFY(!p.low && !p.high);
        }
        if (tokens > 0)
            QCOMPARE(p.tokens.value_or(0), tokens);
        else
            QVERIFY(!p.tokens);
        QVERIFY(p.source.rfind("arXiv 2609.11744", 0) == 0);
    }

    // Each point's sentence is in the file it names (copies in tests/fixtures/published), and the
    // value as printed is in that sentence and reads back as the value.
    void referenceQuotesAreInTheSeed() {
        QCOMPARE(reference().points.size(), size_t(16));
        QStringList roots{QStringLiteral(KVBE_FIXTURES "/published")};
        for (const auto& p : reference().points) {
            const QString file = QString::fromStdString(p.quotedIn).section('/', -1);
            bool found = false;
            for (const auto& root : roots) {
                const QString text = readText(root + "/" + file);
                if (text.isEmpty()) continue;
                found = true;
                QVERIFY2(squeeze(text).contains(squeeze(QString::fromStdString(p.quote))),
                         qPrintable(QString("%1: quote not in %2/%3")
                                        .arg(QString::fromStdString(p.id), root, file)));
            }
            QVERIFY2(found, qPrintable("no copy of " + file));
            const QString quote = QString::fromStdString(p.quote);
            const QString text = QString::fromStdString(p.text);
            QVERIFY2(quote.contains(text), p.id.c_str());
            // The number printed in `text` (thousands separators dropped) is the value, or the
            // range's ends.
            QRegularExpression number(QStringLiteral("\\d[\\d,]*(\\.\\d+)?"));
            QList<double> printed;
            for (auto it = number.globalMatch(text); it.hasNext();)
                printed << it.next().captured().remove(',').toDouble();
            const double si = p.unit == "GB/s" ? 1e9 : p.unit == "%" ? 0.01 : 1;
            auto printedHas = [&](double v) {
                for (double x : printed)
                    if (std::abs(x * si - v) <= 1e-9 * v) return true;
                return false;
            };
            if (p.low) {
                QVERIFY2(printedHas(*p.low) && printedHas(*p.high), p.id.c_str());
            } else {
                QVERIFY2(printedHas(p.value), p.id.c_str());
            }
        }
    }

    void referenceErrorsNameTheField_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        const QString head = R"({"kvbe_published": 1, "name": "x", "points": [)";
        QTest::newRow("wrong unit")
            << head +
                   R"({"id": "a", "quantity": "breakeven_bandwidth", "model": "m", "tokens": 1024,
            "value": 23.2, "unit": "MB/s", "text": "23.2", "source": "s", "quote": "q"}]})"
            << "bad.json: field 'points[0].unit' is a string (\"MB/s\"); expected \"GB/s\" for "
               "breakeven_bandwidth";
        QTest::newRow("no tokens")
            << head + R"({"id": "a", "quantity": "breakeven_bandwidth", "model": "m",
            "value": 23.2, "unit": "GB/s", "text": "23.2", "source": "s", "quote": "q"}]})"
            << "bad.json: field 'points[0].tokens' is missing; expected the prompt length the "
               "figure is at";
        QTest::newRow("no value")
            << head + R"({"id": "a", "quantity": "breakeven_prefix", "model": "m", "tier": "ssd",
            "unit": "tokens", "text": "1", "source": "s", "quote": "q"}]})"
            << "bad.json: field 'points[0].value' is missing; expected a value, or min and max for "
               "a range";
        QTest::newRow("no quote")
            << head + R"({"id": "a", "quantity": "breakeven_prefix", "model": "m", "tier": "ssd",
            "value": 6057, "unit": "tokens", "text": "6,057", "source": "s"}]})"
            << "bad.json: field 'points[0].quote' is missing; expected the sentence the figure is "
               "quoted from";
        QTest::newRow("version")
            << R"({"kvbe_published": 2, "name": "x", "points": []})"
            << "bad.json: field 'kvbe_published' is a number (2); expected the format version, 1";
    }
    void referenceErrorsNameTheField() {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        const auto r = parsePublishedReference(text.toStdString(), "bad.json");
        QVERIFY(!r);
        QCOMPARE(QString::fromStdString(r.message()), expected);
    }

    // The default scenario is the study's model on an H100: it matches the Llama points and not
    // the Qwen ones; a Qwen scenario on an RTX 4000 Ada in FP16 gets only the Ada thresholds.
    void pointsMatchModelGpuAndDtype() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        auto ids = [](const std::vector<PublishedPoint>& v) {
            QStringList out;
            for (const auto& p : v)
                out << QString::fromStdString(p.id);
            return out;
        };
        const auto llama = ids(matchingPoints(reference(), evaluated(*d)));
        QVERIFY(llama.contains("bstar-1k") && llama.contains("pstar-ssd-llama") &&
                llama.contains("copy-gpu-cpu"));
        QVERIFY(!llama.contains("pstar-ssd-qwen-h100") && !llama.contains("pstar-ssd-qwen-ada"));
        Scenario q = *d;
        q.model = "Qwen/Qwen3-4B-Instruct-2507";
        q.gpu = "rtx-4000-ada";
        q.kvDtype = KvDtype::FP16;
        QCOMPARE(ids(matchingPoints(reference(), evaluated(q))),
                 (QStringList{"pstar-ssd-qwen-ada", "pstar-mem-qwen-ada"}));
        q.kvDtype = KvDtype::BF16;
        QVERIFY(ids(matchingPoints(reference(), evaluated(q))).isEmpty());
        // Qwen3 4B on an H100: its two thresholds and the node's hardware figures.
        q.gpu = "h100-sxm";
        q.kvDtype.reset();
        const auto qwen = ids(matchingPoints(reference(), evaluated(q)));
        QVERIFY(qwen.contains("pstar-ssd-qwen-h100") && qwen.contains("pstar-mem-qwen-h100") &&
                qwen.contains("copy-gpu-cpu"));
        QVERIFY(!qwen.contains("bstar-1k"));
        // Another model on the same GPU gets nothing, not the node's hardware figures alone.
        Scenario other = *d;
        other.model = "meta-llama/Llama-3.3-70B-Instruct";
        QVERIFY(matchingPoints(reference(), evaluated(other)).empty());
    }

    // The shipped fitted scenario against the published figures, with the tolerances it promises:
    // B* within 10 % (with the SSD tier's t_fixed), SSD and DRAM p* within 15 %.
    void fittedScenarioMeetsPublished_data() {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("B* 1k") << "bstar-1k" << 0.10;
        QTest::newRow("B* 8k") << "bstar-8k" << 0.10;
        QTest::newRow("B* 80k") << "bstar-80k" << 0.10;
        QTest::newRow("p* SSD") << "pstar-ssd-llama" << 0.15;
        QTest::newRow("p* DRAM") << "pstar-mem-llama" << 0.15;
    }
    void fittedScenarioMeetsPublished() {
        QFETCH(QString, id);
        QFETCH(double, tolerance);
        const auto e = evaluated(fittedScenarioShipped());
        const auto& p = point(id.toUtf8().constData());
        const auto rows = comparePublished({p}, e);
        QCOMPARE(rows.size(), size_t(1));
        QVERIFY2(rows[0].model.has_value(), p.id.c_str());
        QVERIFY2(
            std::abs(*rows[0].relative()) <= tolerance,
            qPrintable(
                QString("%1: model %2, published %3").arg(id).arg(*rows[0].model).arg(p.value)));
    }

    // B* at the fitted u and SSD t_fixed, worked out here from the numbers of cost-model.md
    // (Llama 3.2 3B: P = 3.21e9, L = 28, Hq = 24, d = 128, 114,688 B/token; H100 SXM 989 TFLOP/s).
    void independentBreakevenBandwidth_data() {
        QTest::addColumn<double>("tokens");
        QTest::addColumn<double>("published");
        QTest::newRow("1k") << 1024.0 << 23.2e9;
        QTest::newRow("8k") << 8192.0 << 10.4e9;
        QTest::newRow("80k") << 81920.0 << 3.5e9;
    }
    void independentBreakevenBandwidth() {
        QFETCH(double, tokens);
        QFETCH(double, published);
        const Scenario s = fittedScenarioShipped();
        QCOMPARE(s.gpu, std::string("h100-sxm"));
        QVERIFY(!s.peakTflops);
        QVERIFY(s.flopModel == FlopModel::Simple);
        const TierConfig* ssd = nullptr;
        for (const auto& t : s.tiers)
            if (QString::fromStdString(t.name).contains("NVMe")) ssd = &t;
        QVERIFY(ssd);
        // t_fixed = t0 + 28 layers × t_layer (Llama 3.2 3B: every layer holds KV).
        const double u = s.utilisation, tFixed = (ssd->tFixedMs + 28 * ssd->tLayerUs * 1e-3) * 1e-3;
        const double flops = 2 * 3.21e9 * tokens + 2 * 28 * 24 * 128 * tokens * tokens;
        const double tRecompute = flops / (989e12 * u);
        const double bStar = 114688 * tokens / (tRecompute - tFixed);
        QVERIFY2(std::abs(bStar / published - 1) <= 0.10, qPrintable(QString::number(bStar / 1e9)));
        // and core gives the same number (P_total of the config is 3.2128e9, not 3.21e9)
        const auto e = evaluated(s);
        const auto core = e.cost.breakevenBandwidth(tokens, tFixed);
        QVERIFY(core);
        QVERIFY2(std::abs(*core / bStar - 1) <= 0.003,
                 qPrintable(QString("%1 vs %2").arg(*core).arg(bStar)));
    }

    // The shipped scenario is what the fit gives now: run it again from the default scenario and
    // the shipped reference (kvbe-cli published fit --out makes the file the same way).
    void fittedScenarioIsTheFit() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto base = evaluated(*d);
        const auto fit = fitPublished(matchingPoints(reference(), base), base);
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        const Scenario again = fittedScenario(*d, *fit, kFittedName);
        const Scenario shipped = fittedScenarioShipped();
        QVERIFY(test::near(again.utilisation, shipped.utilisation, 1e-6));
        QCOMPARE(again.tiers.size(), shipped.tiers.size());
        for (size_t i = 0; i < again.tiers.size(); ++i) {
            QCOMPARE(again.tiers[i].name, shipped.tiers[i].name);
            QVERIFY(test::near(again.tiers[i].bandwidthGBps, shipped.tiers[i].bandwidthGBps, 1e-6));
            QCOMPARE(again.tiers[i].tFixedMs, shipped.tiers[i].tFixedMs);
            QVERIFY(test::near(again.tiers[i].tLayerUs, shipped.tiers[i].tLayerUs, 1e-6));
        }
        QCOMPARE(shipped.fittedOn, again.fittedOn);
        // Every residual the fit reports is the point's own comparison at the fitted values.
        const auto e = evaluated(again);
        for (const auto& r : fit->residuals) {
            const auto row = comparePublished({r.point}, e);
            QVERIFY(row[0].model && r.model);
            QVERIFY2(test::near(*row[0].model, *r.model, 1e-9), r.point.id.c_str());
        }
        // fio and the 1k disk rate are not model quantities; they are left out with a reason.
        QCOMPARE(fit->residuals.size(), size_t(9));
        int leftOut = 0;
        for (const auto& n : fit->notes)
            leftOut += n.rfind("left out", 0) == 0;
        QCOMPARE(leftOut, 3);
    }

    // The fit of one model states the per-layer form: t0 = 0 and t_layer = t_fixed / 28 for
    // Llama 3.2 3B, the same figures on that model, and the scenario records the model.
    void oneModelFitIsPerLayer() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto base = evaluated(*d);
        const auto fit = fitPublished(matchingPoints(reference(), base), base);
        QVERIFY(fit.ok());
        QVERIFY(fit->fixedCostForm == FixedCostForm::PerLayer);
        QCOMPARE(fit->fixedCostWhy, std::string(kOneModelFixedCostForm));
        QCOMPARE(fit->params.fittedOn.size(), size_t(1));
        QCOMPARE(fit->params.fittedOn[0].model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(fit->params.fittedOn[0].layers, 28);
        QCOMPARE(fit->params.tiers.size(), size_t(2));
        for (const auto& [key, t] : fit->params.tiers) {
            QCOMPARE(t.layers, 28);
            KVBE_COMPARE_REL(t.tLayerS * 28, t.tFixedS, 1e-12);
            QVERIFY(std::abs(t.t0()) <= 1e-15);
        }
        const Scenario s = fittedScenario(*d, *fit, kFittedName);
        for (const auto& t : s.tiers) {
            QCOMPARE(t.tFixedMs, 0.0);
            QVERIFY(t.tLayerUs > 0);
        }
        QCOMPARE(s.fittedOn, fit->params.fittedOn);
    }

    // Done when a scenario fitted on the Llama 3.2 3B points, moved to Qwen3 4B, predicts both of
    // Qwen3 4B's published p* on the node within 10 %. Both the fit made here and the shipped
    // scenario, moved to Qwen3 4B, are checked against the published 6,203 and 825 tokens.
    void fittedOnLlamaPredictsQwenWithinTenPercent() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto base = evaluated(*d);
        const auto fit = fitPublished(matchingPoints(reference(), base), base);
        QVERIFY(fit.ok());
        for (Scenario s : {fittedScenario(*d, *fit, kFittedName), fittedScenarioShipped()}) {
            s.model = "Qwen/Qwen3-4B-Instruct-2507";
            const auto e = evaluated(s);
            QCOMPARE(e.cost.kvStateLayers(), 36);
            const auto rows =
                comparePublished({point("pstar-ssd-qwen-h100"), point("pstar-mem-qwen-h100")}, e);
            QCOMPARE(rows[0].point.value, 6203.0);
            QCOMPARE(rows[1].point.value, 825.0);
            for (const auto& r : rows) {
                QVERIFY(r.model);
                QVERIFY2(std::abs(*r.model / r.point.value - 1) < 0.10,
                         qPrintable(QString("%1: %2 against %3")
                                        .arg(QString::fromStdString(r.point.id))
                                        .arg(*r.model)
                                        .arg(r.point.value)));
            }
        }
    }

    // The held-out check of cost-model.md: both forms of the fixed cost on Qwen3 4B, from the
    // fit on Llama 3.2 3B. Per layer is what the shipped scenario does; constant keeps each
    // tier's Llama fixed cost. The errors the docs and kOneModelFixedCostForm quote.
    void heldOutBothForms() {
        Scenario s = fittedScenarioShipped();
        s.model = "Qwen/Qwen3-4B-Instruct-2507";
        const auto e = evaluated(s);
        const auto h = heldOutForms(matchingPoints(reference(), e), e, presets());
        QVERIFY(h);
        QCOMPARE(h->fittedOn.model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(h->fittedOn.layers, 28);
        QCOMPARE(h->layers, 36);
        QVERIFY(h->scenarioForm == FixedCostForm::PerLayer);
        QCOMPARE(h->perLayer.size(), size_t(2)); // the two p*: the rates do not depend on t_fixed
        QCOMPARE(h->constant.size(), size_t(2));
        const std::map<std::string, std::pair<double, double>> expected{
            {"pstar-ssd-qwen-h100", {-0.088, -0.156}}, {"pstar-mem-qwen-h100", {-0.086, -0.284}}};
        for (size_t i = 0; i < 2; ++i) {
            const auto& [perLayer, constant] = expected.at(h->perLayer[i].point.id);
            QVERIFY2(std::abs(*h->perLayer[i].relative() - perLayer) < 0.0005,
                     qPrintable(QString::number(*h->perLayer[i].relative())));
            QVERIFY2(std::abs(*h->constant[i].relative() - constant) < 0.0005,
                     qPrintable(QString::number(*h->constant[i].relative())));
            // Per layer is the scenario as it is.
            const auto row = comparePublished({h->perLayer[i].point}, e);
            QCOMPARE(*row[0].model, *h->perLayer[i].model);
        }
        // The constant form scales nothing: every tier keeps its Llama fixed cost, 28 × t_layer.
        Scenario constant = s;
        for (auto& t : constant.tiers) {
            t.tFixedMs = 28 * t.tLayerUs * 1e-3;
            t.tLayerUs = 0;
        }
        const auto c =
            comparePublished({h->constant[0].point, h->constant[1].point}, evaluated(constant));
        QVERIFY(test::near(*c[0].model, *h->constant[0].model, 1e-12));
        QVERIFY(test::near(*c[1].model, *h->constant[1].model, 1e-12));
        // On the model fitted on there is nothing held out.
        const auto onLlama = evaluated(fittedScenarioShipped());
        QVERIFY(!heldOutForms(matchingPoints(reference(), onLlama), onLlama, presets()));
    }

    // Points of two models of different depths on one node fit both parts; each model's figures
    // use its own layers.
    void twoModelsFitBothParts() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto llama = evaluated(*d);
        Scenario q = *d;
        q.model = "Qwen/Qwen3-4B-Instruct-2507";
        const auto qwen = evaluated(q);
        const auto fit = fitPublished(
            std::vector<PublishedModelPoints>{{matchingPoints(reference(), llama), llama},
                                              {matchingPoints(reference(), qwen), qwen}});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        QVERIFY(fit->fixedCostForm == FixedCostForm::Both);
        QCOMPARE(fit->params.fittedOn.size(), size_t(2));
        QCOMPARE(fit->params.fittedOn[1].layers, 36);
        QCOMPARE(fit->residuals.size(), size_t(11)); // Llama's 9 and Qwen3 4B's two p*
        // The Qwen3 4B residuals are the fitted scenario's own figures on that model.
        Scenario s = fittedScenario(*d, *fit, "both");
        for (const auto& t : s.tiers)
            QVERIFY(t.tLayerUs > 0);
        s.model = q.model;
        const auto e = evaluated(s);
        for (const auto& r : fit->residuals) {
            if (r.point.model != "Qwen/Qwen3-4B-Instruct-2507") continue;
            const auto row = comparePublished({r.point}, e);
            QVERIFY2(test::near(*row[0].model, *r.model, 1e-9), r.point.id.c_str());
            QVERIFY(std::abs(*r.relative()) < 0.10);
        }
    }

    // A fit can fail: a point set the model cannot reach leaves large residuals, not a false pass.
    void fitReportsWhatItCannotReach() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto base = evaluated(*d);
        auto pts = matchingPoints(reference(), base);
        for (auto& p : pts)
            if (p.id == "bstar-80k") p.value *= 10; // B* rising with N: no u and t_fixed give that
        const auto fit = fitPublished(pts, base);
        QVERIFY(fit.ok());
        QVERIFY(fit->params.rmsRelativeResidual > 0.2);
    }

    // The first run agrees with the study (issue 40, item 9): every B*, f* and p* the default
    // scenario is compared with is within 10 % of the published figure. The seed's scenario,
    // now the illustrative one, missed by up to 96.6 % (p* SSD 219 tokens against 6,057).
    void defaultScenarioAgreesWithPublished() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const auto rows =
            comparePublished(matchingPoints(reference(), evaluated(*d)), evaluated(*d));
        int checked = 0;
        for (const auto& r : rows) {
            if (r.point.quantity == PublishedQuantity::Bandwidth) continue; // rates, not B*/f*/p*
            QVERIFY2(r.model, r.point.id.c_str());
            QVERIFY2(std::abs(*r.relative()) <= 0.10,
                     qPrintable(QString("%1: model %2, published %3 (%4 %)")
                                    .arg(QString::fromStdString(r.point.id))
                                    .arg(*r.model)
                                    .arg(r.point.value)
                                    .arg(*r.relative() * 100, 0, 'f', 1)));
            ++checked;
        }
        QCOMPARE(checked, 7); // B* at 1k, 8k, 80k; f* at 8k, 80k; p* SSD and DRAM
        // And the illustrative scenario is the seed's, as far off as the issue found it.
        const auto seed = evaluated(test::illustrative());
        const auto far = comparePublished({point("pstar-ssd-llama")}, seed);
        QVERIFY(far[0].model && *far[0].relative() < -0.9);
    }

    // The default scenario carries the shipped fit's values (utilisation, each tier's bandwidth
    // and fixed cost per layer) on the tier presets, which keep their drive figures.
    void defaultScenarioHasTheFittedValues() {
        auto d = defaultScenario(presets());
        QVERIFY(d.ok());
        const Scenario fitted = fittedScenarioShipped();
        QCOMPARE(d->utilisation, fitted.utilisation);
        QCOMPARE(d->tiers.size(), fitted.tiers.size());
        for (size_t i = 0; i < d->tiers.size(); ++i) {
            QCOMPARE(d->tiers[i].bandwidthGBps, fitted.tiers[i].bandwidthGBps);
            QCOMPARE(d->tiers[i].tFixedMs, fitted.tiers[i].tFixedMs);
            QCOMPARE(d->tiers[i].tLayerUs, fitted.tiers[i].tLayerUs);
            QVERIFY(d->tiers[i].staging == fitted.tiers[i].staging);
            QCOMPARE(d->tiers[i].name + ", fitted", fitted.tiers[i].name);
            QVERIFY2(!hasNominalFixedCost(d->tiers[i], presets()), d->tiers[i].name.c_str());
        }
        QCOMPARE(d->tiers[0].preset, std::string("dram-pcie5"));
        QCOMPARE(d->tiers[1].preset, std::string("nvme-gen5"));
        QVERIFY(d->tiers[1].drive.rated());
    }

    void nominalFixedCost() {
        const Scenario d = test::illustrative();
        for (const auto& t : d.tiers)
            QVERIFY2(hasNominalFixedCost(t, presets()), t.name.c_str());
        TierConfig changed = d.tiers[0];
        changed.tFixedMs += 1;
        QVERIFY(!hasNominalFixedCost(changed, presets()));
        changed = d.tiers[0];
        changed.tLayerUs = 10;
        QVERIFY(!hasNominalFixedCost(changed, presets()));
        for (const auto& t : fittedScenarioShipped().tiers)
            QVERIFY2(!hasNominalFixedCost(t, presets()), t.name.c_str());
    }
};

QTEST_GUILESS_MAIN(TestPublished)
#include "tst_published.moc"
