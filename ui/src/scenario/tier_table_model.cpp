#include "kvbe/ui/scenario/tier_table_model.h"

#include "kvbe/calibration/published.h"

#include <QColor>

#include <cmath>

namespace kvbe {

int TierTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_tiers.size());
}
int TierTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

namespace {
// A rate as the table shows it: three significant digits (12.5, 7.03, 0.975), whole from 100
// up. The editor and the tooltip keep every digit.
QString shortRate(double gbps) {
    return gbps >= 100 ? QString::number(gbps, 'f', 0) : QString::number(gbps, 'g', 3);
}
} // namespace

QVariant TierTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const auto& t = m_tiers[size_t(index.row())];
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        // Numbers are edited as text, so the view's editor doesn't clamp them before we can
        // say why a value is refused.
        switch (index.column()) {
        case Name:
            return QString::fromStdString(t.name);
        case Bandwidth:
            return role == Qt::DisplayRole ? shortRate(t.bandwidthGBps)
                                           : QString::number(t.bandwidthGBps, 'g', 6);
        case Amplification:
            return role == Qt::DisplayRole ? QString::number(t.amplification, 'g', 3)
                                           : QString::number(t.amplification, 'g', 6);
        case WriteBandwidth:
            if (!t.writeGBps) return QString();
            return role == Qt::DisplayRole ? shortRate(*t.writeGBps)
                                           : QString::number(*t.writeGBps, 'g', 6);
        case FixedCost:
            // Three significant digits shown (a fit's 5.74332 ms reads 5.74); the editor keeps
            // every digit.
            if (role == Qt::DisplayRole && isNominal(index.row()))
                return tr("%1 (nominal)").arg(QString::number(t.tFixedMs, 'g', 3));
            return QString::number(fixedCostMs(t), 'g', role == Qt::DisplayRole ? 3 : 6);
        case StagingColumn:
            return QString::fromStdString(std::string(toString(t.staging)));
        case Colour:
            // The swatch shows the colour; the text is for editing (and the tooltip).
            return role == Qt::EditRole ? QString::fromStdString(t.color) : QString();
        }
    }
    if (role == Qt::DecorationRole && index.column() == Colour && !t.color.empty())
        return QColor(QString::fromStdString(t.color));
    if (role == Qt::ToolTipRole) {
        switch (index.column()) {
        case Name:
            return QString::fromStdString(t.name); // the whole name, where the column elides it
        case Bandwidth:
            return tr("Read bandwidth of the tier itself, GB/s (1 GB = 1e9 bytes)");
        case Amplification:
            return tr("Bytes moved per useful byte of KV, 1 or more (a connector with a minimum "
                      "staging allocation may copy 10 GB for 4.4 GB of KV: 2.27). A hit loads at "
                      "%1 GB/s effective (read / amplification).")
                .arg(QString::number(t.bandwidthGBps / t.amplification, 'g', 4));
        case WriteBandwidth:
            return tr("Write (offload) bandwidth, GB/s: what storing new KV sees. Not part of the "
                      "load; empty when unknown");
        case FixedCost:
            return fixedCostToolTip(index.row());
        case StagingColumn:
            return tr("none, serial or pipelined: how loads pass through host DRAM");
        case Colour:
            return tr("The tier's colour in the charts: %1").arg(QString::fromStdString(t.color));
        }
    }
    if (role == Qt::TextAlignmentRole &&
        (index.column() == Bandwidth || index.column() == FixedCost ||
         index.column() == Amplification || index.column() == WriteBandwidth))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant TierTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o == Qt::Vertical) return role == Qt::DisplayRole ? QVariant(section + 1) : QVariant();
    // Two lines, the unit under the name: every column fits the panel's width; the tooltip says
    // what the column holds.
    if (role == Qt::ToolTipRole) {
        switch (section) {
        case Name:
            return tr("The tier's name, in legends and tooltips");
        case Bandwidth:
            return tr("Read bandwidth of the tier itself, GB/s (1 GB = 1e9 bytes)");
        case Amplification:
            return tr("Amplification: bytes moved per useful byte of KV, 1 or more");
        case WriteBandwidth:
            return tr("Write (offload) bandwidth, GB/s; not part of the load");
        case FixedCost:
            return tr("Fixed cost of one hit on this model, ms: a part per layer, so it moves "
                      "with the model's layers (hover a cell for its sum)");
        case StagingColumn:
            return tr("none, serial or pipelined: how loads pass through host DRAM");
        case Colour:
            return tr("The tier's colour in the charts");
        }
        return {};
    }
    if (role != Qt::DisplayRole) return {};
    switch (section) {
    case Name:
        return tr("Tier");
    case Bandwidth:
        return tr("Read\nGB/s");
    case Amplification:
        return tr("Amplif.\n×");
    case WriteBandwidth:
        return tr("Write\nGB/s");
    case FixedCost:
        return tr("t_fixed\nms");
    case StagingColumn:
        return tr("Staging");
    case Colour:
        return tr("Colour");
    }
    return {};
}

bool TierTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid)) return false;
    auto& t = m_tiers[size_t(index.row())];
    const QString text = value.toString().trimmed();
    auto refuse = [&](const QString& why) {
        emit rejected(why);
        return false;
    };
    bool ok = false;
    switch (index.column()) {
    case Name:
        if (text.isEmpty()) return refuse(tr("A tier needs a name."));
        t.name = text.toStdString();
        break;
    case Bandwidth: {
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v) || v <= 0 || v > 1e6)
            return refuse(tr("Read bandwidth must be a positive number of GB/s, up to 1,000,000 "
                             "(got \"%1\").")
                              .arg(text));
        t.bandwidthGBps = v;
        t.measured.clear(); // a typed bandwidth replaces a fitted one
        break;
    }
    case Amplification: {
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v) || v < 1 || v > kMaxAmplification)
            return refuse(tr("Amplification is bytes moved per useful byte, from 1 to 1000; 1 "
                             "means the tier moves only the KV itself (got \"%1\").")
                              .arg(text));
        t.amplification = v;
        break;
    }
    case WriteBandwidth: {
        if (text.isEmpty()) {
            t.writeGBps.reset();
            break;
        }
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v) || v <= 0 || v > 1e6)
            return refuse(tr("Write bandwidth must be a positive number of GB/s, up to 1,000,000, "
                             "or empty when unknown (got \"%1\").")
                              .arg(text));
        t.writeGBps = v;
        break;
    }
    case FixedCost: {
        const double v = text.toDouble(&ok);
        if (!ok || !std::isfinite(v) || v < 0 || v > 1e7)
            return refuse(tr("t_fixed must be 0 ms or more (got \"%1\").").arg(text));
        // A per-layer fixed cost keeps its form: t0 stays, the per-layer part makes up the rest.
        if (t.tLayerUs > 0 && m_layers > 0 && v >= t.tFixedMs) {
            t.tLayerUs = (v - t.tFixedMs) * 1e3 / m_layers;
        } else {
            t.tFixedMs = v;
            t.tLayerUs = 0;
        }
        t.measured.clear();
        break;
    }
    case StagingColumn: {
        auto s = parseStaging(text.toLower().toStdString());
        if (!s)
            return refuse(tr("Staging must be none, serial or pipelined (got \"%1\").").arg(text));
        t.staging = *s;
        break;
    }
    case Colour: {
        const QColor c(text);
        if (!c.isValid())
            return refuse(tr("Colour must look like #2a9d8f (got \"%1\").").arg(text));
        t.color = c.name().toStdString();
        break;
    }
    default:
        return false;
    }
    emit dataChanged(index, index, {Qt::DisplayRole, Qt::EditRole, Qt::DecorationRole});
    emit tiersEdited();
    return true;
}

Qt::ItemFlags TierTableModel::flags(const QModelIndex& index) const {
    if (!index.isValid()) return Qt::NoItemFlags;
    return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsEditable;
}

void TierTableModel::setModelLayers(int layers, const std::vector<FittedModel>& fittedOn) {
    if (layers == m_layers && fittedOn == m_fittedOn) return;
    // A model of another depth moves every fixed cost with a part per layer: say so, with each
    // tier's before and after, as the column shows only the sum.
    QStringList moved;
    if (m_layers > 0 && layers > 0 && layers != m_layers)
        for (const auto& t : m_tiers)
            if (t.tLayerUs > 0)
                moved << tr("%1 %2 \u2192 %3 ms")
                             .arg(QString::fromStdString(t.name))
                             .arg(QString::number(fixedCostMs(t), 'g', 3))
                             .arg(QString::number(t.tFixedMs + layers * t.tLayerUs * 1e-3, 'g', 3));
    const int before = m_layers;
    m_layers = layers;
    m_fittedOn = fittedOn;
    if (!m_tiers.empty())
        emit dataChanged(index(0, FixedCost), index(rowCount() - 1, FixedCost),
                         {Qt::DisplayRole, Qt::EditRole, Qt::ToolTipRole});
    if (!moved.isEmpty())
        emit rescaled(tr("The model has %1 layers, not %2: the fixed costs, a part of them per "
                         "layer, followed (%3).")
                          .arg(layers)
                          .arg(before)
                          .arg(moved.join(QStringLiteral("; "))));
}

double TierTableModel::fixedCostMs(const TierConfig& t) const {
    return t.tFixedMs + m_layers * t.tLayerUs * 1e-3;
}

QString TierTableModel::fixedCostToolTip(int row) const {
    const QString what = tr("Fixed cost of one hit in ms: lookup, scheduling, first copy");
    if (isNominal(row))
        return what + tr(".\nNominal: a preset estimate, not measured or fitted; it leaves out the "
                         "per-hit overhead that dominates short prompts. File ▸ Built-in "
                         "scenarios has one fitted to the study.");
    const auto& t = m_tiers[size_t(row)];
    if (!(t.tLayerUs > 0) || m_layers <= 0) return what;
    auto ms = [](double v) { return QString::number(v, 'g', 3); };
    const QString sum = tr("t0 %1 ms + %2 layers × %3 ms = %4 ms")
                            .arg(ms(t.tFixedMs))
                            .arg(m_layers)
                            .arg(ms(t.tLayerUs * 1e-3))
                            .arg(ms(fixedCostMs(t)));
    QString text = what + tr(", with a part per layer that holds KV or state (a hit loads layer "
                             "by layer).\n");
    if (m_fittedOn.size() == 1 && m_fittedOn.front().layers != m_layers) {
        const auto& f = m_fittedOn.front();
        text += tr("Fitted on %1 (%2 layers: %3 ms) and carried over per layer: fixed cost "
                   "scaled to %4 layers, %5.")
                    .arg(QString::fromStdString(f.model))
                    .arg(f.layers)
                    .arg(ms(t.tFixedMs + f.layers * t.tLayerUs * 1e-3))
                    .arg(m_layers)
                    .arg(sum);
    } else {
        text += tr("On this model's %1 layers: %2.").arg(m_layers).arg(sum);
    }
    return text;
}

bool TierTableModel::isNominal(int row) const {
    return m_presets && row >= 0 && row < int(m_tiers.size()) &&
           hasNominalFixedCost(m_tiers[size_t(row)], *m_presets);
}

void TierTableModel::setTiers(const std::vector<TierConfig>& tiers) {
    if (tiers == m_tiers) return;
    beginResetModel();
    m_tiers = tiers;
    endResetModel();
}

void TierTableModel::addTier(TierConfig tier) {
    const int row = int(m_tiers.size());
    beginInsertRows({}, row, row);
    m_tiers.push_back(std::move(tier));
    endInsertRows();
    emit tiersEdited();
}

void TierTableModel::removeTier(int row) {
    if (row < 0 || row >= int(m_tiers.size())) return;
    beginRemoveRows({}, row, row);
    m_tiers.erase(m_tiers.begin() + row);
    endRemoveRows();
    emit tiersEdited();
}

} // namespace kvbe
