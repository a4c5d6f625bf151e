// The frontier map: speedup of a hit over the (prompt length, cached fraction) plane for one
// tier, as a colour image under the plot's grid, with the speedup = 1 contour as a line.
// Qt Charts has no heat-map series, so the image is a pixmap placed on the plot area.
#pragma once

#include "kvbe/ui/charts/chart_view.h"

class QComboBox;
class QGraphicsPixmapItem;
class QGraphicsRectItem;

namespace kvbe {

class FrontierChart : public ChartView {
    Q_OBJECT
  public:
    explicit FrontierChart(QWidget* parent = nullptr);
    QString csv() const override;
    QString hoverText(QPointF value) const override;
    bool canToggleLogY() const override { return false; }
    // "Tier:" and a list of the scenario's tiers, the one the map is of (objectName
    // "frontierTier").
    QWidget* createControls(QWidget* parent) override;

    void setTier(int index);
    int tier() const { return m_tier; }
    const QImage& image() const { return m_image; }
    void copyStateFrom(const ChartView& other) override;

    // The colour of a speedup: red where recompute wins, green where loading wins.
    static QRgb speedupColor(double speedup);

  protected:
    void refill() override;
    void layoutOverlays() override;

  private:
    int tierIndex() const;
    void updateTierChoices();
    QComboBox* m_tierBox = nullptr;
    int m_tier = 0;
    QImage m_image;
    QGraphicsRectItem* m_clip = nullptr;
    QGraphicsPixmapItem* m_pixmap = nullptr;
    QGraphicsRectItem* m_key = nullptr; // the colour key: speedup from 1/8× to 8×
    qint64 m_scaledFrom = 0;            // cacheKey of the image last scaled
    QSize m_scaledTo;
};

} // namespace kvbe
