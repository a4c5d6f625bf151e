// kvbe-cli report as an approver's reader sees it: the PDF read back with pdftotext (poppler-utils,
// scripts/install-deps) holds the scenario's B* at 32k computed here from the model's config and
// the GPU preset (docs/cost-model.md, the simple FLOP model), the plan's recommended
// configuration as `trace plan` gives it, and the SHA-256 of every input file; the commands the
// report names, run on the files it names, give the same numbers; a scenario with a measured
// tier names the calibration file its transfers came from and the fit. Written without a display.
#include "cli_run.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

namespace {

using Run = kvbe::test::CliRun;

// The fixtures folder: the report is run from there so that it names short relative paths.
QString fixtures() {
    return QStringLiteral(KVBE_FIXTURES);
}

// kvbe-cli `args` run in `dir`, with no display and no platform chosen: the report must pick one.
Run cliIn(const QString& dir, const QStringList& args) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
        env.remove(QString::fromLatin1(v));
    return kvbe::test::runProgram(QStringLiteral(KVBE_CLI_PATH), args, env, 300000, dir);
}

QJsonObject readJson(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qWarning("cannot read %s", qPrintable(path));
    return QJsonDocument::fromJson(f.readAll()).object();
}

QString sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QString::fromLatin1(
        QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256).toHex());
}

// The PDF's text, pdftotext's, with ligatures spelt out, runs of white space made one space, the
// page footers left out and the commands' continuation lines joined.
QString pdfText(const QString& pdf, bool footers = false) {
    const QString tool = QStandardPaths::findExecutable(QStringLiteral("pdftotext"));
    if (tool.isEmpty())
        qWarning("pdftotext not found: scripts/install-deps installs poppler-utils");
    QProcess p;
    p.start(tool, {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
    p.waitForFinished(60000);
    QString t = QString::fromUtf8(p.readAllStandardOutput());
    const std::pair<const char*, const char*> ligatures[] = {{"\xef\xac\x80", "ff"},
                                                             {"\xef\xac\x81", "fi"},
                                                             {"\xef\xac\x82", "fl"},
                                                             {"\xef\xac\x83", "ffi"},
                                                             {"\xef\xac\x84", "ffl"}};
    for (const auto& [from, to] : ligatures)
        t.replace(QString::fromUtf8(from), QString::fromLatin1(to));
    // Commands are one flag a line, continued with a backslash, and may go on over a page's
    // footer.
    if (footers) return t.simplified();
    return t.simplified()
        .remove(QRegularExpression(QStringLiteral("KV offload sign-off page \\d+ of \\d+ ")))
        .replace(QStringLiteral(" \\ "), QStringLiteral(" "));
}

// B*(N) = kvbytes(N) / t_re(N, 0) with the simple FLOP model (docs/cost-model.md), from the
// scenario file, its model's config.json and its GPU's preset, in bytes per second.
double breakevenFromFiles(const QString& scenarioPath, double n) {
    const QJsonObject s = readJson(scenarioPath);
    const QString src = QStringLiteral(KVBE_SOURCE_DIR);
    if (s.contains(QStringLiteral("flop_model")) &&
        s[QStringLiteral("flop_model")].toString() != QLatin1String("simple"))
        qWarning(
            "the default scenario is not on the simple FLOP model: this closed form is not it");
    for (const char* k : {"measured_prefill", "params", "tensor_parallel", "ramp_half_tokens"})
        if (s.contains(QLatin1String(k)))
            qWarning("the default scenario sets %s: extend the closed form", k);
    QString id = s[QStringLiteral("model")].toString();
    const QJsonObject c =
        readJson(src + QStringLiteral("/resources/models/") +
                 id.replace(QLatin1Char('/'), QStringLiteral("__")) + QStringLiteral(".json"));
    const double h = c["hidden_size"].toDouble(), layers = c["num_hidden_layers"].toDouble();
    const double hq = c["num_attention_heads"].toDouble();
    const double hkv = c["num_key_value_heads"].toDouble();
    const double d = c.contains("head_dim") ? c["head_dim"].toDouble() : h / hq;
    const double inter = c["intermediate_size"].toDouble(), vocab = c["vocab_size"].toDouble();
    // Every weight: embeddings (and the head when untied), attention, a gated MLP, the norms.
    const double perLayer = h * hq * d + 2 * h * hkv * d + hq * d * h + 3 * h * inter + 2 * h;
    const double params =
        vocab * h * (c["tie_word_embeddings"].toBool() ? 1 : 2) + layers * perLayer + h;
    const QString kv =
        s.contains("kv_dtype") ? s["kv_dtype"].toString() : c["torch_dtype"].toString();
    const double b = kv.startsWith(QLatin1String("fp8")) ? 1 : 2;
    const QJsonObject gpus =
        readJson(src + QStringLiteral("/resources/gpus.json"))["gpus"].toObject();
    const QJsonObject gpu = gpus[s["gpu"].toString()].toObject();
    const double peak = s.contains("peak_tflops") ? s["peak_tflops"].toDouble() * 1e12
                                                  : gpu["bf16_tflops"].toDouble() * 1e12;
    const double u = s["utilisation"].toDouble();
    const double flops = 2 * params * n + 2 * layers * hq * d * n * n;
    const double kvBytes = layers * 2 * hkv * d * b * n;
    return kvBytes / (flops / (peak * u));
}

// The number before " GB/s" after `prefix` in the text, and how far from the value it may be
// as printed: half a unit of its last digit.
struct Printed {
    double value = std::nan(""), halfUnit = 0;
    // Whether `exact` prints as this.
    bool matches(double exact) const { return std::abs(exact - value) <= halfUnit * 1.0001; }
};
Printed gbpsAfter(const QString& text, const QString& prefix) {
    const QRegularExpression re(QRegularExpression::escape(prefix) +
                                QStringLiteral("\\s*([0-9]+)(?:\\.([0-9]+))? GB/s"));
    const auto m = re.match(text);
    if (!m.hasMatch()) return {};
    const QString digits = m.captured(2);
    const double value = (m.captured(1) + QLatin1Char('.') + digits).toDouble() * 1e9;
    return {value, 0.5 * std::pow(10.0, -double(digits.size())) * 1e9};
}

// The command the report names, from "kvbe-cli <verb>" to `last` (its words; no file names with
// spaces here).
QStringList namedCommand(const QString& text, const QString& verb, const QString& last) {
    const int from = int(text.indexOf(QStringLiteral("kvbe-cli ") + verb));
    if (from < 0) return {};
    const int to = int(text.indexOf(last, from));
    if (to < 0) return {};
    QStringList words = text.mid(from, to + last.size() - from).split(QLatin1Char(' '));
    words.removeFirst(); // kvbe-cli
    return words;
}

// Runs the `trace plan` command the report's text names (on the conversation trace), on the files
// it names, and checks that
// the report recommends what it recommends, at the same capital cost; its "recommended" object.
// An HTML report's text: tags dropped, the entities of the words the tests check spelt out,
// white space made one space and the commands' line continuations joined.
QString htmlText(const QString& path) {
    QFile h(path);
    if (!h.open(QIODevice::ReadOnly)) return {};
    QString text = QString::fromUtf8(h.readAll());
    text.replace(QRegularExpression(QStringLiteral("<[^>]*>")), QStringLiteral(" "));
    text.replace(QStringLiteral("&#x27;"), QStringLiteral("'"))
        .replace(QStringLiteral("&amp;"), QStringLiteral("&"));
    return text.simplified().replace(QStringLiteral(" \\ "), QStringLiteral(" "));
}

QJsonObject recommendationAsTracePlan(const QString& text) {
    const QStringList plan =
        namedCommand(text, QStringLiteral("trace plan"), QStringLiteral("--output json"));
    if (plan.size() <= 4 || !plan.contains(QStringLiteral("--life")) ||
        !plan.contains(QStringLiteral("traces/mooncake-conversation.jsonl"))) {
        qWarning("no trace plan command in the report: %s", qPrintable(text.right(2000)));
        return {};
    }
    const Run r = cliIn(fixtures(), plan);
    if (r.exitCode != 0) {
        qWarning("%s", r.err.constData());
        return {};
    }
    const QJsonObject rec = QJsonDocument::fromJson(r.out).object()["recommended"].toObject();
    const QString description = rec["description"].toString();
    if (!text.contains(QStringLiteral("Recommended: ") + description)) {
        qWarning("the report does not recommend %s", qPrintable(description));
        return {};
    }
    const QString capex =
        QLocale(QLocale::English).toString(qint64(std::llround(rec["capex_usd"].toDouble())));
    if (!text.contains(QStringLiteral("capital cost $") + capex)) {
        qWarning("the report does not give the capital cost $%s", qPrintable(capex));
        return {};
    }
    return rec;
}

} // namespace

class TestCliReport : public QObject {
    Q_OBJECT
  private:
    QTemporaryDir m_dir;
    QString m_text; // the report's text, from pdftotext

    const QString m_trace = QStringLiteral("traces/mooncake-conversation.jsonl");
    // Node 17's own measurements of the scenario's model, and a py-kvcache v2 file of another
    // model (its implied points drawn; a poor fit and another model: risks).
    const QStringList m_imports = {QStringLiteral("calibration/kvbe-node17.json"),
                                   QStringLiteral("calibration/pykvcache-v2.json")};

  private slots:
    // The default scenario, the conversation trace, two calibration fixtures and a small plan
    // grid (life 6 months, so drives are bought and wear is a risk), read back from the PDF.
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        QVERIFY2(!QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty(),
                 "pdftotext not found: scripts/install-deps installs poppler-utils");
        const QString pdf = m_dir.filePath(QStringLiteral("report.pdf"));
        QStringList args = {"report", "--trace", m_trace};
        for (const auto& i : m_imports)
            args << "--import" << i;
        args << "--life"
             << "0.5"
             << "--dram"
             << "0,512GiB"
             << "--drives"
             << "0,2"
             << "--store-after"
             << "1,2"
             << "--slo-p99"
             << "5s"
             << "--out" << pdf;
        const Run r = cliIn(fixtures(), args);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QVERIFY(QFile::exists(pdf));
        m_text = pdfText(pdf);
        QVERIFY(m_text.size() > 1000);
    }

    // B*(32,768) of the scenario the report was made from, to the three digits it prints.
    void breakevenAt32k() {
        const double expected = breakevenFromFiles(
            QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json"), 32768);
        const Printed got = gbpsAfter(m_text, QStringLiteral("B* at 32,768 tokens:"));
        QVERIFY2(got.matches(expected),
                 qPrintable(QStringLiteral("report %1, expected %2").arg(got.value).arg(expected)));
    }

    // The recommended configuration, its cost and payback, as `trace plan` gives them with the
    // command the report names, run on the files it names. On the default scenario (fixed costs
    // fitted to the study) no configuration of this grid pays for itself on this trace: the plan
    // recommends GPU-only caching, and the report must say so as `trace plan` does.
    void recommendedAsTracePlanGivesIt() {
        const QJsonObject rec = recommendationAsTracePlan(m_text);
        QVERIFY(!rec.isEmpty());
        QCOMPARE(rec["description"].toString(), QStringLiteral("GPU-only caching"));
        QVERIFY(m_text.contains(QStringLiteral("Why: ")));
        QVERIFY(m_text.contains(QStringLiteral("Example prices:")));
    }

    // The illustrative scenario (u = 50 %, no fixed cost) on the same grid buys drives: the
    // report gives their cost, payback and life per tier as `trace plan` does.
    void aPlanThatBuysDrivesGivesTheirLife() {
        const QString html = m_dir.filePath(QStringLiteral("illustrative.html"));
        const Run r = cliIn(fixtures(), {"report", "--scenario", "illustrative", "--trace", m_trace,
                                         "--life", "0.5", "--dram", "0,512GiB", "--drives", "0,2",
                                         "--store-after", "1,2", "--slo-p99", "5s", "--out", html});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString text = htmlText(html);
        QVERIFY(!text.isEmpty());
        const QJsonObject rec = recommendationAsTracePlan(text);
        QVERIFY(!rec.isEmpty());
        QVERIFY(rec["drives"].toInt() > 0); // drives are bought: the plan is not trivial
        QVERIFY(text.contains(QStringLiteral("rated endurance reached in")));
        QVERIFY(text.contains(QStringLiteral("Why: ")));
    }

    // A fleet (--servers N --router NAME): the report plans it as trace plan does, names the
    // fleet, and its plan command gives the recommendation it prints. --router without servers
    // to route to is refused.
    void aFleetIsPlannedAsTracePlanPlansIt() {
        const QString html = m_dir.filePath(QStringLiteral("fleet.html"));
        const Run r =
            cliIn(fixtures(), {"report", "--trace", m_trace, "--servers", "4", "--node-servers",
                               "2", "--router", "sglang", "--life", "0.5", "--dram", "0,512GiB",
                               "--drives", "0,2", "--store-after", "1", "--out", html});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString text = htmlText(html);
        QVERIFY(!text.isEmpty());
        QVERIFY2(text.contains(QStringLiteral("Fleet: 4 servers on 2 nodes (2 a node) behind "
                                              "sglang, a GPU cache each")),
                 qPrintable(text.left(3000)));
        const QJsonObject rec = recommendationAsTracePlan(text);
        QVERIFY(!rec.isEmpty());
        QCOMPARE(rec["router"].toString(), QStringLiteral("sglang"));
        // Its replay of the trace is that fleet's too, as the Workload tab says it.
        QVERIFY2(text.contains(QStringLiteral("on each of 4 servers behind sglang")),
                 qPrintable(text.left(3000)));
        const Run bad = cliIn(fixtures(), {"report", "--trace", m_trace, "--router", "sglang",
                                           "--out", m_dir.filePath(QStringLiteral("no.html"))});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("--router: expected a fleet to route to, --servers 2 or more"),
                 bad.err.constData());
    }

    // The break-even figures the report names (`kvbe-cli calc …`) give its B* at 32k.
    void calcGivesTheSameBreakeven() {
        const QStringList calc =
            namedCommand(m_text, QStringLiteral("calc"), QStringLiteral("--format json"));
        QVERIFY2(calc.size() > 2, qPrintable(m_text.right(2000)));
        const Run r = cliIn(fixtures(), calc);
        QVERIFY2(r.exitCode == 0, r.err.constData());
        double b = std::nan("");
        for (const auto& row : QJsonDocument::fromJson(r.out).object()["rows"].toArray())
            if (row.toObject()["tokens"].toDouble() == 32768)
                b = row.toObject()["breakeven_bandwidth_Bps"].toDouble();
        QVERIFY(gbpsAfter(m_text, QStringLiteral("B* at 32,768 tokens:")).matches(b));
    }

    // Every input file with its SHA-256, as sha256sum writes them.
    void everyInputHashed() {
        QStringList files = m_imports;
        files << m_trace;
        for (const auto& f : files) {
            const QString line =
                sha256(fixtures() + QLatin1Char('/') + f) + QStringLiteral(" ") + f;
            QVERIFY2(m_text.contains(line), qPrintable(line));
        }
        QVERIFY(m_text.contains(QStringLiteral("kvbe-cli report --trace ") + m_trace));
    }

    // A document: title page, contents, numbered figures with captions, page numbers; the
    // imported files fitted; the risks said as risks.
    void looksLikeADocument() {
        for (const char* s :
             {"Contents", "Figure 1. Break-even bandwidth", "Figure 2.",
              "The plan: each configuration", "Measurements", "calibration/kvbe-node17.json",
              "rms relative residual", "Risks", "Drive wear:", "How to reproduce it", "kvbe 0.1.0",
              "Measured elsewhere: calibration/pykvcache-v2.json: measured with "
              "model",
              "Poor fit: calibration/pykvcache-v2.json", "Example prices:"})
            QVERIFY2(m_text.contains(QLatin1String(s)), s);
        // Every page but the title page numbered, "page 2 of N" to "page N of N".
        const QString all = pdfText(m_dir.filePath(QStringLiteral("report.pdf")), true);
        const auto m = QRegularExpression(QStringLiteral("page 2 of (\\d+)")).match(all);
        QVERIFY(m.hasMatch());
        const int pages = m.captured(1).toInt();
        QVERIFY(pages > 6);
        for (int i = 2; i <= pages; ++i)
            QVERIFY(all.contains(QStringLiteral("page %1 of %2").arg(i).arg(pages)));
        QVERIFY(!all.contains(QStringLiteral("page 1 of")));
    }

    // Pages that print whole: poppler reads the PDF without a syntax error, and no word runs
    // past the right margin (pdftotext's boxes; A4 with 20 mm margins, half a millimetre of
    // slack). A file's SHA-256 and its path ran 8 mm past it, and an imported file's empty
    // dashed line drew an empty path that poppler reported as "No current point in closepath".
    void pagesPrintWhole() {
        const QString pdf = m_dir.filePath(QStringLiteral("report.pdf"));
        // And a report whose trace has a long path, so that its SHA-256 line is wider than the
        // page (64 + 2 + 90 characters of 7 pt mono against 115 that fit).
        const QString deep = m_dir.filePath(
            QStringLiteral("a-folder-with-a-long-name-as-traces-often-have/and-another-below-it"));
        QVERIFY(QDir().mkpath(deep));
        const QString longTrace = deep + QStringLiteral("/mooncake-conversation.jsonl");
        QVERIFY(QFile::copy(fixtures() + "/" + m_trace, longTrace));
        const QString longPdf = m_dir.filePath(QStringLiteral("long.pdf"));
        const Run r = cliIn(fixtures(), {"report", "--trace", longTrace, "--dram", "0", "--drives",
                                         "0,1", "--store-after", "1", "--out", longPdf});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        const QString toppm = QStandardPaths::findExecutable(QStringLiteral("pdftoppm"));
        QVERIFY2(!toppm.isEmpty(), "pdftoppm not found: scripts/install-deps installs it");
        QTemporaryDir pngs;
        QProcess p;
        p.start(toppm, {QStringLiteral("-r"), QStringLiteral("20"), pdf,
                        pngs.filePath(QStringLiteral("page"))});
        QVERIFY(p.waitForFinished(120000));
        const QByteArray warnings = p.readAllStandardError();
        QVERIFY2(!warnings.contains("Syntax Error"), warnings.constData());
        // Every word's box within the right margin, in both reports.
        QString html;
        for (const QString& file : {pdf, longPdf}) {
            QProcess box;
            box.start(QStandardPaths::findExecutable(QStringLiteral("pdftotext")),
                      {QStringLiteral("-bbox"), file, QStringLiteral("-")});
            QVERIFY(box.waitForFinished(120000));
            html += QString::fromUtf8(box.readAllStandardOutput());
        }
        QVERIFY(html.contains(QStringLiteral("and-another-below-it")));
        const double pageWidthPt = 595.276, rightPt = pageWidthPt - (20 - 0.5) / 25.4 * 72;
        const QRegularExpression word(QStringLiteral(
            "<word xMin=\"([\\d.]+)\" yMin=\"[\\d.]+\" xMax=\"([\\d.]+)\"[^>]*>([^<]*)<"));
        int words = 0;
        for (auto it = word.globalMatch(html); it.hasNext();) {
            const auto m = it.next();
            ++words;
            QVERIFY2(m.captured(2).toDouble() <= rightPt,
                     qPrintable(QStringLiteral("'%1' ends at %2 pt, past the right margin (%3 pt)")
                                    .arg(m.captured(3), m.captured(2))
                                    .arg(rightPt)));
        }
        QVERIFY(words > 1000);
    }

    // A scenario whose tier is fitted from measured transfers names the calibration file they
    // came from and the fit: two reads of kvbe-node17.json's nvme tier, (1 MB, 1.1 ms) and
    // (1 GB, 81 ms): B = 999 MB / 79.9 ms = 12.5 GB/s, t_fixed = 1.1 ms − 1 MB / B = 1.02 ms.
    void measuredTierNamesItsCalibrationFile() {
        const QString scenario = m_dir.filePath(QStringLiteral("measured.kvbe.json"));
        QFile f(scenario);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"kvbe_scenario": 1, "name": "measured NVMe", "model": "meta-llama/Llama-3.2-3B",
            "gpu": "h100-sxm", "utilisation": 0.5,
            "tiers": [{"name": "node17 NVMe", "bandwidth_GBps": 1, "t_fixed_ms": 0, "measured": [[1000000, 0.0011], [1000000000, 0.081]]}]})");
        f.close();
        const QString html = m_dir.filePath(QStringLiteral("measured.html"));
        const Run r = cliIn(fixtures(), {"report", "--scenario", scenario, "--import",
                                         m_imports.front(), "--out", html});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QFile h(html);
        QVERIFY(h.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(h.readAll());
        const double slope = (0.081 - 0.0011) / (1e9 - 1e6);
        const double b = 1 / slope, t0 = 0.0011 - 1e6 * slope;
        QCOMPARE(QString::number(b / 1e9, 'f', 1), QStringLiteral("12.5"));
        QCOMPARE(QString::number(t0 * 1e3, 'f', 2), QStringLiteral("1.02"));
        QVERIFY2(
            text.contains(QStringLiteral("fitted from 2 measured transfers of "
                                         "calibration/kvbe-node17.json (tier &#x27;nvme&#x27;)")) ||
                text.contains(QStringLiteral("fitted from 2 measured transfers of "
                                             "calibration/kvbe-node17.json (tier 'nvme')")),
            qPrintable(text.left(4000)));
        QVERIFY(text.contains(QStringLiteral("gives B = 12.5 GB/s, t_fixed = 1.02 ms")));
        // One self-contained file: the charts inline, nothing fetched.
        QVERIFY(text.count(QStringLiteral("<svg")) >= 4);
        QVERIFY(!text.contains(QStringLiteral("src=\"http")));
        QVERIFY(text.contains(sha256(scenario) + QStringLiteral("  ") + scenario));
    }

    // Node 17 measured an H100 ("NVIDIA H100 80GB HBM3"): the H100 SXM of the default scenario
    // is the same GPU (no risk above), an H200 another one.
    void calibrationOfAnotherGpu() {
        QVERIFY(!m_text.contains(QStringLiteral("Measured on another GPU")));
        const QString html = m_dir.filePath(QStringLiteral("h200.html"));
        const Run r = cliIn(
            fixtures(), {"report", "--gpu", "h200", "--import", m_imports.front(), "--out", html});
        QVERIFY2(r.exitCode == 0, r.err.constData());
        QFile h(html);
        QVERIFY(h.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(h.readAll());
        QVERIFY(
            text.contains(QStringLiteral("Measured on another GPU: calibration/kvbe-node17.json "
                                         "was measured on NVIDIA H100 80GB HBM3")));
        // The flag that changed the default scenario is named where the GPU came from.
        QVERIFY(
            text.contains(QStringLiteral("kvbe&#x27;s default scenario, changed by --gpu h200")) ||
            text.contains(QStringLiteral("kvbe's default scenario, changed by --gpu h200")));
    }

    // An output that is neither .pdf nor .html is refused before anything is computed.
    void refusesAnUnknownOutput() {
        const Run r = cliIn(fixtures(), {"report", "--out", m_dir.filePath("report.docx")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains("name it .pdf or .html"), r.err.constData());
        QVERIFY(!QFile::exists(m_dir.filePath("report.docx")));
    }
};

QTEST_GUILESS_MAIN(TestCliReport)
#include "tst_cli_report.moc"
