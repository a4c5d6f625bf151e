#include "kvbe/ui/scenario/scenario_panel.h"

#include "kvbe/base/interpolation.h"
#include "kvbe/base/units.h"
#include "kvbe/model/config_reader.h"
#include "kvbe/ui/charts/chart_view.h"

#include <QCheckBox>
#include <QColorDialog>
#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

namespace kvbe {

namespace {
constexpr int kOpenConfigRole = Qt::UserRole + 1;
// Undo merge keys: a drag of a slider or the keystrokes of one field are one undo step.
enum {
    kMergeUtil = 1,
    kMergeFraction,
    kMergePeak,
    kMergeLengths,
    kMergeSweep,
    kMergeParams,
    kMergeRamp,
    kMergeHostLink
};
const char* const kKvDtypes[] = {"bf16", "fp16", "fp8", "int8", "fp32"};

// A slider that shows keyboard focus (the style draws none): a frame in the highlight colour.
class FocusSlider : public QSlider {
  public:
    using QSlider::QSlider;

  protected:
    void paintEvent(QPaintEvent* e) override {
        QSlider::paintEvent(e);
        if (!hasFocus()) return;
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
        p.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 3, 3);
    }
};

// A parameter count as people write it: "3.21B", "70.6B", "350M", "1.2T".
QString paramCountText(double p, int digits = 6) {
    if (p >= 1e12) return QString::number(p / 1e12, 'g', digits) + QLatin1Char('T');
    if (p >= 1e9) return QString::number(p / 1e9, 'g', digits) + QLatin1Char('B');
    if (p >= 1e6) return QString::number(p / 1e6, 'g', digits) + QLatin1Char('M');
    return QString::number(p, 'g', digits);
}

QSlider* percentSlider(int min, int max, QWidget* parent) {
    auto* s = new FocusSlider(Qt::Horizontal, parent);
    s->setFocusPolicy(Qt::StrongFocus);
    s->setRange(min, max);
    s->setPageStep(5);
    return s;
}
} // namespace

ScenarioPanel::ScenarioPanel(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer) {
    // The message line first: the boxes' refusals go to it (it is laid out under them).
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_message->setVisible(false);

    auto* outer = new QVBoxLayout(this);
    outer->addLayout(buildNameRow());
    outer->addWidget(buildModelBox());
    outer->addWidget(buildGpuBox());
    outer->addWidget(buildTierBox());
    outer->addWidget(buildPromptBox());
    outer->addWidget(buildAdvancedBox());
    outer->addWidget(m_message);
    outer->addStretch();

    fillModels();
    connectExplorer();
    showScenario();
}

template <class F> void ScenarioPanel::edit(const QString& what, F&& change, int mergeKey) {
    if (m_showing) return;
    Scenario s = m_explorer->scenario();
    change(s);
    m_applying = true;
    m_explorer->edit(s, what, mergeKey);
    m_applying = false;
    updateName();
}

QFormLayout* ScenarioPanel::buildNameRow() {
    auto* nameRow = new QFormLayout;
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("name"));
    m_name->setToolTip(tr("The label of this scenario in legends, pins and exports. Left empty, "
                          "it is described from its inputs and follows them"));
    m_name->setClearButtonEnabled(true);
    nameRow->addRow(tr("Name"), m_name);
    connect(m_name, &QLineEdit::editingFinished, this, [this] {
        if (m_showing || m_name->text().trimmed() == currentLabelName()) return;
        m_applying = true;
        m_explorer->rename(m_name->text());
        m_applying = false;
        updateName();
    });
    return nameRow;
}

QGroupBox* ScenarioPanel::buildModelBox() {
    auto* modelBox = new QGroupBox(tr("Model"), this);
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
    connect(m_model, &QComboBox::activated, this, &ScenarioPanel::onModelActivated);

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
    return modelBox;
}

QGroupBox* ScenarioPanel::buildGpuBox() {
    auto* gpuBox = new QGroupBox(tr("GPU"), this);
    auto* gf = new QFormLayout(gpuBox);
    m_gpu = new QComboBox(gpuBox);
    m_gpu->setObjectName(QStringLiteral("gpu"));
    for (const auto& [key, g] : m_explorer->presets().gpus())
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
        showScenario();
    });
    connect(m_peak, &NumberField::valueEdited, this, [this](double v) {
        edit(
            tr("Peak"), [&](Scenario& s) { s.peakTflops = v; }, kMergePeak);
    });
    connect(m_peak->edit(), &QLineEdit::editingFinished, m_explorer, &Explorer::endMerge);

    m_computeDtype = new QComboBox(gpuBox);
    m_computeDtype->setObjectName(QStringLiteral("computeDtype"));
    m_computeDtype->addItem(QStringLiteral("BF16"), QStringLiteral("bf16"));
    m_computeDtype->addItem(QStringLiteral("FP8"), QStringLiteral("fp8"));
    gf->addRow(tr("Compute dtype"), m_computeDtype);
    connect(m_computeDtype, &QComboBox::activated, this, [this] {
        const QString d = m_computeDtype->currentData().toString();
        edit(tr("Compute dtype"), [&](Scenario& s) { s.computeDtype = d.toStdString(); });
        showScenario();
    });

    auto* utilRow = new QHBoxLayout;
    m_util = percentSlider(5, 100, gpuBox);
    m_util->setObjectName(QStringLiteral("utilisation"));
    m_utilLabel = new QLabel(gpuBox);
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
    connect(m_util, &QSlider::sliderReleased, m_explorer, &Explorer::endMerge);

    m_flopModel = new QComboBox(gpuBox);
    m_flopModel->setObjectName(QStringLiteral("flopModel"));
    m_flopModel->addItem(tr("simple (2·P·N + attention)"), QStringLiteral("simple"));
    m_flopModel->addItem(tr("detailed (per layer)"), QStringLiteral("detailed"));
    gf->addRow(tr("FLOP model"), m_flopModel);
    connect(m_flopModel, &QComboBox::activated, this, [this] {
        const auto m = parseFlopModel(m_flopModel->currentData().toString().toStdString());
        edit(tr("FLOP model"), [&](Scenario& s) { s.flopModel = m.value_or(FlopModel::Simple); });
    });

    auto* tpRow = new QHBoxLayout;
    m_tp = new QComboBox(gpuBox);
    m_tp->setObjectName(QStringLiteral("tensorParallel"));
    m_tp->setToolTip(tr("Only the sizes the model can be split into: the query heads divide by "
                        "the size, and so do the KV heads (or, past them, the size divides by "
                        "the KV heads and each is replicated)"));
    m_sharedPath = new QCheckBox(tr("share one storage path"), gpuBox);
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
    return gpuBox;
}

QGroupBox* ScenarioPanel::buildTierBox() {
    auto* tierBox = new QGroupBox(tr("Storage tiers"), this);
    auto* tl = new QVBoxLayout(tierBox);
    m_tiers = new TierTableModel(this);
    m_tiers->setObjectName(QStringLiteral("tierModel"));
    m_tiers->setPresets(&m_explorer->presets());
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
    m_tierView->setWordWrap(false);
    m_tierView->setTextElideMode(Qt::ElideMiddle); // "Host DRAM…e 5.0)": the generation stays
    m_tierView->verticalHeader()->setVisible(false);
    m_tierView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_tierView->setMinimumHeight(110);
    tl->addWidget(m_tierView);
    connect(m_tiers, &TierTableModel::tiersEdited, this, [this] {
        showMessage(QString());
        edit(tr("Tiers"), [&](Scenario& s) { s.tiers = m_tiers->tiers(); });
        fitTierColumns();
    });
    connect(m_tiers, &TierTableModel::rejected, this, &ScenarioPanel::showMessage);

    auto* tierButtons = new QHBoxLayout;
    auto* add = new QToolButton(tierBox);
    add->setObjectName(QStringLiteral("addTier"));
    add->setText(tr("Add tier"));
    add->setPopupMode(QToolButton::InstantPopup);
    auto* addMenu = new QMenu(add);
    for (const auto& [key, t] : m_explorer->presets().tiers()) {
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
    connect(colour, &QPushButton::clicked, this, &ScenarioPanel::pickTierColour);
    tierButtons->addWidget(add);
    tierButtons->addWidget(remove);
    tierButtons->addWidget(colour);
    tierButtons->addStretch();
    tl->addLayout(tierButtons);
    return tierBox;
}

QGroupBox* ScenarioPanel::buildPromptBox() {
    auto* promptBox = new QGroupBox(tr("Prompts"), this);
    auto* pf = new QFormLayout(promptBox);
    auto* fracRow = new QHBoxLayout;
    m_fraction = percentSlider(0, 100, promptBox);
    m_fraction->setObjectName(QStringLiteral("fraction"));
    m_fractionLabel = new QLabel(promptBox);
    m_fractionLabel->setMinimumWidth(44);
    fracRow->addWidget(m_fraction);
    fracRow->addWidget(m_fractionLabel);
    pf->addRow(tr("Cached fraction"), fracRow);
    connect(m_fraction, &QSlider::valueChanged, this, [this](int v) {
        m_fractionLabel->setText(QStringLiteral("%1 %").arg(v));
        edit(
            tr("Cached fraction"), [&](Scenario& s) { s.cachedFraction = v / 100.0; },
            kMergeFraction);
    });
    connect(m_fraction, &QSlider::sliderReleased, m_explorer, &Explorer::endMerge);

    m_minTokens = new NumberField(tr("tokens"), NumberField::tokens(tr("Shortest prompt"), 1, 1e8),
                                  promptBox);
    m_minTokens->setObjectName(QStringLiteral("minTokens"));
    m_maxTokens =
        new NumberField(tr("tokens"), NumberField::tokens(tr("Longest prompt"), 2, 1e8), promptBox);
    m_maxTokens->setObjectName(QStringLiteral("maxTokens"));
    pf->addRow(tr("Shortest"), m_minTokens);
    pf->addRow(tr("Longest"), m_maxTokens);
    auto lengths = [this] {
        const auto lo = m_minTokens->value(), hi = m_maxTokens->value();
        if (!lo || !hi) return;
        if (*hi <= *lo) {
            showMessage(tr("The longest prompt must be longer than the shortest (%1 ≤ %2 tokens).")
                            .arg(QString::fromStdString(formatTokens(*hi)),
                                 QString::fromStdString(formatTokens(*lo))));
            return;
        }
        showMessage(QString());
        edit(
            tr("Prompt lengths"),
            [&](Scenario& s) {
                s.lengths.minTokens = *lo;
                s.lengths.maxTokens = *hi;
            },
            kMergeLengths);
    };
    connect(m_minTokens, &NumberField::valueEdited, this, lengths);
    connect(m_maxTokens, &NumberField::valueEdited, this, lengths);

    m_logLengths = new QCheckBox(tr("log scale"), promptBox);
    m_logLengths->setObjectName(QStringLiteral("logLengths"));
    pf->addRow(tr("Length axis"), m_logLengths);
    connect(m_logLengths, &QCheckBox::toggled, this,
            [this](bool on) { edit(tr("Length axis"), [&](Scenario& s) { s.lengths.log = on; }); });

    m_sweepTokens = new NumberField(
        tr("tokens"), NumberField::tokens(tr("Model-size length"), 1, 1e8), promptBox);
    m_sweepTokens->setObjectName(QStringLiteral("sweepTokens"));
    m_sweepTokens->setToolTip(tr("The prompt length of the model-size chart"));
    pf->addRow(tr("Model-size N"), m_sweepTokens);
    connect(m_sweepTokens, &NumberField::valueEdited, this, [this](double v) {
        edit(
            tr("Model-size N"), [&](Scenario& s) { s.sweepTokens = v; }, kMergeSweep);
    });
    // The typing in one field ends: the next change is a new undo step.
    for (NumberField* f : {m_minTokens, m_maxTokens, m_sweepTokens})
        connect(f->edit(), &QLineEdit::editingFinished, m_explorer, &Explorer::endMerge);
    return promptBox;
}

QWidget* ScenarioPanel::buildAdvancedBox() {
    auto* section = new QWidget(this);
    auto* sl = new QVBoxLayout(section);
    sl->setContentsMargins(0, 0, 0, 0);
    m_advancedToggle = new QToolButton(section);
    m_advancedToggle->setObjectName(QStringLiteral("advancedToggle"));
    m_advancedToggle->setText(tr("Advanced: P, ramp, host link, prefill table"));
    m_advancedToggle->setToolTip(
        tr("The parameter count of the FLOP model, the utilisation ramp, the host-link bandwidth "
           "and a measured prefill table: each empty by default"));
    m_advancedToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_advancedToggle->setArrowType(Qt::RightArrow);
    m_advancedToggle->setAutoRaise(true);
    m_advancedToggle->setCheckable(true);
    sl->addWidget(m_advancedToggle);

    auto* box = new QGroupBox(section); // the toggle above is its title
    m_advanced = box;
    m_advanced->setObjectName(QStringLiteral("advanced"));
    m_advanced->setVisible(false);
    sl->addWidget(box);
    connect(m_advancedToggle, &QToolButton::toggled, this, [this](bool on) {
        m_advancedToggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
        m_advanced->setVisible(on);
    });
    auto* af = new QFormLayout(box);
    addAdvancedNumbers(box, af);
    addPrefillTable(box, af);
    return section;
}

void ScenarioPanel::connectOptionalField(NumberField* f, const QString& what, int mergeKey,
                                         OptionalSetter set) {
    f->setEmptyAllowed(true);
    f->setReportsInPlace(false);
    connect(f, &NumberField::valueEdited, this, [this, what, mergeKey, set](double v) {
        showMessage(QString());
        edit(
            what, [&](Scenario& s) { set(s, std::optional<double>(v)); }, mergeKey);
    });
    connect(f, &NumberField::cleared, this, [this, what, set] {
        showMessage(QString());
        edit(what, [&](Scenario& s) { set(s, std::nullopt); });
    });
    connect(f, &NumberField::refused, this, &ScenarioPanel::showMessage);
    connect(f->edit(), &QLineEdit::editingFinished, m_explorer, &Explorer::endMerge);
}

void ScenarioPanel::addAdvancedNumbers(QWidget* box, QFormLayout* af) {
    m_params = new NumberField(
        tr("parameters"),
        [](const QString& text, QString* why) -> std::optional<double> {
            auto v = parseParamCount(text.toStdString());
            if (!v) {
                *why = tr("Parameters: %1.").arg(QString::fromStdString(v.message()));
                return std::nullopt;
            }
            // No model has fewer; "7" on the way to "70B" is not applied.
            if (*v < 1e6) {
                *why = tr("Parameters: %1 is under a million; expected a model's count, e.g. "
                          "3.21e9 or 70B.")
                           .arg(text.trimmed());
                return std::nullopt;
            }
            return *v;
        },
        box);
    m_params->setObjectName(QStringLiteral("paramsOverride"));
    m_params->setToolTip(tr("P in the simple FLOP model's 2·P·N: 3.21e9, 70B. Empty: the "
                            "model's own count (active parameters for a mixture of experts). "
                            "The detailed FLOP model counts per layer and does not use it"));
    af->addRow(tr("Parameters"), m_params);
    connectOptionalField(m_params, tr("Parameter count"), kMergeParams,
                         [](Scenario& s, std::optional<double> v) { s.paramsOverride = v; });

    m_ramp =
        new NumberField(tr("tokens"), NumberField::tokens(tr("Utilisation ramp n½"), 1, 1e9), box);
    m_ramp->setObjectName(QStringLiteral("rampHalfTokens"));
    m_ramp->setPlaceholder(tr("off"));
    m_ramp->setToolTip(tr("Short prompts keep the GPU less busy: u(N) = u · N / (N + n½), half "
                          "the utilisation at N = n½ tokens. Empty: the same utilisation at "
                          "every length"));
    af->addRow(tr("Ramp n½"), m_ramp);
    connectOptionalField(m_ramp, tr("Utilisation ramp"), kMergeRamp,
                         [](Scenario& s, std::optional<double> v) { s.rampHalfTokens = v; });

    m_hostLink = new NumberField(
        tr("GB/s"), NumberField::decimal(tr("Host link"), 0.001, 1e6, tr("GB/s")), box);
    m_hostLink->setObjectName(QStringLiteral("hostLink"));
    m_hostLink->setToolTip(
        tr("The GPU's link to host memory that staged tiers load through (serial: 1/B = "
           "1/B_tier + 1/B_link; pipelined: min(B_tier, B_link)). Empty: the GPU preset's"));
    af->addRow(tr("Host link"), m_hostLink);
    connectOptionalField(m_hostLink, tr("Host link"), kMergeHostLink,
                         [](Scenario& s, std::optional<double> v) { s.hostLinkGBps = v; });
}

void ScenarioPanel::addPrefillTable(QWidget* box, QFormLayout* af) {
    m_prefillState = new QLabel(box);
    m_prefillState->setObjectName(QStringLiteral("prefillState"));
    m_prefillState->setWordWrap(true);
    af->addRow(tr("Prefill"), m_prefillState);
    m_prefill = new QTableWidget(0, 2, box);
    m_prefill->setObjectName(QStringLiteral("prefillTable"));
    m_prefill->setHorizontalHeaderLabels({tr("Tokens"), tr("Seconds")});
    m_prefill->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_prefill->verticalHeader()->setVisible(false);
    m_prefill->setTabKeyNavigation(false);
    m_prefill->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_prefill->setToolTip(tr("Measured cold prefill times: tokens (8192 or 8k) and seconds "
                             "(0.61 or 610ms), at least two lengths. The recompute time follows "
                             "them (log-log interpolation) in place of the FLOP model"));
    m_prefill->setMinimumHeight(90);
    m_prefill->setMaximumHeight(150);
    af->addRow(m_prefill);
    connect(m_prefill, &QTableWidget::itemChanged, this, [this] {
        if (!m_showing) applyPrefillTable();
    });

    auto* buttons = new QHBoxLayout;
    auto* addRow = new QPushButton(tr("Add row"), box);
    addRow->setObjectName(QStringLiteral("addPrefillRow"));
    connect(addRow, &QPushButton::clicked, this, [this] {
        const int row = m_prefill->rowCount();
        {
            const QSignalBlocker block(m_prefill); // empty cells: nothing to apply yet
            m_prefill->insertRow(row);
            for (int column = 0; column < 2; ++column)
                m_prefill->setItem(row, column, new QTableWidgetItem);
        }
        m_prefill->setFocus();
        m_prefill->setCurrentCell(row, 0);
        m_prefill->editItem(m_prefill->item(row, 0));
    });
    auto* removeRow = new QPushButton(tr("Remove"), box);
    removeRow->setObjectName(QStringLiteral("removePrefillRow"));
    connect(removeRow, &QPushButton::clicked, this, [this] {
        const auto rows = m_prefill->selectionModel()->selectedRows();
        const int row = rows.isEmpty() ? m_prefill->rowCount() - 1 : rows.front().row();
        if (row < 0) return;
        m_prefill->removeRow(row);
        applyPrefillTable();
    });
    auto* import = new QPushButton(tr("Import CSV…"), box);
    import->setObjectName(QStringLiteral("importPrefill"));
    import->setToolTip(tr("A CSV file of tokens and seconds, one length a line"));
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Import a measured prefill table"), QString(),
                                         tr("CSV (*.csv *.txt);;All files (*)"));
        if (!path.isEmpty()) importPrefillTable(path);
    });
    auto* analytic = new QPushButton(tr("Analytic"), box);
    analytic->setObjectName(QStringLiteral("analyticPrefill"));
    analytic->setToolTip(tr("Drop the measured table: the recompute time comes from the FLOP "
                            "model again"));
    connect(analytic, &QPushButton::clicked, this, [this] {
        showMessage(QString());
        edit(tr("Analytic prefill"), [](Scenario& s) { s.measuredPrefill.clear(); });
        showPrefillTable(m_explorer->scenario());
    });
    buttons->addWidget(addRow);
    buttons->addWidget(removeRow);
    buttons->addWidget(import);
    buttons->addWidget(analytic);
    buttons->addStretch();
    af->addRow(buttons);
}

void ScenarioPanel::applyPrefillTable() {
    std::vector<std::pair<double, double>> points;
    auto cell = [this](int row, int column) {
        const auto* item = m_prefill->item(row, column);
        return item ? item->text().trimmed() : QString();
    };
    for (int row = 0; row < m_prefill->rowCount(); ++row) {
        const QString tokens = cell(row, 0), seconds = cell(row, 1);
        // A row being filled in waits for its other cell.
        if (tokens.isEmpty() || seconds.isEmpty()) continue;
        auto n = parseTokens(tokens.toStdString());
        if (!n) {
            showMessage(tr("Measured prefill, row %1, tokens: %2.")
                            .arg(row + 1)
                            .arg(QString::fromStdString(n.message())));
            return;
        }
        auto t = parseSeconds(seconds.toStdString());
        if (!t) {
            showMessage(tr("Measured prefill, row %1, seconds: %2.")
                            .arg(row + 1)
                            .arg(QString::fromStdString(t.message())));
            return;
        }
        points.emplace_back(*n, *t);
    }
    std::sort(points.begin(), points.end());
    if (!points.empty()) {
        if (auto table = PrefillTable::create(points, tr("Measured prefill").toStdString());
            !table) {
            showMessage(QString::fromStdString(table.message()) + QLatin1Char('.'));
            return;
        }
    }
    showMessage(QString());
    edit(tr("Measured prefill"), [&](Scenario& s) { s.measuredPrefill = points; });
    showPrefillState(m_explorer->scenario());
}

bool ScenarioPanel::importPrefillTable(const QString& path) {
    const QString name = QFileInfo(path).fileName();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        showMessage(tr("Measured prefill: cannot read %1 (%2).").arg(name, file.errorString()));
        return false;
    }
    // A prefill table has tens of lengths; a file far past that is not one.
    constexpr qint64 kMaxBytes = 4 << 20;
    if (file.size() > kMaxBytes) {
        showMessage(tr("Measured prefill: %1 is %2; expected a CSV of tokens and seconds, a few "
                       "kilobytes.")
                        .arg(name, QString::fromStdString(formatBytes(double(file.size())))));
        return false;
    }
    std::vector<std::pair<double, double>> points;
    int lineNo = 0;
    bool first = true;
    while (!file.atEnd()) {
        ++lineNo;
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        if (line.isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
        QStringList cells = line.split(QRegularExpression(QStringLiteral("[,;\t]")));
        for (QString& c : cells) {
            c = c.trimmed();
            if (c.size() >= 2 && c.startsWith(QLatin1Char('"')) && c.endsWith(QLatin1Char('"')))
                c = c.mid(1, c.size() - 2).trimmed();
        }
        const bool header = first;
        first = false;
        if (cells.size() < 2) {
            showMessage(tr("Measured prefill: %1, line %2: expected two columns, tokens and "
                           "seconds (e.g. 8192,0.61).")
                            .arg(name)
                            .arg(lineNo));
            return false;
        }
        auto n = parseTokens(cells[0].toStdString());
        auto t = parseSeconds(cells[1].toStdString());
        // A first line that is no numbers names the columns.
        if (header && !n && !t) continue;
        if (!n || !t) {
            showMessage(tr("Measured prefill: %1, line %2, %3: %4.")
                            .arg(name)
                            .arg(lineNo)
                            .arg(!n ? tr("tokens") : tr("seconds"))
                            .arg(QString::fromStdString(!n ? n.message() : t.message())));
            return false;
        }
        points.emplace_back(*n, *t);
    }
    std::sort(points.begin(), points.end());
    if (auto table =
            PrefillTable::create(points, tr("Measured prefill: %1").arg(name).toStdString());
        !table) {
        showMessage(QString::fromStdString(table.message()) + QLatin1Char('.'));
        return false;
    }
    showMessage(QString());
    edit(tr("Import measured prefill"), [&](Scenario& s) { s.measuredPrefill = points; });
    showPrefillTable(m_explorer->scenario());
    m_advancedToggle->setChecked(true);
    return true;
}

void ScenarioPanel::showAdvanced(const Scenario& s) {
    if (s.paramsOverride)
        m_params->setValue(*s.paramsOverride, paramCountText(*s.paramsOverride));
    else
        m_params->clearValue();
    if (s.rampHalfTokens)
        m_ramp->setValue(*s.rampHalfTokens);
    else
        m_ramp->clearValue();
    if (s.hostLinkGBps)
        m_hostLink->setValue(*s.hostLinkGBps);
    else
        m_hostLink->clearValue();
    // Without an override the default is the GPU preset's (shown once computed, updateSummary).
    if (const auto* gpu = m_explorer->presets().findGpu(s.gpu))
        m_hostLink->setPlaceholder(tr("%1: %2").arg(QString::fromStdString(gpu->name),
                                                    QString::number(gpu->hostLinkBps / 1e9)));
    showPrefillTable(s);
    if (s.paramsOverride || s.rampHalfTokens || s.hostLinkGBps || !s.measuredPrefill.empty())
        m_advancedToggle->setChecked(true);
}

void ScenarioPanel::showPrefillTable(const Scenario& s) {
    {
        const QSignalBlocker block(m_prefill);
        m_prefill->setRowCount(int(s.measuredPrefill.size()));
        for (size_t i = 0; i < s.measuredPrefill.size(); ++i) {
            const auto [n, t] = s.measuredPrefill[i];
            m_prefill->setItem(int(i), 0, new QTableWidgetItem(QString::number(n, 'g', 12)));
            m_prefill->setItem(int(i), 1, new QTableWidgetItem(QString::number(t, 'g', 6)));
        }
    }
    showPrefillState(s);
}

void ScenarioPanel::showPrefillState(const Scenario& s) {
    if (s.measuredPrefill.empty()) {
        m_prefillState->setText(tr("Analytic: the FLOP model at the peak and utilisation above."));
        return;
    }
    const auto [lo, hi] = std::minmax_element(s.measuredPrefill.begin(), s.measuredPrefill.end());
    m_prefillState->setText(
        tr("Measured: %1 lengths from %2 to %3 tokens. Recompute follows the table; peak, "
           "utilisation, ramp and P do not apply.")
            .arg(s.measuredPrefill.size())
            .arg(QString::fromStdString(formatTokens(lo->first)),
                 QString::fromStdString(formatTokens(hi->first))));
}

void ScenarioPanel::connectExplorer() {
    connect(m_explorer, &Explorer::scenarioChanged, this, [this] {
        if (!m_applying) showScenario();
    });
    connect(m_explorer, &Explorer::computed, this, [this] {
        if (m_message->property("evaluation").toBool()) showMessage(QString());
        updateName();
        updateSummary();
    });
    connect(m_explorer, &Explorer::failed, this, [this](const QString& msg) {
        showMessage(msg);
        m_message->setProperty("evaluation", true);
    });
}

void ScenarioPanel::fillModels() {
    m_model->clear();
    for (const auto& p : m_explorer->presets().models())
        m_model->addItem(QString::fromStdString(p.id), QString::fromStdString(p.id));
    if (!m_explorer->loadedModels().empty()) m_model->insertSeparator(m_model->count());
    for (const auto& [ref, spec] : m_explorer->loadedModels())
        m_model->addItem(tr("%1 (file)").arg(QString::fromStdString(spec.id)),
                         QString::fromStdString(ref));
    const auto cache = listHfCache();
    bool first = true;
    for (const auto& [id, path] : cache) {
        if (m_explorer->presets().findModel(id)) continue;
        if (first) m_model->insertSeparator(m_model->count());
        first = false;
        m_model->addItem(tr("%1 (HF cache)").arg(QString::fromStdString(id)),
                         QString::fromStdString(path.string()));
    }
    m_model->insertSeparator(m_model->count());
    m_model->addItem(tr("Open config.json…"));
    m_model->setItemData(m_model->count() - 1, true, kOpenConfigRole);
}

bool ScenarioPanel::selectModel(const QString& ref) {
    auto spec = m_explorer->loadModel(ref.toStdString());
    if (!spec) {
        showMessage(QString::fromStdString(spec.message()));
        showScenario();
        return false;
    }
    showMessage(QString());
    // Keep the tensor-parallel size where the new model can run it; otherwise take the largest
    // size it can run below it, and say so.
    const int oldTp = m_explorer->scenario().tensorParallel;
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
    showScenario();
    return true;
}

void ScenarioPanel::openModelConfig() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a model's config.json"), QString(),
                                     tr("Model config (*.json);;All files (*)"));
    if (!path.isEmpty())
        selectModel(path);
    else
        showScenario();
}

void ScenarioPanel::onModelActivated(int index) {
    if (m_model->itemData(index, kOpenConfigRole).toBool()) {
        openModelConfig();
        return;
    }
    const QString ref = m_model->itemData(index).toString();
    if (!ref.isEmpty()) selectModel(ref);
}

void ScenarioPanel::addTier(const QString& presetKey) {
    TierConfig t;
    if (const auto* spec = m_explorer->presets().findTier(presetKey.toStdString()))
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

void ScenarioPanel::pickTierColour() {
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

void ScenarioPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    fitTierColumns(); // with the fonts and style the panel is shown in
}

void ScenarioPanel::fitTierColumns() {
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
}

void ScenarioPanel::showMessage(const QString& text) {
    m_message->setProperty("evaluation", false);
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

QString ScenarioPanel::messageText() const {
    return m_message->text();
}

void ScenarioPanel::showScenario() {
    const Scenario& s = m_explorer->scenario();
    m_showing = true;
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
    m_kvDtype->setCurrentIndex(std::max(
        0, m_kvDtype->findData(s.kvDtype ? QString::fromStdString(std::string(toString(*s.kvDtype)))
                                         : QString())));
    m_stateDtype->setCurrentIndex(std::max(
        0, m_stateDtype->findData(s.stateDtype
                                      ? QString::fromStdString(std::string(toString(*s.stateDtype)))
                                      : QString())));
    m_gpu->setCurrentIndex(m_gpu->findData(QString::fromStdString(s.gpu)));
    // The peak is core's choice (the one evaluate computes at), or core's sentence for none.
    if (auto peak = scenarioPeakFlops(s, m_explorer->presets().findGpu(s.gpu))) {
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
    m_tiers->setTiers(s.tiers);
    fitTierColumns();
    m_fraction->setValue(int(std::lround(s.cachedFraction * 100)));
    m_fractionLabel->setText(QStringLiteral("%1 %").arg(m_fraction->value()));
    m_minTokens->setValue(s.lengths.minTokens);
    m_maxTokens->setValue(s.lengths.maxTokens);
    m_logLengths->setChecked(s.lengths.log);
    m_sweepTokens->setValue(s.sweepTokens);
    showAdvanced(s);
    m_showing = false;
    updateName();
}

QString ScenarioPanel::currentLabelName() const {
    return m_explorer->nameGiven() ? QString::fromStdString(m_explorer->scenario().name)
                                   : QString();
}

void ScenarioPanel::updateName() {
    // A given name is shown as text. Otherwise the field is empty, and QLineEdit draws the
    // label built from the inputs in grey (setPlaceholderText below).
    const Scenario& s = m_explorer->scenario();
    const QString text = m_explorer->nameGiven() ? QString::fromStdString(s.name) : QString();
    if (m_name->text() != text && !m_name->hasFocus()) m_name->setText(text);
    const auto& r = m_explorer->result();
    m_name->setPlaceholderText(r && r->scenario == s ? r->label : QString::fromStdString(s.name));
}

void ScenarioPanel::fillTensorParallel(const Scenario& s) {
    std::vector<int> sizes{1};
    if (auto spec = m_explorer->modelFor(s.model)) sizes = validTensorParallelSizes(*spec);
    const bool valid = std::find(sizes.begin(), sizes.end(), s.tensorParallel) != sizes.end();
    m_tp->clear();
    for (int v : sizes) {
        if (!valid && v > s.tensorParallel && m_tp->findData(s.tensorParallel) < 0)
            m_tp->addItem(tr("%1 GPUs (the model cannot be split this way)").arg(s.tensorParallel),
                          s.tensorParallel);
        m_tp->addItem(v == 1 ? tr("1 GPU") : tr("%1 GPUs").arg(v), v);
    }
    if (m_tp->findData(s.tensorParallel) < 0)
        m_tp->addItem(tr("%1 GPUs (the model cannot be split this way)").arg(s.tensorParallel),
                      s.tensorParallel);
    m_tp->setCurrentIndex(m_tp->findData(s.tensorParallel));
}

void ScenarioPanel::updateSummary() {
    const auto& r = m_explorer->result();
    if (!r) return;
    const ModelSpec& m = r->model();
    const auto& cost = r->eval->cost;
    m_stateDtype->setEnabled(m.isHybrid());
    // The defaults the empty advanced fields stand for, as core computed with them.
    if (!r->scenario.paramsOverride)
        m_params->setPlaceholder(tr("model's: %1").arg(paramCountText(cost.simpleParams(), 3)));
    if (!r->scenario.hostLinkGBps && !r->eval->gpu)
        m_hostLink->setPlaceholder(tr("default: %1").arg(r->eval->hostLinkBps / 1e9));
    m_modelInfo->setText(
        tr("%1 layers, %2 query / %3 KV heads · %4 parameters · KV %5 per token")
            .arg(m.layers)
            .arg(m.qHeads)
            .arg(m.kvHeads)
            .arg(QString::number(m.paramsTotal / 1e9, 'f', 2) + QStringLiteral("B"))
            .arg(QString::fromStdString(formatBytes(cost.kvBytesPerToken()))) +
        (m.isHybrid() ? tr("\n%1 · state %2 per cached prefix (%3)")
                            .arg(QString::fromStdString(m.layerMix()),
                                 QString::fromStdString(formatBytes(cost.stateBytes())),
                                 QString::fromStdString(std::string(toString(
                                     cost.inputs().stateDtype.value_or(m.stateDtypeDefault)))))
                      : QString()));
}

} // namespace kvbe
