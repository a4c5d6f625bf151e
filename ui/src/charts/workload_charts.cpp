#include "kvbe/ui/charts/workload_charts.h"

#include "kvbe/base/statistics.h"
#include "kvbe/base/units.h"

#include <QAreaSeries>
#include <QFileInfo>
#include <QLineSeries>
#include <QScatterSeries>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace kvbe {

namespace {
constexpr double kGiB = 1024.0 * 1024 * 1024;

QString fileNameOf(const WorkloadResult& w) {
    return QFileInfo(w.file).fileName();
}
} // namespace

// ---- the base

void WorkloadChart::setWorkload(WorkloadPtr w) {
    m_workload = std::move(w);
    if (m_current) refill();
}

void WorkloadChart::setResultAndWorkload(ResultPtr r, WorkloadPtr w) {
    m_workload = std::move(w);
    setResults(std::move(r), {});
}

void WorkloadChart::copyStateFrom(const ChartView& other) {
    if (auto* o = qobject_cast<const WorkloadChart*>(&other)) m_workload = o->m_workload;
    ChartView::copyStateFrom(other);
}

bool WorkloadChart::drawEmptyUnlessLoaded(const QString& headline) {
    if (m_workload && m_workload->trace) return true;
    setAxes(true, tr("Prompt length N (tokens)"), tr("Requests"), false);
    setSecondaryAxis(QString(), 0, 1);
    setTitles(headline, tr("Open a trace (File > Open request trace…, or drop it on the window)"));
    beginRefill();
    endRefill();
    setHomeRange(100, 1e6, 0, 1);
    return false;
}

QColor WorkloadChart::ruleColor(const QString& rule) const {
    if (rule == QLatin1String("none")) return ghost(textColor());
    if (rule == QLatin1String("gpu-only")) return textColor();
    if (rule == QLatin1String("always")) return QColor("#e76f51");
    if (rule == QLatin1String("breakeven")) return QColor("#8d6cab");
    return QColor("#2a9d8f");
}

QString WorkloadChart::ruleName(const QString& rule) const {
    if (rule == QLatin1String("none")) return tr("no caching");
    if (rule == QLatin1String("gpu-only")) return tr("GPU-only caching");
    return tr("tiers, %1 admission").arg(rule);
}

// ---- prompt lengths

void PromptLengthChart::refill() {
    m_bins.clear();
    if (!drawEmptyUnlessLoaded(tr("Prompt lengths"))) return;
    const WorkloadResult& w = *m_workload;
    const Trace& t = *w.trace;
    // Four bins per doubling, from the shortest prompt's to the longest's.
    double shortest = std::numeric_limits<double>::infinity(), longest = 1;
    for (auto n : t.inputTokens) {
        shortest = std::min(shortest, std::max(1.0, double(n)));
        longest = std::max(longest, double(n));
    }
    if (!std::isfinite(shortest)) shortest = 1;
    const double step = 0.25;
    const double e0 = std::floor(std::log2(shortest) / step) * step;
    const double e1 = std::max(e0 + step, std::ceil(std::log2(longest + 1) / step) * step);
    const int nb = int(std::lround((e1 - e0) / step));
    m_bins.resize(std::size_t(nb));
    for (int i = 0; i < nb; ++i) {
        m_bins[std::size_t(i)].lo = std::exp2(e0 + i * step);
        m_bins[std::size_t(i)].hi = std::exp2(e0 + (i + 1) * step);
    }
    // floor(4 · log2 x) without a logarithm per request (a day's trace has millions, binned
    // on the UI thread): the power of two from the bit width, the quarter from its three
    // edges within it.
    static const auto quarterEdges = [] {
        std::array<std::array<double, 3>, 33> e{};
        for (int b = 1; b <= 32; ++b)
            for (int j = 1; j <= 3; ++j)
                e[std::size_t(b)][std::size_t(j - 1)] = std::exp2(b - 1 + j * 0.25);
        return e;
    }();
    const int first = int(std::lround(e0 / step));
    for (auto n : t.inputTokens) {
        const double x = std::max(1.0, double(n));
        const int width = std::bit_width(std::max<std::uint32_t>(1, n));
        const auto& q = quarterEdges[std::size_t(width)];
        int i = 4 * (width - 1) + (x >= q[0]) + (x >= q[1]) + (x >= q[2]) - first;
        i = std::clamp(i, 0, nb - 1);
        // Edges are powers of two: keep an exact edge in the bin it starts.
        while (i > 0 && x < m_bins[std::size_t(i)].lo)
            --i;
        while (i + 1 < nb && x >= m_bins[std::size_t(i)].hi)
            ++i;
        ++m_bins[std::size_t(i)].requests;
    }
    std::size_t most = 1;
    for (const auto& b : m_bins)
        most = std::max(most, b.requests);
    const double ymax = double(most) * 1.15;

    QStringList never;
    for (const auto& tier : w.scenarioTiers)
        if (!tier.pStar) never << tier.name;
    QString note = fileNameOf(w);
    if (!never.isEmpty())
        note += tr("; loading never pays from %1 up to the context limit")
                    .arg(never.join(QStringLiteral(", ")));
    setAxes(true, tr("Prompt length N (tokens), %1 bins per doubling").arg(int(1 / step)),
            tr("Requests"), false);
    setSecondaryAxis(QString(), 0, 1);
    setTitles(tr("Prompt lengths of %1 requests, and each tier's p*").arg(t.size()),
              describeScenario(*m_current), note);
    beginRefill();
    auto* a = area(QStringLiteral("bins"), tr("requests per bin"), QColor(58, 134, 255, 150), true);
    QList<QPointF> upper, lower;
    for (const auto& b : m_bins) {
        upper << QPointF(b.lo, double(b.requests)) << QPointF(b.hi, double(b.requests));
        lower << QPointF(b.lo, 0) << QPointF(b.hi, 0);
    }
    a->upperSeries()->replace(upper);
    a->lowerSeries()->replace(lower);
    double xlo = m_bins.front().lo, xhi = m_bins.back().hi;
    for (const auto& tier : w.scenarioTiers)
        if (tier.pStar)
            xlo = std::min(xlo, std::max(1.0, *tier.pStar) / 1.5),
            xhi = std::max(xhi, std::max(1.0, *tier.pStar) * 1.5);
    for (std::size_t i = 0; i < w.scenarioTiers.size(); ++i) {
        const auto& tier = w.scenarioTiers[i];
        if (!tier.pStar) continue;
        const double p = std::max(1.0, *tier.pStar);
        const QString key = QStringLiteral("tier/%1/pstar").arg(i);
        const QColor col = tierColor(*m_current, i);
        // The legend carries the sentence; the plot a short form of it, next to its line.
        line(key,
             tr("%1 p* = %2 tokens: %3 % of requests at or above")
                 .arg(tier.name, QString::fromStdString(formatTokens(*tier.pStar)))
                 .arg(tier.shareAtOrAbove * 100, 0, 'f', 1),
             col, 2, Qt::DashLine)
            ->replace(QList<QPointF>{{p, 0}, {p, ymax}});
        label(key,
              tr("p* %1: %2 % above")
                  .arg(QString::fromStdString(formatTokens(*tier.pStar)))
                  .arg(tier.shareAtOrAbove * 100, 0, 'f', 1),
              QPointF(p, ymax * (0.98 - 0.25 * double(i % 3))), col,
              Qt::AlignRight | Qt::AlignBottom,
              tr("p* %1").arg(QString::fromStdString(formatTokens(*tier.pStar))));
    }
    endRefill();
    setHomeRange(xlo, xhi, 0, ymax);
}

QString PromptLengthChart::hoverText(QPointF v) const {
    if (m_bins.empty()) return {};
    const Bin* hit = &m_bins.front();
    for (const auto& b : m_bins)
        if (v.x() >= b.lo) hit = &b;
    QString s = tr("N from %1 to %2: %3 requests")
                    .arg(QString::fromStdString(formatTokens(std::ceil(hit->lo))),
                         QString::fromStdString(formatTokens(std::ceil(hit->hi) - 1)))
                    .arg(hit->requests);
    if (m_workload)
        s += tr("\n%1 % of requests are at least %2")
                 .arg(shareAtOrAbove(*m_workload->trace, v.x()) * 100, 0, 'f', 1)
                 .arg(tokensText(v.x()));
    return s;
}

QString PromptLengthChart::csv() const {
    if (m_bins.empty()) return {};
    QString s = QStringLiteral("tokens_from,tokens_below,requests\n");
    for (const auto& b : m_bins)
        s += QStringLiteral("%1,%2,%3\n")
                 .arg(b.lo, 0, 'g', 10)
                 .arg(b.hi, 0, 'g', 10)
                 .arg(b.requests);
    if (m_workload)
        for (const auto& t : m_workload->scenarioTiers)
            s += QStringLiteral("# %1 p*_tokens=%2 share_at_or_above=%3\n")
                     .arg(t.name,
                          t.pStar ? QString::number(*t.pStar, 'g', 10) : QStringLiteral("never"))
                     .arg(t.shareAtOrAbove, 0, 'g', 10);
    return s;
}

// ---- capacity

void CapacityChart::refill() {
    if (!drawEmptyUnlessLoaded(tr("Hit ratio and TTFT saved against capacity"))) return;
    const WorkloadResult& w = *m_workload;
    if (!w.sweep || w.sweep->points.empty()) {
        setAxes(true, tr("Capacity (GiB)"), tr("Hit ratio, token-weighted (%)"), false);
        setSecondaryAxis(QString(), 0, 1);
        setTitles(tr("Hit ratio and TTFT saved against capacity"), describeScenario(*m_current),
                  !w.sweepNote.isEmpty() ? w.sweepNote
                                         : tr("This trace has no block ids: no hit ratios"));
        beginRefill();
        endRefill();
        setHomeRange(1, 1e4, 0, 100);
        return;
    }
    const SweepResult& s = *w.sweep;
    const double blockTokens = w.trace->summary.blockTokens;
    const double tokensPerGiB = kGiB / w.config.blockBytes * blockTokens;
    const QString tier = QString::fromStdString(s.tierName);
    double lo = std::numeric_limits<double>::infinity(), hi = 0, savedLo = 0, savedHi = 1;
    QList<QPointF> any, own, saved;
    for (const auto& p : s.points) {
        const double x = p.capacityBytes / kGiB;
        if (!(x > 0)) continue;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        any << QPointF(x, p.anyTier.tokenWeighted * 100);
        if (w.sweepVary < p.tiers.size())
            own << QPointF(x, p.tiers[w.sweepVary].tokenWeighted * 100);
        saved << QPointF(x, p.ttftSavedVsGpuOnly * 100);
        savedLo = std::min(savedLo, p.ttftSavedVsGpuOnly * 100);
        savedHi = std::max(savedHi, p.ttftSavedVsGpuOnly * 100);
    }
    setAxes(true,
            tr("Capacity of %1 (GiB; 1 GiB holds %2 tokens with this model)")
                .arg(tier, QString::fromStdString(formatTokens(std::round(tokensPerGiB)))),
            tr("Hit ratio, token-weighted (%)"), false);
    setSecondaryAxis(tr("Mean TTFT saved vs GPU-only (%)"), std::floor(savedLo / 10) * 10,
                     std::ceil(savedHi * 1.1 / 10) * 10);
    // The curves assume writes that keep up; where the replay queues writes they say so, and
    // where its writes fell behind, the replay's own figures are marked at the capacity set.
    const QString keepUp = w.settings.writeQueue ? tr(", if writes keep up") : QString();
    setTitles(
        tr("Hits and TTFT saved by %1 size").arg(tier), describeScenario(*m_current),
        tr("%1; one-pass LRU sweep, the other tiers as set, writes keeping up").arg(fileNameOf(w)));
    beginRefill();
    const QColor tierCol = w.sweepVary > 0 && w.settings.sweepTier > 0
                               ? tierColor(*m_current, std::size_t(w.settings.sweepTier - 1))
                               : QColor("#264653");
    const QColor savedCol("#e76f51");
    line(QStringLiteral("hits/any"), tr("hit ratio, any tier%1").arg(keepUp), textColor(), 2.5)
        ->replace(any);
    line(QStringLiteral("hits/tier"), tr("hits served by %1%2").arg(tier, keepUp), tierCol, 2)
        ->replace(own);
    line(QStringLiteral("saved"), tr("mean TTFT saved vs GPU-only, always admission%1").arg(keepUp),
         savedCol, 2, Qt::DotLine, true, true)
        ->replace(saved);
    // The capacity the controls set, where the replay has it.
    std::optional<double> setCap;
    if (w.sweepVary == 0)
        setCap = w.config.gpuCapacityBytes;
    else if (w.settings.sweepTier > 0)
        for (std::size_t k = 0; k < w.configTierOf.size(); ++k)
            if (w.configTierOf[k] == w.settings.sweepTier - 1)
                setCap = w.config.tiers[k].capacityBytes;
    const bool setShown = setCap && *setCap > 0 && std::isfinite(*setCap);
    QList<QPointF> replayHits, replaySaved;
    if (setShown && w.replay && w.writesKeptUp) {
        const double x = *setCap / kGiB;
        const double hits = w.replay->anyTier.tokenWeighted * 100;
        const double lost = w.writesKeptUp->anyTier.tokenWeighted * 100 - hits;
        replayHits << QPointF(x, hits);
        const RuleResult* always = w.replay->rule("always");
        const RuleResult* gpu = w.replay->rule("gpu-only");
        if (always && gpu && gpu->ttft.mean > 0) {
            const double v = (1 - always->ttft.mean / gpu->ttft.mean) * 100;
            replaySaved << QPointF(x, v);
            savedLo = std::min(savedLo, v), savedHi = std::max(savedHi, v);
            setSecondaryAxis(tr("Mean TTFT saved vs GPU-only (%)"), std::floor(savedLo / 10) * 10,
                             std::ceil(savedHi * 1.1 / 10) * 10);
        }
        label(QStringLiteral("replay/0/label"),
              tr("replay: %1 %, %2 points lost to the write backlog")
                  .arg(hits, 0, 'f', 1)
                  .arg(lost, 0, 'f', 1),
              replayHits.front(), textColor(), Qt::Alignment(),
              tr("replay: %1 %").arg(hits, 0, 'f', 1));
    }
    if (!replayHits.isEmpty())
        scatter(QStringLiteral("replay/0/hits"), tr("replay as set (write queue): hit ratio"),
                textColor(), 11)
            ->replace(replayHits);
    if (!replaySaved.isEmpty())
        scatter(QStringLiteral("replay/0/saved"),
                tr("replay as set (write queue): mean TTFT saved, always admission"), savedCol, 11,
                true, true)
            ->replace(replaySaved);
    if (setShown) {
        const double x = *setCap / kGiB;
        line(QStringLiteral("current"), tr("capacity set"), ghost(textColor()), 1.5, Qt::DashLine)
            ->replace(QList<QPointF>{{x, 0}, {x, 100}});
        label(QStringLiteral("current"),
              tr("set: %1\n(%2)")
                  .arg(capacityText(*setCap),
                       tokensText(std::floor(*setCap / w.config.blockBytes) * blockTokens)),
              QPointF(x, 96), textColor(), Qt::AlignRight | Qt::AlignBottom);
        lo = std::min(lo, x / 1.5);
        hi = std::max(hi, x * 1.5);
    }
    endRefill();
    setHomeRange(lo, hi, 0, 100);
}

QString CapacityChart::hoverText(QPointF v) const {
    if (!m_workload || !m_workload->sweep || m_workload->sweep->points.empty()) return {};
    const auto& pts = m_workload->sweep->points;
    std::vector<double> xs;
    for (const auto& p : pts)
        xs.push_back(p.capacityBytes / kGiB);
    const auto& p = pts[nearestIndex(xs, v.x())];
    QString s = tr("%1 = %2 (%3)")
                    .arg(QString::fromStdString(m_workload->sweep->tierName),
                         capacityText(p.capacityBytes), tokensText(p.capacityTokens));
    s += tr("\nhit ratio: %1 % token-weighted, %2 % block-weighted, %3 % per request")
             .arg(p.anyTier.tokenWeighted * 100, 0, 'f', 1)
             .arg(p.anyTier.blockWeighted * 100, 0, 'f', 1)
             .arg(p.anyTier.perRequest * 100, 0, 'f', 1);
    s += tr("\nmean TTFT: %1 GPU-only, %2 always (%3 % saved)")
             .arg(millisText(p.meanTtftGpuOnly), millisText(p.meanTtftAlways))
             .arg(p.ttftSavedVsGpuOnly * 100, 0, 'f', 1);
    return s;
}

QString CapacityChart::csv() const {
    if (!m_workload || !m_workload->sweep) return {};
    QString s = QStringLiteral(
        "tier,capacity_tokens,capacity_bytes,hits_token_weighted,hits_block_weighted,"
        "hits_per_request,mean_ttft_none_s,mean_ttft_gpu_only_s,mean_ttft_always_s,"
        "ttft_saved_vs_gpu_only\n");
    for (const auto& p : m_workload->sweep->points)
        s += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10\n")
                 .arg(QString::fromStdString(m_workload->sweep->tierName))
                 .arg(p.capacityTokens, 0, 'g', 10)
                 .arg(p.capacityBytes, 0, 'g', 12)
                 .arg(p.anyTier.tokenWeighted, 0, 'g', 10)
                 .arg(p.anyTier.blockWeighted, 0, 'g', 10)
                 .arg(p.anyTier.perRequest, 0, 'g', 10)
                 .arg(p.meanTtftNone, 0, 'g', 10)
                 .arg(p.meanTtftGpuOnly, 0, 'g', 10)
                 .arg(p.meanTtftAlways, 0, 'g', 10)
                 .arg(p.ttftSavedVsGpuOnly, 0, 'g', 10);
    return s;
}

// ---- TTFT distribution

void TtftDistributionChart::refill() {
    m_curves.clear();
    if (!drawEmptyUnlessLoaded(tr("TTFT distribution"))) return;
    const WorkloadResult& w = *m_workload;
    const bool queued = w.settings.instances > 0;
    for (const auto& [name, v] : w.ttftSorted)
        m_curves.push_back(Curve{QString::fromStdString(name), &v});
    setAxes(true, queued ? tr("TTFT t: wait + prefill (ms)") : tr("TTFT t: prefill (ms)"),
            tr("Requests with TTFT ≤ t (%)"), false);
    setSecondaryAxis(QString(), 0, 1);
    const QString admission = QString::fromStdString(std::string(toString(w.settings.admission)));
    // A short headline: the tab shares its width with the links over time (workload_view.cpp).
    setTitles(tr("TTFT under each admission rule"), describeScenario(*m_current),
              m_curves.empty() ? tr("%1 has no block ids: no replay").arg(fileNameOf(w))
                               : tr("%1, %2 requests; thick: the rule the summary uses (%3)")
                                     .arg(fileNameOf(w))
                                     .arg(w.trace->size())
                                     .arg(admission));
    beginRefill();
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (const auto& c : m_curves) {
        const std::size_t n = c.sorted->size();
        QList<QPointF> pts;
        const std::size_t steps = std::min<std::size_t>(n, 600);
        for (std::size_t q = 0; q <= steps; ++q) {
            const std::size_t i = steps ? (q * (n - 1)) / steps : 0;
            const double ms = std::max(1e-3, (*c.sorted)[i] * 1e3);
            pts << QPointF(ms, double(i + 1) / double(n) * 100);
            lo = std::min(lo, ms);
            hi = std::max(hi, ms);
        }
        const bool chosen = c.rule == admission;
        line(QStringLiteral("rule/") + c.rule, ruleName(c.rule), ruleColor(c.rule),
             chosen ? 3.5 : 2, c.rule == QLatin1String("none") ? Qt::DashLine : Qt::SolidLine)
            ->replace(pts);
    }
    endRefill();
    // From the fastest curve's 0.5th percentile: a few near-zero times (a prompt the GPU holds
    // whole) would otherwise stretch the log axis over decades nobody needs.
    double floorMs = std::numeric_limits<double>::infinity();
    for (const auto& c : m_curves)
        if (!c.sorted->empty())
            floorMs = std::min(floorMs, std::max(1e-3, quantileOfSorted(*c.sorted, 0.005) * 1e3));
    if (std::isfinite(floorMs)) lo = floorMs;
    if (!std::isfinite(lo)) lo = 1, hi = 1e3;
    setHomeRange(lo / 1.3, hi * 1.3, 0, 100);
}

QString TtftDistributionChart::hoverText(QPointF v) const {
    if (m_curves.empty()) return {};
    const double s = v.x() / 1e3;
    QString out = tr("TTFT ≤ %1:").arg(millisText(s));
    for (const auto& c : m_curves) {
        const auto k = std::upper_bound(c.sorted->begin(), c.sorted->end(), s) - c.sorted->begin();
        out += tr("\n%1: %2 % of requests, mean %3")
                   .arg(c.rule)
                   .arg(double(k) / double(c.sorted->size()) * 100, 0, 'f', 1)
                   .arg(millisText(m_workload && m_workload->replay &&
                                           m_workload->replay->rule(c.rule.toStdString())
                                       ? m_workload->replay->rule(c.rule.toStdString())->ttft.mean
                                       : 0));
    }
    return out;
}

QString TtftDistributionChart::csv() const {
    if (m_curves.empty()) return {};
    QString s = QStringLiteral("percentile");
    for (const auto& c : m_curves)
        s += QStringLiteral(",ttft_s_") + c.rule;
    s += QLatin1Char('\n');
    for (int q = 0; q <= 100; ++q) {
        s += QString::number(q);
        for (const auto& c : m_curves) {
            const std::size_t n = c.sorted->size();
            const std::size_t i =
                std::min(n - 1, std::size_t(std::ceil(q / 100.0 * double(n))) - (q > 0 ? 1 : 0));
            s += QLatin1Char(',') + QString::number((*c.sorted)[i], 'g', 10);
        }
        s += QLatin1Char('\n');
    }
    return s;
}

} // namespace kvbe
