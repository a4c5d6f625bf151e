// kvbe-cli probe replay against kvbe-serving-standin (a loopback STAND-IN, not a real server),
// and trace replay --compare on what it wrote: the prompts share exactly their common blocks, a
// server that stops mid-replay is named while every request's row reaches the disk, and the
// model's hit ratio equals the one the stand-ins report when the model is the stand-ins' cache
// (an LRU of 16-token blocks per server). Truths come from the trace written here.
#include "kvbe/serving/replay_probe.h"
#include "standin_process.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <list>
#include <set>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out, err;
};

Run runCli(const QStringList& args, int timeoutMs = 120000) {
    QProcess p;
    p.start(QStringLiteral(KVBE_CLI_PATH), args);
    Run r;
    if (!p.waitForStarted(10000)) return r;
    p.waitForFinished(timeoutMs);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// A Mooncake trace: request i, `gapMs` after the one before, is a shared prefix of 3 blocks (of
// group groupOf(i)) and 2 blocks of its own; every prompt a whole number of 16-token blocks.
int groupOf(int i) {
    // Forty draws from 6 groups (Python's random.seed(3); randrange(6)), then a cycle.
    static const int kGroups[40] = {1, 4, 4, 1, 2, 4, 3, 5, 4, 0, 4, 0, 3, 2, 4, 1, 1, 5, 3, 4,
                                    4, 3, 3, 5, 1, 1, 5, 1, 4, 3, 5, 0, 5, 0, 1, 4, 0, 2, 0, 2};
    return kGroups[i % 40];
}

std::vector<int> blocksOf(int i) {
    const int g = groupOf(i);
    return {g * 10, g * 10 + 1, g * 10 + 2, 1000 + 2 * i, 1001 + 2 * i};
}

QString writeTrace(const QString& dir, int n, int gapMs) {
    const QString path = dir + "/trace.jsonl";
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    for (int i = 0; i < n; ++i) {
        const nlohmann::json row = {{"timestamp", i * gapMs},
                                    {"input_length", 5 * 512},
                                    {"output_length", 4},
                                    {"hash_ids", blocksOf(i)}};
        f.write(QByteArray::fromStdString(row.dump() + "\n"));
    }
    return path;
}

// The token hit ratio of `servers` LRU caches of `capacity` blocks, request i sent to
// serverOf(i), a hit run at most 4 blocks (the last prompt token is always computed), counted
// here.
double routedLrus(int n, int servers, std::size_t capacity,
                  const std::function<int(int)>& serverOf) {
    std::vector<std::list<int>> lru(static_cast<std::size_t>(servers));
    double hit = 0;
    for (int i = 0; i < n; ++i) {
        auto& c = lru[static_cast<std::size_t>(serverOf(i))];
        const auto ids = blocksOf(i);
        int h = 0;
        while (h < 4 && std::find(c.begin(), c.end(), ids[static_cast<std::size_t>(h)]) != c.end())
            ++h;
        hit += 16.0 * h;
        for (int b : ids) {
            c.remove(b);
            c.push_front(b);
            if (c.size() > capacity) c.pop_back();
        }
    }
    return hit / (80.0 * n);
}

// ... fed round-robin.
double roundRobinLrus(int n, int servers, std::size_t capacity) {
    return routedLrus(n, servers, capacity, [servers](int i) { return i % servers; });
}

nlohmann::json readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
}

bool writeFile(const QString& path, const std::string& text) {
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
           f.write(QByteArray::fromStdString(text)) == qint64(text.size());
}

// A probe replay's replay.json: `requests` requests on two servers behind round-robin, 16-token
// blocks, no limit.
nlohmann::json liveSummary(int requests) {
    return {{"kvbe_probe", "replay"},
            {"limit", nullptr},
            {"duration_cap_s", nullptr},
            {"rate_scale", 1},
            {"block_tokens", 16},
            {"requests", requests},
            {"servers", nlohmann::json::array({{}, {}})},
            {"router", "round-robin"}};
}

std::vector<nlohmann::json> readRows(const QString& path) {
    std::vector<nlohmann::json> rows;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return rows;
    for (const QByteArray& line : f.readAll().split('\n'))
        if (!line.isEmpty()) rows.push_back(nlohmann::json::parse(line.toStdString()));
    return rows;
}

} // namespace

class TestServingReplay : public QObject {
    Q_OBJECT

  private slots:
    // Two prompts that share their first k blocks share exactly k runs of tokens: the token
    // after them differs, the shared runs are equal, and every id is within [100, vocab).
    void promptsShareExactlyTheirCommonBlocks() {
        using kvbe::serving::promptTokens;
        const std::vector<std::uint32_t> a = {7, 8, 9, 10}, b = {7, 8, 11, 10};
        const auto pa = promptTokens(a, 64, 16, 32000), pb = promptTokens(b, 64, 16, 32000);
        QCOMPARE(pa.size(), std::size_t(64));
        QVERIFY(std::equal(pa.begin(), pa.begin() + 32, pb.begin()));
        QVERIFY(pa[32] != pb[32]);
        for (auto t : pa)
            QVERIFY(t >= 100 && t < 32000);
        // A block is the same run wherever it stands; a partial last block is its run's start.
        const auto c = promptTokens(std::vector<std::uint32_t>{10}, 16, 16, 32000);
        QVERIFY(std::equal(c.begin(), c.end(), pa.begin() + 48));
        const auto d = promptTokens(a, 50, 16, 32000);
        QCOMPARE(d.size(), std::size_t(50));
        QVERIFY(std::equal(d.begin(), d.end(), pa.begin()));
        // Ids a vocabulary apart still differ in their first two tokens.
        const std::uint32_t r = 32000 - 100;
        const auto e = promptTokens(std::vector<std::uint32_t>{5}, 2, 16, 32000),
                   f = promptTokens(std::vector<std::uint32_t>{5 + r}, 2, 16, 32000);
        QCOMPARE(e[0], f[0]);
        QVERIFY(e[1] != f[1]);
    }

    // The second stand-in exits 1.5 s into a 4-second replay: it is named in the output and in
    // replay.json, the replay goes on with the first, and every request has its row on disk.
    void aServerThatStopsIsNamedAndEveryRowIsWritten() {
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 40, 100);
        Standin a({"--no-offload"}), b({"--no-offload"}, 1.5);
        QVERIFY(!a.url().isEmpty() && !b.url().isEmpty());
        const QString out = dir.path() + "/live";
        const Run r =
            runCli({"probe", "replay", trace, "--endpoint", a.url(), "--endpoint", b.url(),
                    "--model", "standin/llama-3.2-3b", "--out", out, "--block-tokens", "16"});
        QVERIFY2(r.exitCode == 4, r.err.constData()); // some requests failed
        QVERIFY2(r.out.contains(b.url().toUtf8() + " left the replay"), r.out.constData());
        const auto rows = readRows(out + "/requests.jsonl");
        QCOMPARE(rows.size(), std::size_t(40));
        std::set<int> seen;
        int failed = 0, onA = 0;
        for (const auto& row : rows) {
            seen.insert(row["request"].get<int>());
            if (!row["error"].is_null()) ++failed;
            if (row["server"] == 0) {
                ++onA;
                QVERIFY(row["error"].is_null());
                QCOMPARE(row["prompt_tokens"].get<int>(), 80); // 5 blocks of 16 tokens
            }
        }
        QCOMPARE(seen.size(), std::size_t(40));
        QVERIFY(failed >= 1);
        const auto sum = readJson(out + "/replay.json");
        QVERIFY(sum["servers"][1]["down"].is_string());
        QVERIFY(sum["servers"][0]["down"].is_null());
        QCOMPARE(sum["completed"].get<int>() + sum["failed"].get<int>(), 40);
        QCOMPARE(sum["completed"].get<int>(), 40 - failed);
        QVERIFY(sum["rerouted"].get<int>() >= 1); // round-robin's picks of b went to a
        QVERIFY(onA > 20);
    }

    // Each stand-in keeps an LRU of 10 blocks of 16 tokens and reports the tokens it reused: 16.5 %
    // of the prompts, as two such LRUs counted here say. The model of the same fleet (a GPU cache
    // of 10 blocks a server, round-robin) predicts exactly that; with 9 or 12 blocks it would
    // not (10.5 % and 18.0 %).
    void thePredictionMeetsTheStandinsHits() {
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 40, 60);
        const double want = roundRobinLrus(40, 2, 10);
        QCOMPARE(QString::number(100 * want, 'f', 1), QStringLiteral("16.5"));
        QVERIFY(std::abs(roundRobinLrus(40, 2, 9) - want) > 0.01);
        QVERIFY(std::abs(roundRobinLrus(40, 2, 12) - want) > 0.01);
        const QStringList cache = {"--no-offload", "--report-cached", "--gpu-capacity-tokens",
                                   "160"};
        Standin a(cache), b(cache);
        QVERIFY(!a.url().isEmpty() && !b.url().isEmpty());
        const QString out = dir.path() + "/live";
        const Run r = runCli({"probe", "replay", trace, "--endpoint", a.url(), "--endpoint",
                              b.url(), "--model", "standin/llama-3.2-3b", "--out", out,
                              "--block-tokens", "16", "--format", "jsonl"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const auto live = readJson(out + "/replay.json");
        const double measured = live["measured"]["token_hit_ratio"].get<double>();
        QVERIFY(std::abs(measured - want) < 1e-12);
        const Run c = runCli({"trace", "replay", trace, "--gpu-cache", "10blocks", "--tier",
                              "dram-pcie5=0", "--compare", out, "--output", "json"});
        QVERIFY2(c.exitCode == 0, c.err.constData());
        const auto j = nlohmann::json::parse(c.out.toStdString(), nullptr, false);
        QVERIFY2(j.is_object(), c.out.constData());
        QCOMPARE(j["measured"]["token_hit_ratio"].get<double>(), measured);
        QCOMPARE(j["predicted"]["token_hit_ratio"].get<double>(), measured);
        QCOMPARE(j["compared"].get<int>(), 40);
        QCOMPARE(j["router"].get<std::string>(), std::string("round-robin"));
        QCOMPARE(j["rule"].get<std::string>(), std::string("always"));
        // --calibration adopts a calibration's fit (here the fixture of a Llama 3.2 3B node):
        // the times move, the hits do not, and the output names the fit.
        const Run fitted =
            runCli({"trace", "replay", trace, "--gpu-cache", "10blocks", "--tier", "dram-pcie5=0",
                    "--calibration", KVBE_FIXTURES "/calibration/kvbe-node17.json", "--compare",
                    out, "--output", "json"});
        QVERIFY2(fitted.exitCode == 0, fitted.err.constData());
        const auto f = nlohmann::json::parse(fitted.out.toStdString(), nullptr, false);
        QCOMPARE(f["predicted"]["token_hit_ratio"].get<double>(), measured);
        QVERIFY(f["scenario"].get<std::string>().find("(fit of kvbe-node17.json adopted)") !=
                std::string::npos);
        QVERIFY(f["predicted"]["ttft_s"]["mean"].get<double>() !=
                j["predicted"]["ttft_s"]["mean"].get<double>());
        // Served alone: the requests that found their server idle live (none sent before them on
        // it still open), here found from the rows, split by whether the engine reported cached
        // tokens. The model's hits are the stand-ins' and its 60 ms gaps leave no wait, so every
        // such request is in the check, and its measured median is theirs.
        {
            std::vector<double> ttft[2];
            auto rows = readRows(out + "/requests.jsonl");
            std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
                return a["server"] != b["server"] ? a["server"] < b["server"]
                                                  : a["sent_s"] < b["sent_s"];
            });
            double open = 0;
            for (std::size_t k = 0; k < rows.size(); ++k) {
                if (k == 0 || rows[k]["server"] != rows[k - 1]["server"]) open = 0;
                if (rows[k]["sent_s"].get<double>() >= open)
                    ttft[rows[k]["cached_tokens"].get<int>() > 0 ? 1 : 0].push_back(
                        rows[k]["ttft_s"].get<double>());
                open = std::max(open, rows[k]["end_s"].get<double>());
            }
            const auto& alone = j["served_alone"];
            int k = 0;
            for (const char* kind : {"no_cached_token", "cached_tokens"}) {
                auto& v = ttft[k++];
                QCOMPARE(alone[kind]["requests"].get<std::size_t>(), v.size());
                if (v.size() < 5) continue;
                std::sort(v.begin(), v.end());
                const double median =
                    v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
                QVERIFY(std::abs(alone[kind]["measured_median_s"].get<double>() - median) < 1e-12);
                QVERIFY(alone[kind]["measured_over_predicted"].is_number());
            }
            QVERIFY(ttft[0].size() + ttft[1].size() >= 2);
            // Rows that never end: only each server's first request found it idle, too few to
            // tell the engine's speed from.
            for (auto& row : rows)
                row["end_s"] = 1e9;
            QString text;
            for (const auto& row : rows)
                text += QString::fromStdString(row.dump()) + "\n";
            QVERIFY(writeFile(out + "/requests.jsonl", text.toStdString()));
            const Run busy = runCli({"trace", "replay", trace, "--gpu-cache", "10blocks", "--tier",
                                     "dram-pcie5=0", "--compare", out, "--output", "json"});
            QVERIFY2(busy.exitCode == 0, busy.err.constData());
            const auto b = nlohmann::json::parse(busy.out.toStdString(), nullptr, false);
            const auto& none = b["served_alone"];
            QCOMPARE(none["no_cached_token"]["requests"].get<int>() +
                         none["cached_tokens"]["requests"].get<int>(),
                     2);
            QVERIFY(none["no_cached_token"]["measured_over_predicted"].is_null());
            QVERIFY(none["cached_tokens"]["measured_over_predicted"].is_null());
            const Run table = runCli({"trace", "replay", trace, "--gpu-cache", "10blocks", "--tier",
                                      "dram-pcie5=0", "--compare", out});
            QVERIFY2(table.out.contains("fewer than 5: not told"), table.out.constData());
        }
        // A flag that contradicts the live replay is a sentence, not a silent change.
        const Run bad = runCli({"trace", "replay", trace, "--router", "sglang", "--compare", out});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("--router sglang: the live replay in"), bad.err.constData());
    }

    // --as-routed: each request is replayed on the server the live run sent it to. A live run of
    // 40 requests behind round-robin whose rows say each went to the server of its group's
    // parity: the prediction's hits are those of two LRUs fed so, counted here, not round-robin's.
    void asRoutedReplaysTheLiveRouting() {
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 40, 60);
        const QString live = dir.path() + "/live";
        QVERIFY(QDir().mkpath(live));
        auto write = [&](const QString& name, const std::string& text) {
            QVERIFY(writeFile(live + "/" + name, text));
        };
        write("replay.json", liveSummary(40).dump());
        auto parity = [](int i) { return groupOf(i) % 2; };
        std::string rows;
        for (int i = 0; i < 40; ++i)
            rows += nlohmann::json({{"request", i},
                                    {"server", parity(i)},
                                    {"prompt_tokens", 80},
                                    {"cached_tokens", 0},
                                    {"ttft_s", 0.1}})
                        .dump() +
                    "\n";
        write("requests.jsonl", rows);
        const QStringList args = {"trace",    "replay",   trace,          "--gpu-cache",
                                  "10blocks", "--tier",   "dram-pcie5=0", "--compare",
                                  live,       "--output", "json"};
        const double byParity = routedLrus(40, 2, 10, parity);
        const double byTurns = roundRobinLrus(40, 2, 10);
        QVERIFY(std::abs(byParity - byTurns) > 0.01);
        const Run routed = runCli(args + QStringList{"--as-routed"});
        QVERIFY2(routed.exitCode == 0, routed.err.constData());
        const auto j = nlohmann::json::parse(routed.out.toStdString(), nullptr, false);
        QVERIFY(std::abs(j["predicted"]["token_hit_ratio"].get<double>() - byParity) < 1e-12);
        QCOMPARE(j["routing"].get<std::string>(), std::string("as routed live"));
        const Run modelled = runCli(args);
        QVERIFY2(modelled.exitCode == 0, modelled.err.constData());
        const auto m = nlohmann::json::parse(modelled.out.toStdString(), nullptr, false);
        QVERIFY(std::abs(m["predicted"]["token_hit_ratio"].get<double>() - byTurns) < 1e-12);
        QCOMPARE(m["routing"].get<std::string>(), std::string("by the model"));

        // A row without its server, a server the run did not have, --as-routed alone.
        write("requests.jsonl", R"({"request": 0, "prompt_tokens": 80, "ttft_s": 0.1})"
                                "\n");
        const Run noServer = runCli(args + QStringList{"--as-routed"});
        QCOMPARE(noServer.exitCode, 1);
        QVERIFY2(noServer.err.contains("requests.jsonl:1: expected the server the request went "
                                       "to, 0 to 1"),
                 noServer.err.constData());
        write("requests.jsonl", R"({"request": 0, "server": 2, "prompt_tokens": 80, "ttft_s": 0.1})"
                                "\n");
        QCOMPARE(runCli(args + QStringList{"--as-routed"}).exitCode, 1);
        write("requests.jsonl", R"({"request": 0, "server": 1, "prompt_tokens": 80, "ttft_s": 0.1})"
                                "\n");
        const Run missing = runCli(args + QStringList{"--as-routed"});
        QCOMPARE(missing.exitCode, 1);
        QVERIFY2(missing.err.contains("request 1 has no row"), missing.err.constData());
        const Run alone = runCli({"trace", "replay", trace, "--as-routed"});
        QCOMPARE(alone.exitCode, 1);
        QVERIFY2(alone.err.contains("--as-routed: it replays a live run's routing; give --compare "
                                    "DIR too"),
                 alone.err.constData());
    }

    // What --compare reads is checked: a folder without a replay, a summary of something else,
    // a field of the wrong type, a trace that gives another count of requests, a row that names
    // a request the replay did not send. Each is a sentence naming the file and what was wanted.
    void compareRefusesWhatItCannotRead() {
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 10, 10);
        const QString live = dir.path() + "/live";
        QVERIFY(QDir().mkpath(live));
        auto write = [&](const QString& name, const std::string& text) {
            QVERIFY(writeFile(live + "/" + name, text));
        };
        auto refused = [&](const char* want) {
            const Run r = runCli({"trace", "replay", trace, "--compare", live});
            QCOMPARE(r.exitCode, 1);
            QVERIFY2(r.err.contains(want), r.err.constData());
        };
        refused("no replay.json there; expected the folder probe replay --out wrote");
        write("replay.json", R"({"kvbe_calibration": 1})");
        refused("not a probe replay summary");
        nlohmann::json sum = liveSummary(10);
        sum["rate_scale"] = "fast";
        write("replay.json", sum.dump());
        refused("a field of the wrong type");
        sum["rate_scale"] = 1;
        sum["requests"] = 12;
        write("replay.json", sum.dump());
        refused("gives 10 requests with the live replay's limits, where it replayed 12");
        sum["requests"] = 10;
        write("replay.json", sum.dump());
        write("requests.jsonl", R"({"request": 11, "prompt_tokens": 80, "ttft_s": 0.01})"
                                "\n");
        refused("requests.jsonl:1: request 11 is not among the 10 replayed");
        write("requests.jsonl", "{\"request\": 1}\n");
        refused("requests.jsonl:1: expected a row with request, prompt_tokens and ttft_s");
        write("requests.jsonl", R"({"request": 1, "prompt_tokens": 80, "ttft_s": null})"
                                "\n");
        refused("no request completed, so there is nothing to compare");
    }

    // Bad flags of probe replay: each a sentence naming the flag and what was expected.
    void badFlagsAreSentences_data() {
        QTest::addColumn<QStringList>("flags");
        QTest::addColumn<QString>("sentence");
        QTest::newRow("endpoint") << QStringList{"--endpoint", "127.0.0.1:8000"}
                                  << "--endpoint 127.0.0.1:8000: expected an http:// or https://";
        QTest::newRow("limit") << QStringList{"--limit", "0"}
                               << "--limit 0: expected at least 1 request";
        QTest::newRow("output tokens") << QStringList{"--output-tokens", "many"}
                                       << "--output-tokens many: expected a number of tokens";
        QTest::newRow("router") << QStringList{"--router", "nginx"} << "--router ";
        QTest::newRow("rate scale")
            << QStringList{"--rate-scale", "0"} << "--rate-scale 0: expected above 0";
        QTest::newRow("vocab") << QStringList{"--vocab", "10"}
                               << "--vocab 10: expected the model's vocabulary size";
    }
    void badFlagsAreSentences() {
        QFETCH(QStringList, flags);
        QFETCH(QString, sentence);
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 4, 10);
        QStringList args = {"probe", "replay", trace, "--model", "m", "--out", dir.path() + "/x"};
        if (!flags.contains("--endpoint")) args += {"--endpoint", "http://127.0.0.1:9/v1"};
        const Run r = runCli(args + flags);
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(sentence.toUtf8()), r.err.constData());
    }

    // llm-d and dynamo read KV events a live server must publish: refused with a sentence.
    void routersThatNeedKvEventsAreRefused() {
        QTemporaryDir dir;
        const QString trace = writeTrace(dir.path(), 4, 10);
        const Run r = runCli({"probe", "replay", trace, "--endpoint", "http://127.0.0.1:9/v1",
                              "--model", "m", "--out", dir.path() + "/x", "--router", "llm-d"});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("--router llm-d") && r.err.contains("KV events"),
                 r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestServingReplay)
#include "tst_serving_replay.moc"
