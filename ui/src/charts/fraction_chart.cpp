#include "kvbe/ui/charts/fraction_chart.h"

#include <QLineSeries>
#include <QScatterSeries>

#include <cmath>

#include <limits>

namespace kvbe {

namespace {
QString pStarText(const std::optional<double>& p) {
    const auto whole = wholeBreakevenPrefix(p); // the value every view states
    return whole ? QObject::tr("p* = %1").arg(tokensText(*whole)) : QObject::tr("p*: never");
}
// The curve falls to the right of p*, so its label goes below and to the left, unless that
// would leave the plot.
Qt::Alignment pStarSide(double p, double xMin, double xMax, bool log) {
    const double at = log ? std::log(p / xMin) / std::log(xMax / xMin) : (p - xMin) / (xMax - xMin);
    return Qt::AlignBottom | (at < 0.2 ? Qt::AlignRight : Qt::AlignLeft);
}
} // namespace

void FractionChart::refill() {
    const ScenarioResult& r = *m_current;
    const CurveSet& c = r.curves;
    // Fractions are drawn in per cent: log ticks read 0.1 %, 1 %, 10 %.
    m_yPercent = true;
    setAxes(r.scenario.lengths.log, tr("Prompt length N (tokens)"),
            tr("Minimum cached fraction f* (% of the prompt)"), false);
    setTitles(tr("Smallest cached share for a hit to pay off"), describeScenario(r),
              nominalNote(r));
    beginRefill();
    const double xMin = c.tokens.front(), xMax = c.tokens.back();

    for (size_t k = 0; k < m_pins.size(); ++k) {
        const auto& pin = *m_pins[k];
        for (size_t t = 0; t < pin.curves.tiers.size(); ++t)
            line(QStringLiteral("pin/%1/f%2").arg(k).arg(t), tr("%1 (pinned)").arg(pin.label),
                 ghost(tierColor(pin, t)), 2, Qt::DashLine, t == 0)
                ->replace(
                    plottable(toPoints(pin.curves.tokens, pin.curves.tiers[t].minFraction, 100)));
    }
    const double f = r.scenario.cachedFraction;
    line(QStringLiteral("chosen"), tr("chosen fraction, %1 %").arg(f * 100, 0, 'f', 0),
         ghost(textColor()), 1.5, Qt::DashLine)
        ->replace(QList<QPointF>{{xMin, 100 * f}, {xMax, 100 * f}});
    // The value range from the curves, not 0–100 %: a big model's f* stays under 1 %.
    double yLo = std::numeric_limits<double>::infinity(), yHi = 0;

    for (size_t t = 0; t < c.tiers.size(); ++t) {
        const auto& tc = c.tiers[t];
        const QColor col = tierColor(r, t);
        const QString g = QStringLiteral("tier/%1/").arg(t);
        const QString name = QString::fromStdString(tc.tier.name);
        line(g + "fstar", tr("%1 (%2)").arg(name, pStarText(tc.breakevenPrefix)), col, 2.5)
            // f* = 0 (p* = 0: any hit pays) has no place on a log axis.
            ->replace(plottable(toPoints(c.tokens, tc.minFraction, 100)));
        for (const auto& v : tc.minFraction)
            if (v && *v > 0) yLo = std::min(yLo, 100 * *v), yHi = std::max(yHi, 100 * *v);
        // f* = p*/N starts at (p*, 1): mark and name that point.
        QList<QPointF> mark;
        // p* = 0 (no fixed cost: any prefix pays) has no place on a log axis.
        if (tc.breakevenPrefix && (*tc.breakevenPrefix > 0 || !r.scenario.lengths.log)) {
            mark.append(QPointF(*tc.breakevenPrefix, 100.0));
            label(g + "pstar", pStarText(tc.breakevenPrefix), QPointF(*tc.breakevenPrefix, 100.0),
                  col, pStarSide(*tc.breakevenPrefix, xMin, xMax, r.scenario.lengths.log));
        }
        scatter(g + "pmark", tr("%1 p*").arg(name), col, 9, false)->replace(mark);
    }
    // Imported py-kvcache v2 files: the p* their own curves give by py-kvcache's rule, at (p*, 1).
    for (size_t n = 0; n < m_implied.size(); ++n) {
        const auto& o = m_implied[n];
        // A file of another model: dimmed and marked with it, or left out (View menu).
        const bool other = ofAnotherModel(o.model);
        if (other && !chartStyle().otherModels) continue;
        for (const auto& t : o.implied.tiers) {
            const QString g =
                QStringLiteral("implied/%1/%2-").arg(n).arg(QString::fromStdString(t.tier));
            const QColor col =
                other ? dimmed(impliedTierColor(o, t.tier)) : impliedTierColor(o, t.tier);
            const QString text = markedWithModel(
                tr("%1: p* %2 = %3%4")
                    .arg(o.file, impliedTierText(t.tier), tokensText(t.pStarTokens),
                         t.paysWithinKnots ? QString() : tr(" (never within its curves)")),
                o.model);
            QList<QPointF> mark;
            if (t.pStarTokens > 0 || !r.scenario.lengths.log) {
                mark.append(QPointF(t.pStarTokens, 100.0));
                label(g + "pstar-label", text, mark.front(), col,
                      pStarSide(t.pStarTokens, xMin, xMax, r.scenario.lengths.log),
                      tr("p* %1 = %2").arg(impliedTierText(t.tier), tokensText(t.pStarTokens)));
            }
            scatter(g + "pstar", text, col, 11)->replace(mark);
        }
    }
    // Published f* at its N, and published p* at (p*, 1) like the model's.
    QList<PublishedMarker> published;
    for (const auto& row : r.published) {
        const auto& p = row.point;
        const QString text = publishedText(row);
        if (p.quantity == PublishedQuantity::MinCachedFraction)
            published.append(
                PublishedMarker{QPointF(*p.tokens, 100 * p.value),
                                tr("f* (%1): %2").arg(QString::fromStdString(p.tier), text)});
        else if (p.quantity == PublishedQuantity::BreakevenPrefix)
            published.append(
                PublishedMarker{QPointF(p.value, 100.0),
                                tr("p* (%1): %2").arg(QString::fromStdString(p.tier), text)});
    }
    publishedMarkers(tr("Published: %1").arg(r.publishedName), published);
    endRefill();
    if (!(yHi > 0)) yLo = 0.1, yHi = 100;
    // Up to 100 % at most; on a log axis from the decade under the smallest value.
    const double top = std::min(100.0, yHi * (logY() ? 2 : 1.1));
    const double bottom = logY() ? std::max(1e-4, std::pow(10, std::floor(std::log10(yLo)))) : 0;
    setHomeRange(xMin, xMax, bottom, top);
}

void FractionChart::setImplied(std::vector<ImpliedOverlay> implied) {
    m_implied = std::move(implied);
    if (m_current) refill();
}

void FractionChart::copyStateFrom(const ChartView& other) {
    if (auto* f = qobject_cast<const FractionChart*>(&other)) m_implied = f->m_implied;
    ChartView::copyStateFrom(other);
}

QString FractionChart::hoverText(QPointF v) const {
    const CurveSet& c = m_current->curves;
    const size_t i = nearestIndex(c.tokens, v.x());
    QString s = tr("N = %1").arg(tokensText(c.tokens[i]));
    for (const auto& tc : c.tiers) {
        const auto& fs = tc.minFraction[i];
        s += tr("\n%1: ").arg(tierNameText(tc.tier));
        s += fs ? tr("f* = %1 % (%2 cached)")
                      .arg(*fs * 100, 0, 'f', 1)
                      .arg(tokensText(*fs * c.tokens[i]))
                : tr("no hit pays off at this length");
        s += tr(", %1").arg(pStarText(tc.breakevenPrefix));
    }
    for (const auto& o : m_implied)
        for (const auto& t : o.implied.tiers)
            s += tr("\n%1, %2: p* = %3 (its curves, py-kvcache's rule)")
                     .arg(o.file, impliedTierText(t.tier), tokensText(t.pStarTokens));
    s += publishedHover(v);
    s += tr("\ncursor: f = %1 %").arg(v.y(), 0, 'g', 3);
    return s;
}

QString FractionChart::csv() const {
    return curvesCsv(m_current);
}

} // namespace kvbe
