// B*(N): the bandwidth a storage path needs for a fully cached prompt to beat recompute, with
// each tier as a labelled horizontal line and the prompt lengths where it wins shaded.
#pragma once

#include "kvbe/ui/charts/chart_view.h"
#include "kvbe/ui/charts/implied_overlay.h"

#include <limits>

namespace kvbe {

class BreakevenChart : public ChartView {
    Q_OBJECT
  public:
    using ChartView::ChartView;
    QString csv() const override;
    QString hoverText(QPointF value) const override;

    // Measured prefill times (tokens, seconds) from a GPU probe: each becomes the point
    // (N, kvbytes(N) / t(N)), the B* that measured recompute time asks for, with the scenario's
    // KV bytes per token.
    // `model`: the model the probe ran (empty: the scenario's).
    void setMeasuredPrefill(std::vector<QPointF> tokensSeconds, const QString& label,
                            const QString& model = {});
    // The points as drawn, (tokens, GB/s).
    QList<QPointF> measuredBreakeven() const;
    // Imported py-kvcache v2 files: per file and tier, B* at its knots as a dashed line with its
    // points ("implied/<n>/<tier>-bstar"), at its golden points ("-golden"), the bandwidth its
    // load curve implies ("-level") and its p* on that level ("-pstar"), in GB/s.
    void setImplied(std::vector<ImpliedOverlay> implied);
    const std::vector<ImpliedOverlay>& implied() const { return m_implied; }
    // A probe run still measuring: its best rate so far, drawn dashed under "running/<run>" and
    // named as provisional. It is no tier of the scenario until the run finishes.
    struct Provisional {
        int run = 0;
        QString label; // "nvme-read #1: running, 50 % · 5.25 GB/s so far"
        double gbps = 0;
    };
    void setProvisional(const Provisional& p);
    void clearProvisional(int run);
    void copyStateFrom(const ChartView& other) override;

  protected:
    void refill() override;

  private:
    // The y values drawn, for the home range (lo: the smallest above 0, for a log axis).
    struct YRange {
        double lo = std::numeric_limits<double>::infinity(), hi = 0;
        void add(double y);
        void add(const QList<QPointF>& pts);
    };
    // The layers of refill(), back to front.
    void drawPins(YRange& range);
    void drawTiers(const ScenarioResult& r, YRange& range);
    void drawProvisional(double xMin, double xMax, YRange& range);
    void drawImplied(double xMin, double xMax, YRange& range);
    void drawPublished(const ScenarioResult& r, YRange& range);

    std::vector<QPointF> m_prefill;
    QString m_prefillLabel;
    QString m_prefillModel;
    std::vector<ImpliedOverlay> m_implied;
    std::vector<Provisional> m_provisional;
};

} // namespace kvbe
