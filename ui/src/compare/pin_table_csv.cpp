#include "kvbe/ui/compare/pin_table_csv.h"

#include "kvbe/cost/report.h"

namespace kvbe {

namespace {

QString csvField(const QString& s) {
    return QString::fromStdString(kvbe::csvField(s.toStdString()));
}

// A raw number for CSV: C locale, enough digits to read back the value.
QString csvNumber(double v) {
    return QString::number(v, 'g', 12);
}

} // namespace

QString pinComparisonCsv(const PinComparison& t) {
    if (t.empty()) return {};
    QStringList head{QStringLiteral("scenario"), QStringLiteral("current"), QStringLiteral("model"),
                     QStringLiteral("context_tokens")};
    for (const auto& c : t.columns) {
        if (c.kind == CompareColumn::Kind::Bandwidth) {
            const QString at = QStringLiteral("@%1").arg(csvNumber(c.tokens));
            head << QStringLiteral("breakeven_bandwidth_GBps") + at
                 << QStringLiteral("delta_breakeven_bandwidth_GBps") + at
                 << QStringLiteral("delta_breakeven_bandwidth_pct") + at;
        } else {
            head << csvField(c.tier + QStringLiteral(":breakeven_prefix_tokens"))
                 << csvField(c.tier + QStringLiteral(":delta_breakeven_prefix_tokens"))
                 << csvField(c.tier + QStringLiteral(":delta_breakeven_prefix_pct"));
        }
    }
    QString out = head.join(QLatin1Char(',')) + QLatin1Char('\n');
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        QStringList f{csvField(row.label),
                      row.current ? QStringLiteral("true") : QStringLiteral("false"),
                      csvField(row.model), csvNumber(row.contextTokens)};
        for (size_t c = 0; c < t.columns.size(); ++c) {
            const auto& v = row.values[c];
            f << (v.isNumber()                            ? csvNumber(v.value)
                  : v.state == CompareValue::State::Never ? QStringLiteral("never")
                                                          : QString());
            const auto d = t.delta(r, c);
            const auto pct = t.deltaPercent(r, c);
            f << (d ? csvNumber(*d) : QString()) << (pct ? csvNumber(*pct) : QString());
        }
        out += f.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

} // namespace kvbe
