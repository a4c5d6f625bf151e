// The scenario's tiers as an editable table: name, read bandwidth (GB/s), amplification (bytes
// moved per useful byte), write bandwidth (GB/s, for sizing), fixed cost (ms, on the current
// model: t0 + layers · t_layer), staging and colour.
// Edits that make no sense are refused with a sentence (rejected()).
#pragma once

#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <QAbstractTableModel>

namespace kvbe {

class TierTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Column {
        Name,
        Bandwidth,
        Amplification,
        WriteBandwidth,
        FixedCost,
        StagingColumn,
        Colour,
        ColumnCount
    };
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    // With presets, a t_fixed that is still its preset's value shows as "1 (nominal)", with the
    // sentence on what nominal leaves out as its tooltip.
    void setPresets(const Presets* presets) { m_presets = presets; }
    // The current model's KV/state layers and the models the scenario was fitted on: a tier with
    // a per-layer fixed cost shows t0 + layers · t_layer, and its tooltip says how it was scaled.
    // An edit of that cell sets the fixed cost on this model and keeps t0.
    void setModelLayers(int layers, const std::vector<FittedModel>& fittedOn);
    bool isNominal(int row) const;
    void setTiers(const std::vector<TierConfig>& tiers);
    const std::vector<TierConfig>& tiers() const { return m_tiers; }
    void addTier(TierConfig tier);
    void removeTier(int row);

  signals:
    void tiersEdited();
    void rejected(const QString& message);
    // The model's layers changed and with them tiers' fixed costs (a part of each is per layer):
    // what moved, in a sentence.
    void rescaled(const QString& message);

  private:
    double fixedCostMs(const TierConfig& t) const;
    QString fixedCostToolTip(int row) const;

    std::vector<TierConfig> m_tiers;
    const Presets* m_presets = nullptr;
    int m_layers = 0; // 0: not known yet (t_fixed shows t0 alone)
    std::vector<FittedModel> m_fittedOn;
};

} // namespace kvbe
