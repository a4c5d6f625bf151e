#include "kvbe/ui/charts/model_size_chart.h"

#include "kvbe/base/csv.h"
#include "kvbe/base/units.h"

#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {
QString shortName(const std::string& id) {
    return QString::fromStdString(id).section(QLatin1Char('/'), -1);
}
} // namespace

void ModelSizeChart::refill() {
    const ScenarioResult& r = *m_current;
    constexpr double GB = 1e-9, billions = 1e-9;
    const double inf = std::numeric_limits<double>::infinity();
    setAxes(
        true, tr("Parameters (billions, total)"),
        tr("B* at N = %1 (GB/s)").arg(QString::fromStdString(formatTokens(r.scenario.sweepTokens))),
        true);
    setTitles(
        tr("Bigger models need less bandwidth: B* at %1").arg(tokensText(r.scenario.sweepTokens)),
        describeScenario(r));
    beginRefill();
    double xLo = inf, xHi = 0, yLo = inf, yHi = 0;
    auto extend = [&](QPointF p) {
        xLo = std::min(xLo, p.x()), xHi = std::max(xHi, p.x());
        yLo = std::min(yLo, p.y()), yHi = std::max(yHi, p.y());
    };

    for (size_t k = 0; k < m_pins.size(); ++k) {
        QList<QPointF> pts;
        for (const auto& sp : m_pins[k]->sweep)
            if (sp.breakevenBandwidth)
                pts.append(QPointF(sp.paramsTotal * billions, *sp.breakevenBandwidth * GB));
        for (const auto& p : pts)
            extend(p);
        scatter(QStringLiteral("pin/%1/models").arg(k), tr("%1 (pinned)").arg(m_pins[k]->label),
                ghost(QColor("#6c757d")), 9)
            ->replace(pts);
    }

    std::vector<const SweepPoint*> order;
    for (const auto& sp : r.sweep)
        if (sp.breakevenBandwidth) order.push_back(&sp);
    // Hybrids apart: their KV comes from a few attention layers, so their B* is far lower per
    // parameter, and "bigger models are easier to offload" does not carry over to them.
    QList<QPointF> pts, hybrids;
    for (size_t i = 0; i < order.size(); ++i) {
        const QPointF p(order[i]->paramsTotal * billions, *order[i]->breakevenBandwidth * GB);
        (order[i]->hybrid ? hybrids : pts).append(p);
        extend(p);
        label(QStringLiteral("models/%1/label").arg(QString::fromStdString(order[i]->id)),
              shortName(order[i]->id) + (order[i]->hybrid ? tr(" (hybrid)") : QString()), p,
              textColor(), Qt::Alignment());
    }
    scatter(QStringLiteral("models"), tr("models (presets and loaded)"), QColor("#457b9d"), 11)
        ->replace(pts);
    scatter(QStringLiteral("hybrids"),
            tr("hybrid models (KV in some layers only, plus a state per prefix)"),
            QColor("#e76f51"), 13)
        ->replace(hybrids);

    // The scenario's own model, with its own overrides (parameters, measured prefill).
    QList<QPointF> mine;
    const double params = r.scenario.paramsOverride.value_or(r.model().paramsTotal);
    if (auto b = r.eval->cost.breakevenBandwidth(r.scenario.sweepTokens)) {
        mine.append(QPointF(params * billions, *b * GB));
        extend(mine.front());
    }
    scatter(QStringLiteral("current"), tr("this scenario: %1").arg(shortName(r.model().id)),
            QColor("#d62828"), 16)
        ->replace(mine);

    if (!(xHi > 0)) xLo = 1, xHi = 1000;
    xLo /= 2;
    xHi *= 2;
    for (size_t t = 0; t < r.eval->tiers.size(); ++t) {
        const auto& tier = r.eval->tiers[t];
        const QColor col = tierColor(r, t);
        const double b = tier.effectiveBandwidthBps() * GB; // B* counts useful bytes
        const QString g = QStringLiteral("tier/%1/").arg(t);
        const QString name = QString::fromStdString(tier.name);
        line(g + "level", name, col, 2.5)->replace(QList<QPointF>{{xLo, b}, {xHi, b}});
        label(g + "label", tr("%1 · %2").arg(name, tierRateText(tier)), QPointF(inf, b), col,
              Qt::AlignLeft | Qt::AlignTop);
        yLo = std::min(yLo, b), yHi = std::max(yHi, b);
    }
    endRefill();
    if (!(yHi > 0)) yLo = 0.1, yHi = 100;
    setHomeRange(xLo, xHi, logY() ? yLo / 2 : 0, yHi * (logY() ? 2 : 1.1));
}

QString ModelSizeChart::hoverText(QPointF v) const {
    const ScenarioResult& r = *m_current;
    // The model nearest the cursor on the log–log plane.
    const SweepPoint* best = nullptr;
    double bestD = std::numeric_limits<double>::infinity();
    for (const auto& sp : r.sweep) {
        if (!sp.breakevenBandwidth || v.x() <= 0 || v.y() <= 0) continue;
        const double dx = std::log10(sp.paramsTotal * 1e-9 / v.x()),
                     dy = std::log10(*sp.breakevenBandwidth * 1e-9 / v.y());
        if (dx * dx + dy * dy < bestD) bestD = dx * dx + dy * dy, best = &sp;
    }
    QString s;
    if (best) {
        s = tr("%1\nparameters: %2 total, %3 active\nKV per token: %4\nB* at %5: %6\n")
                .arg(QString::fromStdString(best->id), paramsText(best->paramsTotal),
                     paramsText(best->paramsActive),
                     QString::fromStdString(formatBytes(best->kvBytesPerToken)),
                     tokensText(r.scenario.sweepTokens), bandwidthText(*best->breakevenBandwidth));
        if (best->hybrid)
            s += tr("hybrid: %1\nstate per cached prefix: %2\n")
                     .arg(QString::fromStdString(best->layerMix),
                          QString::fromStdString(formatBytes(best->stateBytes)));
    }
    s += tr("cursor: %1 parameters, %2 GB/s").arg(paramsText(v.x() * 1e9)).arg(v.y(), 0, 'g', 4);
    return s;
}

QString ModelSizeChart::csv() const {
    if (!m_current) return {};
    QString out = QStringLiteral(
        "model,params_total,params_active,kv_bytes_per_token,tokens,breakeven_GBps,hybrid,"
        "state_bytes\n");
    for (const auto& sp : m_current->sweep) {
        const QString id = QString::fromStdString(csvField(sp.id));
        out +=
            QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8\n")
                .arg(id)
                .arg(sp.paramsTotal, 0, 'g', 10)
                .arg(sp.paramsActive, 0, 'g', 10)
                .arg(sp.kvBytesPerToken, 0, 'g', 10)
                .arg(m_current->scenario.sweepTokens, 0, 'g', 10)
                .arg(sp.breakevenBandwidth ? QString::number(*sp.breakevenBandwidth * 1e-9, 'g', 8)
                                           : QString())
                .arg(sp.hybrid ? QStringLiteral("yes") : QStringLiteral("no"))
                .arg(sp.stateBytes, 0, 'g', 10);
    }
    return out;
}

} // namespace kvbe
