// kvbe-cli and the study's published figures: calc prints them beside the model, calibration
// inspect reads the reference file, published fit makes the shipped fitted scenario again.
#include "cli_run.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

using Run = kvbe::test::CliRun;
Run cli(const QStringList& args) {
    return kvbe::test::runCli(args);
}

const QString kFittedFile =
    QStringLiteral(KVBE_SOURCE_DIR "/resources/scenarios/llama-3.2-3b-h100-study-fitted.kvbe.json");
const QString kReference =
    QStringLiteral(KVBE_SOURCE_DIR "/resources/published/py-kvcache-h100.json");

QJsonObject publishedRow(const QJsonArray& rows, const QString& id) {
    for (const auto& v : rows)
        if (v.toObject()["id"].toString() == id) return v.toObject();
    return {};
}

} // namespace

class TestCliPublished : public QObject {
    Q_OBJECT
  private slots:
    // calc --scenario on the fitted scenario: B* and p* beside the published values, in the table
    // and in JSON, within the fitted scenario's tolerances (B* 10 %, p* 15 %, as tst_published).
    void calcPrintsPublishedBesideModel() {
        const auto table = cli({"calc", "--scenario", kFittedFile});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("Published (py-kvcache study (arXiv 2609.11744), H100 node):"),
                 table.out.constData());
        QVERIFY(table.out.contains("23.2 GB/s"));
        QVERIFY(table.out.contains("6,057 tokens"));
        QVERIFY(table.out.contains("736 tokens"));

        const auto r = cli({"calc", "--scenario", kFittedFile, "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto rows = QJsonDocument::fromJson(r.out).object()["published"].toArray();
        struct Want {
            const char* id;
            double published, tolerance;
        };
        for (const Want& w : {Want{"bstar-1k", 23.2e9, 0.10}, Want{"bstar-8k", 10.4e9, 0.10},
                              Want{"bstar-80k", 3.5e9, 0.10}, Want{"pstar-ssd-llama", 6057, 0.15},
                              Want{"pstar-mem-llama", 736, 0.15}}) {
            const auto o = publishedRow(rows, w.id);
            QVERIFY2(!o.isEmpty(), w.id);
            QCOMPARE(o["published"].toDouble(), w.published);
            QVERIFY2(std::abs(o["model"].toDouble() / w.published - 1) <= w.tolerance, w.id);
        }
        // The illustrative scenario (nominal t_fixed) is far from the SSD threshold: the gap is
        // shown, not hidden.
        const auto d = cli({"calc", "--scenario", "illustrative", "--format", "json"});
        QCOMPARE(d.exitCode, 0);
        const auto pd = publishedRow(QJsonDocument::fromJson(d.out).object()["published"].toArray(),
                                     "pstar-ssd-llama");
        QVERIFY(pd["model"].toDouble() < 0.5 * 6057);
        // Another model: no published section.
        const auto other = cli({"calc", "--model", "meta-llama/Llama-3.3-70B-Instruct"});
        QCOMPARE(other.exitCode, 0);
        QVERIFY(!other.out.contains("Published"));
    }

    // The first run (issue 40, item 9): ./scripts/run without a display prints `calc` on the
    // default scenario, and every B*, f* and p* row of its Published table is within 10 % of
    // the study (the seed's default printed p* SSD 219 tokens against 6,057, -96.4 %).
    void firstRunAgreesWithThePublishedFigures() {
        const auto r =
            cli({"calc", "--scenario", KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json"});
        QCOMPARE(r.exitCode, 0);
        const QString out = QString::fromUtf8(r.out);
        const qsizetype at = out.indexOf(QStringLiteral("Published ("));
        QVERIFY2(at >= 0, r.out.constData());
        // "  p* ssd      6,057 tokens   6,239 tokens  +3.0 %   NVMe (PCIe 5.0)"
        const QRegularExpression row(
            QStringLiteral("^  (B\\*|f\\* \\w+|p\\* \\w+)\\s.*\\s([+-]\\d+\\.\\d) %"),
            QRegularExpression::MultilineOption);
        QStringList seen;
        for (auto it = row.globalMatch(out.mid(at)); it.hasNext();) {
            const auto m = it.next();
            seen << m.captured(1);
            QVERIFY2(std::abs(m.captured(2).toDouble()) <= 10.0, qPrintable(m.captured(0)));
        }
        QCOMPARE(seen, (QStringList{"B*", "B*", "B*", "f* ssd", "f* ssd", "p* ssd", "p* mem"}));
        // Without --scenario, calc prints the same scenario.
        QCOMPARE(cli({"calc"}).out, r.out);
        // The illustrative scenario is one name away and says what it is.
        const auto seed = cli({"published", "compare", "--scenario", "illustrative"});
        QCOMPARE(seed.exitCode, 0);
        QVERIFY2(seed.out.contains("against Llama 3.2 3B on an H100 SXM, illustrative") &&
                     seed.out.contains("219 tokens") && seed.out.contains("-96.4 %"),
                 seed.out.constData());
    }

    void inspectReadsTheReference() {
        const auto r = cli({"calibration", "inspect", kReference});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("(kvbe-published)"), r.out.constData());
        QVERIFY(r.out.contains("23.2 GB/s at 1k tokens  [arXiv 2609.11744, section 5; quoted in "
                               "kv-offload-break-even.txt]"));
        QVERIFY(r.out.contains("559 and 481"));
        const auto j = cli({"calibration", "inspect", kReference, "--format", "json"});
        QCOMPARE(j.exitCode, 0);
        const auto pub = QJsonDocument::fromJson(j.out).object()["published"].toArray();
        QCOMPARE(pub.size(), 1);
        const auto points = pub[0].toObject()["points"].toArray();
        QCOMPARE(points.size(), 16);
        QCOMPARE(publishedRow(points, "pstar-ssd-qwen-ada")["matches_scenario"].toBool(), false);
        QCOMPARE(publishedRow(points, "bstar-80k")["matches_scenario"].toBool(), true);
    }

    void brokenReferenceNamesTheField() {
        QTemporaryDir dir;
        const QString path = dir.filePath("bad.json");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(
            R"({"kvbe_published": 1, "name": "x", "points": [{"id": "a", "quantity": "breakeven_prefix",
            "model": "m", "tier": "ssd", "value": -3, "unit": "tokens", "text": "t", "source": "s", "quote": "q"}]})");
        f.close();
        const auto r = cli({"calibration", "inspect", path});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(
            r.err.contains(
                "field 'points[0].value' is a number (-3); expected a positive number of tokens"),
            r.err.constData());
    }

    // The shipped scenario, fitted on Llama 3.2 3B, moved to Qwen3 4B: compare puts both forms of
    // the fixed cost beside Qwen3 4B's published p*, per layer (the scenario's) within 10 %.
    void compareHeldOutShowsBothForms() {
        QTemporaryDir dir;
        QFile in(kFittedFile);
        QVERIFY(in.open(QIODevice::ReadOnly));
        auto o = QJsonDocument::fromJson(in.readAll()).object();
        o["model"] = "Qwen/Qwen3-4B-Instruct-2507";
        const QString moved = dir.filePath("qwen.kvbe.json");
        QFile out(moved);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(o).toJson());
        out.close();
        const auto table = cli({"published", "compare", "--scenario", moved});
        QCOMPARE(table.exitCode, 0);
        QVERIFY2(table.out.contains("Held out: fitted on meta-llama/Llama-3.2-3B (28 KV/state "
                                    "layers), evaluated on Qwen/Qwen3-4B-Instruct-2507 (36)"),
                 table.out.constData());
        for (const char* s : {"-8.8 %", "-15.6 %", "-8.6 %", "-28.4 %", "this scenario: per layer"})
            QVERIFY2(table.out.contains(s), s);
        const auto r = cli({"published", "compare", "--scenario", moved, "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto held =
            QJsonDocument::fromJson(r.out).array()[0].toObject()["held_out"].toObject();
        QCOMPARE(held["layers"].toInt(), 36);
        QCOMPARE(held["fitted_on"].toObject()["layers"].toInt(), 28);
        for (const char* id : {"pstar-ssd-qwen-h100", "pstar-mem-qwen-h100"}) {
            const auto perLayer = publishedRow(held["per_layer"].toArray(), id);
            const auto constant = publishedRow(held["constant"].toArray(), id);
            QVERIFY2(std::abs(perLayer["relative"].toDouble()) < 0.10, id);
            QVERIFY2(std::abs(constant["relative"].toDouble()) > 0.15, id);
        }
        // On the model it was fitted on, nothing is held out.
        const auto own = cli({"published", "compare", "--scenario", kFittedFile});
        QVERIFY(!own.out.contains("Held out"));
    }

    // --also-model adds a second model's points of the same node: both parts are fitted.
    void fitWithSecondModelFitsBothParts() {
        const auto r = cli({"published", "fit", "--also-model", "Qwen/Qwen3-4B-Instruct-2507",
                            "--format", "json"});
        QCOMPARE(r.exitCode, 0);
        const auto o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["fixed_cost_form"].toString(), QString("t0 + per layer"));
        QCOMPARE(o["fitted_on"].toArray().size(), 2);
        QCOMPARE(o["residuals"].toArray().size(), 11);
        const auto one = cli({"published", "fit"});
        QVERIFY2(one.out.contains("fixed cost       fixed cost per layer (t0 = 0"),
                 one.out.constData());
        const auto unknown = cli({"published", "fit", "--also-model", "Qwen/Qwen3-8B"});
        QCOMPARE(unknown.exitCode, 1);
        QVERIFY2(unknown.err.contains("--also-model Qwen/Qwen3-8B: ") &&
                     unknown.err.contains("has no figure for that model"),
                 unknown.err.constData());
    }

    // published fit --out writes the shipped scenario's numbers again, with its provenance.
    void fitMakesTheShippedScenario() {
        QTemporaryDir dir;
        const QString out = dir.filePath("fitted.kvbe.json");
        const auto r = cli({"published", "fit", "--out", out});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.contains("Residuals at the fitted values:"), r.out.constData());
        QFile a(out), b(kFittedFile);
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        const auto made = QJsonDocument::fromJson(a.readAll()).object();
        const auto shipped = QJsonDocument::fromJson(b.readAll()).object();
        QVERIFY(std::abs(made["utilisation"].toDouble() / shipped["utilisation"].toDouble() - 1) <
                1e-6);
        const auto mt = made["tiers"].toArray(), st = shipped["tiers"].toArray();
        QCOMPARE(mt.size(), st.size());
        for (qsizetype i = 0; i < mt.size(); ++i) {
            QCOMPARE(mt[i].toObject()["name"], st[i].toObject()["name"]);
            for (const char* k : {"bandwidth_GBps", "t_layer_us"})
                QVERIFY(std::abs(mt[i].toObject()[k].toDouble() / st[i].toObject()[k].toDouble() -
                                 1) < 1e-6);
            QCOMPARE(mt[i].toObject()["t_fixed_ms"].toDouble(), 0.0); // the per-layer form: t0 = 0
            QCOMPARE(st[i].toObject()["t_fixed_ms"].toDouble(), 0.0);
        }
        QVERIFY(shipped["provenance"].toObject()["made_by"].toString().startsWith(
            "kvbe-cli published fit"));
        QCOMPARE(shipped["provenance"].toObject()["residuals"].toArray().size(), 9);
    }
};

QTEST_GUILESS_MAIN(TestCliPublished)
#include "tst_cli_published.moc"
