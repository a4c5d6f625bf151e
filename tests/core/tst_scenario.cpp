// Scenarios: the default one, exact JSON round trips, evaluation, bad files, the KV block of a
// probe's --model, and the GPU presets' device names.
#include "illustrative_scenario.h"
#include "kvbe/scenario/gpu_names.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>

using namespace kvbe;
using kvbe::test::presets;

class TestScenario : public QObject {
    Q_OBJECT
  private slots:
    // The seed's scenario, kept as the illustrative one (--scenario illustrative).
    void illustrativeScenarioIsTheSeeds() {
        auto s = builtinScenario("illustrative", presets());
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(s->model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(s->gpu, std::string("h100-sxm"));
        QCOMPARE(s->utilisation, 0.5);
        QCOMPARE(s->tiers.size(), size_t(3));
        QCOMPARE(s->tiers[0].preset, std::string("dram-pcie5"));
        QCOMPARE(s->tiers[1].preset, std::string("nvme-gen5"));
        QCOMPARE(s->tiers[2].preset, std::string("nvme-gen4"));
        QCOMPARE(s->tiers[1].bandwidthGBps, 13.5);
        QCOMPARE(s->tiers[1].tFixedMs, 1.0);
        QVERIFY(QString::fromStdString(s->name).contains("illustrative"));
        auto e = evaluate(*s, presets());
        QVERIFY(e.ok());
        QCOMPARE(e->peakFlops, 989.4e12);
        // NVMe is staged through host DRAM, pipelined: min(13.5, 55) GB/s.
        QCOMPARE(e->tiers[1].bandwidthBps, 13.5e9);
    }

    // The default scenario is the study's model on its GPU with the fitted values: the SSD
    // tier's break-even prefix, worked out here in closed form from the numbers of
    // cost-model.md, is within 5 % of the published 6,057 tokens (the seed's was 219).
    void defaultScenarioIsTheStudysNode() {
        auto s = defaultScenario(presets());
        QVERIFY2(s.ok(), s.ok() ? "" : s.message().c_str());
        QCOMPARE(s->model, std::string("meta-llama/Llama-3.2-3B"));
        QCOMPARE(s->gpu, std::string("h100-sxm"));
        QCOMPARE(s->tiers.size(), size_t(2));
        QCOMPARE(s->tiers[1].preset, std::string("nvme-gen5"));
        // Llama 3.2 3B: P = 3.2128e9, L = 28, Hq = 24, d = 128, 114,688 KV bytes a token;
        // H100 SXM 989.4 TFLOP/s. Prefill (simple FLOP model) 2·P·p + 2·L·Hq·d·p² at u of the
        // peak; a hit t_fixed + 114,688·p / B with t_fixed = 28 layers × t_layer. p* is where
        // they meet: a·p² + (b − k)·p − t_fixed = 0.
        const double u = s->utilisation, peak = 989.4e12 * u;
        const double a = 2.0 * 28 * 24 * 128 / peak, b = 2 * 3.2128e9 / peak;
        const TierConfig& ssd = s->tiers[1];
        const double k = 114688 / (ssd.bandwidthGBps * 1e9);
        const double tFixed = ssd.tFixedMs * 1e-3 + 28 * ssd.tLayerUs * 1e-6;
        const double p = (-(b - k) + std::sqrt((b - k) * (b - k) + 4 * a * tFixed)) / (2 * a);
        QVERIFY2(std::abs(p / 6057 - 1) <= 0.05, qPrintable(QString::number(p)));
        auto e = evaluate(*s, presets());
        QVERIFY(e.ok());
        const auto core = e->cost.breakevenPrefix(e->tiers[1]);
        QVERIFY(core);
        QVERIFY2(std::abs(*core / p - 1) <= 0.001,
                 qPrintable(QString("%1 vs %2").arg(*core).arg(p)));
    }

    // A built-in scenario by its key, where no file has that name; a name that is neither says
    // which keys there are.
    void builtinScenarioByName() {
        auto byKey = loadScenario("illustrative", presets());
        QVERIFY2(byKey.ok(), byKey.ok() ? "" : byKey.message().c_str());
        QCOMPARE(byKey->utilisation, 0.5);
        auto withExt = loadScenario("illustrative.kvbe.json", presets());
        QVERIFY(withExt.ok());
        QVERIFY(*withExt == *byKey);
        auto d = loadScenario("default", presets());
        QVERIFY(d.ok());
        QVERIFY(*d == *defaultScenario(presets()));
        auto none = loadScenario("no-such-scenario", presets());
        QVERIFY(!none.ok());
        const QString m = QString::fromStdString(none.message());
        QVERIFY2(m.startsWith("no-such-scenario: no such file") && m.contains("illustrative") &&
                     m.contains("default"),
                 qPrintable(m));
        // A path is a path: no built-in scenario stands in for a missing file in a folder.
        QVERIFY(!loadScenario("some/dir/illustrative", presets()).ok());
    }

    void roundTripIsExact() {
        Scenario s = kvbe::test::illustrative();
        s.name = "H200, \"FP8\" KV — ünïcode";
        s.paramsOverride = 3.21e9;
        s.gpu = "h200";
        s.peakTflops = 912.345678901234;
        s.computeDtype = "fp8";
        s.utilisation = 0.4321;
        s.rampHalfTokens = 1536.5;
        s.flopModel = FlopModel::Detailed;
        s.kvDtype = KvDtype::FP8;
        s.weightDtype = WeightDtype::INT4;
        s.tensorParallel = 4;
        s.sharedPath = true;
        s.hostLinkGBps = 51.2;
        s.measuredPrefill = {{1024, 0.0123}, {8192, 0.14159265358979}};
        s.tiers[2].staging = Staging::Serial;
        s.tiers[2].measured = {{1e6, 1.1e-3}, {1e8, 9.3e-3}};
        s.tiers.push_back({"custom", "", 0.1 + 0.2, 1.0 / 3, Staging::None, "#123abc", {}});
        s.tiers[1].amplification = 10.0 / 4.4;
        s.tiers.push_back({"amplified", "", 12, 0.5, Staging::None, "", {}, 2.25, 2.0 / 3});
        s.tiers.push_back({"per layer", "", 11, 0.25, Staging::None, "", {}, 1, {}, 184.4 + 1e-9});
        s.fittedOn = {{"meta-llama/Llama-3.2-3B", 28}};
        s.cachedFraction = 0.3;
        s.lengths = {100, 65536, 333, false};
        s.sweepTokens = 8192;
        // Prices of every kind the plan reads, a node's link to a pool among them.
        s.prices.dramPerGiB = Price{12.5, ""};
        s.prices.gpuPerHour["h200"] = Price{3.75, "a quote"};
        s.prices.drive["nvme-gen5"] = Price{2000, ""};
        s.prices.link["net-400g"] = Price{3000.5, "a quote, 2026"};
        s.prices.origin = "the scenario";
        const auto text = scenarioToJson(s);
        auto back = scenarioFromJson(text, "round-trip", presets());
        QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
        QVERIFY(*back == s);
        QCOMPARE(scenarioToJson(*back), text);
    }

    void saveAndLoadAtomically() {
        QTemporaryDir tmp;
        const auto path = std::filesystem::path(tmp.path().toStdString()) / "a.kvbe.json";
        const Scenario s = *defaultScenario(presets());
        QVERIFY(saveScenario(path, s).ok());
        Scenario changed = s;
        changed.utilisation = 0.25;
        QVERIFY(saveScenario(path, changed).ok());
        auto loaded = loadScenario(path, presets());
        QVERIFY(loaded.ok());
        QVERIFY(*loaded == changed);
        // Nothing but the file itself is left behind.
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
        // A folder that cannot be written keeps its old file and says why.
        auto bad = saveScenario("/nonexistent-dir/x.kvbe.json", s);
        QVERIFY(!bad.ok());
        QVERIFY(QString::fromStdString(bad.message()).contains("/nonexistent-dir"));
    }

    void badScenarios_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("no version")
            << QByteArray(R"({"model": "x"})") << "'kvbe_scenario' is missing";
        QTest::newRow("newer version") << QByteArray(R"({"kvbe_scenario": 7})") << "newer kvbe";
        QTest::newRow("a config.json")
            << QByteArray(R"({"num_hidden_layers": 2, "architectures": []})")
            << "model config.json";
        QTest::newRow("weight dtype int3")
            << QByteArray(R"({"kvbe_scenario": 1, "weight_dtype": "int3"})")
            << "'weight_dtype' is a string (\"int3\"); expected bf16, fp16, fp8, int8, int4 or "
               "fp32";
        QTest::newRow("utilisation 0")
            << QByteArray(R"({"kvbe_scenario": 1, "utilisation": 0})") << "'utilisation'";
        QTest::newRow("utilisation 1.5")
            << QByteArray(R"({"kvbe_scenario": 1, "utilisation": 1.5})") << "'utilisation'";
        QTest::newRow("utilisation string")
            << QByteArray(R"({"kvbe_scenario": 1, "utilisation": "half"})")
            << "'utilisation' is a string";
        QTest::newRow("unknown gpu")
            << QByteArray(R"({"kvbe_scenario": 1, "gpu": "h900"})") << "expected one of";
        QTest::newRow("unknown tier")
            << QByteArray(R"({"kvbe_scenario": 1, "tiers": [{"preset": "floppy"}]})")
            << "tiers[0].preset";
        QTest::newRow("bandwidth 0")
            << QByteArray(R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 0}]})")
            << "tiers[0].bandwidth_GBps";
        QTest::newRow("negative t_fixed")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "t_fixed_ms": -1}]})")
            << "tiers[0].t_fixed_ms";
        QTest::newRow("bad colour")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "color": "red"}]})")
            << "tiers[0].color";
        QTest::newRow("bad staging")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "staging": "teleport"}]})")
            << "staging";
        QTest::newRow("bad measured")
            << QByteArray(R"({"kvbe_scenario": 1, "measured_prefill": [[1024, -1]]})")
            << "measured_prefill[0]";
        QTest::newRow("lengths reversed")
            << QByteArray(R"({"kvbe_scenario": 1, "lengths": {"min": 1000, "max": 10}})")
            << "lengths.max";
        QTest::newRow("amplification below 1")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "amplification": 0.5}]})")
            << "tiers[0].amplification";
        QTest::newRow("amplification string")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "amplification": "2x"}]})")
            << "tiers[0].amplification";
        QTest::newRow("write bandwidth 0")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "write_GBps": 0}]})")
            << "tiers[0].write_GBps";
        QTest::newRow("negative t_layer")
            << QByteArray(
                   R"({"kvbe_scenario": 1, "tiers": [{"name": "x", "bandwidth_GBps": 5, "t_layer_us": -1}]})")
            << "tiers[0].t_layer_us";
        QTest::newRow("fitted_on without layers")
            << QByteArray(R"({"kvbe_scenario": 1, "fitted_on": [{"model": "m"}]})")
            << "fitted_on[0].layers";
        QTest::newRow("fitted_on fractional layers")
            << QByteArray(R"({"kvbe_scenario": 1, "fitted_on": [{"model": "m", "layers": 2.5}]})")
            << "fitted_on[0].layers";
        QTest::newRow("fitted_on not a list")
            << QByteArray(R"({"kvbe_scenario": 1, "fitted_on": "llama"})") << "fitted_on";
        QTest::newRow("fraction above 1")
            << QByteArray(R"({"kvbe_scenario": 1, "cached_fraction": 2})") << "cached_fraction";
        QTest::newRow("not json") << QByteArray("{kvbe") << "not valid JSON";
    }
    void badScenarios() {
        QFETCH(QByteArray, text);
        QFETCH(QString, fragment);
        auto r =
            scenarioFromJson(std::string_view(text.constData(), static_cast<size_t>(text.size())),
                             "bad.kvbe.json", presets());
        QVERIFY(!r.ok());
        const auto msg = QString::fromStdString(r.message());
        QVERIFY2(msg.startsWith("bad.kvbe.json"), qPrintable(msg));
        QVERIFY2(msg.contains(fragment), qPrintable(msg));
    }

    // A scenario without t_layer_us reads as before: t_fixed_ms is the whole fixed cost, on
    // every model. With it, the evaluated tier carries t0 and t_layer, and the fixed cost of a
    // hit follows the model's layers (28 for Llama 3.2 3B, 36 for Qwen3 4B).
    void perLayerFixedCostInScenarios() {
        const QByteArray old = R"({"kvbe_scenario": 1, "model": "meta-llama/Llama-3.2-3B",
            "tiers": [{"name": "nvme", "bandwidth_GBps": 10, "t_fixed_ms": 5}]})";
        auto s = scenarioFromJson(old.constData(), "old.kvbe.json", presets());
        QVERIFY(s.ok());
        QCOMPARE(s->tiers[0].tLayerUs, 0.0);
        QVERIFY(s->fittedOn.empty());
        QVERIFY(!QString::fromStdString(scenarioToJson(*s)).contains("t_layer_us"));
        QVERIFY(!QString::fromStdString(scenarioToJson(*s)).contains("fitted_on"));
        auto e = evaluate(*s, presets());
        QVERIFY(e.ok());
        QCOMPARE(e->tiers[0].tFixedS, 0.005);
        QCOMPARE(e->cost.tFixed(e->tiers[0]), 0.005);

        const QByteArray perLayer = R"({"kvbe_scenario": 1, "model": "meta-llama/Llama-3.2-3B",
            "fitted_on": [{"model": "meta-llama/Llama-3.2-3B", "layers": 28}],
            "tiers": [{"name": "nvme", "bandwidth_GBps": 10, "t_fixed_ms": 1, "t_layer_us": 150}]})";
        s = scenarioFromJson(perLayer.constData(), "new.kvbe.json", presets());
        QVERIFY(s.ok());
        QCOMPARE(s->tiers[0].tLayerUs, 150.0);
        QCOMPARE(s->fittedOn.size(), size_t(1));
        QCOMPARE(s->fittedOn[0].layers, 28);
        e = evaluate(*s, presets());
        QVERIFY(e.ok());
        KVBE_COMPARE_REL(e->cost.tFixed(e->tiers[0]), 0.001 + 28 * 150e-6, 1e-12);
        s->model = "Qwen/Qwen3-4B-Instruct-2507";
        e = evaluate(*s, presets());
        QVERIFY(e.ok());
        KVBE_COMPARE_REL(e->cost.tFixed(e->tiers[0]), 0.001 + 36 * 150e-6, 1e-12);
        // Measured transfers replace the whole fixed cost, the per-layer part too.
        s->tiers[0].measured = {{1e6, 1.1e-3}, {1e8, 9.3e-3}};
        e = evaluate(*s, presets());
        QVERIFY(e.ok());
        QCOMPARE(e->tiers[0].tLayerS, 0.0);
    }

    // Tier presets may give a per-layer part (t_layer_us); the shipped ones give none.
    void tierPresetPerLayer() {
        const auto parsed = parseTierPresets(
            R"({"tiers": {"x": {"name": "X", "kind": "nvme", "read_GBps": 10, "write_GBps": 5,
               "t_fixed_ms": 0.5, "t_layer_us": 20}}})",
            "tiers.json");
        QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.message().c_str());
        QCOMPARE(parsed->at("x").tLayerS, 20e-6);
        const TierConfig t = tierFromPreset(parsed->at("x"));
        QCOMPARE(t.tFixedMs, 0.5);
        QCOMPARE(t.tLayerUs, 20.0);
        for (const auto& [key, spec] : presets().tiers())
            QCOMPARE(spec.tLayerS, 0.0);
    }

    void evaluationErrors() {
        Scenario s = kvbe::test::illustrative();
        s.gpu = "a100-80gb-sxm";
        s.computeDtype = "fp8";
        auto e = evaluate(s, presets());
        QVERIFY(!e.ok());
        QVERIFY(QString::fromStdString(e.message()).contains("FP8"));
        s.computeDtype = "bf16";
        s.model = "no-such-org/no-such-model";
        e = evaluate(s, presets());
        QVERIFY(!e.ok());
        QVERIFY(QString::fromStdString(e.message()).contains("no-such-org/no-such-model"));
    }

    // Amplification reaches the evaluated tier after staging, and presets carry write bandwidth.
    void amplificationAndWriteBandwidth() {
        Scenario s = kvbe::test::illustrative();
        QCOMPARE(s.tiers[1].preset, std::string("nvme-gen5"));
        QCOMPARE(*s.tiers[1].writeGBps, 6.75);
        QCOMPARE(s.tiers[1].amplification, 1.0);
        s.tiers[1].amplification = 2.5;
        auto e = evaluate(s, presets());
        QVERIFY(e.ok());
        QCOMPARE(e->tiers[1].amplification, 2.5);
        QCOMPARE(e->tiers[1].bandwidthBps, 13.5e9); // pipelined under the 55 GB/s link
        KVBE_COMPARE_REL(e->tiers[1].effectiveBandwidthBps(), 13.5e9 / 2.5, 1e-15);
        const auto text = scenarioToJson(s);
        QVERIFY(QString::fromStdString(text).contains("\"amplification\": 2.5"));
        QVERIFY(*scenarioFromJson(text, "again", presets()) == s);
        // A tier preset file may give a default amplification; out of range is refused.
        auto tiers = parseTierPresets(
            R"({"tiers": {"conn": {"read_GBps": 12, "write_GBps": 2, "t_fixed_ms": 1, "amplification": 2.27}}})",
            "t.json");
        QVERIFY(tiers.ok());
        QCOMPARE(tiers->at("conn").amplification, 2.27);
        QCOMPARE(tierFromPreset(tiers->at("conn")).amplification, 2.27);
        QCOMPARE(*tierFromPreset(tiers->at("conn")).writeGBps, 2.0);
        auto bad = parseTierPresets(
            R"({"tiers": {"conn": {"read_GBps": 12, "write_GBps": 2, "t_fixed_ms": 1, "amplification": 0.9}}})",
            "t.json");
        QVERIFY(!bad.ok());
        QVERIFY2(QString::fromStdString(bad.message()).contains("t.json: tiers.conn.amplification"),
                 bad.message().c_str());
    }

    // A tensor-parallel size the model cannot split is refused when the scenario is evaluated.
    void tensorParallelRuleAtEvaluation() {
        Scenario s = kvbe::test::illustrative();
        s.tensorParallel = 3;
        auto e = evaluate(s, presets());
        QVERIFY(!e.ok());
        QVERIFY2(QString::fromStdString(e.message()).contains("8 KV heads do not divide by 3"),
                 e.message().c_str());
        s.tensorParallel = 24; // more GPUs than KV heads: each replicated 3 times
        QVERIFY(evaluate(s, presets()).ok());
    }

    void measuredTransfersReplaceNominal() {
        Scenario s = kvbe::test::illustrative();
        s.tiers.resize(1);
        s.tiers[0].staging = Staging::None;
        s.tiers[0].measured = {{1e6, 1e-3 + 1e6 / 20e9}, {1e9, 1e-3 + 1e9 / 20e9}};
        auto e = evaluate(s, presets());
        QVERIFY(e.ok());
        KVBE_COMPARE_REL(e->tiers[0].bandwidthBps, 20e9, 1e-9);
        KVBE_COMPARE_REL(e->tiers[0].tFixedS, 1e-3, 1e-6);
    }

    void kvDtypeDefaultsToModel() {
        Scenario s = kvbe::test::illustrative();
        auto e = evaluate(s, presets());
        QCOMPARE(e->cost.kvBytesPerToken(), 114688.0);
        s.kvDtype = KvDtype::FP8;
        e = evaluate(s, presets());
        QCOMPARE(e->cost.kvBytesPerToken(), 57344.0);
    }

    // A device's name is taken for a preset by one rule, the device_names of the GPU presets
    // (the GPU probes and the Fleet panel both ask it): the shipped file's names.
    void deviceNamesMatchTheShippedPresets_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("preset"); // empty: none
        const auto row = [](const char* device, const char* preset) {
            QTest::newRow(*device ? device : "(empty)") << QString(device) << QString(preset);
        };
        row("NVIDIA H200", "h200");
        row("NVIDIA H100 80GB HBM3", "h100-sxm");
        row("NVIDIA H100 PCIe", "h100-pcie");
        row("NVIDIA H100 NVL", "h100-nvl");
        row("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm");
        row("NVIDIA A100-SXM4-40GB", "");
        row("NVIDIA L40S", "l40s");
        row("NVIDIA RTX 4000 Ada Generation", "rtx-4000-ada");
        row("NVIDIA GeForce RTX 4090", "rtx-4090");
        row("AMD Instinct MI300X", "mi300x");
        row("Tesla T4", "");
        row("", "");
    }
    void deviceNamesMatchTheShippedPresets() {
        QFETCH(QString, device);
        QFETCH(QString, preset);
        const auto got = matchGpuPreset(device.toStdString());
        QCOMPARE(QString::fromStdString(got.value_or("")), preset);
        if (got) QVERIFY(presets().findGpu(*got));
    }

    // A preset added to the file is matched with nothing else changed: presets read from a text
    // with one more GPU, whose device names win over a shorter pattern that also matches.
    void aGpuPresetAddedAtRunTimeIsMatched() {
        const std::string text = R"({"kvbe_gpus": 1, "gpus": {
            "h100-sxm": {"name": "NVIDIA H100 SXM5 80GB", "device_names": ["h100"],
                         "bf16_tflops": 989.4, "fp8_tflops": 1978.9, "memory_GB": 80,
                         "host_link_practical_GBps": 55},
            "h100-x": {"name": "NVIDIA H100 X 96GB", "device_names": ["h100 x96", "hx 96gb"],
                       "bf16_tflops": 900, "fp8_tflops": null, "memory_GB": 96,
                       "host_link_practical_GBps": 60}}})";
        auto gpus = parseGpuPresets(text, "more-gpus.json");
        QVERIFY2(gpus.ok(), gpus.ok() ? "" : gpus.message().c_str());
        auto names = parseGpuDeviceNames(text, "more-gpus.json");
        QVERIFY2(names.ok(), names.ok() ? "" : names.message().c_str());
        QCOMPARE(names->size(), std::size_t(3));
        const auto match = [&](const char* device) {
            return matchGpuPreset(device, *names).value_or("");
        };
        QCOMPARE(match("NVIDIA H100 X96"), std::string("h100-x"));
        QCOMPARE(match("nvidia hx 96GB"), std::string("h100-x"));
        QCOMPARE(match("NVIDIA H100 80GB HBM3"), std::string("h100-sxm"));
        QCOMPARE(match("NVIDIA H200"), std::string());
        QVERIFY(gpus->count(match("NVIDIA H100 X96")));
        QCOMPARE(gpus->at("h100-x").memoryBytes, 96e9);
    }

    // Malformed device names fail the presets' reader too, naming the field.
    void badDeviceNamesAreRefused_data() {
        QTest::addColumn<QString>("names");
        QTest::addColumn<QString>("error");
        QTest::newRow("not an array") << R"("h100")"
                                      << "gpus.g.device_names is a string";
        QTest::newRow("a number") << "[1]"
                                  << "gpus.g.device_names[0] is a number";
        QTest::newRow("blank") << R"(["  "])"
                               << "gpus.g.device_names[0] is a string";
    }
    void badDeviceNamesAreRefused() {
        QFETCH(QString, names);
        QFETCH(QString, error);
        const std::string text = R"({"gpus": {"g": {"bf16_tflops": 1, "fp8_tflops": null,
            "memory_GB": 1, "host_link_practical_GBps": 1, "device_names": )" +
                                 names.toStdString() + "}}}";
        auto gpus = parseGpuPresets(text, "g.json");
        QVERIFY(!gpus.ok());
        QVERIFY2(QString::fromStdString(gpus.message()).contains(error), gpus.message().c_str());
        QVERIFY(!parseGpuDeviceNames(text, "g.json").ok());
    }

    void kvBlockOfLlama32_3BIs28MiB() {
        // 28 layers × 8 KV heads × 128 head dim × 2 (K and V) × 2 bytes (bf16) × 256 tokens.
        const std::uint64_t expected = 28ull * 8 * 128 * 2 * 2 * 256;
        QCOMPARE(expected, 28ull * 1024 * 1024);
        auto named = kvBlockBytes("meta-llama/Llama-3.2-3B");
        QVERIFY(named.ok());
        QCOMPARE(*named, expected);
        auto byDefault = kvBlockBytes(""); // the default scenario's model
        QVERIFY(byDefault.ok());
        QCOMPARE(*byDefault, expected);
        auto missing = kvBlockBytes("no-such/model");
        QVERIFY(!missing.ok());
        QVERIFY(missing.message().starts_with("--model no-such/model"));
    }
};

QTEST_GUILESS_MAIN(TestScenario)
#include "tst_scenario.moc"
