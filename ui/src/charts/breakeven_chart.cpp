#include "kvbe/ui/charts/breakeven_chart.h"

#include "kvbe/base/units.h"

#include <QAreaSeries>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {

constexpr double GB = 1e-9;

} // namespace

void BreakevenChart::YRange::add(double y) {
    if (y > 0) lo = std::min(lo, y);
    hi = std::max(hi, y);
}

void BreakevenChart::YRange::add(const QList<QPointF>& pts) {
    for (const auto& p : pts)
        add(p.y());
}

void BreakevenChart::refill() {
    const ScenarioResult& r = *m_current;
    const CurveSet& c = r.curves;
    setAxes(r.scenario.lengths.log, tr("Prompt length N (tokens)"),
            tr("Break-even bandwidth B* (GB/s)"), true);
    setTitles(tr("Break-even bandwidth for a fully cached prompt"), describeScenario(r),
              nominalNote(r));
    beginRefill();
    YRange range;
    const double xMin = c.tokens.front(), xMax = c.tokens.back();
    drawPins(range);
    drawTiers(r, range);
    drawProvisional(xMin, xMax, range);
    auto pts = toPoints(c.tokens, c.breakevenBandwidth, GB);
    line(QStringLiteral("bstar"), tr("B* (no fixed cost)"), textColor(), 3)->replace(pts);
    range.add(pts);
    // A probe run of another model: its B* is not this model's (its KV bytes and prefill
    // differ); dimmed and marked with it, or left out (View menu).
    const auto measured = measuredBreakeven();
    const bool other = ofAnotherModel(m_prefillModel);
    if (!measured.isEmpty() && (!other || chartStyle().otherModels)) {
        scatter(QStringLiteral("measured-bstar"),
                markedWithModel(
                    tr("%1: measured B* (%2 points)").arg(m_prefillLabel).arg(measured.size()),
                    m_prefillModel),
                other ? dimmed(QColor("#ff006e")) : QColor("#ff006e"), 9)
            ->replace(measured);
        if (!other) range.add(measured);
    }
    drawImplied(xMin, xMax, range);
    drawPublished(r, range);
    endRefill();
    double lo = range.lo, hi = range.hi;
    if (!(hi > 0)) hi = 1;
    if (!std::isfinite(lo)) lo = hi / 100;
    setHomeRange(xMin, xMax, logY() ? lo / 1.6 : 0, hi * (logY() ? 1.6 : 1.08));
}

void BreakevenChart::drawPins(YRange& range) {
    for (size_t k = 0; k < m_pins.size(); ++k) {
        const auto& pin = *m_pins[k];
        auto pts = toPoints(pin.curves.tokens, pin.curves.breakevenBandwidth, GB);
        line(QStringLiteral("pin/%1/bstar").arg(k), tr("%1 (pinned): B*").arg(pin.label),
             ghost(textColor()), 2, Qt::DashLine)
            ->replace(pts);
        range.add(pts);
    }
}

void BreakevenChart::drawTiers(const ScenarioResult& r, YRange& range) {
    const CurveSet& c = r.curves;
    const double inf = std::numeric_limits<double>::infinity();
    const double xMin = c.tokens.front(), xMax = c.tokens.back();
    for (size_t t = 0; t < c.tiers.size(); ++t) {
        const auto& tc = c.tiers[t];
        const QColor col = tierColor(r, t);
        // B* is in useful bytes per second: the tier's line is its effective rate, B /
        // amplification.
        const double b = tc.tier.effectiveBandwidthBps() * GB;
        const QString g = QStringLiteral("tier/%1/").arg(t);
        const QString name = QString::fromStdString(tc.tier.name);
        // Where B*_T(N) ≤ B_T the tier wins: shade between its line and the curve.
        QList<QPointF> upper, lower;
        upper.reserve(qsizetype(c.tokens.size()));
        lower.reserve(qsizetype(c.tokens.size()));
        for (size_t i = 0; i < c.tokens.size(); ++i) {
            const auto& bs = tc.breakevenBandwidth[i];
            upper.append(QPointF(c.tokens[i], b));
            lower.append(QPointF(c.tokens[i], bs ? std::min(*bs * GB, b) : b));
        }
        QColor fill = col;
        fill.setAlphaF(0.16f);
        QAreaSeries* win = area(g + "win", tr("%1 wins").arg(name), fill);
        win->upperSeries()->replace(upper);
        win->lowerSeries()->replace(lower);
        line(g + "level", name, col, 2.5)->replace(QList<QPointF>{{xMin, b}, {xMax, b}});
        auto withFixed = toPoints(c.tokens, tc.breakevenBandwidth, GB);
        const bool nominal = t < r.nominalFixedCost.size() && r.nominalFixedCost[t];
        line(g + "bstar",
             (nominal ? tr("%1: B* with %2 ms fixed cost (nominal)")
                      : tr("%1: B* with %2 ms fixed cost"))
                 .arg(name)
                 .arg(r.eval->cost.tFixed(tc.tier) * 1e3, 0, 'g', 3), // 5.74, as the tier table
             col, 1.5, Qt::DotLine)
            ->replace(withFixed);
        label(g + "label", tr("%1 · %2").arg(name, tierRateText(tc.tier)), QPointF(inf, b), col,
              Qt::AlignLeft | Qt::AlignTop);
        range.add(b);
    }
}

void BreakevenChart::drawProvisional(double xMin, double xMax, YRange& range) {
    for (const auto& p : m_provisional) {
        line(QStringLiteral("running/%1").arg(p.run), p.label, QColor("#d00000"), 2, Qt::DashLine)
            ->replace(QList<QPointF>{{xMin, p.gbps}, {xMax, p.gbps}});
        range.add(p.gbps);
    }
}

// Imported py-kvcache v2 files: the B* their own curves imply, B*_T(p) = kvbytes(p) /
// (f(p) − t_fixed_T), and their p* where it meets the bandwidth the load curve implies.
void BreakevenChart::drawImplied(double xMin, double xMax, YRange& range) {
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
            const QString tier = impliedTierText(t.tier);
            QList<QPointF> knots, golden;
            for (const auto& p : t.points)
                if (p.breakevenBps)
                    (p.golden ? golden : knots).append(QPointF(p.tokens, *p.breakevenBps * GB));
            // One legend entry for the file's tier: its B* line names its golden points and the
            // level its load curve implies, drawn in the same colour (with 14 files imported,
            // three entries each took half the chart's height).
            QString name = tr("%1, %2: measured B* (t_fixed %3 ms, %4)")
                               .arg(o.file, tier)
                               .arg(t.tFixedS * 1e3, 0, 'g', 3)
                               .arg(t.tFixedFitted ? tr("fitted") : tr("its floor"));
            if (!golden.isEmpty()) name += tr("; \u25CF golden points");
            if (t.bandwidthBps)
                name += tr("; -\u00B7- %1 GB/s from its load curve")
                            .arg(*t.bandwidthBps * GB, 0, 'g', 4);
            auto* l = line(g + "bstar", markedWithModel(name, o.model), col, 2, Qt::DashLine);
            l->setPointsVisible(true);
            l->replace(knots);
            if (!other) range.add(knots);
            scatter(g + "golden", tr("%1: B* from %2 at its golden points").arg(o.file, tier), col,
                    10, false)
                ->replace(golden);
            if (!other) range.add(golden);
            QList<QPointF> level, mark;
            if (t.bandwidthBps) {
                const double b = *t.bandwidthBps * GB;
                level = {{xMin, b}, {xMax, b}};
                if (!other) range.add(b);
                if (t.pStarTokens > 0) mark.append(QPointF(t.pStarTokens, b));
            }
            // No bandwidth implied: no line.
            if (!level.isEmpty())
                line(g + "level",
                     tr("%1: %2 at %3 GB/s, as its load curve implies")
                         .arg(o.file, tier)
                         .arg(*t.bandwidthBps * GB, 0, 'g', 4),
                     col, 1.5, Qt::DashDotLine, false)
                    ->replace(level);
            const QString pText =
                t.pStarTokens <= 0 ? tr("%1: p* %2 = 0 (every prefix pays)").arg(o.file, tier)
                : t.paysWithinKnots
                    ? tr("%1: p* %2 = %3").arg(o.file, tier, tokensText(t.pStarTokens))
                    : tr("%1: p* %2 = %3 (never within its curves)")
                          .arg(o.file, tier, tokensText(t.pStarTokens));
            scatter(g + "pstar", pText, col, 12, false)->replace(mark);
            if (!mark.isEmpty())
                label(g + "pstar-label", pText, mark.front(), col, Qt::AlignRight | Qt::AlignBottom,
                      tr("p* %1 = %2").arg(tier, tokensText(t.pStarTokens)));
        }
    }
}

// Published B* at its N, and published p* where the tier's B* curve should cross its line.
void BreakevenChart::drawPublished(const ScenarioResult& r, YRange& range) {
    QList<PublishedMarker> published;
    for (const auto& row : r.published) {
        const auto& p = row.point;
        const QString text = publishedText(row);
        if (p.quantity == PublishedQuantity::BreakevenBandwidth) {
            published.append(
                PublishedMarker{QPointF(*p.tokens, p.value * GB), tr("B* %1").arg(text)});
        } else if (p.quantity == PublishedQuantity::BreakevenPrefix) {
            const int t = tierIndexFor(r.eval->tiers, p.tier);
            if (t >= 0)
                published.append(
                    PublishedMarker{QPointF(p.value, r.eval->tiers[size_t(t)].bandwidthBps * GB),
                                    tr("p* (%1): %2").arg(QString::fromStdString(p.tier), text)});
        }
    }
    publishedMarkers(tr("Published: %1").arg(r.publishedName), published);
    for (const auto& p : published)
        range.add(p.value.y());
}

void BreakevenChart::setProvisional(const Provisional& p) {
    auto it = std::find_if(m_provisional.begin(), m_provisional.end(),
                           [&](const Provisional& q) { return q.run == p.run; });
    if (it == m_provisional.end())
        m_provisional.push_back(p);
    else
        *it = p;
    if (m_current) refill();
}

void BreakevenChart::clearProvisional(int run) {
    const auto n =
        std::erase_if(m_provisional, [run](const Provisional& q) { return q.run == run; });
    if (n && m_current) refill();
}

void BreakevenChart::setMeasuredPrefill(std::vector<QPointF> tokensSeconds, const QString& label,
                                        const QString& model) {
    m_prefill = std::move(tokensSeconds);
    m_prefillLabel = label;
    m_prefillModel = model;
    if (m_current) refill();
}

QList<QPointF> BreakevenChart::measuredBreakeven() const {
    QList<QPointF> out;
    if (!m_current) return out;
    const CostModel& cost = m_current->eval->cost;
    for (const auto& p : m_prefill)
        if (p.y() > 0) out.append(QPointF(p.x(), cost.loadBytes(p.x()) / p.y() * 1e-9));
    return out;
}

void BreakevenChart::setImplied(std::vector<ImpliedOverlay> implied) {
    m_implied = std::move(implied);
    if (m_current) refill();
}

void BreakevenChart::copyStateFrom(const ChartView& other) {
    if (auto* b = qobject_cast<const BreakevenChart*>(&other)) {
        m_prefill = b->m_prefill;
        m_prefillLabel = b->m_prefillLabel;
        m_implied = b->m_implied;
        m_provisional = b->m_provisional;
    }
    ChartView::copyStateFrom(other);
}

QString BreakevenChart::hoverText(QPointF v) const {
    const ScenarioResult& r = *m_current;
    const CurveSet& c = r.curves;
    const size_t i = nearestIndex(c.tokens, v.x());
    QString s = tr("N = %1\n").arg(tokensText(c.tokens[i]));
    s += tr("KV of the prompt: %1\n").arg(QString::fromStdString(formatBytes(c.kvBytes[i])));
    s += tr("recompute: %1\n").arg(millisText(c.tMiss[i]));
    s += c.breakevenBandwidth[i]
             ? tr("B* (no fixed cost) = %1").arg(bandwidthText(*c.breakevenBandwidth[i]))
             : tr("B*: no bandwidth is enough");
    for (size_t t = 0; t < c.tiers.size(); ++t) {
        const auto& tc = c.tiers[t];
        const auto& b = tc.breakevenBandwidth[i];
        const bool wins = b && *b <= tc.tier.effectiveBandwidthBps();
        const bool nominal = t < r.nominalFixedCost.size() && r.nominalFixedCost[t];
        s += tr("\n%1 (%2, t_fixed %3 ms%4): ")
                 .arg(QString::fromStdString(tc.tier.name), tierRateText(tc.tier))
                 .arg(r.eval->cost.tFixed(tc.tier) * 1e3, 0, 'g', 3)
                 .arg(nominal ? tr(", nominal") : QString());
        s += b ? tr("B* %1, %2")
                     .arg(bandwidthText(*b), wins ? tr("loading wins") : tr("recompute wins"))
               : tr("its fixed cost exceeds recompute");
    }
    for (const auto& pin : m_pins) {
        const size_t k = nearestIndex(pin->curves.tokens, v.x());
        const auto& b = pin->curves.breakevenBandwidth[k];
        s += tr("\n%1 (pinned): %2").arg(pin->label, b ? bandwidthText(*b) : tr("none"));
    }
    for (const auto& o : m_implied)
        for (const auto& t : o.implied.tiers) {
            // The file's own point nearest the cursor's length.
            const ImpliedPoint* near = nullptr;
            for (const auto& p : t.points)
                if (!p.golden &&
                    (!near || std::abs(p.tokens - v.x()) < std::abs(near->tokens - v.x())))
                    near = &p;
            s += tr("\n%1, %2: p* %3")
                     .arg(o.file, impliedTierText(t.tier), tokensText(t.pStarTokens));
            if (near)
                s += tr("; at %1 tokens f %2, g %3, B* %4")
                         .arg(tokensText(near->tokens), millisText(near->fS), millisText(near->gS),
                              near->breakevenBps ? bandwidthText(*near->breakevenBps)
                                                 : tr("none (f ≤ t_fixed)"));
        }
    s += publishedHover(v);
    s += tr("\ncursor: %1 GB/s").arg(v.y(), 0, 'g', 4);
    return s;
}

QString BreakevenChart::csv() const {
    return curvesCsv(m_current);
}

} // namespace kvbe
