#include "kvbe/ui/compare/pin_table_csv.h"

#include "kvbe/base/csv.h"

#include <string>
#include <vector>

namespace kvbe {

namespace {

// A raw number for CSV: C locale, enough digits to read back the value.
std::string csvNumber(double v) {
    return QString::number(v, 'g', 12).toStdString();
}

} // namespace

QString pinComparisonCsv(const PinComparison& t) {
    if (t.empty()) return {};
    std::vector<std::string> head{"scenario", "current", "model", "context_tokens"};
    for (const auto& c : t.columns) {
        if (c.kind == CompareColumn::Kind::Bandwidth) {
            const std::string at = "@" + csvNumber(c.tokens);
            head.insert(head.end(),
                        {"breakeven_bandwidth_GBps" + at, "delta_breakeven_bandwidth_GBps" + at,
                         "delta_breakeven_bandwidth_pct" + at});
        } else {
            const std::string tier = c.tier.toStdString();
            head.insert(head.end(),
                        {tier + ":breakeven_prefix_tokens", tier + ":delta_breakeven_prefix_tokens",
                         tier + ":delta_breakeven_prefix_pct"});
        }
    }
    std::string out = csvLine(head);
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        std::vector<std::string> f{row.label.toStdString(), row.current ? "true" : "false",
                                   row.model.toStdString(), csvNumber(row.contextTokens)};
        for (size_t c = 0; c < t.columns.size(); ++c) {
            const auto& v = row.values[c];
            f.push_back(v.isNumber()                            ? csvNumber(v.value)
                        : v.state == CompareValue::State::Never ? std::string("never")
                                                                : std::string());
            const auto d = t.delta(r, c);
            const auto pct = t.deltaPercent(r, c);
            f.push_back(d ? csvNumber(*d) : std::string());
            f.push_back(pct ? csvNumber(*pct) : std::string());
        }
        out += csvLine(f);
    }
    return QString::fromStdString(out);
}

} // namespace kvbe
