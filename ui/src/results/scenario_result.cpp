#include "kvbe/ui/results/scenario_result.h"

#include "kvbe/base/units.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvbe {

Result<ScenarioResult> computeScenarioResult(const Scenario& s, const Presets& presets,
                                             const ModelSpec& model,
                                             const std::vector<ModelSpec>& sweepModels) {
    auto eval = evaluate(s, presets, model);
    if (!eval) return eval.error();
    ScenarioResult r;
    r.scenario = s;
    r.label = s.name.empty() ? describeInputs(s, *eval) : QString::fromStdString(s.name);
    auto e = std::make_shared<const Evaluation>(std::move(*eval));
    const auto& L = s.lengths;
    const double context = model.contextLimit;
    if (L.minTokens >= context)
        return Error{"the shortest prompt, " + formatTokens(L.minTokens) +
                     " tokens, is past the context of " + model.id + " (" + formatTokens(context) +
                     " tokens): lower the shortest prompt"};
    const double maxTokens = std::min(L.maxTokens, context);
    r.endsAtContext = maxTokens < L.maxTokens;
    const auto tokens = lengthGrid(L.minTokens, maxTokens, L.points, L.log);
    if (tokens.size() < 2)
        return Error{
            "the prompt-length range is empty: the longest prompt must exceed the shortest"};
    r.curves = computeCurves(e->cost, e->tiers, tokens, s.cachedFraction);

    const auto ftokens = lengthGrid(L.minTokens, maxTokens, kFrontierTokens, L.log);
    std::vector<double> fractions(kFrontierFractions);
    for (int j = 0; j < kFrontierFractions; ++j)
        fractions[j] = double(j) / (kFrontierFractions - 1);
    for (const auto& t : e->tiers)
        r.frontier.push_back(computeFrontier(e->cost, t, ftokens, fractions));

    r.sweep = modelSweep(e->cost.inputs(), sweepModels, s.sweepTokens, s.kvDtype);
    for (const auto& t : s.tiers)
        r.nominalFixedCost.push_back(hasNominalFixedCost(t, presets));
    r.eval = std::move(e);
    if (auto refs = builtinPublishedReferences(presets)) addPublished(r, *refs);
    return r;
}

void addPublished(ScenarioResult& r, const std::vector<PublishedReference>& refs) {
    QStringList names;
    for (auto& [ref, rows] : publishedMatches(refs, *r.eval)) {
        names << QString::fromStdString(ref->name);
        r.published.insert(r.published.end(), rows.begin(), rows.end());
    }
    r.publishedName = names.join(QStringLiteral("; "));
}

QString describeInputs(const Scenario& s, const Evaluation& e) {
    const QString model = QString::fromStdString(e.model.id).section(QLatin1Char('/'), -1);
    const QString gpu = e.gpu
                            ? QString::fromStdString(e.gpu->name).remove(QStringLiteral("NVIDIA "))
                            : QStringLiteral("a %1 TFLOP/s GPU").arg(e.peakFlops / 1e12, 0, 'f', 0);
    QString text =
        QStringLiteral("%1 on %2, u = %3 %, %4 KV")
            .arg(model, gpu)
            .arg(s.utilisation * 100, 0, 'f', 0)
            .arg(QString::fromStdString(std::string(toString(e.cost.inputs().kvDtype))).toUpper());
    if (s.computeDtype == "fp8") text += QStringLiteral(", FP8 compute");
    // Weights chosen in the scenario (the config's are the model's own, said nowhere else).
    if (s.weightDtype)
        text += QStringLiteral(", %1 weights")
                    .arg(QString::fromStdString(std::string(toString(*s.weightDtype))).toUpper());
    if (s.tensorParallel > 1) text += QStringLiteral(", TP %1").arg(s.tensorParallel);
    return text;
}

std::vector<QPointF> frontierContour(const FrontierGrid& g) {
    std::vector<QPointF> out;
    const size_t nf = g.fractions.size();
    for (size_t i = 0; i < g.tokens.size(); ++i) {
        for (size_t j = 1; j < nf; ++j) {
            const double a = g.at(i, j - 1), b = g.at(i, j);
            if (a < 1 && b >= 1) {
                const double t = (1 - a) / (b - a);
                out.emplace_back(g.tokens[i],
                                 g.fractions[j - 1] + t * (g.fractions[j] - g.fractions[j - 1]));
                break;
            }
        }
    }
    return out;
}

std::vector<QPointF> decimateToColumns(const std::vector<QPointF>& points, int columns, double xMin,
                                       double xMax, bool logX) {
    if (columns <= 0 || !(xMax > xMin) || (logX && xMin <= 0)) return {};
    if (points.size() <= size_t(2 * columns)) return points;
    const double lo = logX ? std::log(xMin) : xMin;
    const double span = (logX ? std::log(xMax) : xMax) - lo;
    struct Col {
        int lo = -1, hi = -1;
    };
    std::vector<Col> cols(static_cast<size_t>(columns));
    for (size_t k = 0; k < points.size(); ++k) {
        const double x = points[k].x();
        if (x < xMin || x > xMax || (logX && x <= 0)) continue;
        const double v = ((logX ? std::log(x) : x) - lo) / span;
        const int c = std::clamp(int(v * columns), 0, columns - 1);
        auto& col = cols[size_t(c)];
        if (col.lo < 0 || points[k].y() < points[size_t(col.lo)].y()) col.lo = int(k);
        if (col.hi < 0 || points[k].y() > points[size_t(col.hi)].y()) col.hi = int(k);
    }
    std::vector<QPointF> out;
    out.reserve(size_t(2 * columns));
    for (const auto& c : cols) {
        if (c.lo < 0) continue;
        // In x order, so a line through them still reads left to right.
        const int first = std::min(c.lo, c.hi), second = std::max(c.lo, c.hi);
        out.push_back(points[size_t(first)]);
        if (second != first) out.push_back(points[size_t(second)]);
    }
    return out;
}

} // namespace kvbe
