#include "kvbe/ui/scenario/tier_box.h"

#include "kvbe/ui/charts/chart_view.h"

#include <QColorDialog>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMenu>
#include <QPushButton>
#include <QStyle>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kvbe {

TierBox::TierBox(ScenarioEditing& editing, QWidget* parent) : ScenarioPart(editing, parent) {
    auto* tierBox = addBox(tr("Storage tiers"));
    auto* tl = new QVBoxLayout(tierBox);
    m_tiers = new TierTableModel(this);
    m_tiers->setObjectName(QStringLiteral("tierModel"));
    m_tiers->setPresets(&explorer()->presets());
    m_tierView = new QTableView(tierBox);
    m_tierView->setObjectName(QStringLiteral("tierView"));
    // Tab leaves the table for the next control; arrows move between cells.
    m_tierView->setTabKeyNavigation(false);
    m_tierView->setModel(m_tiers);
    // Every column in view at the panel's width: numbers, staging and
    // colour as wide as their contents, the tier's name in the rest (elided; its tooltip holds
    // it whole). fitTierColumns keeps the table that wide.
    auto* header = m_tierView->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(TierTableModel::Name, QHeaderView::Stretch);
    header->setStretchLastSection(false);
    // Long names wrap onto a second line of their row ("Host DRAM / (PCIe 5.0)") rather than
    // lose their middle.
    m_tierView->setWordWrap(true);
    m_tierView->setTextElideMode(Qt::ElideRight);
    // Rows as tall as their names need, again when the name column's width changes.
    connect(header, &QHeaderView::sectionResized, this, [this](int section) {
        if (section == TierTableModel::Name) m_tierView->resizeRowsToContents();
    });
    m_tierView->verticalHeader()->setVisible(false);
    m_tierView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tierView->setMinimumHeight(110);
    tl->addWidget(m_tierView);
    connect(m_tiers, &TierTableModel::tiersEdited, this, [this] {
        showMessage(QString());
        edit(tr("Tiers"), [&](Scenario& s) { s.tiers = m_tiers->tiers(); });
        fitTierColumns();
    });
    connect(m_tiers, &TierTableModel::rejected, this,
            [this](const QString& why) { showMessage(why); });
    connect(m_tiers, &TierTableModel::rescaled, this,
            [this](const QString& what) { showMessage(what); });

    auto* tierButtons = new QHBoxLayout;
    auto* add = new QToolButton(tierBox);
    add->setObjectName(QStringLiteral("addTier"));
    add->setText(tr("Add tier"));
    add->setPopupMode(QToolButton::InstantPopup);
    auto* addMenu = new QMenu(add);
    for (const auto& [key, t] : explorer()->presets().tiers()) {
        const QString k = QString::fromStdString(key);
        addMenu->addAction(QString::fromStdString(t.name), this, [this, k] { addTier(k); });
    }
    addMenu->addSeparator();
    addMenu->addAction(tr("Custom tier"), this, [this] { addTier(QString()); });
    add->setMenu(addMenu);
    auto* remove = new QPushButton(tr("Remove"), tierBox);
    connect(remove, &QPushButton::clicked, this, [this] {
        const auto rows = m_tierView->selectionModel()->selectedRows();
        if (!rows.isEmpty())
            m_tiers->removeTier(rows.front().row());
        else if (m_tiers->rowCount() > 0)
            m_tiers->removeTier(m_tiers->rowCount() - 1);
    });
    auto* colour = new QPushButton(tr("Colour…"), tierBox);
    connect(colour, &QPushButton::clicked, this, &TierBox::pickTierColour);
    tierButtons->addWidget(add);
    tierButtons->addWidget(remove);
    tierButtons->addWidget(colour);
    tierButtons->addStretch();
    tl->addLayout(tierButtons);
}

void TierBox::showScenario(const Scenario& s) {
    m_tiers->setTiers(s.tiers);
    fitTierColumns();
}

void TierBox::showResult(const ScenarioResult& r) {
    m_tiers->setModelLayers(r.eval->cost.kvStateLayers(), r.scenario.fittedOn);
}

void TierBox::addTier(const QString& presetKey) {
    TierConfig t;
    if (const auto* spec = explorer()->presets().findTier(presetKey.toStdString()))
        t = tierFromPreset(*spec);
    else {
        t.name = tr("Custom tier %1").arg(m_tiers->rowCount() + 1).toStdString();
        t.bandwidthGBps = 10;
        t.tFixedMs = 1;
        // Like the NVMe presets: a custom tier is most often a drive or a network store.
        t.staging = Staging::Pipelined;
    }
    t.color = tierPaletteColor(size_t(m_tiers->rowCount())).name().toStdString();
    m_tiers->addTier(std::move(t));
}

void TierBox::pickTierColour() {
    const auto rows = m_tierView->selectionModel()->selectedRows();
    if (rows.isEmpty()) {
        showMessage(tr("Select a tier first, then pick its colour."));
        return;
    }
    const QModelIndex idx = m_tiers->index(rows.front().row(), TierTableModel::Colour);
    const QColor c =
        QColorDialog::getColor(QColor(idx.data(Qt::EditRole).toString()), this, tr("Tier colour"));
    if (c.isValid()) m_tiers->setData(idx, c.name(), Qt::EditRole);
}

void TierBox::showEvent(QShowEvent* e) {
    ScenarioPart::showEvent(e);
    fitTierColumns(); // with the fonts and style the panel is shown in
}

void TierBox::fitTierColumns() {
    // The columns' own widths, room for a short tier name ("NVMe (PCIe 5.0)") and for the
    // scroll bar more tiers bring: the panel is at least this wide.
    auto* header = m_tierView->horizontalHeader();
    const QAbstractItemView* view = m_tierView; // QTableView hides sizeHintForColumn
    int width = 2 * m_tierView->frameWidth() +
                m_tierView->style()->pixelMetric(QStyle::PM_ScrollBarExtent, nullptr, m_tierView);
    for (int c = 0; c < m_tiers->columnCount(); ++c)
        width +=
            c == TierTableModel::Name
                ? m_tierView->fontMetrics().horizontalAdvance(QStringLiteral("NVMe (PCIe 5.0)"))
                : std::max(header->sectionSizeHint(c), view->sizeHintForColumn(c));
    m_tierView->setMinimumWidth(width);
    m_tierView->resizeRowsToContents();
}

} // namespace kvbe
