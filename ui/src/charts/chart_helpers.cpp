#include "kvbe/ui/charts/chart_view.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/calc_report.h"

#include <algorithm>
#include <cmath>

namespace kvbe {

QString seriesGroup(const QString& key) {
    return key.count(QLatin1Char('/')) >= 2 ? key.section(QLatin1Char('/'), 0, 1) : key;
}

QColor tierPaletteColor(size_t i) {
    static const QColor palette[] = {QColor("#2a9d8f"), QColor("#e76f51"), QColor("#8d6cab"),
                                     QColor("#e9c46a"), QColor("#264653"), QColor("#f4a261")};
    return palette[i % std::size(palette)];
}

QColor tierColor(const ScenarioResult& r, size_t i) {
    if (i < r.scenario.tiers.size() && !r.scenario.tiers[i].color.empty())
        return QColor(QString::fromStdString(r.scenario.tiers[i].color));
    return tierPaletteColor(i);
}

QString describeScenario(const ScenarioResult& r) {
    const auto& e = *r.eval;
    QString text = describeInputs(r.scenario, e);
    if (r.endsAtContext)
        text += QStringLiteral(" · lengths end at the model's context, %1 tokens")
                    .arg(QString::fromStdString(formatTokens(e.model.contextLimit)));
    return text;
}

QString curvesCsv(const ResultPtr& r) {
    if (!r) return {};
    return QString::fromStdString(
        calcCsv(makeCalcReport(*r->eval, r->curves.tokens, r->scenario.cachedFraction)));
}

size_t nearestIndex(const std::vector<double>& xs, double x) {
    if (xs.empty()) return 0;
    auto it = std::lower_bound(xs.begin(), xs.end(), x);
    if (it == xs.begin()) return 0;
    if (it == xs.end()) return xs.size() - 1;
    const size_t i = size_t(it - xs.begin());
    // Nearest on the screen, which for a log axis is the ratio, not the difference.
    const double lo = xs[i - 1], hi = xs[i];
    const bool pickHi = lo > 0 ? (hi / x < x / lo) : (hi - x < x - lo);
    return pickHi ? i : i - 1;
}

QList<QPointF> toPoints(const std::vector<double>& xs, const std::vector<std::optional<double>>& ys,
                        double scale) {
    QList<QPointF> out;
    out.reserve(qsizetype(xs.size()));
    for (size_t i = 0; i < xs.size() && i < ys.size(); ++i)
        if (ys[i] && std::isfinite(*ys[i])) out.append(QPointF(xs[i], *ys[i] * scale));
    return out;
}

QList<QPointF> toPoints(const std::vector<double>& xs, const std::vector<double>& ys,
                        double scale) {
    QList<QPointF> out;
    out.reserve(qsizetype(xs.size()));
    for (size_t i = 0; i < xs.size() && i < ys.size(); ++i)
        if (std::isfinite(ys[i])) out.append(QPointF(xs[i], ys[i] * scale));
    return out;
}

// ---- formatting

QString tokensText(double tokens) {
    return QString::fromStdString(formatTokens(tokens)) + QStringLiteral(" tokens");
}
QString bandwidthText(double bps) {
    return QString::fromStdString(formatBandwidth(bps));
}
QString tierRateText(const TierPath& tier) {
    if (tier.amplification == 1) return bandwidthText(tier.bandwidthBps);
    return QStringLiteral("%1 × %2 = %3 effective")
        .arg(bandwidthText(tier.bandwidthBps))
        .arg(tier.amplification, 0, 'g', 3)
        .arg(bandwidthText(tier.effectiveBandwidthBps()));
}
QString tierNameText(const TierPath& tier) {
    const QString name = QString::fromStdString(tier.name);
    if (tier.amplification == 1) return name;
    return QStringLiteral("%1 (× %2 amplification: %3 effective)")
        .arg(name)
        .arg(tier.amplification, 0, 'g', 3)
        .arg(bandwidthText(tier.effectiveBandwidthBps()));
}
QString millisText(double s) {
    // Seconds past 1 s: "12.19 s", not "12191.6 ms".
    if (std::abs(s) >= 1) return QString::number(s, 'f', std::abs(s) < 100 ? 2 : 1) + " s";
    return QString::number(s * 1e3, 'f', s < 0.01 ? 3 : 1) + " ms";
}
QString paramsText(double p) {
    return p >= 1e9 ? QString::number(p / 1e9, 'f', p >= 1e11 ? 0 : 1) + "B"
                    : QString::number(p / 1e6, 'f', 0) + "M";
}

} // namespace kvbe
