// An independent reader of py-kvcache break-even files and pareto-measure CSVs, written from the
// shared format page (formats/py-kvcache.md) with Qt's JSON parser, not kvbe's: the fixtures and
// our exports are checked against it. Each check returns what breaks the page's rules; none
// means the file is as py-kvcache writes and reads it.
#pragma once

#include <QByteArray>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QList>
#include <QMap>
#include <QRegularExpression>
#include <QSet>
#include <QString>
#include <QStringList>

#include <cmath>
#include <optional>

namespace kvbe::test {

struct PageCurve {
    double floor = 0;
    QMap<qint64, double> knots; // sorted by tokens
};

struct PageGolden {
    qint64 tokens = 0;
    double f = 0, gSsd = 0, gMem = 0;
};

struct PageFile {
    int schema = 1;
    std::optional<qint64> ssd, mem; // absent: 0, gate off
    qint64 margin = 0;
    QString modelName, kvDtype;
    QMap<QString, PageCurve> curves;
    QList<PageGolden> golden;
    QStringList problems;

    // "The margin folds in only where a gate is on."
    qint64 gateSsd() const { return ssd.value_or(0) > 0 ? *ssd + margin : 0; }
    qint64 gateMem() const { return mem.value_or(0) > 0 ? *mem + margin : 0; }
};

inline bool pageWholeNonNegative(const QJsonValue& v) {
    if (!v.isDouble()) return false;
    const double d = v.toDouble();
    return std::isfinite(d) && d >= 0 && d == std::floor(d);
}

inline PageFile readPageFile(const QByteArray& text) {
    PageFile out;
    QJsonParseError err{};
    const auto doc = QJsonDocument::fromJson(text, &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) {
        out.problems << QStringLiteral("not a JSON object: %1").arg(err.errorString());
        return out;
    }
    const auto o = doc.object();
    static const QSet<QString> v1Fields{
        "schema_version",        "model_name",          "kv_dtype", "break_even_ssd_tokens",
        "break_even_mem_tokens", "safety_margin_tokens"};
    static const QSet<QString> v2Fields{"gpu_model", "ssd_model", "kv_bytes_per_token",
                                        "curves",    "golden",    "provenance"};
    static const QSet<QString> dtypes{"auto", "fp8", "fp8_e4m3", "fp8_e5m2", "bfloat16", "float16"};
    if (o.contains("schema_version")) {
        const auto v = o["schema_version"];
        if (!pageWholeNonNegative(v) || (v.toInt() != 1 && v.toInt() != 2))
            out.problems << QStringLiteral("schema_version is not 1 or 2");
        else
            out.schema = v.toInt();
    } else if (o.contains("curves")) {
        out.problems << QStringLiteral("curves without \"schema_version\": 2");
    }
    for (auto it = o.begin(); it != o.end(); ++it)
        if (!v1Fields.contains(it.key()) && !(out.schema == 2 && v2Fields.contains(it.key())))
            out.problems << QStringLiteral("field '%1' is not on the format page for schema %2")
                                .arg(it.key())
                                .arg(out.schema);
    for (const char* key :
         {"break_even_ssd_tokens", "break_even_mem_tokens", "safety_margin_tokens"}) {
        if (!o.contains(key)) continue;
        if (!pageWholeNonNegative(o[key])) {
            out.problems << QStringLiteral("%1 is not a non-negative integer").arg(key);
            continue;
        }
        const auto v = static_cast<qint64>(o[key].toDouble());
        if (QLatin1String(key) == QLatin1String("break_even_ssd_tokens"))
            out.ssd = v;
        else if (QLatin1String(key) == QLatin1String("break_even_mem_tokens"))
            out.mem = v;
        else
            out.margin = v;
    }
    if (o.contains("model_name")) {
        if (!o["model_name"].isString())
            out.problems << QStringLiteral("model_name is not a string");
        out.modelName = o["model_name"].toString();
    }
    if (o.contains("kv_dtype")) {
        out.kvDtype = o["kv_dtype"].toString();
        if (!dtypes.contains(out.kvDtype))
            out.problems << QStringLiteral("kv_dtype '%1' is not vLLM's").arg(out.kvDtype);
    }
    if (out.schema != 2) return out;

    for (const char* key : {"gpu_model", "ssd_model"})
        if (o.contains(key) && !o[key].isString())
            out.problems << QStringLiteral("%1 is not a string").arg(key);
    if (o.contains("kv_bytes_per_token") && !(o["kv_bytes_per_token"].toDouble() > 0))
        out.problems << QStringLiteral("kv_bytes_per_token is not positive");
    if (o.contains("provenance") && !o["provenance"].isObject())
        out.problems << QStringLiteral("provenance is not an object");
    const auto curves = o["curves"].toObject();
    const QSet<QString> names{"f", "g_ssd", "g_mem"};
    const QStringList curveNames = curves.keys();
    if (QSet<QString>(curveNames.begin(), curveNames.end()) != names)
        out.problems << QStringLiteral("curves are not exactly f, g_ssd and g_mem: %1")
                            .arg(curves.keys().join(", "));
    static const QRegularExpression digits(QStringLiteral("^[0-9]+$"));
    for (const auto& name : curves.keys()) {
        const auto c = curves[name].toObject();
        PageCurve pc;
        if (!c["floor"].isDouble() || !(c["floor"].toDouble() >= 0))
            out.problems << name + QStringLiteral(": floor is not seconds >= 0");
        pc.floor = c["floor"].toDouble();
        if (!c["knots"].isObject())
            out.problems << name + QStringLiteral(": knots is not an object");
        const auto knots = c["knots"].toObject();
        for (auto it = knots.begin(); it != knots.end(); ++it) {
            if (!digits.match(it.key()).hasMatch()) {
                out.problems << name +
                                    QStringLiteral(": knot key '%1' is not a non-negative integer")
                                        .arg(it.key());
                continue;
            }
            const qint64 m = it.key().toLongLong();
            if (pc.knots.contains(m))
                out.problems << name + QStringLiteral(": knot %1 appears twice").arg(m);
            const double s = it.value().toDouble(-1);
            if (!it.value().isDouble() || !std::isfinite(s) || s < 0)
                out.problems
                    << name + QStringLiteral(": knot %1 is not finite seconds >= 0").arg(it.key());
            pc.knots[m] = s;
        }
        if (pc.knots.size() < 2) out.problems << name + QStringLiteral(": fewer than two knots");
        out.curves[name] = pc;
    }
    if (o.contains("golden")) {
        if (!o["golden"].isArray()) out.problems << QStringLiteral("golden is not a list");
        for (const auto& g : o["golden"].toArray()) {
            const auto e = g.toObject();
            bool ok = g.isObject() && pageWholeNonNegative(e["tokens"]);
            for (const char* k : {"f", "g_ssd", "g_mem"})
                ok = ok && e[k].isDouble() && e[k].toDouble() >= 0;
            if (!ok) {
                out.problems << QStringLiteral(
                    "a golden entry without tokens and all three curve values");
                continue;
            }
            out.golden.append({static_cast<qint64>(e["tokens"].toDouble()), e["f"].toDouble(),
                               e["g_ssd"].toDouble(), e["g_mem"].toDouble()});
        }
    }
    return out;
}

// py-kvcache's rule, from the page: the smallest block-aligned (16) n from which f(m) > g(m)
// holds for every measured m >= n. Here f and g share their knots (as our exports write them).
inline qint64 pageRuleThreshold(const PageCurve& f, const PageCurve& g) {
    qint64 n = 0;
    for (auto it = f.knots.begin(); it != f.knots.end(); ++it) {
        if (!g.knots.contains(it.key())) continue;
        if (!(it.value() > g.knots[it.key()])) n = (it.key() / 16 + 1) * 16;
    }
    return n;
}

// The pareto-measure CSV of kvcache-experiments: exactly the page's columns; a failed row has
// its error set and its TTFT columns empty.
inline QStringList checkParetoCsv(const QByteArray& text, int* failedRows = nullptr) {
    QStringList problems;
    const QStringList columns{"curve",       "server_config",    "doc_size",   "prefix_len",
                              "prefix_frac", "concurrency",      "n_queries",  "n_successful",
                              "ttft_mean_s", "ttft_median_s",    "ttft_p05_s", "ttft_p95_s",
                              "ttft_p99_s",  "gpu_transfer_csv", "error"};
    const auto lines = QString::fromUtf8(text).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (lines.isEmpty() || lines[0].split(QLatin1Char(',')) != columns)
        return {QStringLiteral("the header is not the page's columns")};
    int failed = 0;
    for (int i = 1; i < lines.size(); ++i) {
        const auto f = lines[i].split(QLatin1Char(',')); // the fixtures quote nothing
        if (f.size() != columns.size()) {
            problems << QStringLiteral("line %1: %2 fields").arg(i + 1).arg(f.size());
            continue;
        }
        if (f[0] != QLatin1String("cold_prefill") && f[0] != QLatin1String("cache_hit"))
            problems << QStringLiteral("line %1: curve '%2'").arg(i + 1).arg(f[0]);
        const bool error = !f[14].isEmpty();
        failed += error;
        for (int c = 8; c <= 12; ++c)
            if (f[c].isEmpty() != error)
                problems << QStringLiteral("line %1: %2 is %3 in a %4 row")
                                .arg(i + 1)
                                .arg(columns[c], f[c].isEmpty() ? "empty" : "set",
                                     error ? "failed" : "successful");
    }
    if (failedRows) *failedRows = failed;
    return problems;
}

} // namespace kvbe::test
