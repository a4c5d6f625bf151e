// Calibration files of py-kvcache: its v1 and v2 formats, KV dtypes, the fixtures, its rule, and
// the export read back.
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

QByteArray fixtureBytes(const QString& name) {
    QFile f(kFixtures + name);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot open %s", qPrintable(name));
    return f.readAll();
}

} // namespace

class TestCalibration : public QObject {
    Q_OBJECT
  private slots:
    // py-kvcache v1 with the published break-even prefix lengths of cost-model.md.
    void pyKvcacheV1PublishedThresholds_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<double>("ssd");
        QTest::addColumn<double>("mem");
        QTest::newRow("Llama 3.2 3B, H100") << "meta-llama/Llama-3.2-3B"
                                            << "bfloat16" << 6057.0 << 736.0;
        QTest::newRow("Qwen3 4B, H100") << "Qwen/Qwen3-4B-Instruct-2507"
                                        << "bfloat16" << 6203.0 << 825.0;
        QTest::newRow("Qwen3 4B FP16, RTX 4000 Ada") << "Qwen/Qwen3-4B-Instruct-2507"
                                                     << "float16" << 559.0 << 481.0;
    }

    void pyKvcacheV1PublishedThresholds() {
        QFETCH(QString, model);
        QFETCH(QString, dtype);
        QFETCH(double, ssd);
        QFETCH(double, mem);
        const QByteArray text =
            QString(R"({"model_name": "%1", "kv_dtype": "%2", "break_even_ssd_tokens": %3,
            "break_even_mem_tokens": %4, "safety_margin_tokens": 128})")
                .arg(model, dtype)
                .arg(ssd)
                .arg(mem)
                .toUtf8();
        const auto c = parse(text.constData());
        QCOMPARE(c.format, std::string("py-kvcache-v1"));
        QCOMPARE(c.model, model.toStdString());
        QCOMPARE(c.breakevenPrefix.at("ssd"), ssd);
        QCOMPARE(c.breakevenPrefix.at("mem"), mem);
        QCOMPARE(*c.safetyMarginTokens, 128.0);
        QVERIFY(c.kvDtype == (dtype == "float16" ? KvDtype::FP16 : KvDtype::BF16));
    }

    // The v2 example of the format page, verbatim: curves, golden point, hardware and provenance.
    void pyKvcacheV2AsTheFormatPageWritesIt() {
        const auto c = fixture("pykvcache-v2.json");
        QCOMPARE(c.format, std::string("py-kvcache-v2"));
        QCOMPARE(c.model, std::string("meta-llama/Llama-3.1-8B-Instruct"));
        QCOMPARE(c.kvDtypeText, std::string("auto"));
        QVERIFY(c.kvDtype == KvDtype::BF16); // auto: the model's own dtype (a preset kvbe knows)
        QCOMPARE(c.gpuName, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(c.ssdModel, std::string("Kioxia CM7-R"));
        QCOMPARE(*c.kvBytesPerToken, 131072.0);
        QCOMPARE(c.curves.size(), size_t(3));
        const auto& f = c.curves.at("f");
        QCOMPARE(f.knots.size(), size_t(4));
        QCOMPARE(f.knots[2], std::make_pair(4096.0, 0.34));
        QCOMPARE(c.curves.at("g_ssd").floorS, 0.031);
        QCOMPARE(c.curves.at("g_mem").knots.back(), std::make_pair(16384.0, 0.02));
        QCOMPARE(c.golden.size(), size_t(1));
        QCOMPARE(c.golden[0], (GoldenPoint{700, 0.0631, 0.0309, 0.0028}));
        QCOMPARE(c.provenance.at("generated"), std::string("2026-07-21T12:00:00Z"));
        QCOMPARE(c.provenance.at("ssd_bandwidth_gbps"), std::string("13.0"));
        QCOMPARE(c.breakevenPrefix.at("ssd"), 6057.0);
        // Samples for the fit and the charts: f's knots above 0 and the golden f are cold prefills;
        // g_ssd and g_mem are hits whose whole prompt came from the tier.
        QCOMPARE(c.prefill.size(), size_t(3 + 1));
        QCOMPARE(c.prefill[0].tokens, 1024.0);
        QCOMPARE(c.hits.size(), size_t(2 * 3 + 2));
        QCOMPARE(c.hits[0], (HitSample{1024, 1024, "ssd", 0.031}));
        QCOMPARE(c.hits[5], (HitSample{16384, 16384, "mem", 0.02}));
        // The stated thresholds are not what these example curves give: said, not refused.
        QVERIFY(std::any_of(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
            return w.find("break_even_ssd_tokens is 6057") != std::string::npos;
        }));
    }

    void pyKvcacheV2KnotsInAnyOrder() {
        const auto c = fixture("pykvcache-v2-unordered-knots.json");
        for (const auto& [name, k] : c.curves) {
            QCOMPARE(k.knots.size(), size_t(5));
            for (size_t i = 1; i < k.knots.size(); ++i)
                QVERIFY(k.knots[i - 1].first < k.knots[i].first);
        }
        QCOMPARE(c.curves.at("f").knots[1], std::make_pair(256.0, 0.0015));
        QVERIFY(c.kvDtype == KvDtype::FP8);
        // Its thresholds are what py-kvcache's rule gives for these curves: no warning.
        QVERIFY2(c.warnings.empty(), c.warnings.empty() ? "" : c.warnings[0].c_str());
        QCOMPARE(pyKvcacheRuleThreshold(c.curves.at("f"), c.curves.at("g_ssd")), 2064.0);
        QCOMPARE(pyKvcacheRuleThreshold(c.curves.at("f"), c.curves.at("g_mem")), 272.0);
        // Margin folding: 32 tokens on top of each gate that is on.
        const auto gate = pyKvcacheGate(c);
        QCOMPARE(gate.at("ssd"), 2096.0);
        QCOMPARE(gate.at("mem"), 304.0);
    }

    // v1 with any subset of its fields.
    void pyKvcacheV1AnySubset_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("model");
        QTest::addColumn<double>("gateSsd");
        QTest::addColumn<double>("gateMem");
        QTest::newRow("thresholds only")
            << QByteArray(R"({"break_even_ssd_tokens": 100, "break_even_mem_tokens": 10})") << ""
            << 100.0 << 10.0;
        QTest::newRow("schema_version 1")
            << QByteArray(R"({"schema_version": 1, "break_even_ssd_tokens": 100})") << "" << 100.0
            << 0.0;
        QTest::newRow("no model, a margin")
            << QByteArray(
                   R"({"kv_dtype": "auto", "break_even_ssd_tokens": 6057, "break_even_mem_tokens": 736, "safety_margin_tokens": 128})")
            << "" << 6185.0 << 864.0;
        QTest::newRow("margin with a gate off")
            << QByteArray(
                   R"({"model_name": "m", "break_even_ssd_tokens": 0, "break_even_mem_tokens": 736, "safety_margin_tokens": 128})")
            << "m" << 0.0 << 864.0;
        QTest::newRow("no thresholds at all")
            << QByteArray(R"({"model_name": "meta-llama/Llama-3.2-3B", "kv_dtype": "auto"})")
            << "meta-llama/Llama-3.2-3B" << 0.0 << 0.0;
        QTest::newRow("margin only")
            << QByteArray(R"({"safety_margin_tokens": 64})") << "" << 0.0 << 0.0;
    }

    void pyKvcacheV1AnySubset() {
        QFETCH(QByteArray, text);
        QFETCH(QString, model);
        QFETCH(double, gateSsd);
        QFETCH(double, gateMem);
        const auto c = parse(text.constData());
        QCOMPARE(c.format, std::string("py-kvcache-v1"));
        QCOMPARE(QString::fromStdString(c.model), model);
        const auto gate = pyKvcacheGate(c);
        QCOMPARE(gate.at("ssd"), gateSsd);
        QCOMPARE(gate.at("mem"), gateMem);
        QVERIFY(c.warnings.empty());
    }

    void pyKvcacheKvDtypes_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("dtype");
        QTest::addColumn<QString>("resolved"); // "" where it stays open
        QTest::newRow("auto, a preset in BF16") << "meta-llama/Llama-3.2-3B"
                                                << "auto"
                                                << "bf16";
        QTest::newRow("auto, a model kvbe does not know") << "acme/unknown-7b"
                                                          << "auto"
                                                          << "";
        QTest::newRow("auto, no model") << ""
                                        << "auto"
                                        << "";
        QTest::newRow("fp8") << "m"
                             << "fp8"
                             << "fp8";
        QTest::newRow("fp8_e4m3") << "m"
                                  << "fp8_e4m3"
                                  << "fp8";
        QTest::newRow("fp8_e5m2") << "m"
                                  << "fp8_e5m2"
                                  << "fp8";
        QTest::newRow("bfloat16") << "m"
                                  << "bfloat16"
                                  << "bf16";
        QTest::newRow("float16") << "m"
                                 << "float16"
                                 << "fp16";
    }

    void pyKvcacheKvDtypes() {
        QFETCH(QString, model);
        QFETCH(QString, dtype);
        QFETCH(QString, resolved);
        QString text =
            QStringLiteral(R"({"kv_dtype": "%1", "break_even_ssd_tokens": 5)").arg(dtype);
        if (!model.isEmpty()) text += QStringLiteral(R"(, "model_name": "%1")").arg(model);
        text += "}";
        const auto c = parse(text.toUtf8().constData());
        QCOMPARE(QString::fromStdString(c.kvDtypeText), dtype);
        QCOMPARE(c.kvDtype ? QString::fromUtf8(toString(*c.kvDtype).data()) : QString(), resolved);
        QVERIFY(c.warnings.empty());
    }

    // "auto" against the scenario: the same model in its own dtype is no mismatch; an FP8 scenario
    // is.
    void autoKvDtypeAgainstTheScenario() {
        const auto& llama = test::preset("meta-llama/Llama-3.2-3B");
        const auto c = fixture("pykvcache-v1-llama-3.2-3b-h100.json");
        QVERIFY(mismatchWarnings(c, llama, KvDtype::BF16).empty());
        const auto w = mismatchWarnings(c, llama, KvDtype::FP8);
        QCOMPARE(w.size(), size_t(1));
        QVERIFY(QString::fromStdString(w[0]).contains("kv_dtype auto"));
        // The format page's own example names the Instruct model: a visible warning, still read.
        const auto page = fixture("pykvcache-v1-format-page.json");
        QVERIFY(!page.kvDtype); // a model kvbe has no preset for: its dtype stays open
        QCOMPARE(mismatchWarnings(page, llama, KvDtype::BF16).size(), size_t(1));
    }

    // Every fixture shaped exactly as the format page says (checked by an independent reader).
    void fixturesFollowTheFormatPage() {
        const QDir dir(kFixtures);
        int checked = 0;
        for (const auto& name : dir.entryList({"pykvcache-*.json"}, QDir::Files)) {
            const auto page = test::readPageFile(fixtureBytes(name));
            QVERIFY2(page.problems.isEmpty(), qPrintable(name + ": " + page.problems.join("; ")));
            const auto c = fixture(name.toUtf8().constData());
            QCOMPARE(c.format, std::string(page.schema == 2 ? "py-kvcache-v2" : "py-kvcache-v1"));
            const auto gate = pyKvcacheGate(c);
            QCOMPARE(gate.at("ssd"), double(page.gateSsd()));
            QCOMPARE(gate.at("mem"), double(page.gateMem()));
            ++checked;
        }
        QVERIFY(checked >= 8);
        int failed = 0;
        const auto problems = test::checkParetoCsv(fixtureBytes("pareto-measure.csv"), &failed);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join("; ")));
        QCOMPARE(failed, 1);
    }

    // py-kvcache's rule on hand-made curves.
    void pyKvcacheRule() {
        CurveKnots f{0, {{0, 0}, {100, 0.01}, {1000, 0.1}, {5000, 0.5}}};
        CurveKnots g{0.02, {{0, 0.02}, {100, 0.02}, {1000, 0.05}, {5000, 0.2}}};
        QCOMPARE(pyKvcacheRuleThreshold(f, g),
                 112.0); // loses at 0 and 100: the next block after 100
        CurveKnots never{0.02, {{0, 1}, {5000, 1}}};
        QCOMPARE(pyKvcacheRuleThreshold(f, never), 5008.0); // past the last measured length
        CurveKnots cheap{0, {{0, -1}, {5000, 0}}};
        cheap.knots[0].second = 0;
        f.knots[0].second = 0.001;
        QCOMPARE(pyKvcacheRuleThreshold(f, cheap), 0.0); // always pays: gate off
    }

    // The v2 export, read back by the independent reader: every rule of the page, thresholds by
    // py-kvcache's rule equal to the cost model's p* rounded up to a block, knots and golden
    // points equal to the model's values.
    void pyKvcacheV2ExportReadsBack() {
        // The illustrative scenario: the default's DRAM p* is the published 736 tokens to the
        // last digit, a multiple of 16 where rounding up to a block is a tie within 1e-13.
        const auto scenario = test::illustrative();
        const auto e = *evaluate(scenario, presets());
        auto ex = pyKvcacheV2FromScenario(e, presets());
        QVERIFY2(ex.ok(), ex.ok() ? "" : ex.message().c_str());
        ex->file.thresholds.safetyMarginTokens = 32;
        ex->file.provenance["generated"] = "2026-11-30T00:00:00Z";
        const auto text = pyKvcacheV2Json(ex->file);
        const auto page = test::readPageFile(QByteArray::fromStdString(text));
        QVERIFY2(page.problems.isEmpty(), qPrintable(page.problems.join("; ")));
        QCOMPARE(page.schema, 2);
        QCOMPARE(page.modelName, QString::fromStdString(e.model.id));
        QCOMPARE(page.kvDtype, QString("auto")); // the default scenario keeps the model's own dtype
        QCOMPARE(page.margin, qint64(32));
        const auto& f = page.curves["f"];
        for (const char* name : {"g_ssd", "g_mem"}) {
            const auto& g = page.curves[name];
            QCOMPARE(g.knots.keys(), f.knots.keys()); // one set of lengths
            for (auto k : f.knots.keys())
                QCOMPARE(k % 16, qint64(0));
        }
        size_t ssd = 0, mem = 0;
        for (size_t i = 0; i < e.scenario.tiers.size(); ++i) {
            if (e.scenario.tiers[i].name == ex->ssdTier) ssd = i;
            if (e.scenario.tiers[i].name == ex->memTier) mem = i;
        }
        const auto pSsd = e.cost.breakevenPrefix(e.tiers[ssd]);
        const auto pMem = e.cost.breakevenPrefix(e.tiers[mem]);
        QVERIFY(pSsd && pMem);
        QCOMPARE(*page.ssd, test::pageRuleThreshold(f, page.curves["g_ssd"]));
        QCOMPARE(*page.mem, test::pageRuleThreshold(f, page.curves["g_mem"]));
        QCOMPARE(*page.ssd, qint64(std::ceil(*pSsd / 16) * 16));
        QCOMPARE(*page.mem, qint64(std::ceil(*pMem / 16) * 16));
        for (auto it = f.knots.begin(); it != f.knots.end(); ++it)
            QVERIFY(test::near(it.value(), e.cost.tMiss(double(it.key())), 1e-9) || it.key() == 0);
        QVERIFY(!page.golden.isEmpty());
        for (const auto& g : page.golden) {
            KVBE_COMPARE_REL(g.f, e.cost.tMiss(double(g.tokens)), 1e-9);
            KVBE_COMPARE_REL(g.gSsd, e.cost.tHit(e.tiers[ssd], double(g.tokens), double(g.tokens)),
                             1e-9);
            KVBE_COMPARE_REL(g.gMem, e.cost.tHit(e.tiers[mem], double(g.tokens), double(g.tokens)),
                             1e-9);
        }
        // And our own reader takes it back without a warning (its thresholds match its curves).
        const auto back = parse(text.c_str());
        QCOMPARE(back.format, std::string("py-kvcache-v2"));
        QVERIFY2(back.warnings.empty(), back.warnings.empty() ? "" : back.warnings[0].c_str());
        QVERIFY(back.kvDtype == KvDtype::BF16);
    }

    void pyKvcacheExportReadsBack() {
        PyKvcacheThresholds t{"meta-llama/Llama-3.2-3B", "auto", 6057.2, 736.0, 64};
        const auto text = pyKvcacheV1Json(t);
        const auto page = test::readPageFile(QByteArray::fromStdString(text));
        QVERIFY2(page.problems.isEmpty(), qPrintable(page.problems.join("; ")));
        const auto c = parse(text.c_str());
        QCOMPARE(c.format, std::string("py-kvcache-v1"));
        QCOMPARE(c.model, t.modelName);
        QCOMPARE(c.breakevenPrefix.at("ssd"),
                 6058.0); // rounded up: a threshold never admits a loss
        QCOMPARE(c.breakevenPrefix.at("mem"), 736.0);
        QCOMPARE(*c.safetyMarginTokens, 64.0);
        QVERIFY(c.kvDtype == KvDtype::BF16); // auto, for a model kvbe knows
        // A tier that never pays: a threshold past the context, never null (py-kvcache refuses
        // that).
        PyKvcacheThresholds never{"m", "fp8", std::nullopt, 12.0, 0, 131072};
        const auto n = parse(pyKvcacheV1Json(never).c_str());
        QCOMPARE(n.breakevenPrefix.at("ssd"), 131072.0 + 16);
        // No tier for a medium: the field is left out, py-kvcache's "gate off".
        never.writeMem = false;
        const auto off = parse(pyKvcacheV1Json(never).c_str());
        QVERIFY(!off.breakevenPrefix.count("mem"));
        QCOMPARE(pyKvcacheGate(off).at("mem"), 0.0);
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
