#include "kvbe/ui/fleet/fleet_panel.h"

#include "kvbe/base/text.h"
#include "kvbe/calibration/pykvcache.h"
#include "kvbe/scenario/gpu_names.h"
#include "kvbe/ui/fleet/fleet_drawing.h"
#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/widgets/file_dialogs.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace kvbe {

namespace {

// Whether a file's GPU name (nvidia-smi's, as the probes write it) is the scenario's GPU preset,
// by core's one rule (the device_names of resources/gpus.json); a scenario names its preset in
// any case. A name the file leaves empty is (nothing to warn about), as is a scenario with no
// preset.
bool measuredOnPreset(const std::string& measured, const std::string& presetKey) {
    if (measured.empty() || presetKey.empty()) return true;
    return matchGpuPreset(measured) == lower(presetKey);
}

} // namespace

FleetPanel::FleetPanel(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer),
      m_ask([this](const Question& q) { return askWithMessageBox(this, q); }) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
    v->addLayout(buildButtons());
    v->addWidget(buildWarnings());
    v->addWidget(buildTableAndFit(), 1);
    connectImporter();
    // The fit follows the scenario: fitted again against a changed one (once the edits settle),
    // so that its values, its sentence and its curves are never those of a scenario left behind.
    m_refit = new QTimer(this);
    m_refit->setSingleShot(true);
    m_refit->setInterval(150);
    connect(m_refit, &QTimer::timeout, this, [this] {
        if (!m_fit || m_fitRow < 0) return;
        if (auto st = fitRow(m_fitRow); !st) {
            const QString why = QString::fromStdString(st.message());
            clearFit();
            m_fitSummary->setText(tr("The scenario changed and the fit could not follow: %1")
                                      .arg(why.toHtmlEscaped()));
            emit overlaysChanged();
        }
    });
    connect(m_explorer, &Explorer::computed, this, [this] {
        updateMismatches();
        if (m_fit && m_explorer->scenario() != m_fitScenario) m_refit->start();
        if (m_fitCost) emit overlaysChanged(); // fitted curves follow the lengths and fraction
    });
    updateButtons();
}

QHBoxLayout* FleetPanel::buildButtons() {
    auto* buttons = new QHBoxLayout;
    auto* importFiles = new QPushButton(tr("Import files…"), this);
    auto* importFolder = new QPushButton(tr("Import folder…"), this);
    m_fitButton = new QPushButton(tr("Fit selected"), this);
    m_fitButton->setToolTip(tr("Fit utilisation and t_fixed per tier to the selected file's "
                               "measurements, against the current scenario"));
    m_adoptButton = new QPushButton(tr("Adopt fitted values"), this);
    auto* exportButton = new QToolButton(this);
    exportButton->setText(tr("Export py-kvcache…"));
    exportButton->setPopupMode(QToolButton::InstantPopup);
    auto* exportMenu = new QMenu(exportButton);
    exportMenu->addAction(tr("Thresholds of the scenario…"), this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("py-kvcache break-even file"),
                                         QStringLiteral("breakeven.json"), tr("JSON (*.json)"));
        if (p.isEmpty()) return;
        if (auto st = exportPyKvcache(p, false); !st)
            emit message(QString::fromStdString(st.message()));
    });
    exportMenu->addAction(tr("Thresholds of the selected file…"), this, [this] {
        const QString p =
            QFileDialog::getSaveFileName(this, tr("py-kvcache break-even file"),
                                         QStringLiteral("breakeven.json"), tr("JSON (*.json)"));
        if (p.isEmpty()) return;
        if (auto st = exportPyKvcache(p, true); !st)
            emit message(QString::fromStdString(st.message()));
    });
    exportButton->setMenu(exportMenu);
    auto* clear = new QPushButton(tr("Clear"), this);
    clear->setObjectName(QStringLiteral("fleetClear"));
    for (QWidget* w : std::initializer_list<QWidget*>{importFiles, importFolder, m_fitButton,
                                                      m_adoptButton, exportButton, clear})
        buttons->addWidget(w);
    buttons->addStretch();
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    buttons->addWidget(m_progress);

    connect(importFiles, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Calibration files"), QString(), fileDialogFilter({FileKind::Calibration}));
        if (!files.isEmpty()) importPaths(files);
    });
    connect(importFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder of node files"));
        if (!dir.isEmpty()) importPaths({dir});
    });
    connect(m_fitButton, &QPushButton::clicked, this, [this] {
        if (auto st = fitSelected(); !st) emit message(QString::fromStdString(st.message()));
    });
    connect(m_adoptButton, &QPushButton::clicked, this, [this] {
        if (auto st = adoptFitted(); !st) emit message(QString::fromStdString(st.message()));
    });
    connect(clear, &QPushButton::clicked, this, &FleetPanel::clearAll);
    return buttons;
}

QWidget* FleetPanel::buildWarnings() {
    // Warnings fold to one line, so that the table keeps the dock's height.
    m_warning = new QWidget(this);
    auto* wv = new QVBoxLayout(m_warning);
    wv->setContentsMargins(0, 0, 0, 0);
    wv->setSpacing(2);
    m_warningToggle = new QToolButton(m_warning);
    m_warningToggle->setObjectName(QStringLiteral("fleetWarningsToggle"));
    m_warningToggle->setCheckable(true);
    m_warningToggle->setAutoRaise(true);
    m_warningToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_warningToggle->setArrowType(Qt::RightArrow);
    m_warningToggle->setStyleSheet(QStringLiteral("QToolButton { color: #664d03; }"));
    m_warningList = new QListWidget(m_warning);
    m_warningList->setObjectName(QStringLiteral("fleetWarnings"));
    m_warningList->setWordWrap(true);
    m_warningList->setMaximumHeight(6 * (fontMetrics().height() + 4));
    m_warningList->setStyleSheet(QStringLiteral(
        "QListWidget { background: #fff3cd; color: #664d03; border: 1px solid #ffda6a; }"));
    m_warningList->hide();
    connect(m_warningToggle, &QToolButton::toggled, this, [this](bool open) {
        m_warningList->setVisible(open);
        m_warningToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    });
    wv->addWidget(m_warningToggle, 0, Qt::AlignLeft);
    wv->addWidget(m_warningList);
    m_warning->hide();
    return m_warning;
}

QSplitter* FleetPanel::buildTableAndFit() {
    auto* split = new QSplitter(Qt::Horizontal, this);
    m_table = new QTableView(split);
    m_table->setModel(&m_model);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    // Fitted to their contents, but no column may push p* and the fit out of sight: long texts
    // (fio's job description) are cut, whole in the tooltip.
    auto fitColumns = [this] {
        m_table->resizeColumnsToContents();
        for (int c = 0; c < m_model.columnCount(); ++c)
            if (m_table->columnWidth(c) > 240) m_table->setColumnWidth(c, 240);
    };
    connect(&m_model, &QAbstractItemModel::columnsInserted, this, fitColumns);
    connect(&m_model, &QAbstractItemModel::rowsInserted, this, fitColumns);
    connect(&m_model, &QAbstractItemModel::dataChanged, this, fitColumns);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    // The fit's sentence over its residuals, a splitter between them; the sentence scrolls
    // where the dock is short, rather than lose its last lines.
    auto* fitBox = new QSplitter(Qt::Vertical, split);
    auto* summaryScroll = new QScrollArea(fitBox);
    summaryScroll->setObjectName(QStringLiteral("fitSummaryScroll"));
    summaryScroll->setFrameShape(QFrame::NoFrame);
    summaryScroll->setWidgetResizable(true);
    summaryScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_fitSummary = new QLabel(kNoFit(), summaryScroll);
    m_fitSummary->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_fitSummary->setObjectName(QStringLiteral("fitSummary"));
    m_fitSummary->setWordWrap(true);
    m_fitSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_residuals = new QTableWidget(0, 5, fitBox);
    m_residuals->setHorizontalHeaderLabels(
        {tr("Series"), tr("N"), tr("Measured (ms)"), tr("Fitted (ms)"), tr("Residual")});
    m_residuals->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_residuals->verticalHeader()->hide();
    m_residuals->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_residuals->setEditTriggers(QAbstractItemView::NoEditTriggers);
    summaryScroll->setWidget(m_fitSummary);
    fitBox->addWidget(summaryScroll);
    fitBox->addWidget(m_residuals);
    fitBox->setStretchFactor(0, 1);
    fitBox->setStretchFactor(1, 1);
    split->addWidget(m_table);
    split->addWidget(fitBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &FleetPanel::updateButtons);
    return split;
}

void FleetPanel::connectImporter() {
    connect(&m_importer, &CalibrationImporter::progress, this,
            [this](int done, int total, const QString& file) {
                // One big file shows a busy bar: its reader reports no fraction.
                m_progress->setRange(0, total <= 1 ? 0 : total);
                m_progress->setValue(done);
                m_progress->setFormat(QFileInfo(file).fileName());
            });
    connect(
        &m_importer, &CalibrationImporter::finished, this,
        [this](std::shared_ptr<std::vector<ImportedCalibration>> files, const QStringList& errors) {
            m_progress->hide();
            const int n = int(files->size());
            m_model.append(std::move(*files));
            m_errors = errors;
            updateMismatches();
            updateButtons();
            emit overlaysChanged();
            emit imported(n, int(errors.size()));
        });
}

void FleetPanel::clearFit() {
    m_refit->stop();
    m_fit.reset();
    m_fitRow = -1;
    m_fitCost.reset();
    m_fitTiers.clear();
    m_fitModel.clear();
    m_residuals->setRowCount(0);
    m_fitSummary->setText(kNoFit());
}

void FleetPanel::clearAll() {
    m_model.clear();
    clearFit();
    updateMismatches();
    updateButtons();
    emit overlaysChanged();
}

bool FleetPanel::importPaths(const QStringList& paths) {
    if (!m_importer.start(paths)) return false;
    m_progress->setRange(0, 0);
    m_progress->show();
    return true;
}

void FleetPanel::selectRow(int row) {
    m_table->selectRow(row);
}

int FleetPanel::selectedRow() const {
    const auto rows = m_table->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.front().row();
}

QString FleetPanel::warningText() const {
    QStringList lines;
    for (int i = 0; i < m_warningList->count(); ++i)
        lines << m_warningList->item(i)->text();
    return lines.join(QLatin1Char('\n'));
}

void FleetPanel::updateButtons() {
    m_fitButton->setEnabled(selectedRow() >= 0);
    m_adoptButton->setEnabled(m_fit.has_value());
}

void FleetPanel::updateMismatches() {
    const auto& r = m_explorer->result();
    QStringList lines;
    for (int i = 0; i < m_model.rowCount(); ++i) {
        std::vector<std::string> w;
        if (r)
            w = mismatchWarnings(m_model.at(i).calibration, r->model(),
                                 r->eval->cost.inputs().kvDtype);
        m_model.setMismatches(i, w);
        // What the reader had to skip or assume (failed runs, thresholds its curves contradict).
        for (const auto& s : m_model.at(i).calibration.warnings)
            lines << QString::fromStdString(s);
        for (const auto& s : w)
            lines << QString::fromStdString(s);
    }
    for (const auto& e : m_errors)
        lines << tr("Not imported: %1").arg(e);
    m_warningList->clear();
    for (const QString& l : lines) {
        auto* item = new QListWidgetItem(QStringLiteral("⚠ ") + l, m_warningList);
        item->setToolTip(l);
    }
    m_warningToggle->setText(lines.size() == 1 ? tr("1 warning")
                                               : tr("%1 warnings").arg(lines.size()));
    m_warning->setVisible(!lines.isEmpty());
}

Result<Evaluation> FleetPanel::fitBasis(const Calibration& c, QString& said) {
    const auto& r = m_explorer->result();
    if (!r) return Error{"The scenario has no result to fit against"};
    const std::string file = QFileInfo(QString::fromStdString(c.source)).fileName().toStdString();
    Scenario s = m_explorer->scenario();
    const std::string& scenarioModel = r->model().id;
    // A node is fitted against the model it ran: its prefill times say nothing about another.
    if (!c.model.empty() && !sameModelName(c.model, scenarioModel)) {
        auto spec = m_explorer->modelFor(c.model);
        if (!spec)
            return Error{
                file + " was measured with model '" + c.model + "', which kvbe cannot read (" +
                spec.message() +
                "). Open that model's config.json as the scenario's model, then fit again."};
        s.model = c.model;
        s.paramsOverride.reset();
        s.tensorParallel = 1;
        said = tr("fitted against %1, the model %2 was measured with (the scenario uses %3; "
                  "one GPU)")
                   .arg(QString::fromStdString(spec->id), QString::fromStdString(file),
                        QString::fromStdString(scenarioModel));
    } else {
        said = tr("fitted against %1%2")
                   .arg(QString::fromStdString(scenarioModel),
                        c.model.empty() ? tr(" (the file does not name its model: the scenario's)")
                                        : QString());
    }
    if (c.kvDtype) s.kvDtype = c.kvDtype;
    auto model = m_explorer->modelFor(s.model);
    if (!model) return model.error();
    auto e = evaluate(s, m_explorer->presets(), *model);
    if (!e) return Error{file + ": cannot fit against " + model->id + ": " + e.message()};
    return e;
}

Status FleetPanel::fitSelected() {
    const int row = selectedRow();
    if (row < 0) return Error{"Select an imported file to fit"};
    return fitRow(row);
}

Status FleetPanel::fitRow(int row) {
    const Calibration& c = m_model.at(row).calibration;
    QString against;
    auto basis = fitBasis(c, against);
    if (!basis) return basis.error();
    auto fit = fitCalibration(c, basis->cost.inputs(), basis->tiers);
    if (!fit) return fit.error();
    m_fit = std::move(*fit);
    m_fitRow = row;
    m_fitScenario = m_explorer->scenario();
    m_fitAgainst = against;
    m_fitModel = basis->model.id;
    std::map<std::string, double> pstar;
    for (const auto& [n, p] : m_fit->breakevenPrefix)
        if (p) pstar[n] = std::ceil(*p);
    m_model.setFitted(row, m_fit->params, pstar);

    CostInputs in = basis->cost.inputs();
    if (m_fit->params.utilisation) in.utilisation = std::min(1.0, *m_fit->params.utilisation);
    if (m_fit->params.rampHalfTokens) in.rampHalfTokens = m_fit->params.rampHalfTokens;
    m_fitCost.reset();
    if (auto cost = CostModel::create(in)) m_fitCost = std::move(*cost);
    m_fitTiers.clear();
    for (const auto& [n, t] : m_fit->params.tiers)
        m_fitTiers.push_back({n, t.bandwidthBps, t.tFixedS, t.amplification});
    showFit();
    updateButtons();
    emit overlaysChanged();
    return Ok{};
}

void FleetPanel::showFit() {
    const auto& p = m_fit->params;
    QStringList s;
    s << tr("<b>%1</b>")
             .arg(QFileInfo(QString::fromStdString(m_model.at(m_fitRow).calibration.source))
                      .fileName()
                      .toHtmlEscaped());
    if (p.utilisation)
        s << tr("u = %1 (nominal %2)")
                 .arg(*p.utilisation, 0, 'f', 3)
                 .arg(m_explorer->scenario().utilisation, 0, 'f', 3);
    if (p.rampHalfTokens) s << tr("n_half = %1 tokens").arg(*p.rampHalfTokens, 0, 'f', 0);
    s << tr("overhead %1 ms").arg(p.overheadS * 1e3, 0, 'f', 2);
    for (const auto& [n, t] : p.tiers)
        s << tr("%1: %2 GB/s%3, t_fixed %4 ms")
                 .arg(QString::fromStdString(n).toHtmlEscaped())
                 .arg(t.bandwidthBps * 1e-9, 0, 'g', 4)
                 .arg(t.amplification == 1
                          ? QString()
                          : tr(" × %1 amplification (%2 GB/s effective)")
                                .arg(t.amplification, 0, 'g', 3)
                                .arg(t.bandwidthBps / t.amplification * 1e-9, 0, 'g', 4))
                 .arg(t.tFixedS * 1e3, 0, 'f', 2);
    s << tr("rms residual %1 %").arg(p.rmsRelativeResidual * 100, 0, 'f', 1);
    s << m_fitAgainst.toHtmlEscaped();
    if (!m_fit->unreliable.empty()) {
        QStringList why;
        for (const auto& u : m_fit->unreliable)
            why << QString::fromStdString(u).toHtmlEscaped();
        s << tr("<span style='color:#c1121f'><b>Unreliable:</b> %1. Adopting these values is not "
                "advised.</span>")
                 .arg(why.join(QStringLiteral("; ")));
    }
    for (const auto& n : m_fit->notes)
        s << QString::fromStdString(n).toHtmlEscaped();
    // p* = 0 reads as a mistake; it is what the fitted values say, and why is a sentence.
    for (const auto& [n, t] : p.tiers) {
        const auto it = m_fit->breakevenPrefix.find(n);
        if (it == m_fit->breakevenPrefix.end() || !it->second || *it->second >= 1 || !m_fitCost)
            continue;
        const TierPath path{n, t.bandwidthBps, t.tFixedS, t.amplification};
        const double load = m_fitCost->tLoad(path, 1) - t.tFixedS;
        const double recompute = m_fitCost->tRecompute(1, 0);
        s << tr("%1: p* = 0, loading pays from the first token: with t_fixed %2 ms a token's KV "
                "loads in %3 µs at %4 GB/s, its recompute takes %5 µs at u = %6 %.%7")
                 .arg(QString::fromStdString(n).toHtmlEscaped())
                 .arg(t.tFixedS * 1e3, 0, 'g', 3)
                 .arg(load * 1e6, 0, 'f', 2)
                 .arg(path.effectiveBandwidthBps() * 1e-9, 0, 'g', 4)
                 .arg(recompute * 1e6, 0, 'f', 2)
                 .arg(m_fitCost->inputs().utilisation * 100, 0, 'f', 1)
                 .arg(m_fit->fixedCostHeldAtZero.count(n)
                          ? tr(" The fixed cost is 0 because the hits asked for %1 ms, held at 0: "
                               "the file's own p* came from another fixed cost.")
                                .arg(m_fit->fixedCostHeldAtZero.at(n) * 1e3, 0, 'g', 3)
                          : QString());
    }
    m_fitSummary->setText(s.join(QStringLiteral("<br>")));
    m_residuals->setRowCount(int(m_fit->residuals.size()));
    for (int i = 0; i < int(m_fit->residuals.size()); ++i) {
        const auto& res = m_fit->residuals[size_t(i)];
        const QStringList cells{QString::fromStdString(res.series),
                                QString::number(res.tokens, 'f', 0),
                                QString::number(res.measuredS * 1e3, 'f', 2),
                                QString::number(res.fittedS * 1e3, 'f', 2),
                                QStringLiteral("%1 %").arg(res.relative() * 100, 0, 'f', 1)};
        for (int k = 0; k < cells.size(); ++k)
            m_residuals->setItem(i, k, new QTableWidgetItem(cells[k]));
    }
}

QStringList FleetPanel::adoptChanges(const Scenario& from, const Scenario& to) {
    QStringList lines;
    auto num = [](double v) { return QString::number(v, 'g', 4); };
    if (from.utilisation != to.utilisation)
        lines << tr("utilisation: %1 % → %2 %")
                     .arg(QString::number(from.utilisation * 100, 'g', 3),
                          QString::number(to.utilisation * 100, 'g', 3));
    if (from.rampHalfTokens != to.rampHalfTokens)
        lines << tr("ramp n_half: %1 → %2")
                     .arg(from.rampHalfTokens ? tr("%1 tokens").arg(num(*from.rampHalfTokens))
                                              : tr("none"),
                          to.rampHalfTokens ? tr("%1 tokens").arg(num(*to.rampHalfTokens))
                                            : tr("none"));
    for (size_t i = 0; i < from.tiers.size() && i < to.tiers.size(); ++i) {
        const auto &a = from.tiers[i], &b = to.tiers[i];
        const QString name = QString::fromStdString(a.name);
        if (a.bandwidthGBps != b.bandwidthGBps)
            lines << tr("%1 bandwidth: %2 GB/s → %3 GB/s")
                         .arg(name, num(a.bandwidthGBps), num(b.bandwidthGBps));
        if (a.tFixedMs != b.tFixedMs)
            lines << tr("%1 t_fixed: %2 ms → %3 ms").arg(name, num(a.tFixedMs), num(b.tFixedMs));
        if (a.tLayerUs != b.tLayerUs)
            lines << tr("%1 t_layer: %2 µs → %3 µs per layer that holds KV or state")
                         .arg(name, num(a.tLayerUs), num(b.tLayerUs));
        if (a.staging != b.staging)
            lines << tr("%1 staging: %2 → %3")
                         .arg(name, QString::fromStdString(std::string(toString(a.staging))),
                              QString::fromStdString(std::string(toString(b.staging))));
        if (a.amplification != b.amplification)
            lines << tr("%1 amplification: %2 → %3")
                         .arg(name, num(a.amplification), num(b.amplification));
        if (a.measured != b.measured)
            lines << tr("%1: its %2 measured transfers are replaced by the fitted values")
                         .arg(name)
                         .arg(a.measured.size());
    }
    return lines;
}

Status FleetPanel::adoptFitted() {
    if (!m_fit) return Error{"Fit a file first"};
    const Scenario& now = m_explorer->scenario();
    const Scenario next = adoptFit(now, m_fit->params);
    const QStringList changes = adoptChanges(now, next);
    if (changes.isEmpty()) {
        emit message(tr("The fitted values are the scenario's already: nothing to adopt"));
        return Ok{};
    }
    Question q;
    q.title = tr("Adopt fitted values");
    q.text = tr("Adopt the values fitted to %1 into the scenario?")
                 .arg(QFileInfo(QString::fromStdString(m_model.at(m_fitRow).calibration.source))
                          .fileName());
    QStringList details = changes;
    if (!m_fit->unreliable.empty()) {
        details << QString() << tr("This fit is unreliable:");
        for (const auto& u : m_fit->unreliable)
            details << QString::fromStdString(u);
    }
    const auto& r = m_explorer->result();
    if (r && !sameModelName(m_fitModel, r->model().id))
        details << QString()
                << tr("The fit is of %1; the scenario uses %2, whose utilisation may differ.")
                       .arg(QString::fromStdString(m_fitModel),
                            QString::fromStdString(r->model().id));
    // Measured on another GPU: its peak and host link are not the scenario's.
    const std::string& measuredGpu = m_model.at(m_fitRow).calibration.gpuName;
    if (r && !measuredOnPreset(measuredGpu, now.gpu))
        details << QString()
                << tr("The file was measured on %1; the scenario's GPU is %2, whose peak and "
                      "host link differ: the fitted utilisation and fixed costs may not carry "
                      "over.")
                       .arg(QString::fromStdString(measuredGpu),
                            r->eval->gpu ? QString::fromStdString(r->eval->gpu->name)
                                         : QString::fromStdString(now.gpu));
    details << QString() << tr("Edit > Undo takes it back.");
    q.details = details.join(QLatin1Char('\n'));
    q.buttons = QMessageBox::Yes | QMessageBox::No;
    q.defaultButton = m_fit->unreliable.empty() ? QMessageBox::Yes : QMessageBox::No;
    q.unattended = QMessageBox::No;
    if (m_ask(q) != QMessageBox::Yes) {
        emit message(tr("Not adopted: the scenario is unchanged"));
        return Ok{};
    }
    m_explorer->edit(next, tr("Adopt fitted values"));
    emit message(tr("Adopted the fitted values into the scenario (Edit > Undo takes them back)"));
    return Ok{};
}

Status FleetPanel::exportPyKvcache(const QString& path, bool fromCalibration) {
    Result<PyKvcacheExport> ex = Error{""};
    if (fromCalibration) {
        const int row = selectedRow();
        if (row < 0) return Error{"Select an imported file to export"};
        ex = pyKvcacheFromCalibration(m_model.at(row).calibration);
    } else {
        const auto& r = m_explorer->result();
        if (!r) return Error{"The scenario has no result to export"};
        ex = pyKvcacheFromScenario(*r->eval, m_explorer->presets());
    }
    if (!ex) return ex.error();
    const auto& t = ex->thresholds;
    const QByteArray text = QByteArray::fromStdString(pyKvcacheV1Json(t));
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(text) != text.size() || !f.commit())
        return Error{path.toStdString() + ": " + f.errorString().toStdString()};
    emit message(tr("Wrote %1").arg(path));
    return Ok{};
}

ImportDrawing FleetPanel::drawing() const {
    if (!m_fitCost) return fleetDrawing(m_model.rows(), m_explorer->result());
    const FleetFitCurves fit{*m_fitCost, m_fitTiers, m_fit->params.overheadS, m_fitModel};
    return fleetDrawing(m_model.rows(), m_explorer->result(), &fit);
}

} // namespace kvbe
