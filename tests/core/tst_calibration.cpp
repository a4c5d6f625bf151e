// Calibration files: our format, the formats of other tools, fitting, and the py-kvcache export.
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
using kvbe::test::presets;

namespace {

Calibration parse(const char* text, const char* source = "fixture") {
    auto c = parseCalibration(text, source);
    if (!c) qFatal("%s", c.message().c_str());
    return *c;
}

QString errorOf(const char* text, const char* source = "bad-file") {
    auto c = parseCalibration(text, source);
    return c.ok() ? QString() : QString::fromStdString(c.message());
}

// The inputs synthetic measurements are made with: a preset at u of an H100's 989 TFLOP/s.
CostInputs h100Inputs(const char* model, double u) {
    CostInputs in;
    in.model = test::preset(model);
    in.peakFlops = 989e12;
    in.utilisation = u;
    return in;
}

const QString kFixtures = QStringLiteral(KVBE_SOURCE_DIR "/tests/fixtures/calibration/");

Calibration fixture(const char* name) {
    auto c = readCalibration((kFixtures + name).toStdString());
    if (!c) qFatal("%s", c.message().c_str());
    return *c;
}

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
    void paretoCsv() {
        const auto c = parse("curve,server_config,doc_size,prefix_len,prefix_frac,concurrency,ttft_"
                             "mean_s,ttft_median_s\n"
                             "cold_prefill,\"vllm, no offload\",1024,0,0,1,0.031,0.030\n"
                             "cold_prefill,\"vllm, no offload\",8192,0,0,1,0.17,0.16\n"
                             "cache_hit,py-kvcache ssd,8192,4096,0.5,1,0.13,0.12\n"
                             "cache_hit,py-kvcache ssd,8192,,0.75,1,0.11,\n"
                             "cache_hit,py-kvcache ssd,8192,4096,0.5,8,0.9,0.8\n");
        QCOMPARE(c.format, std::string("pareto-csv"));
        QCOMPARE(c.prefill.size(), size_t(2));
        QCOMPARE(c.prefill[1].tokens, 8192.0);
        QCOMPARE(c.prefill[1].seconds, 0.16); // the median where there is one
        QCOMPARE(c.hits.size(), size_t(2));   // the concurrency-8 row is left out ...
        QCOMPARE(c.hits[0].tier, std::string("py-kvcache ssd"));
        QCOMPARE(c.hits[1].prefix, 6144.0); // prefix_frac · doc_size
        QCOMPARE(c.hits[1].seconds, 0.11);  // the mean where the median is empty
        QVERIFY(!c.warnings.empty());       // ... and that is said
    }

    // A run that failed (error set, TTFT empty) is skipped, counted and named; the rest is read.
    void paretoCsvWithFailedRuns() {
        const auto c = fixture("pareto-measure.csv");
        QCOMPARE(c.prefill.size(), size_t(4));
        QCOMPARE(c.hits.size(), size_t(4)); // the failed run and the concurrency-8 row left out
        QCOMPARE(c.warnings.size(), size_t(2));
        const auto w = QString::fromStdString(c.warnings[0]);
        QVERIFY2(w.contains("1 failed run skipped") && w.contains("line 10") &&
                     w.contains("doc_size 131072") && w.contains("CUDA out of memory"),
                 qPrintable(w));
        // Only failed runs: refused, saying so.
        const auto msg = errorOf(
            "curve,server_config,doc_size,prefix_len,prefix_frac,concurrency,n_queries,n_"
            "successful,"
            "ttft_mean_s,ttft_median_s,ttft_p05_s,ttft_p95_s,ttft_p99_s,gpu_transfer_csv,error\n"
            "cold_prefill,vllm,1024,0,0.0,1,32,0,,,,,,,\"timeout, 600 s\"\n");
        QVERIFY2(msg.contains("1 failed runs"), qPrintable(msg));
    }

    // fio as it writes JSON (and json+) here: notes before the JSON, jobs of one name summed.
    void fioAsItWritesJson() {
        const auto plus = fixture("fio-jsonplus-two-jobs.json");
        QCOMPARE(plus.format, std::string("fio"));
        QCOMPARE(plus.tiers.size(), size_t(2));
        QVERIFY(plus.tiers[0].name.rfind("fio seqread (rw=read, bs=1M", 0) == 0);
        QCOMPARE(*plus.tiers[0].readBps, 615677651.0 + 358870930.0);
        QCOMPARE(*plus.tiers[1].readBps, 333874945.0);
        const auto plain = fixture("fio-write-then-read.json");
        QCOMPARE(plain.tiers.size(), size_t(2));
        QCOMPARE(*plain.tiers[0].writeBps, 138084082.0);
        QVERIFY(!plain.tiers[0].readBps);
        QCOMPARE(*plain.tiers[1].readBps, 1597830095.0);
        // A job that failed is skipped with a warning.
        const auto failed = parse(R"({"fio version": "fio-3.33", "jobs": [
            {"jobname": "a", "error": 5, "read": {"bw_bytes": 0}},
            {"jobname": "b", "error": 0, "read": {"bw_bytes": 1000000}}]})");
        QCOMPARE(failed.tiers.size(), size_t(1));
        QVERIFY(QString::fromStdString(failed.warnings.at(0))
                    .contains("'a' (jobs[0]) failed with error 5"));
    }

    // Real nvbandwidth -j -v output (v0.5, one GPU), byte for byte as NVIDIA's DCGM keeps it for
    // its plugin tests (tests/fixtures/calibration-sources.md): the copy-engine figures, not the SM
    // ones or the latency test; the 17 waived device-to-device tests in one warning.
    void nvbandwidthRealOutput() {
        const auto c = fixture("nvbandwidth-v0.5-verbose-dcgm.json");
        QCOMPARE(c.format, std::string("nvbandwidth"));
        QCOMPARE(c.tiers.size(), size_t(1));
        QCOMPARE(c.tiers[0].name, std::string("Host DRAM (nvbandwidth)"));
        KVBE_COMPARE_REL(*c.tiers[0].readBps, 12.3964e9, 1e-12);  // host_to_device_memcpy_ce
        KVBE_COMPARE_REL(*c.tiers[0].writeBps, 13.2001e9, 1e-12); // device_to_host_memcpy_ce
        QCOMPARE(c.warnings.size(), size_t(1));
        const auto w = QString::fromStdString(c.warnings[0]);
        QVERIFY2(w.contains(
                     "17 tests did not pass (Waived), skipped: device_to_device_memcpy_read_ce, "),
                 qPrintable(w));
        QVERIFY2(w.contains(" and 11 more"), qPrintable(w));
    }

    // Tests that failed, in the shapes nvbandwidth v0.8's json_output.cpp gives them (constructed
    // from that source; no public capture of a failed run was found): the test stays "Running", a
    // second entry of the same name says "Error", the message is the top-level "error"; a name that
    // does not exist is "ERROR". The device list (v0.8) names the GPU and the host.
    void nvbandwidthFailedTests() {
        const auto c = parse(
            R"nvb({"nvbandwidth": {"CUDA Runtime Version": 12080, "Driver Version": "570.124.06",
            "GPU Device list": ["0: NVIDIA H100 80GB HBM3 (00000000:19:00): (gpu-node-17)"],
            "error": "cudaErrorLaunchTimeout: the launch timed out and was terminated",
            "git_version": "v0.8", "version": "v0.8",
            "testcases": [
              {"name": "host_to_device_memcpy_ce", "status": "Running"},
              {"name": "host_to_device_memcpy_ce", "status": "Error"},
              {"name": "device_to_host_memcpy_ce", "status": "Passed", "bandwidth_description": "memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)",
               "bandwidth_matrix": [["54.87"]], "sum": 54.87},
              {"name": "host_to_device_memcpy_sm", "status": "Passed", "bandwidth_matrix": [["48.5"]], "sum": 48.5},
              {"name": "no_such_test", "status": "ERROR"},
              {"name": "device_to_device_memcpy_read_ce", "status": "Waived"}]}, "testcases": null})nvb");
        QCOMPARE(c.gpuName, std::string("NVIDIA H100 80GB HBM3 (00000000:19:00)"));
        QCOMPARE(c.host, std::string("gpu-node-17"));
        QCOMPARE(c.tiers.size(), size_t(1));
        KVBE_COMPARE_REL(*c.tiers[0].readBps, 48.5e9, 1e-12); // the CE copy failed: the SM one
        KVBE_COMPARE_REL(*c.tiers[0].writeBps, 54.87e9, 1e-12);
        QStringList w;
        for (const auto& s : c.warnings)
            w << QString::fromStdString(s);
        QCOMPARE(w.size(), 3); // the "Running" entry of the failed test is the same test
        QVERIFY2(w[0].contains("1 test did not pass (Error), skipped: host_to_device_memcpy_ce "
                               "(nvbandwidth: cudaErrorLaunchTimeout"),
                 qPrintable(w[0]));
        QVERIFY2(w[1].contains("did not pass (ERROR), skipped: no_such_test"), qPrintable(w[1]));
        QVERIFY2(w[2].contains(
                     "1 test did not pass (Waived), skipped: device_to_device_memcpy_read_ce") &&
                     !w[2].contains("nvbandwidth:"),
                 qPrintable(w[2]));
        // A test left "Running" with no entry that ended it is said as such.
        const auto running = parse(
            R"({"nvbandwidth": {"testcases": [{"name": "host_to_device_memcpy_ce", "status": "Running"},
            {"name": "device_to_host_memcpy_ce", "status": "Passed", "bandwidth_matrix": [["54.87"]]}]}})");
        QVERIFY(
            QString::fromStdString(running.warnings.at(0))
                .contains(
                    "1 test started but reported no result, skipped: host_to_device_memcpy_ce"));
        // A run that stopped before any test: its own error, said as such.
        QVERIFY(
            errorOf(
                R"({"nvbandwidth": {"error": "Specified list of testcase prefixes did not match any testcases", "version": "v0.8"}})")
                .contains("nvbandwidth reported an error and no test results: Specified list of "
                          "testcase prefixes"));
        // nvbandwidth's text output (its README's example) is not read; the message says to use
        // --json.
        QVERIFY(errorOf("Running host_to_device_memcpy_ce.\nmemcpy CE CPU(row) -> GPU(column) "
                        "bandwidth (GB/s)\n"
                        "          0\n0     26.03\n")
                    .contains("run nvbandwidth with --json (-j)"));
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

    void fioJson() {
        const auto c = parse("fio: io_uring: registered buffers need page-aligned memory\n"
                             R"({"fio version": "fio-3.33", "time": "Sun Nov 29 10:00:00 2026",
            "global options": {"ioengine": "io_uring", "direct": "1", "bs": "1M", "iodepth": "32"},
            "jobs": [{"jobname": "seqread", "job options": {"rw": "read"},
                      "read": {"bw_bytes": 6400000000, "iops": 6103.5}, "write": {"bw_bytes": 0}},
                     {"jobname": "seqread", "job options": {"rw": "read"},
                      "read": {"bw_bytes": 6300000000}, "write": {"bw_bytes": 0}},
                     {"jobname": "seqwrite", "job options": {"rw": "write"},
                      "read": {"bw_bytes": 0}, "write": {"bw_bytes": 4100000000}}]})");
        QCOMPARE(c.format, std::string("fio"));
        QCOMPARE(c.tiers.size(), size_t(2));
        QCOMPARE(*c.tiers[0].readBps, 12.7e9); // two jobs of one name run together: their sum
        QVERIFY(c.tiers[0].name.find("bs=1M") != std::string::npos);
        QCOMPARE(*c.tiers[1].writeBps, 4.1e9);
        QVERIFY(!c.tiers[1].readBps);
    }

    void nvbandwidthJson() {
        const auto c =
            parse(R"({"nvbandwidth": {"CUDA Runtime Version": 13000, "Driver Version": "580.65",
            "testcases": [
              {"name": "host_to_device_memcpy_ce", "status": "Passed", "bandwidth_matrix": [["55.31"]], "sum": 55.31},
              {"name": "device_to_host_memcpy_ce", "status": "Passed", "bandwidth_matrix": [["54.87"]], "sum": 54.87},
              {"name": "host_to_device_memcpy_sm", "status": "Passed", "bandwidth_matrix": [["48.0"]]},
              {"name": "device_to_device_memcpy_read_ce", "status": "Waived"}]}})");
        QCOMPARE(c.format, std::string("nvbandwidth"));
        QCOMPARE(c.tiers.size(), size_t(1));
        KVBE_COMPARE_REL(*c.tiers[0].readBps, 55.31e9, 1e-12);
        KVBE_COMPARE_REL(*c.tiers[0].writeBps, 54.87e9, 1e-12);
        QCOMPARE(c.warnings.size(), size_t(1)); // the waived test
    }

    void ourFormatRoundTrips() {
        Calibration c;
        c.format = "kvbe";
        c.host = "gpu-node-17";
        c.date = "2026-11-29T10:00:00Z";
        c.gpuName = "NVIDIA H100 80GB HBM3";
        c.gpuClocksMHz = {{"sm", 1980}, {"memory", 2619}};
        c.model = "meta-llama/Llama-3.2-3B";
        c.kvDtype = KvDtype::BF16;
        c.kvBytesPerToken = 114688;
        c.prefill = {{1024, 0.0301}, {8192, 0.1604}};
        c.hits = {{8192, 4096, "nvme", 0.1213}};
        c.tiers = {{"nvme", {{1e6, 0.0011}, {1e9, 0.081}}, 12.4e9, 6.1e9}};
        c.fitted = FittedParameters{0.43, 1480.0, 0.004, {{"nvme", {12.4e9, 0.0019}}}, 0.021};
        c.breakevenPrefix = {{"nvme", 6057}, {"dram", 736}};
        QTemporaryDir tmp;
        const auto path = std::filesystem::path(tmp.path().toStdString()) / "node17.json";
        QVERIFY(saveCalibration(path, c).ok());
        auto back = readCalibration(path);
        QVERIFY2(back.ok(), back.ok() ? "" : back.message().c_str());
        QVERIFY(*back == c);
        QCOMPARE(back->format, std::string("kvbe"));
    }

    void folderOfNodeFiles() {
        QTemporaryDir tmp;
        for (int i = 0; i < 3; ++i) {
            Calibration c;
            c.host = "node" + std::to_string(i);
            c.breakevenPrefix["nvme"] = 6000 + i;
            QVERIFY(saveCalibration(std::filesystem::path(tmp.path().toStdString()) /
                                        ("n" + std::to_string(i) + ".json"),
                                    c)
                        .ok());
        }
        test::writeFile(tmp.filePath("broken.json"), "{\"kvbe_calibration\": 1, \"prefill\": 5}");
        test::writeFile(tmp.filePath("notes.txt"), "ignored");
        const auto set = readCalibrations({tmp.path().toStdString()});
        QCOMPARE(set.calibrations.size(), size_t(3));
        QCOMPARE(set.calibrations[2].host, std::string("node2"));
        QCOMPARE(set.errors.size(), size_t(1));
        QVERIFY(QString::fromStdString(set.errors[0]).contains("broken.json: field 'prefill'"));
    }

    // Each format's malformed file names the line or the field.
    void malformedFiles_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("fragment");
        QTest::newRow("ours: hit longer than prompt")
            << QByteArray(
                   R"({"kvbe_calibration": 1, "hits": [{"tokens": 10, "prefix": 20, "tier": "x", "seconds": 1}]})")
            << "hits[0].prefix";
        QTest::newRow("ours: newer version")
            << QByteArray(R"({"kvbe_calibration": 4})") << "version 4";
        QTest::newRow("ours: negative seconds")
            << QByteArray(R"({"kvbe_calibration": 1, "prefill": [[1024, -0.1]]})") << "prefill[0]";
        QTest::newRow("py-kvcache: tokens as text")
            << QByteArray(R"({"model_name": "m", "break_even_ssd_tokens": "many"})")
            << "break_even_ssd_tokens";
        QTest::newRow("py-kvcache: negative threshold")
            << QByteArray(R"({"break_even_mem_tokens": -1})")
            << "field 'break_even_mem_tokens' is a number (-1); expected a whole number";
        QTest::newRow("py-kvcache: fractional threshold")
            << QByteArray(R"({"break_even_ssd_tokens": 6057.5})") << "break_even_ssd_tokens";
        QTest::newRow("py-kvcache: null threshold")
            << QByteArray(R"({"break_even_ssd_tokens": null})") << "break_even_ssd_tokens";
        QTest::newRow("py-kvcache: schema 3")
            << QByteArray(R"({"schema_version": 3, "break_even_ssd_tokens": 5})")
            << "schema_version";
        const char* curves =
            R"("f": {"floor": 0, "knots": {"0": 0, "1024": 0.09}}, "g_ssd": {"floor": 0.03, "knots": {"0": 0.03, "1024": 0.03}})";
        auto v2 = [&](const char* gMem, const char* extra = "") {
            return QByteArray(R"({"schema_version": 2, "curves": {)") + curves + ", " + gMem + "}" +
                   extra + "}";
        };
        QTest::newRow("py-kvcache v2: knots as a list")
            << v2(R"("g_mem": {"floor": 0, "knots": [[0, 0.003], [1024, 0.003]]})")
            << "field 'curves.g_mem.knots' is an array; expected an object";
        QTest::newRow("py-kvcache v2: bad knot key")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "1k": 0.003}})") << "key \"1k\"";
        QTest::newRow("py-kvcache v2: negative knot key")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "-16": 0.003}})") << "key \"-16\"";
        QTest::newRow("py-kvcache v2: duplicate knot key")
            << v2(R"("g_mem": {"floor": 0, "knots": {"1024": 0.003, "01024": 0.004}})")
            << "two keys for 1024 tokens";
        QTest::newRow("py-kvcache v2: one knot")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003}})")
            << "curves.g_mem.knots' has 1 knot(s); expected at least two";
        QTest::newRow("py-kvcache v2: negative seconds")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "16": -1}})")
            << "curves.g_mem.knots.16";
        QTest::newRow("py-kvcache v2: knot value text")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "16": "x"}})")
            << "curves.g_mem.knots.16";
        QTest::newRow("py-kvcache v2: no floor")
            << v2(R"("g_mem": {"knots": {"0": 0.003, "16": 0.003}})")
            << "curves.g_mem.floor' is missing";
        QTest::newRow("py-kvcache v2: missing curve")
            << QByteArray(R"({"schema_version": 2, "curves": {)") + curves + "}}"
            << "no curve 'g_mem'";
        QTest::newRow("py-kvcache v2: extra curve")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "16": 0.003}}, "g_net": {"floor": 0, "knots": {"0": 0, "16": 0}})")
            << "a curve named 'g_net'";
        QTest::newRow("py-kvcache v2: no curves")
            << QByteArray(R"({"schema_version": 2, "break_even_ssd_tokens": 5})")
            << "field 'curves' is missing";
        QTest::newRow("py-kvcache v2: golden without g_mem")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "16": 0.003}})",
                  R"(, "golden": [{"tokens": 700, "f": 0.06, "g_ssd": 0.03}])")
            << "golden[0].g_mem' is missing";
        QTest::newRow("py-kvcache v2: golden not a list")
            << v2(R"("g_mem": {"floor": 0, "knots": {"0": 0.003, "16": 0.003}})",
                  R"(, "golden": {"tokens": 700})")
            << "field 'golden'";
        QTest::newRow("csv: text in a number")
            << QByteArray("curve,server_config,doc_size,ttft_median_s\ncold_prefill,a,1024,0."
                          "1\ncold_prefill,a,lots,0.2\n")
            << "line 3: column 'doc_size'";
        QTest::newRow("csv: short row")
            << QByteArray("curve,server_config,doc_size,ttft_median_s\ncold_prefill,a,1024\n")
            << "line 2";
        QTest::newRow("csv: no doc_size")
            << QByteArray("curve,ttft_median_s,x\ncold_prefill,0.1,1\n") << "line 1: no 'doc_size'";
        QTest::newRow("fio: bw as text")
            << QByteArray(
                   R"({"fio version": "3", "jobs": [{"jobname": "a", "read": {"bw_bytes": "fast"}}]})")
            << "jobs[0].read.bw_bytes";
        QTest::newRow("fio: no jobs")
            << QByteArray(R"({"fio version": "3", "jobs": []})") << "'jobs' is empty";
        QTest::newRow("nvbandwidth: no copies")
            << QByteArray(R"({"nvbandwidth": {"testcases": []}})") << "host_to_device";
        QTest::newRow("unknown json") << QByteArray(R"({"hello": 1})") << "not a calibration file";
        QTest::newRow("a scenario") << QByteArray(R"({"kvbe_scenario": 1})") << "scenario";
        QTest::newRow("plain text") << QByteArray("hello world\n") << "not a calibration file";
        QTest::newRow("empty") << QByteArray("") << "empty";
    }
    void malformedFiles() {
        QFETCH(QByteArray, text);
        QFETCH(QString, fragment);
        const auto msg = errorOf(text.constData());
        QVERIFY2(msg.startsWith("bad-file"), qPrintable(msg));
        QVERIFY2(msg.contains(fragment), qPrintable(msg));
    }

    void mismatchIsAWarning() {
        const auto& llama = test::preset("meta-llama/Llama-3.2-3B");
        auto c = parse(
            R"({"model_name": "Qwen/Qwen3-4B-Instruct-2507", "kv_dtype": "fp8", "break_even_ssd_tokens": 6203})");
        const auto w = mismatchWarnings(c, llama, KvDtype::BF16);
        QCOMPARE(w.size(), size_t(2));
        c = parse(
            R"({"model_name": "Llama-3.2-3B", "kv_dtype": "bfloat16", "break_even_ssd_tokens": 6057})");
        QVERIFY(mismatchWarnings(c, llama, KvDtype::BF16).empty());
    }

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
