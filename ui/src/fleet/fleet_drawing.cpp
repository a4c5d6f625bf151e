#include "kvbe/ui/fleet/fleet_drawing.h"

#include "kvbe/calibration/pykvcache.h"

#include <QFileInfo>

namespace kvbe {

namespace {

// Apart from the tier presets' colours, so a node's curve is not taken for a tier's.
const QColor kNodeColors[] = {QColor("#8338ec"), QColor("#3a86ff"), QColor("#ff006e"),
                              QColor("#06a77d"), QColor("#ffbe0b"), QColor("#7f5539")};

QString fileName(const Calibration& c) {
    return QFileInfo(QString::fromStdString(c.source)).fileName();
}

std::vector<TtftChart::Overlay> measuredCurves(const std::vector<ImportedCalibration>& files) {
    std::vector<TtftChart::Overlay> out;
    for (size_t i = 0; i < files.size(); ++i) {
        const auto& ic = files[i];
        const Calibration& c = ic.calibration;
        if (ic.prefillCurve.empty() && c.curves.empty() && ic.hitPoints.empty()) continue;
        const QString who = c.host.empty() ? fileName(c) : QString::fromStdString(c.host);
        const QColor color = kNodeColors[out.size() % std::size(kNodeColors)];
        const QString model = QString::fromStdString(c.model);
        if (!ic.prefillCurve.empty())
            out.push_back({QStringLiteral("overlay/%1/prefill").arg(i),
                           QObject::tr("%1: measured recompute").arg(who), ic.prefillCurve, color,
                           true, model});
        // py-kvcache v2: the load curves beside f (f is the recompute curve above).
        for (const auto& [name, k] : c.curves) {
            if (name == "f") continue;
            std::vector<QPointF> pts;
            for (const auto& [m, sec] : k.knots)
                if (m > 0) pts.emplace_back(m, sec);
            out.push_back({QStringLiteral("overlay/%1/%2").arg(i).arg(QString::fromStdString(name)),
                           QObject::tr("%1: %2 (%3)")
                               .arg(who, QString::fromStdString(name),
                                    name == "g_ssd" ? QObject::tr("load from the SSD")
                                                    : QObject::tr("load from host memory")),
                           std::move(pts), name == "g_ssd" ? color.darker(140) : color.lighter(140),
                           true, model});
        }
        // Measured hits and golden points, drawn as points, not only used in the fit.
        if (!ic.hitPoints.empty())
            out.push_back({QStringLiteral("overlay/%1/hits").arg(i),
                           QObject::tr("%1: measured hits and golden points (%2)")
                               .arg(who)
                               .arg(c.hits.size() + c.golden.size()),
                           ic.hitPoints, color, false, model});
    }
    return out;
}

// Fitted beside nominal: the same curves as the chart's own, with the fitted values and the
// overhead both paths share.
void addFitCurves(std::vector<TtftChart::Overlay>& out, const ScenarioResult& r,
                  const FleetFitCurves& fit) {
    const double f = r.scenario.cachedFraction;
    std::vector<QPointF> miss;
    for (double n : r.curves.tokens)
        miss.emplace_back(n, fit.cost.tMiss(n) + fit.overheadS);
    const QString model = QString::fromStdString(fit.model);
    out.push_back({QStringLiteral("overlay/fit/recompute"), QObject::tr("fitted recompute"),
                   std::move(miss), QColor("#ff7f11"), true, model});
    const QColor hitColors[] = {QColor("#ffb703"), QColor("#bc6c25"), QColor("#e9c46a")};
    for (size_t t = 0; t < fit.tiers.size(); ++t) {
        std::vector<QPointF> hit;
        for (double n : r.curves.tokens)
            hit.emplace_back(n, fit.cost.tHit(fit.tiers[t], n, f * n) + fit.overheadS);
        out.push_back(
            {QStringLiteral("overlay/fit/hit-%1").arg(t),
             QObject::tr("fitted hit from %1").arg(QString::fromStdString(fit.tiers[t].name)),
             std::move(hit), hitColors[t % std::size(hitColors)], true, model});
    }
}

std::vector<ImpliedOverlay> impliedByFiles(const std::vector<ImportedCalibration>& files,
                                           const ResultPtr& r) {
    std::vector<ImpliedOverlay> out;
    const std::optional<double> modelKv =
        r ? std::optional<double>(r->eval->cost.kvBytesPerToken()) : std::nullopt;
    for (const auto& ic : files) {
        const Calibration& c = ic.calibration;
        if (c.format != "py-kvcache-v2") continue;
        auto implied = pyKvcacheImplied(c, modelKv);
        if (!implied)
            continue; // no KV bytes to measure B* with: the TTFT chart still has its curves
        out.push_back({fileName(c), kNodeColors[out.size() % std::size(kNodeColors)],
                       QString::fromStdString(c.model), std::move(*implied)});
    }
    return out;
}

} // namespace

ImportDrawing fleetDrawing(const std::vector<ImportedCalibration>& files, const ResultPtr& result,
                           const FleetFitCurves* fit) {
    ImportDrawing d;
    d.curves = measuredCurves(files);
    if (fit && result) addFitCurves(d.curves, *result, *fit);
    d.implied = impliedByFiles(files, result);
    return d;
}

} // namespace kvbe
