#include "kvbe/ui/compare/pin_table_model.h"

#include "kvbe/base/units.h"

#include <QColor>
#include <QFont>

namespace kvbe {

int PinTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_table.rows.size());
}

int PinTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || m_table.empty() ? 0 : 1 + int(m_table.columns.size());
}

QVariant PinTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t r = size_t(index.row());
    const auto& row = m_table.rows[r];
    if (index.column() == 0) {
        if (role == Qt::DisplayRole) return row.label;
        if (role == Qt::ToolTipRole)
            return tr("%1\nModel %2, context %3 tokens")
                .arg(row.label, row.model, QString::fromStdString(formatTokens(row.contextTokens)));
        if (role == Qt::FontRole && row.current) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    const size_t c = size_t(index.column() - 1);
    const auto& col = m_table.columns[c];
    const auto& v = row.values[c];
    using State = CompareValue::State;
    switch (role) {
    case Qt::DisplayRole: {
        // Narrow columns: the value, its difference, and the difference in %, a line each.
        if (row.current) return valueText(v, col);
        QString text = valueText(v, col) + QLatin1Char('\n') + deltaText(m_table, r, c);
        if (const QString pct = deltaPercentText(m_table, r, c); !pct.isEmpty())
            text += QLatin1Char('\n') + pct;
        return text;
    }
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        switch (v.state) {
        case State::PastContext:
            return tr("%1 tokens is past the context of %2 (%3 tokens): B* is not computed there.")
                .arg(QString::fromStdString(formatTokens(col.tokens)), row.model,
                     QString::fromStdString(formatTokens(row.contextTokens)));
        case State::NoTier:
            return tr("This scenario has no tier \"%1\".").arg(col.tier);
        case State::Never:
            return tr("A hit from \"%1\" is slower than recomputing at every prefix up to the "
                      "context (%2 tokens).")
                .arg(col.tier, QString::fromStdString(formatTokens(row.contextTokens)));
        case State::None:
            return tr("Recompute takes no longer than the fixed cost: no bandwidth ties with it.");
        case State::Number:
            return col.kind == CompareColumn::Kind::Bandwidth
                       ? tr("The bandwidth one storage path needs for a fully cached %1-token "
                            "prompt to tie with recompute")
                             .arg(QString::fromStdString(formatTokens(col.tokens)))
                       : tr("The shortest prefix whose load from \"%1\" beats recomputing it")
                             .arg(col.tier);
        }
        return {};
    case ValueRole:
        return v.isNumber() ? QVariant(v.value) : QVariant();
    case DeltaRole:
        if (auto d = m_table.delta(r, c)) return *d;
        return {};
    case DeltaPercentRole:
        if (auto d = m_table.deltaPercent(r, c)) return *d;
        return {};
    case StateRole:
        return int(v.state);
    default:
        return {};
    }
}

QVariant PinTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o == Qt::Vertical) {
        if (role != Qt::DisplayRole || section < 0 || section >= int(m_table.rows.size()))
            return {};
        return section == 0 ? tr("Current") : tr("Pin %1").arg(section);
    }
    if (section == 0) return role == Qt::DisplayRole ? QVariant(tr("Scenario")) : QVariant();
    const size_t c = size_t(section - 1);
    if (c >= m_table.columns.size()) return {};
    const auto& col = m_table.columns[c];
    if (role == Qt::DisplayRole) return columnHeader(col);
    if (role == Qt::ToolTipRole)
        return col.kind == CompareColumn::Kind::Bandwidth
                   ? tr("Break-even bandwidth at %1 tokens, GB/s; under it, Δ against the "
                        "current scenario")
                         .arg(QString::fromStdString(formatTokens(col.tokens)))
                   : tr("Break-even prefix of \"%1\", tokens; under it, Δ against the current "
                        "scenario")
                         .arg(col.tier);
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

void PinTableModel::setComparison(PinComparison t) {
    beginResetModel();
    m_table = std::move(t);
    endResetModel();
}

// ---- the tab

} // namespace kvbe
