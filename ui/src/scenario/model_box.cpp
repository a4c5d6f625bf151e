#include "kvbe/ui/scenario/model_box.h"

#include "kvbe/base/units.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/ui/widgets/file_dialogs.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>

#include <algorithm>

namespace kvbe {

namespace {
constexpr int kOpenConfigRole = Qt::UserRole + 1;
const char* const kKvDtypes[] = {"bf16", "fp16", "fp8", "int8", "fp32"};

// The item of a dtype list for an optional dtype (the first, "default", for none).
int dtypeIndex(const QComboBox* box, const std::optional<KvDtype>& d) {
    return std::max(
        0, box->findData(d ? QString::fromStdString(std::string(toString(*d))) : QString()));
}
} // namespace

ModelBox::ModelBox(ScenarioEditing& editing, QWidget* parent) : ScenarioPart(editing, parent) {
    auto* modelBox = addBox(tr("Model"));
    auto* mf = new QFormLayout(modelBox);
    m_model = new QComboBox(modelBox);
    m_model->setObjectName(QStringLiteral("model"));
    m_model->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_model->setMinimumContentsLength(18);
    m_modelInfo = new QLabel(modelBox);
    m_modelInfo->setObjectName(QStringLiteral("modelInfo"));
    m_modelInfo->setWordWrap(true);
    mf->addRow(tr("Model"), m_model);
    mf->addRow(m_modelInfo);
    connect(m_model, &QComboBox::activated, this, &ModelBox::onModelActivated);

    m_kvDtype = new QComboBox(modelBox);
    m_kvDtype->setObjectName(QStringLiteral("kvDtype"));
    m_kvDtype->addItem(tr("model's own dtype"), QString());
    for (const char* d : kKvDtypes)
        m_kvDtype->addItem(QString::fromLatin1(d).toUpper(), QString::fromLatin1(d));
    mf->addRow(tr("KV dtype"), m_kvDtype);
    connect(m_kvDtype, &QComboBox::activated, this, [this] {
        const QString d = m_kvDtype->currentData().toString();
        edit(tr("KV dtype"), [&](Scenario& s) {
            s.kvDtype = d.isEmpty() ? std::nullopt : parseKvDtype(d.toStdString());
        });
    });

    // What the weights take of the HBM, so what is left for KV (the Workload tab's GPU row).
    m_weights = new QComboBox(modelBox);
    m_weights->setObjectName(QStringLiteral("weightDtype"));
    m_weights->addItem(tr("config's"), QString());
    for (const char* d : {"bf16", "fp16", "fp8", "int8", "int4"})
        m_weights->addItem(QString::fromLatin1(d).toUpper(), QString::fromLatin1(d));
    m_weights->setToolTip(
        tr("The precision the weights are served in: what they take of the GPU's memory, so the "
           "HBM left for KV. Default: config.json's quantization_config, else its torch_dtype. "
           "The embeddings and lm_head stay in the model's dtype; INT4's group scales (about "
           "3 %) are not counted"));
    mf->addRow(tr("Weights"), m_weights);
    connect(m_weights, &QComboBox::activated, this, [this] {
        const QString d = m_weights->currentData().toString();
        edit(tr("Weights"), [&](Scenario& s) {
            s.weightDtype = d.isEmpty() ? std::nullopt : parseWeightDtype(d.toStdString());
        });
    });

    m_stateDtype = new QComboBox(modelBox);
    m_stateDtype->setObjectName(QStringLiteral("stateDtype"));
    m_stateDtype->addItem(tr("config's or model's"), QString());
    for (const char* d : {"fp32", "bf16", "fp16"})
        m_stateDtype->addItem(QString::fromLatin1(d).toUpper(), QString::fromLatin1(d));
    m_stateDtype->setToolTip(
        tr("Hybrid models: the dtype the serving stack keeps the Mamba / linear-attention state "
           "in (vLLM --mamba-ssm-cache-dtype). Default: the config's mamba_ssm_cache_dtype, "
           "else the model's dtype"));
    mf->addRow(tr("State dtype"), m_stateDtype);
    connect(m_stateDtype, &QComboBox::activated, this, [this] {
        const QString d = m_stateDtype->currentData().toString();
        edit(tr("State dtype"), [&](Scenario& s) {
            s.stateDtype = d.isEmpty() ? std::nullopt : parseKvDtype(d.toStdString());
        });
    });
    fillModels();
}

void ModelBox::fillModels() {
    const Explorer* ex = explorer();
    m_model->clear();
    for (const auto& p : ex->presets().models())
        m_model->addItem(QString::fromStdString(p.id), QString::fromStdString(p.id));
    if (!ex->loadedModels().empty()) m_model->insertSeparator(m_model->count());
    for (const auto& [ref, spec] : ex->loadedModels())
        m_model->addItem(tr("%1 (file)").arg(QString::fromStdString(spec.id)),
                         QString::fromStdString(ref));
    const auto cache = listHfCache();
    bool first = true;
    for (const auto& [id, path] : cache) {
        if (ex->presets().findModel(id)) continue;
        if (first) m_model->insertSeparator(m_model->count());
        first = false;
        m_model->addItem(tr("%1 (HF cache)").arg(QString::fromStdString(id)),
                         QString::fromStdString(path.string()));
    }
    m_model->insertSeparator(m_model->count());
    m_model->addItem(tr("Open config.json…"));
    m_model->setItemData(m_model->count() - 1, true, kOpenConfigRole);
}

bool ModelBox::selectModel(const QString& ref) {
    auto spec = explorer()->loadModel(ref.toStdString());
    if (!spec) {
        showMessage(QString::fromStdString(spec.message()));
        m_editing.showScenario();
        return false;
    }
    showMessage(QString());
    // Keep the tensor-parallel size where the new model can run it; otherwise take the largest
    // size it can run below it, and say so.
    const int oldTp = explorer()->scenario().tensorParallel;
    int tp = oldTp;
    if (tensorParallelProblem(*spec, tp)) {
        for (int v : validTensorParallelSizes(*spec))
            if (v <= oldTp) tp = v;
    }
    edit(tr("Model"), [&](Scenario& s) {
        s.model = ref.toStdString();
        s.paramsOverride.reset();
        s.tensorParallel = tp;
    });
    if (tp != oldTp)
        showMessage(tr("Tensor parallel %1 → %2: %3")
                        .arg(oldTp)
                        .arg(tp)
                        .arg(QString::fromStdString(*tensorParallelProblem(*spec, oldTp))));
    fillModels();
    m_editing.showScenario();
    return true;
}

void ModelBox::openModelConfig() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a model's config.json"), QString(),
                                     fileDialogFilter({FileKind::ModelConfig}));
    if (!path.isEmpty())
        selectModel(path);
    else
        m_editing.showScenario();
}

void ModelBox::onModelActivated(int index) {
    if (m_model->itemData(index, kOpenConfigRole).toBool()) {
        openModelConfig();
        return;
    }
    const QString ref = m_model->itemData(index).toString();
    if (!ref.isEmpty()) selectModel(ref);
}

void ModelBox::showScenario(const Scenario& s) {
    int mi = m_model->findData(QString::fromStdString(s.model));
    if (mi < 0) {
        fillModels();
        mi = m_model->findData(QString::fromStdString(s.model));
    }
    if (mi < 0 && !s.model.empty()) {
        m_model->insertItem(0, QString::fromStdString(s.model), QString::fromStdString(s.model));
        mi = 0;
    }
    m_model->setCurrentIndex(mi);
    m_kvDtype->setCurrentIndex(dtypeIndex(m_kvDtype, s.kvDtype));
    m_stateDtype->setCurrentIndex(dtypeIndex(m_stateDtype, s.stateDtype));
    m_weights->setCurrentIndex(std::max(
        0, m_weights->findData(s.weightDtype
                                   ? QString::fromStdString(std::string(toString(*s.weightDtype)))
                                   : QString())));
}

void ModelBox::showResult(const ScenarioResult& r) {
    const ModelSpec& m = r.model();
    const auto& cost = r.eval->cost;
    m_stateDtype->setEnabled(m.isHybrid());
    // The default item names what it stands for with this model ("config's (FP8)").
    m_weights->setItemText(
        0, tr("config's (%1)")
               .arg(QString::fromStdString(std::string(toString(m.servedWeights(std::nullopt))))
                        .toUpper()));
    m_modelInfo->setText(
        tr("%1 layers, %2 query / %3 KV heads · %4 parameters · KV %5 per token")
            .arg(m.layers)
            .arg(m.qHeads)
            .arg(m.kvHeads)
            .arg(QString::number(m.paramsTotal / 1e9, 'f', 2) + QStringLiteral("B (") +
                 QString::fromStdString(formatBytes(m.weightBytes(r.eval->scenario.weightDtype))) +
                 QStringLiteral(")"))
            .arg(QString::fromStdString(formatBytes(cost.kvBytesPerToken()))) +
        (m.isHybrid() ? tr("\n%1 · state %2 per cached prefix (%3)")
                            .arg(QString::fromStdString(m.layerMix()),
                                 QString::fromStdString(formatBytes(cost.stateBytes())),
                                 QString::fromStdString(std::string(toString(
                                     cost.inputs().stateDtype.value_or(m.stateDtypeDefault)))))
                      : QString()));
}

} // namespace kvbe
