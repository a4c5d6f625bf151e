// The pinned scenarios: ghost overlays the charts draw under the current one.
#pragma once

#include "kvbe/ui/results/scenario_result.h"

#include <QAbstractListModel>

namespace kvbe {

class PinModel : public QAbstractListModel {
    Q_OBJECT
  public:
    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    void pin(ResultPtr result);
    void unpin(int row);
    void clear();
    const std::vector<ResultPtr>& pins() const { return m_pins; }

  signals:
    void pinsChanged();

  private:
    std::vector<ResultPtr> m_pins;
};

} // namespace kvbe
