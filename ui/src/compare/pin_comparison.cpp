#include "kvbe/ui/compare/pin_comparison.h"

#include "kvbe/base/units.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QRegularExpression>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

const QString kDash = QStringLiteral("—");
const QString kMinus = QStringLiteral("−");

// Three significant digits, trailing zeros kept (12.3, 7.03, 4.70, 0.975), whole from 100 up:
// a column of them reads alike.
QString shortNumber(double v) {
    const double a = std::abs(v);
    if (a >= 100) return QString::fromStdString(formatTokens(v));
    if (a >= 10) return QString::number(v, 'f', 1);
    if (a >= 1) return QString::number(v, 'f', 2);
    return QString::number(v, 'g', 3);
}

QString tokenCountText(double v) {
    return QString::fromStdString(formatTokens(v)) +
           (std::abs(v) == 1 ? QObject::tr(" token") : QObject::tr(" tokens"));
}

QString signedText(double v, const QString& magnitude) {
    if (v > 0) return QLatin1Char('+') + magnitude;
    if (v < 0) return kMinus + magnitude;
    return magnitude;
}

} // namespace

std::vector<double> defaultCompareLengths() {
    return {4096, 32768, 131072};
}

Result<std::vector<double>> parseCompareLengths(const QString& text) {
    QString list = text.trimmed();
    // Spaces separate as well as commas do ("4k 32k").
    list.replace(QRegularExpression(QStringLiteral("[\\s;]+")), QStringLiteral(","));
    list.replace(QRegularExpression(QStringLiteral(",+")), QStringLiteral(","));
    if (list.startsWith(QLatin1Char(','))) list.remove(0, 1);
    if (list.endsWith(QLatin1Char(','))) list.chop(1);
    if (list.isEmpty())
        return fail(QObject::tr("Prompt lengths: give at least one token count, e.g. 4k, 32k, "
                                "128k (k = 1024)."));
    auto parsed = parseTokenList(list.toStdString());
    if (!parsed)
        return fail(
            QObject::tr("Prompt lengths: %1.").arg(QString::fromStdString(parsed.message())));
    std::vector<double> out = *parsed;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (int(out.size()) > kMaxCompareLengths)
        return fail(QObject::tr("Prompt lengths: at most %1 lengths fit the table (got %2).")
                        .arg(kMaxCompareLengths)
                        .arg(out.size()));
    return out;
}

QString shortTokens(double tokens) {
    const double mi = 1024.0 * 1024.0;
    if (tokens >= mi && std::fmod(tokens, mi) == 0) return QString::number(tokens / mi) + 'm';
    if (tokens >= 1024 && std::fmod(tokens, 1024) == 0)
        return QString::number(tokens / 1024, 'f', 0) + 'k';
    if (tokens >= 1024 && std::fmod(tokens, 512) == 0)
        return QString::number(tokens / 1024, 'f', 1) + 'k';
    return QString::fromStdString(formatTokens(tokens));
}

QString compareLengthsText(const std::vector<double>& lengths) {
    QStringList parts;
    for (double n : lengths)
        parts << shortTokens(n).remove(QLatin1Char(','));
    return parts.join(QStringLiteral(", "));
}

std::optional<double> PinComparison::delta(size_t row, size_t column) const {
    if (row >= rows.size() || column >= columns.size()) return std::nullopt;
    const auto& a = rows[row].values[column];
    const auto& b = rows.front().values[column];
    if (!a.isNumber() || !b.isNumber()) return std::nullopt;
    return a.value - b.value;
}

std::optional<double> PinComparison::deltaPercent(size_t row, size_t column) const {
    const auto d = delta(row, column);
    if (!d) return std::nullopt;
    const double base = rows.front().values[column].value;
    if (base == 0) return std::nullopt;
    return *d / base * 100;
}

PinComparison comparePins(const ResultPtr& current, const std::vector<ResultPtr>& pins,
                          const std::vector<double>& lengths) {
    PinComparison t;
    if (!current) return t;
    std::vector<ResultPtr> all{current};
    for (const auto& p : pins)
        if (p) all.push_back(p);

    using Kind = CompareColumn::Kind;
    using State = CompareValue::State;
    for (double n : lengths)
        t.columns.push_back({Kind::Bandwidth, n, {}, {}});
    const size_t firstTier = t.columns.size();
    // Each scenario's tiers to their columns: by preset where both have one, else by name; a
    // column takes one tier of each scenario.
    std::vector<std::vector<size_t>> tierColumns(all.size());
    for (size_t s = 0; s < all.size(); ++s) {
        std::vector<bool> taken(t.columns.size(), false);
        for (const auto& tc : all[s]->scenario.tiers) {
            const QString name = QString::fromStdString(tc.name);
            size_t found = t.columns.size();
            for (size_t c = firstTier; c < t.columns.size(); ++c) {
                if (taken[c]) continue;
                const auto& col = t.columns[c];
                const bool match = !tc.preset.empty() && !col.preset.empty()
                                       ? tc.preset == col.preset
                                       : col.tier == name;
                if (match) {
                    found = c;
                    break;
                }
            }
            if (found == t.columns.size()) {
                t.columns.push_back({Kind::Prefix, 0, name, tc.preset});
                taken.push_back(false);
            }
            taken[found] = true;
            tierColumns[s].push_back(found);
        }
    }

    for (size_t s = 0; s < all.size(); ++s) {
        const ScenarioResult& r = *all[s];
        CompareRow row;
        row.label = r.label;
        row.current = s == 0;
        row.model = QString::fromStdString(r.model().id).section(QLatin1Char('/'), -1);
        row.contextTokens = r.model().contextLimit;
        row.values.assign(t.columns.size(), CompareValue{State::NoTier, 0});
        QStringList past;
        for (size_t c = 0; c < lengths.size(); ++c) {
            const double n = lengths[c];
            if (n > row.contextTokens) {
                row.values[c] = {State::PastContext, 0};
                past << shortTokens(n);
                continue;
            }
            const auto b = r.eval->cost.breakevenBandwidth(n);
            row.values[c] = b && std::isfinite(*b) ? CompareValue{State::Number, *b / 1e9}
                                                   : CompareValue{State::None, 0};
        }
        for (size_t i = 0; i < tierColumns[s].size(); ++i) {
            // p* as core computed it for the scenario's curves (the tier table and the
            // fraction chart show the same), the whole prefix every view states.
            const auto p = wholeBreakevenPrefix(
                i < r.curves.tiers.size() ? r.curves.tiers[i].breakevenPrefix
                                          : r.eval->cost.breakevenPrefix(r.eval->tiers[i]));
            row.values[tierColumns[s][i]] =
                p ? CompareValue{State::Number, *p} : CompareValue{State::Never, 0};
        }
        if (!past.isEmpty()) {
            const QString lengthsText =
                past.size() == 1 ? past.front()
                                 : past.mid(0, past.size() - 1).join(QStringLiteral(", ")) +
                                       QObject::tr(" and ") + past.back();
            t.notes << QObject::tr("%1: %2 %3 past the context of %4 (%5 tokens), so B* is not "
                                   "computed there.")
                           .arg(s == 0 ? QObject::tr("The current scenario")
                                       : QObject::tr("Pin %1 (%2)").arg(s).arg(row.label),
                                lengthsText,
                                past.size() == 1 ? QObject::tr("is") : QObject::tr("are"),
                                row.model, QString::fromStdString(formatTokens(row.contextTokens)));
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

QString columnTitle(const CompareColumn& c) {
    return c.kind == CompareColumn::Kind::Bandwidth
               ? QObject::tr("B* at %1").arg(shortTokens(c.tokens))
               : QObject::tr("p* %1").arg(c.tier);
}

QString columnUnit(const CompareColumn& c) {
    return c.kind == CompareColumn::Kind::Bandwidth ? QStringLiteral("GB/s")
                                                    : QObject::tr("tokens");
}

QString valueText(const CompareValue& v, const CompareColumn& c) {
    using State = CompareValue::State;
    switch (v.state) {
    case State::Number:
        return c.kind == CompareColumn::Kind::Bandwidth
                   ? shortNumber(v.value) + QStringLiteral(" GB/s")
                   : tokenCountText(v.value);
    case State::Never:
        return QObject::tr("never");
    case State::NoTier:
        return kDash;
    case State::PastContext:
        return QObject::tr("past context");
    case State::None:
        return QObject::tr("none");
    }
    return kDash;
}

QString deltaText(const PinComparison& t, size_t row, size_t column) {
    const auto d = t.delta(row, column);
    if (!d) return kDash;
    const auto& c = t.columns[column];
    return signedText(*d, c.kind == CompareColumn::Kind::Bandwidth
                              ? shortNumber(std::abs(*d)) + QStringLiteral(" GB/s")
                              : tokenCountText(std::abs(*d)));
}

QString deltaPercentText(const PinComparison& t, size_t row, size_t column) {
    const auto pct = t.deltaPercent(row, column);
    if (!pct) return {};
    const double shown = std::abs(*pct) < 0.05 ? 0 : *pct;
    return signedText(shown, shortNumber(std::abs(shown))) + QStringLiteral(" %");
}

QString deltaLine(const PinComparison& t, size_t row, size_t column) {
    const QString pct = deltaPercentText(t, row, column);
    return pct.isEmpty() ? deltaText(t, row, column)
                         : QStringLiteral("%1 (%2)").arg(deltaText(t, row, column), pct);
}

QString columnHeader(const CompareColumn& c) {
    if (c.kind == CompareColumn::Kind::Bandwidth)
        return QObject::tr("B*, GB/s\nat %1").arg(shortTokens(c.tokens));
    // A long tier name on two lines, split at the space nearest its middle.
    QString name = c.tier;
    if (name.size() > 12) {
        int best = -1;
        for (int i = 0; i < name.size(); ++i)
            if (name[i] == QLatin1Char(' ') &&
                (best < 0 || std::abs(i - name.size() / 2) < std::abs(best - name.size() / 2)))
                best = i;
        if (best > 0) name[best] = QLatin1Char('\n');
    }
    return QObject::tr("p*, tokens\n%1").arg(name);
}

} // namespace kvbe
