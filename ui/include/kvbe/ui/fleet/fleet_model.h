// The Fleet table: one row per imported calibration (a node, or another tool's file) with its
// p* per tier and fitted parameters; columns for tiers appear as files name them.
#pragma once

#include "kvbe/ui/fleet/calibration_importer.h"

#include <QAbstractTableModel>

namespace kvbe {

class FleetModel : public QAbstractTableModel {
    Q_OBJECT
  public:
    using QAbstractTableModel::QAbstractTableModel;

    // Then "p* <tier>" and "t_fixed <tier>" per tier, and last what was measured.
    enum Column { Source, Format, Host, Gpu, Model, Utilisation, FixedColumns };
    // Roles beyond Qt's: the raw number behind a cell (sorting, tests).
    enum Role { ValueRole = Qt::UserRole + 1 };

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

    void append(std::vector<ImportedCalibration> imported);
    void clear();
    const ImportedCalibration& at(int row) const { return m_rows[size_t(row)]; }
    const std::vector<ImportedCalibration>& rows() const { return m_rows; }
    // A fit replaces a row's fitted parameters and p*.
    void setFitted(int row, const FittedParameters& p, const std::map<std::string, double>& pstar);
    // Warnings about a row: its reader's, and a model or dtype other than the scenario's.
    void setMismatches(int row, const std::vector<std::string>& warnings);
    const std::vector<std::string>& mismatches(int row) const { return m_mismatch[size_t(row)]; }
    const std::vector<std::string>& tierNames() const { return m_tiers; }
    // The column of "p* <tier>" (its "t_fixed <tier>" is the next); -1 when no file names the tier.
    int pstarColumn(const std::string& tier) const;
    int measuredColumn() const { return columnCount() - 1; }

  private:
    std::vector<std::string> tiersOf(const Calibration& c) const;
    std::vector<ImportedCalibration> m_rows;
    std::vector<std::vector<std::string>> m_mismatch;
    std::vector<std::string> m_tiers; // in the order files first named them
};

} // namespace kvbe
