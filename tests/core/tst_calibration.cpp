// Calibration files: our format, the formats of other tools, fitting, and the py-kvcache export.
#include "kvbe/calibration.h"
#include "kvbe/fit.h"
#include "test_support.h"

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
        QTest::newRow("Llama 3.2 3B, H100") << "meta-llama/Llama-3.2-3B" << "bfloat16" << 6057.0 << 736.0;
        QTest::newRow("Qwen3 4B, H100") << "Qwen/Qwen3-4B-Instruct-2507" << "bfloat16" << 6203.0 << 825.0;
        QTest::newRow("Qwen3 4B FP16, RTX 4000 Ada") << "Qwen/Qwen3-4B-Instruct-2507" << "float16" << 559.0 << 481.0;
    }
    void pyKvcacheV1PublishedThresholds() {
        QFETCH(QString, model);
        QFETCH(QString, dtype);
        QFETCH(double, ssd);
        QFETCH(double, mem);
        const QByteArray text = QString(R"({"model_name": "%1", "kv_dtype": "%2", "break_even_ssd_tokens": %3,
            "break_even_mem_tokens": %4, "safety_margin_tokens": 128})").arg(model, dtype).arg(ssd).arg(mem).toUtf8();
        const auto c = parse(text.constData());
        QCOMPARE(c.format, std::string("py-kvcache-v1"));
        QCOMPARE(c.model, model.toStdString());
        QCOMPARE(c.breakevenPrefix.at("ssd"), ssd);
        QCOMPARE(c.breakevenPrefix.at("mem"), mem);
        QCOMPARE(*c.safetyMarginTokens, 128.0);
        QVERIFY(c.kvDtype == (dtype == "float16" ? KvDtype::FP16 : KvDtype::BF16));
    }

    void pyKvcacheV2CurvesAndGolden() {
        const auto c = parse(R"({"version": 2, "model_name": "meta-llama/Llama-3.2-3B", "kv_dtype": "bfloat16",
            "kv_bytes_per_token": 114688, "break_even_ssd_tokens": 6057, "break_even_mem_tokens": 736,
            "safety_margin_tokens": 0,
            "curves": {"recompute": {"knots": [[1024, 0.030], [8192, 0.160], [81920, 3.2]]},
                       "ssd": {"knots": [[1024, 0.012], [8192, 0.085]]}},
            "golden": [{"prompt_tokens": 8192, "prefix_tokens": 4096, "source": "ssd", "ttft_s": 0.121},
                       {"prompt_tokens": 2048, "prefix_tokens": 0, "ttft_s": 0.055}]})");
        QCOMPARE(c.format, std::string("py-kvcache-v2"));
        QCOMPARE(c.prefill.size(), size_t(4));
        QCOMPARE(c.prefill[1].seconds, 0.160);
        QCOMPARE(c.tiers.size(), size_t(1));
        QCOMPARE(c.tiers[0].name, std::string("ssd"));
        QCOMPARE(c.tiers[0].reads[1].bytes, 8192.0 * 114688);
        QCOMPARE(c.hits.size(), size_t(1));
        QCOMPARE(c.hits[0].prefix, 4096.0);
    }

    void paretoCsv() {
        const auto c = parse("curve,server_config,doc_size,prefix_len,prefix_frac,concurrency,ttft_mean_s,ttft_median_s\n"
                             "cold_prefill,\"vllm, no offload\",1024,0,0,1,0.031,0.030\n"
                             "cold_prefill,\"vllm, no offload\",8192,0,0,1,0.17,0.16\n"
                             "cache_hit,py-kvcache ssd,8192,4096,0.5,1,0.13,0.12\n"
                             "cache_hit,py-kvcache ssd,8192,,0.75,1,0.11,\n"
                             "cache_hit,py-kvcache ssd,8192,4096,0.5,8,0.9,0.8\n");
        QCOMPARE(c.format, std::string("pareto-csv"));
        QCOMPARE(c.prefill.size(), size_t(2));
        QCOMPARE(c.prefill[1].tokens, 8192.0);
        QCOMPARE(c.prefill[1].seconds, 0.16);           // the median where there is one
        QCOMPARE(c.hits.size(), size_t(2));             // the concurrency-8 row is left out ...
        QCOMPARE(c.hits[0].tier, std::string("py-kvcache ssd"));
        QCOMPARE(c.hits[1].prefix, 6144.0);             // prefix_frac · doc_size
        QCOMPARE(c.hits[1].seconds, 0.11);              // the mean where the median is empty
        QVERIFY(!c.warnings.empty());                   // ... and that is said
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
        const auto c = parse(R"({"nvbandwidth": {"CUDA Runtime Version": 13000, "Driver Version": "580.65",
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
            QVERIFY(saveCalibration(std::filesystem::path(tmp.path().toStdString()) / ("n" + std::to_string(i) + ".json"), c).ok());
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
            << QByteArray(R"({"kvbe_calibration": 1, "hits": [{"tokens": 10, "prefix": 20, "tier": "x", "seconds": 1}]})") << "hits[0].prefix";
        QTest::newRow("ours: newer version") << QByteArray(R"({"kvbe_calibration": 4})") << "version 4";
        QTest::newRow("ours: negative seconds") << QByteArray(R"({"kvbe_calibration": 1, "prefill": [[1024, -0.1]]})") << "prefill[0]";
        QTest::newRow("py-kvcache: tokens as text") << QByteArray(R"({"model_name": "m", "break_even_ssd_tokens": "many"})") << "break_even_ssd_tokens";
        QTest::newRow("py-kvcache: no model") << QByteArray(R"({"break_even_ssd_tokens": 5})") << "model_name";
        QTest::newRow("py-kvcache v2: bad knot") << QByteArray(R"({"model_name": "m", "break_even_ssd_tokens": 5, "curves": {"recompute": {"knots": [[1, "x"]]}}})") << "curves.recompute.knots[0]";
        QTest::newRow("csv: text in a number") << QByteArray("curve,server_config,doc_size,ttft_median_s\ncold_prefill,a,1024,0.1\ncold_prefill,a,lots,0.2\n") << "line 3: column 'doc_size'";
        QTest::newRow("csv: short row") << QByteArray("curve,server_config,doc_size,ttft_median_s\ncold_prefill,a,1024\n") << "line 2";
        QTest::newRow("csv: no doc_size") << QByteArray("curve,ttft_median_s,x\ncold_prefill,0.1,1\n") << "line 1: no 'doc_size'";
        QTest::newRow("fio: bw as text") << QByteArray(R"({"fio version": "3", "jobs": [{"jobname": "a", "read": {"bw_bytes": "fast"}}]})") << "jobs[0].read.bw_bytes";
        QTest::newRow("fio: no jobs") << QByteArray(R"({"fio version": "3", "jobs": []})") << "'jobs' is empty";
        QTest::newRow("nvbandwidth: no copies") << QByteArray(R"({"nvbandwidth": {"testcases": []}})") << "host_to_device";
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
        auto c = parse(R"({"model_name": "Qwen/Qwen3-4B-Instruct-2507", "kv_dtype": "fp8", "break_even_ssd_tokens": 6203})");
        const auto w = mismatchWarnings(c, llama, KvDtype::BF16);
        QCOMPARE(w.size(), size_t(2));
        c = parse(R"({"model_name": "Llama-3.2-3B", "kv_dtype": "bfloat16", "break_even_ssd_tokens": 6057})");
        QVERIFY(mismatchWarnings(c, llama, KvDtype::BF16).empty());
    }

    // Synthetic TTFTs from known parameters with 1 % multiplicative noise: the fit must recover
    // utilisation within 3 %, the shared overhead within 0.5 ms, the tier's bandwidth within 5 %
    // and its fixed cost within 0.5 ms.
    void fitRecoversUtilisationOverheadAndTier() {
        const double u = 0.42, overhead = 0.004, bw = 11e9, tFixed = 0.002;
        CostInputs truth;
        truth.model = test::preset("meta-llama/Llama-3.2-3B");
        truth.peakFlops = 989e12;
        truth.utilisation = u;
        const auto model = *CostModel::create(truth);
        std::mt19937 rng(20261129);
        std::normal_distribution<double> noise(0, 0.01);
        Calibration c;
        for (double n : {256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0})
            c.prefill.push_back({n, (overhead + model.tMiss(n)) * (1 + noise(rng))});
        const TierPath tier{"nvme", bw, tFixed};
        for (double n : {1024.0, 4096.0, 16384.0, 65536.0})
            for (double f : {0.25, 0.5, 0.9})
                c.hits.push_back({n, n * f, "nvme", (overhead + model.tHit(tier, n, n * f)) * (1 + noise(rng))});
        CostInputs start = truth;
        start.utilisation = 0.5;
        auto fit = fitCalibration(c, start, {});
        QVERIFY2(fit.ok(), fit.ok() ? "" : fit.message().c_str());
        const auto& p = fit->params;
        KVBE_COMPARE_REL(*p.utilisation, u, 0.03);
        QVERIFY(!p.rampHalfTokens);
        QVERIFY2(std::abs(p.overheadS - overhead) < 5e-4, qPrintable(QString::number(p.overheadS)));
        KVBE_COMPARE_REL(p.tiers.at("nvme").bandwidthBps, bw, 0.05);
        QVERIFY2(std::abs(p.tiers.at("nvme").tFixedS - tFixed) < 5e-4, qPrintable(QString::number(p.tiers.at("nvme").tFixedS)));
        QVERIFY(p.rmsRelativeResidual < 0.03);
        QCOMPARE(fit->residuals.size(), c.prefill.size() + c.hits.size());
        QVERIFY(fit->breakevenPrefix.at("nvme").has_value());
    }

    // Hits that see less than the probe's bandwidth: the fit keeps the probe's bandwidth and
    // explains the rest as amplification (bytes moved per useful byte), within 5 %; hits as fast
    // as the probe leave it at 1. adoptFit carries it into the scenario.
    void fitRecoversAmplification() {
        const double u = 0.45, probeBw = 13.5e9, amp = 10.0 / 4.4, tFixed = 0.002;
        CostInputs truth;
        truth.model = test::preset("meta-llama/Llama-3.2-3B");
        truth.peakFlops = 989e12;
        truth.utilisation = u;
        const auto model = *CostModel::create(truth);
        std::mt19937 rng(18);
        std::normal_distribution<double> noise(0, 0.01);
        auto calibration = [&](double trueAmp) {
            Calibration c;
            for (double n : {512.0, 2048.0, 8192.0, 32768.0, 131072.0}) c.prefill.push_back({n, model.tMiss(n) * (1 + noise(rng))});
            TierMeasurement probe{"nvme", {}, std::nullopt, std::nullopt};
            for (double bytes : {1e6, 1e7, 1e8, 1e9}) probe.reads.push_back({bytes, 1e-4 + bytes / probeBw});
            c.tiers.push_back(probe);
            const TierPath seen{"nvme", probeBw, tFixed, trueAmp};
            for (double n : {2048.0, 8192.0, 32768.0})
                for (double f : {0.3, 0.6, 0.95})
                    c.hits.push_back({n, n * f, "nvme", model.tHit(seen, n, n * f) * (1 + noise(rng))});
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
        for (const auto& n : fit->notes) noted = noted || n.find("amplification") != std::string::npos;
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
        CostInputs truth;
        truth.model = test::preset("Qwen/Qwen3-8B");
        truth.peakFlops = 989e12;
        truth.utilisation = u;
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
        Scenario s = *defaultScenario(presets());
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
        PyKvcacheThresholds t{"meta-llama/Llama-3.2-3B", KvDtype::BF16, 6057.2, 736.0, 64};
        const auto c = parse(pyKvcacheV1Json(t).c_str());
        QCOMPARE(c.format, std::string("py-kvcache-v1"));
        QCOMPARE(c.model, t.modelName);
        QCOMPARE(c.breakevenPrefix.at("ssd"), 6058.0); // rounded up: a threshold never admits a loss
        QCOMPARE(c.breakevenPrefix.at("mem"), 736.0);
        QCOMPARE(*c.safetyMarginTokens, 64.0);
        QVERIFY(c.kvDtype == KvDtype::BF16);
        PyKvcacheThresholds never{"m", KvDtype::FP8, std::nullopt, 12.0, 0};
        const auto n = parse(pyKvcacheV1Json(never).c_str());
        QVERIFY(!n.breakevenPrefix.count("ssd"));
    }
};

QTEST_GUILESS_MAIN(TestCalibration)
#include "tst_calibration.moc"
