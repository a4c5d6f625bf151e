// Counts (tokens, bytes, parameters) are written as JSON integers by every writer, as readers of
// the files expect: py-kvcache writes "kv_bytes_per_token": 131072, never 131072.0. The checks
// read the output text itself, since a JSON parser reads 114688.0 and 114688 alike; real
// quantities (seconds, rates, fractions) stay as they are.
#include "cli_run.h"

#include <QFile>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}
QByteArray readAll(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QString kNumber = QStringLiteral(R"((-?[0-9][0-9.eE+-]*))");

// The number literals written for `key` ("key": 123), wherever it appears.
QStringList literals(const QByteArray& text, const QString& key) {
    QStringList out;
    QRegularExpression re("\"" + QRegularExpression::escape(key) + R"("\s*:\s*)" + kNumber);
    for (auto it = re.globalMatch(QString::fromUtf8(text)); it.hasNext();)
        out << it.next().captured(1);
    return out;
}
// The number literals that are values inside the object written for `key` ({"ssd": 6057}).
QStringList objectValues(const QByteArray& text, const QString& key) {
    QStringList out;
    QRegularExpression re("\"" + QRegularExpression::escape(key) + R"("\s*:\s*\{([^{}]*)\})");
    QRegularExpression value(R"(:\s*)" + kNumber);
    for (auto it = re.globalMatch(QString::fromUtf8(text)); it.hasNext();) {
        const QString body = it.next().captured(1);
        for (auto v = value.globalMatch(body); v.hasNext();)
            out << v.next().captured(1);
    }
    return out;
}
// The first numbers of the [x, y] pairs in the array written for `key` ([[1024, 0.03], …]).
QStringList pairFirsts(const QByteArray& text, const QString& key) {
    QStringList out;
    const auto at = text.indexOf("\"" + key.toUtf8() + "\"");
    if (at < 0) return out;
    int depth = 0;
    qsizetype end = text.indexOf('[', at);
    const qsizetype begin = end;
    for (; end < text.size(); ++end) {
        depth += text[end] == '[' ? 1 : text[end] == ']' ? -1 : 0;
        if (depth == 0) break;
    }
    QRegularExpression first(R"(\[\s*)" + kNumber + R"(\s*,)");
    for (auto it = first.globalMatch(QString::fromUtf8(text.mid(begin, end - begin)));
         it.hasNext();)
        out << it.next().captured(1);
    return out;
}

bool isInteger(const QString& literal) {
    return !literal.contains('.') && !literal.contains('e') && !literal.contains('E');
}

} // namespace

#define VERIFY_INTEGERS(list, what)                                                                \
    do {                                                                                           \
        const QStringList l_ = (list);                                                             \
        QVERIFY2(!l_.isEmpty(), qPrintable(QStringLiteral("no %1 written").arg(what)));            \
        for (const auto& v_ : l_)                                                                  \
            QVERIFY2(isInteger(v_), qPrintable(QStringLiteral("%1 written as %2").arg(what, v_))); \
    } while (0)

class TestCliJsonCounts : public QObject {
    Q_OBJECT
  private slots:
    // The py-kvcache v2 file: kv_bytes_per_token (Llama 3.2 3B: 28 × 8 × 128 × 2 × 2 = 114,688
    // bytes), the thresholds, the golden points' tokens; knot keys are strings of integers.
    void pyKvcacheExport() {
        const auto r = cli({"calibration", "export-pykvcache", "--schema", "2", "--scenario",
                            KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(literals(r.out, "kv_bytes_per_token"), QStringList{"114688"});
        for (const char* key :
             {"break_even_ssd_tokens", "break_even_mem_tokens", "safety_margin_tokens", "tokens"})
            VERIFY_INTEGERS(literals(r.out, key), key);
        QVERIFY(!r.out.contains("\"1024.0\""));
    }

    // calc: the row's tokens and KV bytes (32,768 × 114,688 = 3,758,096,384), each tier's p*
    // (a whole number of tokens, rounded up), the model's counts.
    void calcJson() {
        const auto r = cli({"calc", "--lengths", "32768", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(literals(r.out, "tokens").contains("32768")); // and the published points' tokens
        VERIFY_INTEGERS(literals(r.out, "tokens"), "tokens");
        QCOMPARE(literals(r.out, "kv_bytes"), QStringList{"3758096384"});
        for (const char* key :
             {"breakeven_prefix_tokens", "kv_bytes_per_token", "params_total", "context_limit"})
            VERIFY_INTEGERS(literals(r.out, key), key);
        const auto gpus = cli({"gpus", "--format", "json"});
        VERIFY_INTEGERS(literals(gpus.out, "memory_bytes"), "memory_bytes");
    }

    // A fitted calibration file and the scenario it is adopted into.
    void calibrationAndScenarioFiles() {
        QTemporaryDir tmp;
        const QString fitted = tmp.filePath("fitted.json"), adopted = tmp.filePath("s.kvbe.json");
        const auto r = cli({"calibration", "fit", KVBE_FIXTURES "/calibration/kvbe-node17.json",
                            "--out", fitted, "--adopt", adopted, "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        VERIFY_INTEGERS(literals(r.out, "breakeven_prefix_tokens"), "the fit's p*");
        VERIFY_INTEGERS(literals(r.out, "prefix"), "residual prefixes");
        const QByteArray file = readAll(fitted);
        QCOMPARE(literals(file, "kv_bytes_per_token"), QStringList{"114688"});
        VERIFY_INTEGERS(objectValues(file, "breakeven_prefix_tokens"), "breakeven_prefix_tokens");
        VERIFY_INTEGERS(pairFirsts(file, "prefill"), "prefill tokens");
        VERIFY_INTEGERS(pairFirsts(file, "reads"), "read bytes");
        VERIFY_INTEGERS(literals(file, "tokens") + literals(file, "prefix"), "hit tokens");
        const QByteArray scenario = readAll(adopted);
        for (const char* key : {"min", "max", "sweep_tokens"})
            VERIFY_INTEGERS(literals(scenario, key), key);
    }

    // The trace commands: the replay's block and tier bytes (hand.jsonl; a 512-token block of
    // Llama 3.2 3B is 28 layers x 8 KV heads x 128 x 2 (K and V) x 2 bytes x 512 = 58,720,256
    // bytes), the longest prompt of inspect.
    void traceOutputs() {
        const QString hand = QStringLiteral(KVBE_FIXTURES "/traces/hand.jsonl");
        auto r = cli({"trace", "replay", hand, "--gpu-cache", "2blocks", "--tier",
                      "dram-pcie5=4blocks", "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(literals(r.out, "block_bytes"), QStringList{"58720256"});
        for (const char* key : {"capacity_bytes", "bytes_written", "write_buffer_bytes", "requests",
                                "tokens", "blocks"})
            VERIFY_INTEGERS(literals(r.out, key), key);
        r = cli({"trace", "inspect", hand, "--output", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QCOMPARE(literals(r.out, "max"), QStringList{"2000"});
    }

    // calibration inspect and published compare, as JSON.
    void inspectAndPublished() {
        auto r = cli({"calibration", "inspect", KVBE_FIXTURES "/calibration/pykvcache-v2.json",
                      KVBE_FIXTURES "/calibration/kvbe-node17.json", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        VERIFY_INTEGERS(literals(r.out, "kv_bytes_per_token"), "kv_bytes_per_token");
        VERIFY_INTEGERS(objectValues(r.out, "breakeven_prefix_tokens"), "breakeven_prefix_tokens");
        VERIFY_INTEGERS(objectValues(r.out, "gate_tokens"), "gate_tokens");
        VERIFY_INTEGERS(literals(r.out, "tokens"), "golden tokens");
        r = cli({"published", "compare", "--format", "json"});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        VERIFY_INTEGERS(literals(r.out, "tokens"), "published tokens");
    }
};

QTEST_GUILESS_MAIN(TestCliJsonCounts)
#include "tst_cli_json_counts.moc"
