// The Workload view's capacity rows: a slider a tier (the GPU's HBM for KV, then each offload
// tier) in quarter doublings, the capacity and the tokens it holds beside it.
#include "kvbe/ui/workload/workload_view.h"

#include "kvbe/base/units.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/ui/widgets/wrap_box.h"

#include <QCheckBox>
#include <QComboBox>
#include <QGridLayout>
#include <QLabel>
#include <QSlider>
#include <QToolButton>

#include <algorithm>
#include <cmath>
#include <optional>

namespace kvbe {

namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
// Capacity sliders move in quarter doublings: step s holds 2^((s − 4) / 4) GiB, so step 4 is
// 1 GiB, 40 is 512 GiB, 56 is 8 TiB and 68 is 64 TiB; step 0 leaves an offload tier out.
constexpr int kStepsPerDoubling = 4;
constexpr int kMaxStep = 68;
constexpr int kSliderMinimum = 140;

double stepBytes(int step) {
    return std::exp2(double(step - kStepsPerDoubling) / kStepsPerDoubling) * kGiB;
}
int bytesStep(double bytes) {
    if (!(bytes > 0)) return 0;
    if (!std::isfinite(bytes)) return kMaxStep;
    return std::clamp(int(std::lround(std::log2(bytes / kGiB) * kStepsPerDoubling)) +
                          kStepsPerDoubling,
                      1, kMaxStep);
}

} // namespace

QString WorkloadView::tierValueText(double bytes) const {
    if (!(bytes > 0)) return tr("off");
    QString s = capacityText(bytes);
    if (m_trace && m_trace->summary.hasBlocks()) {
        if (const auto& r = m_explorer->result()) {
            const double blockBytes = traceBlockBytes(r->eval->cost, m_trace->summary.blockTokens);
            s += QStringLiteral(" (%1 tokens)")
                     .arg(QString::fromStdString(formatTokens(
                         std::floor(bytes / blockBytes) * double(m_trace->summary.blockTokens))));
        }
    }
    return s;
}

// One row per tier of the current scenario; rebuilt when the scenario's tiers change.
void WorkloadView::syncTierRows() {
    const auto& r = m_explorer->result();
    if (!r) return;
    QStringList names{tr("GPU (HBM for KV)")};
    for (const auto& t : workloadSimTiers(*r->eval))
        names << QString::fromStdString(t.name);
    if (names == m_tierNames) {
        for (std::size_t i = 0; i < m_rows.size(); ++i)
            showRow(i);
        return;
    }
    m_tierNames = names;
    for (auto& row : m_rows) {
        delete row.name;
        delete row.slider;
        delete row.value;
        delete row.pooled;
        delete row.automatic;
    }
    m_rows.clear();
    // New tiers start at their defaults; tiers kept by position keep what was set.
    const std::size_t had = m_settings.tierCapacityBytes.size();
    m_settings.tierCapacityBytes.resize(std::size_t(names.size() - 1), 0);
    for (std::size_t i = had; i < m_settings.tierCapacityBytes.size(); ++i)
        m_settings.tierCapacityBytes[i] = defaultTierCapacity(i);
    m_settings.pooled.resize(std::size_t(names.size() - 1), false);
    for (int i = 0; i < names.size(); ++i) {
        TierRow row;
        row.name = new QLabel(names[i], this);
        row.slider = new QSlider(Qt::Horizontal, this);
        row.slider->setObjectName(QStringLiteral("workloadTier%1").arg(i));
        row.slider->setRange(i == 0 ? 1 : 0, kMaxStep);
        row.slider->setPageStep(kStepsPerDoubling);
        // Long enough to drag: some 35 positions of 4 px over the 68 steps.
        row.slider->setMinimumWidth(kSliderMinimum);
        row.slider->setToolTip(
            i == 0 ? tr("HBM left for KV; the scenario's default is 90 % of HBM less the weights")
                   : tr("Capacity of %1; all the way left leaves it out").arg(names[i]));
        row.value = new QLabel(this);
        row.value->setObjectName(QStringLiteral("workloadTier%1Value").arg(i));
        row.value->setMinimumWidth(row.value->fontMetrics().horizontalAdvance(
            QStringLiteral("999 GiB (99,999,999 tokens)")));
        m_tierGrid->addWidget(row.name, i, 0);
        m_tierGrid->addWidget(row.slider, i, 1);
        m_tierGrid->addWidget(row.value, i, 2);
        if (i == 0) {
            // The default HBM for KV follows the scenario (the GPU, the weights, the tensor-
            // parallel size); a value dragged to stays. Auto goes back to following.
            row.automatic = new QToolButton(this);
            row.automatic->setObjectName(QStringLiteral("workloadGpuAuto"));
            row.automatic->setText(tr("Auto"));
            row.automatic->setToolTip(
                tr("Back to the default HBM for KV: 90 % of the GPUs' memory less the weights, "
                   "following the model, the weights and the GPUs as they change"));
            m_tierGrid->addWidget(row.automatic, i, 3);
            connect(row.automatic, &QToolButton::clicked, this, [this] {
                m_settings.gpuCacheBytes.reset();
                showRow(0);
                requestReplay();
            });
        }
        if (i > 0) {
            row.pooled = new QCheckBox(tr("pooled"), this);
            row.pooled->setObjectName(QStringLiteral("workloadTier%1Pooled").arg(i));
            row.pooled->setToolTip(
                tr("A fleet's %1: one pool for every server, its capacity in all, reached over "
                   "each node's link (Mooncake Store, LMCache remote); unchecked, one on each "
                   "node, its capacity each")
                    .arg(names[i]));
            row.pooled->setEnabled(m_settings.instances > 1);
            m_tierGrid->addWidget(row.pooled, i, 3);
            connect(row.pooled, &QCheckBox::toggled, this, [this, i](bool on) {
                m_settings.pooled[std::size_t(i - 1)] = on;
                requestReplay();
            });
        }
        connect(row.slider, &QSlider::valueChanged, this,
                [this, i](int step) { onCapacityMoved(i, step); });
        // Replays too slow to follow the slider run when it is let go.
        connect(row.slider, &QSlider::sliderReleased, this, [this] {
            if (!live()) requestReplay();
        });
        m_rows.push_back(row);
    }
    {
        const QSignalBlocker block(m_sweepTier);
        const int keep = m_settings.sweepTier;
        m_sweepTier->clear();
        m_sweepTier->addItem(tr("GPU"));
        for (int i = 1; i < names.size(); ++i)
            m_sweepTier->addItem(names[i]);
        m_settings.sweepTier = std::clamp(keep, 0, int(names.size()) - 1);
        m_sweepTier->setCurrentIndex(m_settings.sweepTier);
    }
    syncControls();
}

// The capacity a row shows: the one set, else the default; none for a GPU whose weights leave no
// HBM for KV (or whose memory is unknown) until the slider gives one.
std::optional<double> WorkloadView::rowBytes(std::size_t row) const {
    if (row == 0) {
        if (m_settings.gpuCacheBytes) return *m_settings.gpuCacheBytes;
        if (const auto& r = m_explorer->result())
            if (auto d = defaultGpuCacheBytes(*r->eval)) return *d;
        return std::nullopt;
    }
    return row - 1 < m_settings.tierCapacityBytes.size() ? m_settings.tierCapacityBytes[row - 1]
                                                         : defaultTierCapacity(row - 1);
}

QString WorkloadView::rowText(std::size_t row) const {
    const auto bytes = rowBytes(row);
    if (!bytes) return tr("not set: drag to give the HBM for KV");
    QString text = tierValueText(*bytes);
    // More KV than the GPU holds beside the weights: allowed (a what-if), but said.
    if (row == 0 && m_settings.gpuCacheBytes)
        if (const auto& r = m_explorer->result())
            if (auto left = defaultGpuCacheBytes(*r->eval); left && *bytes > *left * 1.001)
                text += tr("; more than the %1 left beside the weights")
                            .arg(QString::fromStdString(formatBytes(*left)));
    return text;
}

// A row's handle at its capacity and its value beside it, in red past the HBM left for KV. The
// handle follows the result too: after a reset it sat at zero while its value said 61.1 GiB.
void WorkloadView::showRow(std::size_t i) {
    const QSignalBlocker block(m_rows[i].slider);
    if (i == 0) {
        // The GPU's row runs to the HBM of its GPUs (64 TiB where the GPU is not a preset).
        int top = kMaxStep;
        if (const auto& r = m_explorer->result(); r && r->eval->gpu)
            top = std::max(1, bytesStep(r->eval->gpu->memoryBytes *
                                        std::max(1, r->eval->scenario.tensorParallel)));
        m_rows[0].slider->setRange(1, top);
        if (m_rows[0].automatic)
            m_rows[0].automatic->setEnabled(m_settings.gpuCacheBytes.has_value());
    }
    m_rows[i].slider->setValue(bytesStep(rowBytes(i).value_or(0)));
    const QString text = rowText(i);
    m_rows[i].value->setText(text);
    const bool over = i == 0 && text.contains(QLatin1String("left beside the weights"));
    m_rows[i].value->setStyleSheet(over ? QStringLiteral("color: #c0392b;") : QString());
}

void WorkloadView::syncControls() {
    for (std::size_t i = 0; i < m_rows.size(); ++i)
        showRow(i);
    const QSignalBlocker b1(m_policy), b2(m_placement), b3(m_admission), b4(m_instances),
        b5(m_writeQueue), b6(m_sweepTier), b7(m_sharedLink), b8(m_storeAfter);
    m_policy->setCurrentText(QString::fromStdString(std::string(toString(m_settings.policy))));
    m_placement->setCurrentText(
        QString::fromStdString(std::string(toString(m_settings.placement))));
    m_admission->setCurrentText(
        QString::fromStdString(std::string(toString(m_settings.admission))));
    m_instances->setValue(m_settings.instances);
    m_storeAfter->setValue(m_settings.storeAfter);
    m_writeQueue->setChecked(m_settings.writeQueue);
    m_sharedLink->setChecked(m_settings.sharedLinks);
    m_sharedLink->setEnabled(m_settings.writeQueue);
    m_sweepTier->setCurrentIndex(m_settings.sweepTier);
    const QSignalBlocker b9(m_router), b10(m_nodeServers);
    m_router->setCurrentText(QString::fromStdString(m_settings.router));
    m_nodeServers->setValue(m_settings.nodeServers);
    const bool fleet = m_settings.instances > 1;
    m_router->setEnabled(fleet);
    m_nodeServers->setEnabled(fleet);
    for (std::size_t i = 1; i < m_rows.size(); ++i) {
        QCheckBox* pooled = m_rows[i].pooled;
        if (!pooled) continue;
        const QSignalBlocker b(pooled);
        pooled->setChecked(i - 1 < m_settings.pooled.size() && m_settings.pooled[i - 1]);
        pooled->setEnabled(fleet);
    }
}

void WorkloadView::onCapacityMoved(int row, int step) {
    const double bytes = row > 0 && step == 0 ? 0.0 : stepBytes(step);
    if (row == 0)
        m_settings.gpuCacheBytes = bytes;
    else
        m_settings.tierCapacityBytes[std::size_t(row - 1)] = bytes;
    showRow(std::size_t(row));
    // Fast replays follow the slider; slow ones wait for its release (keys and clicks at once).
    if (live() || !m_rows[std::size_t(row)].slider->isSliderDown()) requestReplay();
}

} // namespace kvbe
