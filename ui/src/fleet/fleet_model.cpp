#include "kvbe/ui/fleet/fleet_model.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>

#include <algorithm>

namespace kvbe {

std::vector<std::string> FleetModel::tiersOf(const Calibration& c) const {
    std::vector<std::string> t;
    auto add = [&t](const std::string& n) {
        if (std::find(t.begin(), t.end(), n) == t.end()) t.push_back(n);
    };
    for (const auto& [n, p] : c.breakevenPrefix)
        add(n);
    if (c.fitted)
        for (const auto& [n, f] : c.fitted->tiers)
            add(n);
    return t;
}

int FleetModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_rows.size());
}

int FleetModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : FixedColumns + 2 * int(m_tiers.size()) + 1;
}

int FleetModel::pstarColumn(const std::string& tier) const {
    const auto it = std::find(m_tiers.begin(), m_tiers.end(), tier);
    return it == m_tiers.end() ? -1 : FixedColumns + 2 * int(it - m_tiers.begin());
}

QVariant FleetModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= columnCount())
        return QAbstractTableModel::headerData(section, o, role);
    switch (section) {
    case Source:
        return tr("Source");
    case Format:
        return tr("Format");
    case Host:
        return tr("Host");
    case Gpu:
        return tr("GPU");
    case Model:
        return tr("Model");
    case Utilisation:
        return tr("Fitted u");
    default:
        break;
    }
    if (section == measuredColumn()) return tr("Measured");
    const auto& tier = QString::fromStdString(m_tiers[size_t((section - FixedColumns) / 2)]);
    return (section - FixedColumns) % 2 == 0 ? tr("p* %1 (tokens)").arg(tier)
                                             : tr("t_fixed %1 (ms)").arg(tier);
}

QVariant FleetModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& c = m_rows[size_t(index.row())].calibration;
    const auto& warn = m_mismatch[size_t(index.row())];
    const int col = index.column();
    if (role == Qt::ToolTipRole) {
        QStringList lines{QString::fromStdString(c.source)};
        for (const auto& w : c.warnings)
            lines << QString::fromStdString(w);
        for (const auto& w : warn)
            lines << QString::fromStdString(w);
        return lines.join(QLatin1Char('\n'));
    }
    if (role == Qt::ForegroundRole && col == Model && !warn.empty())
        return QBrush(QColor("#c1121f"));
    if (role != Qt::DisplayRole && role != ValueRole) return {};
    const bool display = role == Qt::DisplayRole;
    auto number = [display](std::optional<double> v, int decimals) -> QVariant {
        if (!v) return display ? QVariant(QStringLiteral("–")) : QVariant();
        return display ? QVariant(QString::number(*v, 'f', decimals)) : QVariant(*v);
    };
    switch (col) {
    case Source:
        return QFileInfo(QString::fromStdString(c.source)).fileName();
    case Format:
        return QString::fromStdString(c.format);
    case Host:
        return QString::fromStdString(c.host);
    case Gpu:
        return QString::fromStdString(c.gpuName);
    case Model:
        return warn.empty() || !display ? QString::fromStdString(c.model)
                                        : QStringLiteral("⚠ ") + QString::fromStdString(c.model);
    default:
        break;
    }
    if (col == measuredColumn()) {
        QStringList parts;
        for (const auto& t : c.tiers)
            if (t.readBps)
                parts << tr("%1 %2 GB/s")
                             .arg(QString::fromStdString(t.name))
                             .arg(*t.readBps * 1e-9, 0, 'g', 4);
            else if (!t.reads.empty())
                parts << tr("%1 %n reads", nullptr, int(t.reads.size()))
                             .arg(QString::fromStdString(t.name));
        if (!c.prefill.empty()) parts << tr("%n prefills", nullptr, int(c.prefill.size()));
        if (!c.hits.empty()) parts << tr("%n hits", nullptr, int(c.hits.size()));
        return parts.join(QStringLiteral("; "));
    }
    switch (col) {
    case Utilisation:
        return number(c.fitted ? c.fitted->utilisation : std::nullopt, 3);
    default:
        break;
    }
    const std::string& tier = m_tiers[size_t((col - FixedColumns) / 2)];
    if ((col - FixedColumns) % 2 == 0) {
        const auto it = c.breakevenPrefix.find(tier);
        return number(it == c.breakevenPrefix.end() ? std::nullopt : std::optional(it->second), 0);
    }
    std::optional<double> tf;
    if (c.fitted)
        if (auto it = c.fitted->tiers.find(tier); it != c.fitted->tiers.end())
            tf = it->second.tFixedS * 1e3;
    return number(tf, 2);
}

void FleetModel::append(std::vector<ImportedCalibration> imported) {
    if (imported.empty()) return;
    std::vector<std::string> newTiers;
    for (const auto& ic : imported)
        for (const auto& t : tiersOf(ic.calibration))
            if (std::find(m_tiers.begin(), m_tiers.end(), t) == m_tiers.end() &&
                std::find(newTiers.begin(), newTiers.end(), t) == newTiers.end())
                newTiers.push_back(t);
    if (!newTiers.empty()) {
        beginInsertColumns({}, measuredColumn(), measuredColumn() + 2 * int(newTiers.size()) - 1);
        m_tiers.insert(m_tiers.end(), newTiers.begin(), newTiers.end());
        endInsertColumns();
    }
    beginInsertRows({}, rowCount(), rowCount() + int(imported.size()) - 1);
    for (auto& ic : imported) {
        m_rows.push_back(std::move(ic));
        m_mismatch.emplace_back();
    }
    endInsertRows();
}

void FleetModel::clear() {
    beginResetModel();
    m_rows.clear();
    m_mismatch.clear();
    m_tiers.clear();
    endResetModel();
}

void FleetModel::setFitted(int row, const FittedParameters& p,
                           const std::map<std::string, double>& pstar) {
    auto& c = m_rows[size_t(row)].calibration;
    c.fitted = p;
    for (const auto& [n, v] : pstar)
        c.breakevenPrefix[n] = v;
    std::vector<std::string> newTiers;
    for (const auto& t : tiersOf(c))
        if (std::find(m_tiers.begin(), m_tiers.end(), t) == m_tiers.end()) newTiers.push_back(t);
    if (!newTiers.empty()) {
        beginInsertColumns({}, measuredColumn(), measuredColumn() + 2 * int(newTiers.size()) - 1);
        m_tiers.insert(m_tiers.end(), newTiers.begin(), newTiers.end());
        endInsertColumns();
    }
    emit dataChanged(index(row, 0), index(row, columnCount() - 1));
}

void FleetModel::setMismatches(int row, const std::vector<std::string>& warnings) {
    if (m_mismatch[size_t(row)] == warnings) return;
    m_mismatch[size_t(row)] = warnings;
    emit dataChanged(index(row, Model), index(row, Model));
}

} // namespace kvbe
