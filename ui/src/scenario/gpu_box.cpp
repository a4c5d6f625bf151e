#include "kvbe/ui/scenario/gpu_box.h"

#include "kvbe/model/config_reader.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>

#include <algorithm>
#include <cmath>

namespace kvbe {

GpuBox::GpuBox(ScenarioEditing& editing, QWidget* parent) : ScenarioPart(editing, parent) {
    auto* gpuBox = addBox(tr("GPU"));
    auto* gf = new QFormLayout(gpuBox);
    m_gpu = new QComboBox(gpuBox);
    m_gpu->setObjectName(QStringLiteral("gpu"));
    for (const auto& [key, g] : explorer()->presets().gpus())
        m_gpu->addItem(QString::fromStdString(g.name), QString::fromStdString(key));
    m_gpu->addItem(tr("Custom (type the peak)"), QString());
    gf->addRow(tr("GPU"), m_gpu);

    m_peak = new NumberField(tr("TFLOP/s"),
                             NumberField::decimal(tr("Peak"), 0.001, 1e6, tr("TFLOP/s")), gpuBox);
    m_peak->setObjectName(QStringLiteral("peak"));
    m_peak->setToolTip(tr("Dense peak of the compute dtype, without sparsity"));
    gf->addRow(tr("Peak"), m_peak);
    connect(m_gpu, &QComboBox::activated, this, [this] {
        const QString key = m_gpu->currentData().toString();
        edit(tr("GPU"), [&](Scenario& s) {
            s.gpu = key.toStdString();
            // A preset brings its own peak; a custom GPU keeps the one shown.
            if (!key.isEmpty())
                s.peakTflops.reset();
            else if (!s.peakTflops)
                s.peakTflops = m_peak->value().value_or(100);
        });
        m_editing.showScenario();
    });
    connect(m_peak, &NumberField::valueEdited, this, [this](double v) {
        edit(
            tr("Peak"), [&](Scenario& s) { s.peakTflops = v; }, kMergePeak);
    });
    connect(m_peak->edit(), &QLineEdit::editingFinished, explorer(), &Explorer::endMerge);

    m_computeDtype = new QComboBox(gpuBox);
    m_computeDtype->setObjectName(QStringLiteral("computeDtype"));
    m_computeDtype->addItem(QStringLiteral("BF16"), QStringLiteral("bf16"));
    m_computeDtype->addItem(QStringLiteral("FP8"), QStringLiteral("fp8"));
    gf->addRow(tr("Compute dtype"), m_computeDtype);
    connect(m_computeDtype, &QComboBox::activated, this, [this] {
        const QString d = m_computeDtype->currentData().toString();
        edit(tr("Compute dtype"), [&](Scenario& s) { s.computeDtype = d.toStdString(); });
        m_editing.showScenario();
    });
    addUtilisationAndFlops(gpuBox, gf);
    addTensorParallel(gpuBox, gf);
}

void GpuBox::addUtilisationAndFlops(QWidget* box, QFormLayout* gf) {
    auto* utilRow = new QHBoxLayout;
    m_util = percentSlider(5, 100, box);
    m_util->setObjectName(QStringLiteral("utilisation"));
    m_utilLabel = new QLabel(box);
    m_utilLabel->setMinimumWidth(44);
    utilRow->addWidget(m_util);
    utilRow->addWidget(m_utilLabel);
    gf->addRow(tr("Utilisation"), utilRow);
    connect(m_util, &QSlider::valueChanged, this, [this](int v) {
        m_utilLabel->setText(QStringLiteral("%1 %").arg(v));
        edit(
            tr("Utilisation"), [&](Scenario& s) { s.utilisation = v / 100.0; }, kMergeUtil);
    });
    // A drag ends: the next change is a new undo step.
    connect(m_util, &QSlider::sliderReleased, explorer(), &Explorer::endMerge);

    m_flopModel = new QComboBox(box);
    m_flopModel->setObjectName(QStringLiteral("flopModel"));
    m_flopModel->addItem(tr("simple (2·P·N + attention)"), QStringLiteral("simple"));
    m_flopModel->addItem(tr("detailed (per layer)"), QStringLiteral("detailed"));
    gf->addRow(tr("FLOP model"), m_flopModel);
    connect(m_flopModel, &QComboBox::activated, this, [this] {
        const auto m = parseFlopModel(m_flopModel->currentData().toString().toStdString());
        edit(tr("FLOP model"), [&](Scenario& s) { s.flopModel = m.value_or(FlopModel::Simple); });
    });
}

void GpuBox::addTensorParallel(QWidget* box, QFormLayout* gf) {
    auto* tpRow = new QHBoxLayout;
    m_tp = new QComboBox(box);
    m_tp->setObjectName(QStringLiteral("tensorParallel"));
    m_tp->setToolTip(tr("Only the sizes the model can be split into: the query heads divide by "
                        "the size, and so do the KV heads (or, past them, the size divides by "
                        "the KV heads and each is replicated)"));
    m_sharedPath = new QCheckBox(tr("share one storage path"), box);
    m_sharedPath->setObjectName(QStringLiteral("sharedPath"));
    m_sharedPath->setToolTip(tr("The GPUs share one path to storage, so each sees B / TP"));
    tpRow->addWidget(m_tp);
    tpRow->addWidget(m_sharedPath);
    gf->addRow(tr("Tensor parallel"), tpRow);
    connect(m_tp, &QComboBox::currentIndexChanged, this, [this](int i) {
        if (i < 0) return;
        const int v = m_tp->itemData(i).toInt();
        if (v >= 1) edit(tr("Tensor parallel"), [&](Scenario& s) { s.tensorParallel = v; });
    });
    connect(m_sharedPath, &QCheckBox::toggled, this, [this](bool on) {
        edit(tr("Shared storage path"), [&](Scenario& s) { s.sharedPath = on; });
    });
}

void GpuBox::showScenario(const Scenario& s) {
    m_gpu->setCurrentIndex(m_gpu->findData(QString::fromStdString(s.gpu)));
    // The peak is core's choice (the one evaluate computes at), or core's sentence for none.
    if (auto peak = scenarioPeakFlops(s, explorer()->presets().findGpu(s.gpu))) {
        if (!m_peak->isValid() || m_peak->value() != *peak / 1e12)
            m_peak->setValue(*peak / 1e12, 5);
    } else {
        m_peak->showProblem(QString::fromStdString(peak.message()));
    }
    m_computeDtype->setCurrentIndex(
        std::max(0, m_computeDtype->findData(QString::fromStdString(s.computeDtype))));
    m_util->setValue(int(std::lround(s.utilisation * 100)));
    m_utilLabel->setText(QStringLiteral("%1 %").arg(m_util->value()));
    m_flopModel->setCurrentIndex(s.flopModel == FlopModel::Detailed ? 1 : 0);
    fillTensorParallel(s);
    m_sharedPath->setChecked(s.sharedPath);
}

void GpuBox::fillTensorParallel(const Scenario& s) {
    std::vector<int> sizes{1};
    if (auto spec = explorer()->modelFor(s.model)) sizes = validTensorParallelSizes(*spec);
    const bool valid = std::find(sizes.begin(), sizes.end(), s.tensorParallel) != sizes.end();
    const QString unsplittable = tr("%1 GPUs (the model cannot be split this way)");
    m_tp->clear();
    for (int v : sizes) {
        if (!valid && v > s.tensorParallel && m_tp->findData(s.tensorParallel) < 0)
            m_tp->addItem(unsplittable.arg(s.tensorParallel), s.tensorParallel);
        m_tp->addItem(v == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(v), v);
    }
    if (m_tp->findData(s.tensorParallel) < 0)
        m_tp->addItem(unsplittable.arg(s.tensorParallel), s.tensorParallel);
    m_tp->setCurrentIndex(m_tp->findData(s.tensorParallel));
}

} // namespace kvbe
