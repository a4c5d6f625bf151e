#include "kvbe/ui/charts/frontier_chart.h"

#include "kvbe/base/csv.h"

#include <QComboBox>
#include <QGraphicsPixmapItem>
#include <QGraphicsRectItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QPen>

#include <algorithm>
#include <cmath>

namespace kvbe {

FrontierChart::FrontierChart(QWidget* parent) : ChartView(parent) {
    // Children of the chart item with z between the plot background (0) and the grid (2), so
    // grid lines and series are drawn over the image; the rectangle clips it to the plot.
    m_clip = new QGraphicsRectItem(chart());
    m_clip->setPen(Qt::NoPen);
    m_clip->setFlag(QGraphicsItem::ItemClipsChildrenToShape);
    m_clip->setZValue(0.5);
    m_pixmap = new QGraphicsPixmapItem(m_clip);
    m_pixmap->setTransformationMode(Qt::SmoothTransformation);

    // The colour key, drawn once: a vertical bar from 8× (top) to 1/8× with three labels.
    constexpr int barW = 14, barH = 120;
    QImage bar(barW, barH, QImage::Format_RGB32);
    for (int y = 0; y < barH; ++y) {
        const double log2s = 3.0 - 6.0 * y / (barH - 1);
        const QRgb c = speedupColor(std::exp2(log2s));
        for (int x = 0; x < barW; ++x)
            bar.setPixel(x, y, c);
    }
    m_key = new QGraphicsRectItem(chart());
    m_key->setZValue(50);
    m_key->setPen(QPen(QColor(120, 120, 120)));
    m_key->setBrush(QColor(255, 255, 255, 220));
    auto* img = new QGraphicsPixmapItem(QPixmap::fromImage(bar), m_key);
    img->setPos(6, 8);
    const char* const texts[] = {"8× faster", "1× (tie)", "8× slower"};
    for (int i = 0; i < 3; ++i) {
        auto* t = new QGraphicsSimpleTextItem(QString::fromUtf8(texts[i]), m_key);
        t->setPos(6 + barW + 5, 8 + i * (barH - 1) / 2.0 - t->boundingRect().height() / 2);
    }
    m_key->setRect(m_key->childrenBoundingRect().adjusted(-6, -8, 6, 8).united(QRectF(0, 0, 1, 1)));
}

void FrontierChart::setTier(int index) {
    if (index == m_tier) return;
    m_tier = index;
    if (m_current) refill();
}

QWidget* FrontierChart::createControls(QWidget* parent) {
    auto* row = new QWidget(parent);
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    m_tierBox = new QComboBox(row);
    m_tierBox->setObjectName(QStringLiteral("frontierTier"));
    h->addWidget(new QLabel(tr("Tier:"), row));
    h->addWidget(m_tierBox);
    h->addStretch();
    connect(m_tierBox, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i >= 0) setTier(i);
    });
    if (m_current) updateTierChoices();
    return row;
}

// The picker lists the scenario's tiers; the choice stays where it can (a tier was added).
void FrontierChart::updateTierChoices() {
    if (!m_tierBox || !m_current) return;
    QStringList names;
    for (const auto& t : m_current->eval->tiers)
        names << QString::fromStdString(t.name);
    QStringList have;
    for (int i = 0; i < m_tierBox->count(); ++i)
        have << m_tierBox->itemText(i);
    if (have == names) return;
    const int keep = m_tierBox->currentIndex();
    const QSignalBlocker block(m_tierBox);
    m_tierBox->clear();
    m_tierBox->addItems(names);
    m_tierBox->setCurrentIndex(std::clamp(keep, 0, int(names.size()) - 1));
    m_tier = std::max(0, m_tierBox->currentIndex());
}

int FrontierChart::tierIndex() const {
    const int n = m_current ? int(m_current->frontier.size()) : 0;
    return n == 0 ? -1 : std::clamp(m_tier, 0, n - 1);
}

void FrontierChart::copyStateFrom(const ChartView& other) {
    if (auto* f = qobject_cast<const FrontierChart*>(&other)) m_tier = f->m_tier;
    ChartView::copyStateFrom(other);
}

QRgb FrontierChart::speedupColor(double s) {
    if (!(s > 0) || !std::isfinite(s)) return qRgb(128, 128, 128);
    // log2 of the speedup, saturating at 8× either way.
    const double v = std::clamp(std::log2(s) / 3.0, -1.0, 1.0);
    const QColor neutral(247, 247, 247), win(26, 152, 80), lose(215, 48, 39);
    const QColor& end = v >= 0 ? win : lose;
    const double a = std::pow(std::abs(v), 0.7);
    return qRgb(int(neutral.red() + a * (end.red() - neutral.red())),
                int(neutral.green() + a * (end.green() - neutral.green())),
                int(neutral.blue() + a * (end.blue() - neutral.blue())));
}

void FrontierChart::refill() {
    updateTierChoices();
    const ScenarioResult& r = *m_current;
    const int t = tierIndex();
    setAxes(r.scenario.lengths.log, tr("Prompt length N (tokens)"), tr("Cached fraction f"), false);
    beginRefill();
    if (t < 0) {
        m_image = QImage();
        setTitles(tr("Frontier map: add a tier to see it"), describeScenario(r));
        endRefill();
        setHomeRange(r.curves.tokens.front(), r.curves.tokens.back(), 0, 1);
        return;
    }
    const FrontierGrid& g = r.frontier[size_t(t)];
    const QString name = QString::fromStdString(r.eval->tiers[size_t(t)].name);
    setTitles(tr("Speedup of a hit from %1 (green: load wins, red: recompute wins)").arg(name),
              describeScenario(r));
    const int w = int(g.tokens.size()), h = int(g.fractions.size());
    m_image = QImage(w, h, QImage::Format_RGB32);
    for (int j = 0; j < h; ++j) {
        // Row 0 of the image is the top of the plot: the largest fraction.
        auto* row = reinterpret_cast<QRgb*>(m_image.scanLine(h - 1 - j));
        for (int i = 0; i < w; ++i)
            row[i] = speedupColor(g.at(size_t(i), size_t(j)));
    }

    for (size_t k = 0; k < m_pins.size(); ++k) {
        const auto& pin = *m_pins[k];
        if (size_t(t) >= pin.frontier.size()) continue;
        const auto c = frontierContour(pin.frontier[size_t(t)]);
        line(QStringLiteral("pin/%1/contour").arg(k), tr("%1 (pinned): speedup = 1").arg(pin.label),
             QColor(60, 60, 60, 150), 2, Qt::DashLine)
            ->replace(QList<QPointF>(c.begin(), c.end()));
    }
    const auto contour = frontierContour(g);
    line(QStringLiteral("contour"), tr("speedup = 1 (break-even), %1").arg(name),
         QColor(20, 20, 20), 3)
        ->replace(QList<QPointF>(contour.begin(), contour.end()));
    const double f = r.scenario.cachedFraction;
    line(QStringLiteral("chosen"), tr("chosen fraction, %1 %").arg(f * 100, 0, 'f', 0),
         QColor(20, 20, 20, 140), 1.5, Qt::DotLine)
        ->replace(QList<QPointF>{{g.tokens.front(), f}, {g.tokens.back(), f}});
    endRefill();
    setHomeRange(g.tokens.front(), g.tokens.back(), 0, 1);
    layoutOverlays();
}

void FrontierChart::layoutOverlays() {
    ChartView::layoutOverlays();
    if (!m_clip) return;
    const QRectF plot = chart()->plotArea();
    m_clip->setRect(plot);
    const QRectF k = m_key->rect();
    m_key->setPos(plot.left() + 10 - k.left(), plot.top() + 10 - k.top());
    m_key->setVisible(plot.width() > 3 * k.width() && plot.height() > 1.5 * k.height());
    const int t = tierIndex();
    if (t < 0 || m_image.isNull()) {
        m_pixmap->setVisible(false);
        return;
    }
    // The grid is evenly spaced on the x axis's own scale (log or linear), like the axis, so
    // stretching the image between its corner points maps every cell to its place.
    const FrontierGrid& g = m_current->frontier[size_t(t)];
    const QPointF a = toPixel(QPointF(g.tokens.front(), g.fractions.front()));
    const QPointF b = toPixel(QPointF(g.tokens.back(), g.fractions.back()));
    const QRectF target = QRectF(a, b).normalized();
    if (!(target.width() > 1 && target.height() > 1)) {
        m_pixmap->setVisible(false);
        return;
    }
    // Scaled here, not with a transform, so smoothing happens once per layout, not per paint.
    // Half a cell of margin: image pixel centres sit on the grid points.
    const double cw = target.width() / std::max(1, m_image.width() - 1);
    const double ch = target.height() / std::max(1, m_image.height() - 1);
    const QRectF full = target.adjusted(-cw / 2, -ch / 2, cw / 2, ch / 2);
    const QSize to = full.size().toSize();
    if (m_image.cacheKey() != m_scaledFrom || to != m_scaledTo) {
        m_pixmap->setPixmap(QPixmap::fromImage(
            m_image.scaled(to, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)));
        m_scaledFrom = m_image.cacheKey();
        m_scaledTo = to;
    }
    m_pixmap->setPos(m_clip->mapFromParent(full.topLeft()));
    m_pixmap->setVisible(true);
}

QString FrontierChart::hoverText(QPointF v) const {
    const ScenarioResult& r = *m_current;
    const int t = tierIndex();
    if (t < 0) return {};
    const double n = std::max(1.0, std::round(v.x()));
    const double f = std::clamp(v.y(), 0.0, 1.0);
    const auto& tier = r.eval->tiers[size_t(t)];
    const auto& cost = r.eval->cost;
    const double miss = cost.tMiss(n), hit = cost.tHit(tier, n, f * n);
    return tr("N = %1, f = %2 % (%3 cached)\nrecompute: %4\nhit from %5: %6\nspeedup: %7×")
        .arg(tokensText(n))
        .arg(f * 100, 0, 'f', 1)
        .arg(tokensText(std::round(f * n)))
        .arg(millisText(miss), tierNameText(tier), millisText(hit))
        .arg(miss / hit, 0, 'f', 3);
}

QString FrontierChart::csv() const {
    const int t = tierIndex();
    if (t < 0) return {};
    const FrontierGrid& g = m_current->frontier[size_t(t)];
    QString out = QStringLiteral("tier,tokens,cached_fraction,speedup\n");
    const QString name = QString::fromStdString(m_current->eval->tiers[size_t(t)].name);
    const QString quoted = QString::fromStdString(csvField(name.toStdString()));
    for (size_t j = 0; j < g.fractions.size(); ++j)
        for (size_t i = 0; i < g.tokens.size(); ++i)
            out += QStringLiteral("%1,%2,%3,%4\n")
                       .arg(quoted)
                       .arg(g.tokens[i], 0, 'g', 10)
                       .arg(g.fractions[j], 0, 'g', 6)
                       .arg(g.at(i, j), 0, 'g', 8);
    return out;
}

} // namespace kvbe
