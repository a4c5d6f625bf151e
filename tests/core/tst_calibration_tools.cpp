// Calibration files of other tools (a Pareto CSV, fio's and nvbandwidth's JSON), our format's
// round trip, a folder of node files, malformed files, and a mismatch with the scenario.
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

QString errorOf(const char* text, const char* source = "bad-file") {
    auto c = parseCalibration(text, source);
    return c.ok() ? QString() : QString::fromStdString(c.message());
}

} // namespace

class TestCalibrationTools : public QObject {
    Q_OBJECT
  private slots:
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
};

QTEST_GUILESS_MAIN(TestCalibrationTools)
#include "tst_calibration_tools.moc"
