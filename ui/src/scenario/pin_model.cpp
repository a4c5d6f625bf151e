#include "kvbe/ui/scenario/pin_model.h"

namespace kvbe {

int PinModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_pins.size());
}

QVariant PinModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& p = *m_pins[size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
        return p.label;
    case Qt::ToolTipRole:
        return QStringLiteral("%1 on %2, u = %3 %")
            .arg(QString::fromStdString(p.model().id),
                 QString::fromStdString(p.eval->gpu ? p.eval->gpu->name
                                                    : std::string("a custom GPU")))
            .arg(p.scenario.utilisation * 100, 0, 'f', 0);
    default:
        return {};
    }
}

bool PinModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid)) return false;
    const QString label = value.toString().trimmed();
    if (label.isEmpty()) return false;
    // Results are shared with the charts, so a rename copies rather than edits in place.
    auto renamed = std::make_shared<ScenarioResult>(*m_pins[size_t(index.row())]);
    renamed->label = label;
    m_pins[size_t(index.row())] = std::move(renamed);
    emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole});
    emit pinsChanged();
    return true;
}

Qt::ItemFlags PinModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable;
}

void PinModel::pin(ResultPtr result) {
    const int row = int(m_pins.size());
    beginInsertRows({}, row, row);
    m_pins.push_back(std::move(result));
    endInsertRows();
    emit pinsChanged();
}

void PinModel::unpin(int row) {
    if (row < 0 || row >= int(m_pins.size())) return;
    beginRemoveRows({}, row, row);
    m_pins.erase(m_pins.begin() + row);
    endRemoveRows();
    emit pinsChanged();
}

void PinModel::clear() {
    if (m_pins.empty()) return;
    beginResetModel();
    m_pins.clear();
    endResetModel();
    emit pinsChanged();
}

} // namespace kvbe
