// kvbe-cli probe serving against kvbe-serving-standin, a loopback STAND-IN for vLLM (not a real
// server): the sweep recovers the stand-in's time model (bandwidth, t_fixed, p* within 5 %), a
// hit the stand-in did not count is caught, and each failure gives its sentence and exit code.
// Truths come from the stand-in's settings and docs/cost-model.md's formula, not from the probe.
#include "kvbe/calibration/calibration.h"
#include "kvbe/probe/probe_protocol.h"
#include "probe_run.h"
#include "sanitizer_build.h"
#include "standin_process.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <memory>

namespace {

// The stand-in's truth in the recovery test: its defaults with every time doubled (half the
// peak and the bandwidth, twice the fixed costs), so scheduling noise weighs half as much; the
// model it pretends to run is Llama 3.2 3B in BF16 (docs/cost-model.md).
constexpr double kPeak = 1000e12, kU = 0.5, kParams = 3.21e9, kLayers = 28, kHeads = 24,
                 kHeadDim = 128;
constexpr double kKvPerToken = 114688, kGpuTFixed = 0.008, kOffTFixed = 0.016, kOffBps = 25e9;
const QStringList kTruth = {"--peak-tflops",       "1000", "--utilisation",   "0.5",
                            "--overhead-ms",       "4",    "--gpu-tfixed-ms", "8",
                            "--offload-tfixed-ms", "16",   "--offload-gbps",  "25"};

// p* from the closed form of docs/cost-model.md: a·p² + b·p − t_fixed = 0.
double truePStar(double bandwidth, double tFixed) {
    const double fl = kPeak * kU;
    const double a = 2 * kLayers * kHeads * kHeadDim / fl;
    const double b = 2 * kParams / fl - (std::isinf(bandwidth) ? 0 : kKvPerToken / bandwidth);
    return (-b + std::sqrt(b * b + 4 * a * tFixed)) / (2 * a);
}

using Run = kvbe::test::ProbeRun;
using kvbe::test::runProbe;

const QStringList kModel = {"--model",       "standin/llama-3.2-3b",
                            "--config",      "meta-llama/Llama-3.2-3B",
                            "--peak-tflops", "2000"};
const QStringList& kQuick = kvbe::test::kQuickSweep;

nlohmann::json resultOf(const QByteArray& out) {
    kvbe::ProbeStreamReader reader;
    auto events = reader.feed(std::string_view(out.constData(), static_cast<size_t>(out.size())));
    if (!events) return {};
    for (const auto& e : *events)
        if (const auto* r = e.result()) return nlohmann::json(r->summary);
    return {};
}

bool within(double got, double want, double rel) {
    return std::abs(got - want) <= rel * std::abs(want);
}

// The recovery bound: 5 % in an optimised build, where the claim is made. Under AddressSanitizer
// the probe's own work between the socket and its clock (SSE parsing, the /metrics scrape) runs
// several times slower and lands in the measured TTFT unevenly across cache states (runs here
// missed 15 % on a t_fixed of a few ms), so there the test only holds the parameters to the right
// range (50 %): wrong units or a wrong state still fail it.
constexpr double kRecoveryTolerance = kvbe::test::kAddressSanitizer ? 0.5 : 0.05;

// The first fitted value that misses the stand-in's truth by more than the bound, as a sentence
// with the whole result; empty when all are within it.
QString recoveryMiss(const nlohmann::json& r) {
    const auto& dram = r["tiers"]["dram"];
    const auto& gpu = r["tiers"]["gpu"];
    const struct {
        const char* name;
        double got, want;
    } checks[] = {
        {"utilisation", r["utilisation"].get<double>(), kU},
        {"dram bandwidth_Bps", dram["bandwidth_Bps"].get<double>(), kOffBps},
        {"dram t_fixed_s", dram["t_fixed_s"].get<double>(), kOffTFixed},
        {"gpu t_fixed_s", gpu["t_fixed_s"].get<double>(), kGpuTFixed},
        {"dram breakeven_prefix_tokens", dram["breakeven_prefix_tokens"].get<double>(),
         truePStar(kOffBps, kOffTFixed)},
        {"gpu breakeven_prefix_tokens", gpu["breakeven_prefix_tokens"].get<double>(),
         truePStar(INFINITY, kGpuTFixed)},
    };
    for (const auto& c : checks)
        if (!within(c.got, c.want, kRecoveryTolerance))
            return QStringLiteral("%1 = %2, expected %3 within %4 %: %5")
                .arg(QLatin1String(c.name))
                .arg(c.got)
                .arg(c.want)
                .arg(kRecoveryTolerance * 100)
                .arg(QString::fromStdString(r.dump()));
    return {};
}

} // namespace

class ServingProbeTest : public QObject {
    Q_OBJECT

  private slots:
    void recoversTheStandinsTimeModel() {
        Standin server(kTruth);
        QVERIFY2(!server.url().isEmpty(), "the stand-in did not say where it listens");
        // The stand-in's noise is one-sided: nothing answers faster than its time model, while a
        // busy machine (CI, six builds on two cores) delays some answers by many milliseconds.
        // The fastest of 5 repeats is therefore the estimate the bound can hold; the median, the
        // default for real servers, is shown in the table and the CSV either way. A machine busy
        // enough to delay all five repeats of a point (a load of ten per core) still can, so the
        // run is made up to three times and the bound must hold on one of them: a wrong time
        // model, unit or state misses it on all three.
        std::unique_ptr<QTemporaryDir> out;
        nlohmann::json r;
        QByteArray stream;
        QString miss;
        for (int attempt = 1; attempt <= 3; ++attempt) {
            out = std::make_unique<QTemporaryDir>(
                QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
            const auto run = runProbe(QStringList{"--model",       "standin/llama-3.2-3b",
                                                  "--config",      "meta-llama/Llama-3.2-3B",
                                                  "--peak-tflops", "1000",
                                                  "--endpoint",    server.url(),
                                                  "--lengths",     "1k,2k,4k,8k",
                                                  "--fractions",   "0.5,1",
                                                  "--repeats",     "5",
                                                  "--warmup",      "2",
                                                  "--fit-on",      "fastest",
                                                  "--out",         out->path(),
                                                  "--format",      "jsonl"});
            QVERIFY2(run.exitCode == 0, run.err.constData());
            stream = run.out;
            r = resultOf(run.out);
            QVERIFY2(r.is_object() && r.contains("tiers"), run.out.constData());
            QVERIFY(r["hits_verified"].get<bool>());
            miss = recoveryMiss(r);
            if (miss.isEmpty()) break;
            qWarning("attempt %d of 3 missed the recovery bound: %s", attempt, qPrintable(miss));
        }
        QVERIFY2(miss.isEmpty(), qPrintable(miss));
        // One model: the offload tier's fixed cost is stated per layer, over Llama 3.2 3B's 28.
        {
            const auto& dram = r["tiers"]["dram"];
            QCOMPARE(r["fixed_cost_form"].get<std::string>(), std::string("per layer"));
            QCOMPARE(r["fixed_cost_why"].get<std::string>(),
                     std::string(kvbe::kOneModelFixedCostForm));
            QCOMPARE(dram["layers"].get<int>(), 28);
            QVERIFY(within(dram["t_layer_s"].get<double>() * 28, dram["t_fixed_s"].get<double>(),
                           1e-12));
            QVERIFY2(stream.contains("fit: fixed cost: fixed cost per layer"), stream.constData());
        }
        {
            // Each fitted sample beside its measurement (the Probes dock shows them): the four cold
            // lengths as "recompute", the DRAM hits under the tier's name.
            int recompute = 0, hits = 0;
            for (const auto& res : r["residuals"]) {
                recompute += res["series"] == "recompute";
                hits += res["series"] == "dram";
                QVERIFY2(res["measured_s"].get<double>() > 0 && res["fitted_s"].get<double>() > 0,
                         qPrintable(QString::fromStdString(r.dump())));
            }
            QCOMPARE(recompute, 4);
            QVERIFY2(hits > 0, qPrintable(QString::fromStdString(r.dump())));
        }

        // The four files, each readable by what reads it.
        const QDir dir(out->path());
        auto cal = kvbe::readCalibration(dir.filePath("calibration.json").toStdString());
        QVERIFY2(cal.ok(), cal.ok() ? "" : cal.message().c_str());
        QCOMPARE(cal->prefill.size(), size_t(4));
        QCOMPARE(cal->fitted->tiers.at("dram").layers, 28);
        QCOMPARE(cal->fitted->fittedOn.size(), size_t(1));
        QVERIFY(cal->breakevenPrefix.count("dram"));
        auto csv = kvbe::readCalibration(dir.filePath("serving.csv").toStdString());
        QVERIFY2(csv.ok(), csv.ok() ? "" : csv.message().c_str());
        QCOMPARE(csv->format, std::string("pareto-csv"));
        auto v1 = kvbe::readCalibration(dir.filePath("pykvcache-v1.json").toStdString());
        QVERIFY2(v1.ok(), v1.ok() ? "" : v1.message().c_str());
        QVERIFY(within(v1->breakevenPrefix.at("mem"), truePStar(kOffBps, kOffTFixed), 0.05));
        QFile v2f(dir.filePath("pykvcache-v2.json"));
        QVERIFY(v2f.open(QIODevice::ReadOnly));
        const auto v2 = nlohmann::json::parse(v2f.readAll().toStdString());
        QCOMPARE(v2["schema_version"].get<int>(), 2);
        QVERIFY(v2["curves"]["f"]["knots"].is_object());
        QVERIFY(v2["curves"]["g_mem"]["knots"].contains("8192"));
        QCOMPARE(v2["break_even_mem_tokens"].get<long>() % 16, 0L);
        // v1 and v2 carry one threshold (py-kvcache's rule on the v2 curves, knots around p*).
        QFile v1f(dir.filePath("pykvcache-v1.json"));
        QVERIFY(v1f.open(QIODevice::ReadOnly));
        const auto v1j = nlohmann::json::parse(v1f.readAll().toStdString());
        QCOMPARE(v1j["break_even_mem_tokens"].get<double>(),
                 v2["break_even_mem_tokens"].get<double>());
        // No --gpu: the calibration names no GPU and says none was given.
        QFile calf(dir.filePath("calibration.json"));
        QVERIFY(calf.open(QIODevice::ReadOnly));
        const auto calj = nlohmann::json::parse(calf.readAll().toStdString());
        QCOMPARE(calj["gpu"]["name"].get<std::string>(), std::string());
        QCOMPARE(calj["gpu"]["given"].get<bool>(), false);
        QVERIFY(r["gpu"].is_null());
    }

    void aHitTheServerDidNotCountIsNotAHit_data() {
        QTest::addColumn<QStringList>("mode");
        QTest::newRow("served fast, not counted") << QStringList{"--uncounted-offload"};
        QTest::newRow("no offload tier at all") << QStringList{"--no-offload"};
        QTest::newRow("SGLang, served fast, not counted")
            << QStringList{"--sglang", "--uncounted-offload", "--gpu-capacity-tokens", "4096"};
        QTest::newRow("SGLang, no offload tier at all")
            << QStringList{"--sglang", "--no-offload", "--gpu-capacity-tokens", "4096"};
        // SGLang's fallback cache_source "total" holds GPU hits too: never an offload hit.
        QTest::newRow("SGLang, offload hits under cache_source total")
            << QStringList{"--sglang", "--sglang-total", "--gpu-capacity-tokens", "4096"};
    }
    void aHitTheServerDidNotCountIsNotAHit() {
        QFETCH(QStringList, mode);
        Standin server(mode);
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto run =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path()});
        QCOMPARE(run.exitCode, 4);
        const QByteArray all = run.out + run.err;
        QVERIFY2(all.contains("so it is reported as not a hit and left out"), all.constData());
        QVERIFY2(run.err.contains("the server counted none of the 3 dram hits"), all.constData());
        // What was measured is written; no thresholds are.
        QVERIFY(QFile::exists(QDir(out.path()).filePath("serving.csv")));
        QVERIFY(QFile::exists(QDir(out.path()).filePath("calibration.json")));
        QVERIFY(!QFile::exists(QDir(out.path()).filePath("pykvcache-v1.json")));
    }

    // SGLang's counters (sglang:cached_tokens_total by cache_source) verify hits as vLLM's do,
    // though a fresh server has no labelled series until its first cached token; its
    // /flush_cache empties the host tier too (as HiRadixCache.reset does), so the GPU copy is
    // evicted with filler sized from sglang:max_total_num_tokens instead.
    void sglangCountersVerifyHits() {
        Standin server({"--sglang", "--gpu-capacity-tokens", "4096"});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto run =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path()});
        const QByteArray all = run.out + run.err;
        QVERIFY2(run.exitCode == 0, all.constData());
        QVERIFY2(all.contains("hits are checked against SGLang's /metrics counters"),
                 all.constData());
        QVERIFY2(all.contains("hits verified: yes, every fitted hit, by /metrics"),
                 all.constData());
        QVERIFY2(all.contains("would also empty HiCache's host tier"), all.constData());
        QVERIFY2(all.contains("filler prompts of 2048 tokens (KV capacity 4096 tokens)"),
                 all.constData());
        QVERIFY2(!all.contains("left out"), all.constData());
    }

    // A server that refuses token-id prompts gets text whose length its POST /tokenize vouches
    // for, and the probe says so; one that takes ids is never sent text.
    void tokenIdsRefusedFallsBackToTokenize() {
        Standin server({"--refuse-ids"});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto run =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path()});
        const QByteArray all = run.out + run.err;
        QVERIFY2(run.exitCode == 0, all.constData());
        QVERIFY2(all.contains("refused token-id prompts"), all.constData());
        QVERIFY2(all.contains("/tokenize"), all.constData());
        QVERIFY2(!all.contains("left out"), all.constData());
        // The window reads the JSONL stream: the fallback is a note line there, while it runs.
        const auto jsonl = runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out",
                                                         out.path(), "--format", "jsonl"});
        QVERIFY2(jsonl.exitCode == 0, (jsonl.out + jsonl.err).constData());
        kvbe::ProbeStreamReader reader;
        const auto events = reader.feed(
            std::string_view(jsonl.out.constData(), static_cast<size_t>(jsonl.out.size())));
        QVERIFY2(events.ok(), events.ok() ? "" : events.message().c_str());
        QVERIFY(reader.finish().ok());
        QStringList notes;
        for (const auto& e : *events)
            if (const auto* n = e.note()) notes << QString::fromStdString(n->message);
        QVERIFY2(notes.filter("refused token-id prompts").size() == 1,
                 qPrintable(notes.join('\n')));
        QVERIFY2(notes.filter("/tokenize").size() >= 1, qPrintable(notes.join('\n')));

        Standin ids({});
        const auto plain =
            runProbe(kQuick + QStringList{"--endpoint", ids.url(), "--out", out.path()});
        QVERIFY2(plain.exitCode == 0, (plain.out + plain.err).constData());
        QVERIFY2(!(plain.out + plain.err).contains("/tokenize"),
                 (plain.out + plain.err).constData());
    }

    void failuresSayWhatHappened_data() {
        QTest::addColumn<QStringList>("standin");
        QTest::addColumn<QStringList>("extra");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("server down") << QStringList{"down"} << QStringList{} << 3
                                     << "cannot reach http://127.0.0.1:1/metrics";
        QTest::newRow("context too long: length skipped")
            << QStringList{"--max-model-len", "1500"} << QStringList{"--lengths", "256,512,1k,2k"}
            << 0
            << "length 2048 skipped: http://127.0.0.1:PORT/v1/completions refused a 2048-token "
               "prompt (400): This model's maximum context length is 1500 tokens";
        QTest::newRow("429 then served")
            << QStringList{"--fail-429", "2"} << QStringList{} << 0
            << "the server answered 429 (too many requests in the queue); waiting";
        QTest::newRow("503 for good")
            << QStringList{"--fail-503", "1000"} << QStringList{"--tries", "3"} << 4
            << "answered 503 (service unavailable) 3 times in a row for a 1024-token prompt";
        QTest::newRow("stream cut half-way") << QStringList{"--truncate-at", "1"} << QStringList{}
                                             << 4 << "stopped half-way for a 1024-token prompt";
        QTest::newRow("no answer in time")
            << QStringList{"--hang-at", "1"} << QStringList{"--timeout", "1s"} << 4
            << "did not finish a 1024-token prompt within 1.0 s (--timeout), no first token came";
        QTest::newRow("wrong model") << QStringList{} << QStringList{"--model", "not/served"} << 1
                                     << "answered 404: The model `not/served` does not exist.";
        QTest::newRow("API key refused") << QStringList{"--api-key", "s3cret"} << QStringList{} << 3
                                         << "refused the request (401): Unauthorized";
        QTest::newRow("drift warned")
            << QStringList{"--drift", "0.3"} << QStringList{"--drift-limit", "0.1"} << 4
            << "warning: TTFT drifted during the run";
        QTest::newRow("drift over the limit: no thresholds")
            << QStringList{"--drift", "0.3"} << QStringList{"--drift-limit", "0.1"} << 4
            << "no thresholds written: the reference point drifted";
        // Noise with no trend (every completion up to twice its time, at random) moves the
        // reference point's medians past the limit, yet the rank test cannot tell the first
        // samples from the last: noise, not drift, and the thresholds are written.
        QTest::newRow("noise is not drift")
            << QStringList{"--jitter", "1"} << QStringList{"--drift-limit", "0.1"} << 0
            << "the reference point moved, within its own spread";
        // An offload tier so fast that its loads take less time than its hits' noise: the
        // bandwidth is said to be not measurable, not printed. Where the noise leaves the hits
        // no growth at all (a busy machine), the fit says so and fits none: either way no
        // bandwidth is printed (" || " separates the sentences either of which will do).
        QTest::newRow("loads too small to fit")
            << QStringList{"--offload-gbps", "100000", "--jitter", "0.5"}
            << QStringList{"--repeats", "3"} << 0
            << "dram bandwidth                 not measurable: "
               "its largest load (234.9 MB) would take || fit: tier 'dram': hit times do not "
               "grow with the prefix; bandwidth not fitted";
        QTest::newRow("llama.cpp without --slot-save-path")
            << QStringList{"--llamacpp", "--no-slot-save-path"} << QStringList{} << 3
            << "(start llama-server with --slot-save-path DIR)";
    }
    void failuresSayWhatHappened() {
        QFETCH(QStringList, standin);
        QFETCH(QStringList, extra);
        QFETCH(int, exitCode);
        QFETCH(QString, sentence);
        std::unique_ptr<Standin> server;
        QString url = "http://127.0.0.1:1/v1"; // nothing listens on port 1
        if (standin != QStringList{"down"}) {
            server = std::make_unique<Standin>(standin);
            url = server->url();
            QVERIFY(!url.isEmpty());
        }
        // A row's option replaces the quick sweep's (CLI11 takes an option once).
        QStringList args = kQuick;
        for (qsizetype i = 0; i + 1 < extra.size(); i += 2) {
            const auto at = args.indexOf(extra[i]);
            if (at >= 0) args.remove(at, 2);
        }
        args += QStringList{"--endpoint", url} + extra;
        const auto run = runProbe(args);
        QString want = sentence;
        want.replace("http://127.0.0.1:PORT/v1", url);
        // Notes (a skipped length, a retry, the drift warning) go to the table on stdout; a
        // failure's sentence to stderr.
        const QByteArray all = run.out + run.err;
        const QStringList either = want.split(QStringLiteral(" || "));
        QVERIFY2(std::any_of(either.begin(), either.end(),
                             [&](const QString& w) { return all.contains(w.toUtf8()); }),
                 all.constData());
        if (want.contains(QStringLiteral("not measurable")))
            QVERIFY2(!QString::fromUtf8(all).contains(
                         QRegularExpression(QStringLiteral("dram bandwidth +[0-9.]+ GB/s"))),
                     all.constData());
        QCOMPARE(run.exitCode, exitCode);
    }

    // The adapter of the issue: a reset that erased the slot, so every "offload hit" was a full
    // recompute, and no vLLM counters to tell. The response says what was reused (cached 0):
    // each is caught, and no thresholds are written from them.
    void aRecomputeReportedAsAHitIsCaught() {
        Standin server({"--no-metrics", "--no-offload", "--report-cached"});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto run =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path()});
        const QByteArray all = run.out + run.err;
        QCOMPARE(run.exitCode, 4);
        QVERIFY2(all.contains("the response says the server reused 0 of"), all.constData());
        QVERIFY2(all.contains("usage.prompt_tokens_details.cached_tokens"), all.constData());
        QVERIFY2(all.contains("a recompute, so it is reported as not a hit"), all.constData());
        QVERIFY(QFile::exists(QDir(out.path()).filePath("serving.csv")));
        QVERIFY(!QFile::exists(QDir(out.path()).filePath("pykvcache-v1.json")));
        QVERIFY(!QFile::exists(QDir(out.path()).filePath("pykvcache-v2.json")));
    }

    // Hits nothing verifies (no counters, nothing in the response) are shown, not fitted; with
    // --allow-unverified-hits they are fitted and every output says so.
    void unverifiedHitsNeedTheFlagAndAreLabelled() {
        Standin server({"--no-metrics"});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto refused =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out.path()});
        QCOMPARE(refused.exitCode, 4);
        QVERIFY2(refused.err.contains("none of the 3 dram hits could be verified"),
                 (refused.out + refused.err).constData());
        QVERIFY(!QFile::exists(QDir(out.path()).filePath("pykvcache-v1.json")));

        QTemporaryDir out2(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto allowed =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--out", out2.path(),
                                          "--allow-unverified-hits", "--format", "jsonl"});
        QVERIFY2(allowed.exitCode == 0, (allowed.out + allowed.err).constData());
        const auto r = resultOf(allowed.out);
        QCOMPARE(r["unverified_hits_fitted"].get<bool>(), true);
        QCOMPARE(r["hits_verified"].get<bool>(), false);
        QVERIFY2(r["hit_verification"].get<std::string>().find("UNVERIFIED") != std::string::npos,
                 r.dump().c_str());
        const QDir dir(out2.path());
        for (const char* file : {"pykvcache-v2.json", "calibration.json"}) {
            QFile f(dir.filePath(file));
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY2(f.readAll().contains("UNVERIFIED hits fitted (--allow-unverified-hits)"),
                     file);
        }
        const auto table =
            runProbe(kQuick + QStringList{"--endpoint", server.url(), "--allow-unverified-hits"});
        QVERIFY2(table.out.contains("dram UNVERIFIED"), table.out.constData());
    }

    // llama.cpp's llama-server (the stand-in's --llamacpp mode plays it): found by GET /props,
    // cleared by slot erase, both offload tiers measured and verified from timings.cache_n, the
    // slot restore's reported bytes and time beside the fitted bandwidth, the name checked.
    void llamaCppBothOffloadTiers() {
        Standin server({"--llamacpp", "--ram-gbps", "10", "--ram-tfixed-ms", "2", "--disk-gbps",
                        "2", "--disk-tfixed-ms", "5"});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        const auto run = runProbe(QStringList{"--model",       "no-such/model",
                                              "--config",      "meta-llama/Llama-3.2-3B",
                                              "--peak-tflops", "2000",
                                              "--endpoint",    server.url(),
                                              "--lengths",     "1k,2k,4k",
                                              "--fractions",   "0.5,1",
                                              "--repeats",     "3",
                                              "--warmup",      "1",
                                              "--fit-on",      "fastest",
                                              "--drift-limit", "1",
                                              "--out",         out.path(),
                                              "--format",      "jsonl"});
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        QVERIFY2(run.out.contains("is not a model this server serves"), run.out.constData());
        QVERIFY2(run.out.contains("llama.cpp's llama-server"), run.out.constData());
        const auto r = resultOf(run.out);
        QCOMPARE(r["engine"].get<std::string>(), std::string("llama.cpp"));
        QCOMPARE(r["hits_verified"].get<bool>(), true);
        QCOMPARE(r["verified_by"][0].get<std::string>(),
                 std::string("the response's timings.cache_n"));
        // The stand-in's truths: host-RAM loads at 10 GB/s, slot restores at 2 GB/s of what
        // they report reading (n_read carries 4 bytes of token id beside each token's KV).
        const auto& dram = r["tiers"]["dram"];
        const auto& nvme = r["tiers"]["nvme"];
        QVERIFY2(within(dram["bandwidth_Bps"].get<double>(), 10e9, 0.15), r.dump().c_str());
        QVERIFY2(within(nvme["bandwidth_Bps"].get<double>(), 2e9 * kKvPerToken / (kKvPerToken + 4),
                        0.15),
                 r.dump().c_str());
        QVERIFY2(within(nvme["server_restore_Bps"].get<double>(),
                        nvme["bandwidth_Bps"].get<double>(), 0.15),
                 r.dump().c_str());
        // The per-request floor (the stand-in's overhead, 2 ms) is measured and kept out of
        // the tiers' t_fixed: the host-RAM tier's is the stand-in's 2 ms load cost alone.
        QVERIFY2(within(r["per_request_floor_s"].get<double>(), 0.002, 0.5), r.dump().c_str());
        QVERIFY2(within(r["overhead_s"].get<double>(), 0.002, 0.5), r.dump().c_str());
        QVERIFY2(within(dram["t_fixed_s"].get<double>(), 0.002, 0.5), r.dump().c_str());
        // Both thresholds, the same in v1 and v2.
        const QDir dir(out.path());
        QFile v1f(dir.filePath("pykvcache-v1.json")), v2f(dir.filePath("pykvcache-v2.json"));
        QVERIFY(v1f.open(QIODevice::ReadOnly) && v2f.open(QIODevice::ReadOnly));
        const auto v1 = nlohmann::json::parse(v1f.readAll().toStdString());
        const auto v2 = nlohmann::json::parse(v2f.readAll().toStdString());
        for (const char* key : {"break_even_mem_tokens", "break_even_ssd_tokens"}) {
            QVERIFY2(v1.contains(key) && v2.contains(key), v1.dump().c_str());
            QCOMPARE(v1[key].get<double>(), v2[key].get<double>());
        }
        QCOMPARE(v1["model_name"].get<std::string>(), std::string("no-such/model"));
    }

    // vLLM refuses a reset while blocks are still held (an offload store in flight right after
    // the prefix) and its API answers 200 regardless; a server that says {"success": false} is
    // heard. Either way the sweep waits, measures again and says so.
    void aResetThatDidNotTakeIsWaitedOut_data() {
        QTest::addColumn<QStringList>("mode");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("bare 200, as vLLM's API")
            << QStringList{"--reset-busy-ms", "150"}
            << "from now on the sweep waits 0.10 s between the prefix and the reset";
        QTest::newRow("success false in the body")
            << QStringList{"--reset-busy-ms", "150", "--reset-says"}
            << "answered {\"success\":false} (try 1): the cache was not cleared; waiting";
    }
    void aResetThatDidNotTakeIsWaitedOut() {
        QFETCH(QStringList, mode);
        QFETCH(QString, sentence);
        Standin server(mode);
        const auto run = runProbe(kQuick + QStringList{"--endpoint", server.url()});
        const QByteArray all = run.out + run.err;
        QVERIFY2(run.exitCode == 0, all.constData());
        QVERIFY2(all.contains(sentence.toUtf8()), all.constData());
    }

    // --tiers gpu --out writes what was measured: the CSV and the calibration.
    void gpuTierAloneStillWritesItsFiles() {
        Standin server({});
        QTemporaryDir out(QStringLiteral(KVBE_TEST_SCRATCH "/serving-XXXXXX"));
        QStringList args = kQuick;
        args.replace(args.indexOf("offload"), "gpu");
        const auto run =
            runProbe(args + QStringList{"--endpoint", server.url(), "--out", out.path()});
        QVERIFY2(run.exitCode == 0, (run.out + run.err).constData());
        const QDir dir(out.path());
        QVERIFY(QFile::exists(dir.filePath("serving.csv")));
        auto cal = kvbe::readCalibration(dir.filePath("calibration.json").toStdString());
        QVERIFY2(cal.ok(), cal.ok() ? "" : cal.message().c_str());
        QCOMPARE(cal->prefill.size(), size_t(3));
        QVERIFY(!QFile::exists(dir.filePath("pykvcache-v1.json")));
    }

    void ctrlCLeavesNothingInFlight() {
        // Slow prompts (a 200 TFLOP/s "GPU": about 0.35 s per 8k prompt) so the stop lands
        // mid-request.
        Standin server({"--peak-tflops", "200"});
        QProcess probe;
        probe.start(QStringLiteral(KVBE_CLI_PATH),
                    QStringList{"probe", "serving", "--endpoint", server.url()} + kModel +
                        QStringList{"--lengths", "8k", "--repeats", "3", "--warmup", "0"});
        QVERIFY(probe.waitForStarted(10000));
        QElapsedTimer t;
        t.start();
        while (!server.log().contains("outcome=done") && t.elapsed() < 20000)
            QTest::qWait(20);
        QTest::qWait(100);
        ::kill(static_cast<pid_t>(probe.processId()), SIGINT);
        QVERIFY(probe.waitForFinished(5000));
        QCOMPARE(probe.exitCode(), 130);
        t.restart();
        while (!server.log().contains("outcome=aborted") && t.elapsed() < 2000)
            QTest::qWait(20);
        const QByteArray log = server.log();
        QVERIFY2(log.contains("outcome=aborted"), log.constData());
        // Nothing completed after the abort: the request was the last one the stand-in saw.
        QVERIFY2(log.lastIndexOf("outcome=done") < log.lastIndexOf("outcome=aborted"),
                 log.constData());
    }
};

QTEST_GUILESS_MAIN(ServingProbeTest)
#include "tst_serving_probe.moc"
