// The pin comparison (pin_comparison.h) as the window's table model.
#pragma once

#include "kvbe/ui/compare/pin_comparison.h"

#include <QAbstractTableModel>

namespace kvbe {

// The comparison as a table model: the scenario's label, then one column per CompareColumn,
// each cell the value and (pins) its Δ and Δ in % on the lines under it. UserRole gives the raw
// value, DeltaRole and DeltaPercentRole the differences (invalid where there is none).
class PinTableModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    enum Role { ValueRole = Qt::UserRole, DeltaRole, DeltaPercentRole, StateRole };
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    void setComparison(PinComparison t);
    const PinComparison& comparison() const { return m_table; }

  private:
    PinComparison m_table;
};

} // namespace kvbe
