#include "kvbe/ui/fleet_panel.h"

#include "kvbe/pykvcache.h"
#include "kvbe/ui/explorer.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <cmath>

namespace kvbe {

namespace {

// Apart from the tier presets' colours, so a node's curve is not taken for a tier's.
const QColor kNodeColors[] = {QColor("#8338ec"), QColor("#3a86ff"), QColor("#ff006e"),
                              QColor("#06a77d"), QColor("#ffbe0b"), QColor("#7f5539")};

} // namespace

FleetPanel::FleetPanel(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer),
      m_ask([this](const Question& q) { return askWithMessageBox(this, q); }) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(4, 4, 4, 4);
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
    for (QWidget* w : std::initializer_list<QWidget*>{importFiles, importFolder, m_fitButton,
                                                      m_adoptButton, exportButton, clear})
        buttons->addWidget(w);
    buttons->addStretch();
    m_progress = new QProgressBar(this);
    m_progress->setMaximumWidth(220);
    m_progress->hide();
    buttons->addWidget(m_progress);
    v->addLayout(buttons);

    m_warning = new QLabel(this);
    m_warning->setWordWrap(true);
    m_warning->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_warning->setStyleSheet(QStringLiteral("QLabel { background: #fff3cd; color: #664d03; border: "
                                            "1px solid #ffda6a; padding: 4px; }"));
    m_warning->hide();
    v->addWidget(m_warning);

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
    auto* fitBox = new QWidget(split);
    auto* fv = new QVBoxLayout(fitBox);
    fv->setContentsMargins(0, 0, 0, 0);
    m_fitSummary = new QLabel(tr("Select a file and fit it to the scenario."), fitBox);
    m_fitSummary->setWordWrap(true);
    m_fitSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_residuals = new QTableWidget(0, 5, fitBox);
    m_residuals->setHorizontalHeaderLabels(
        {tr("Series"), tr("N"), tr("Measured (ms)"), tr("Fitted (ms)"), tr("Residual")});
    m_residuals->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_residuals->verticalHeader()->hide();
    m_residuals->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
    m_residuals->setEditTriggers(QAbstractItemView::NoEditTriggers);
    fv->addWidget(m_fitSummary);
    fv->addWidget(m_residuals, 1);
    split->addWidget(m_table);
    split->addWidget(fitBox);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    v->addWidget(split, 1);

    connect(importFiles, &QPushButton::clicked, this, [this] {
        const QStringList files =
            QFileDialog::getOpenFileNames(this, tr("Calibration files"), QString(),
                                          tr("Calibrations (*.json *.csv);;All files (*)"));
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
    connect(clear, &QPushButton::clicked, this, [this] {
        m_model.clear();
        m_fit.reset();
        m_fitRow = -1;
        m_fitCost.reset();
        m_fitTiers.clear();
        m_residuals->setRowCount(0);
        updateMismatches();
        updateButtons();
        emit overlaysChanged();
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &FleetPanel::updateButtons);
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
    connect(m_explorer, &Explorer::computed, this, [this] {
        updateMismatches();
        if (m_fitCost) emit overlaysChanged(); // fitted curves follow the lengths and fraction
    });
    updateButtons();
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
    return m_warning->isHidden() ? QString() : m_warning->text();
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
            lines << QString::fromStdString(s).toHtmlEscaped();
        for (const auto& s : w)
            lines << QString::fromStdString(s).toHtmlEscaped();
    }
    for (const auto& e : m_errors)
        lines << tr("Not imported: %1").arg(e.toHtmlEscaped());
    m_warning->setText(QStringLiteral("⚠ ") + lines.join(QStringLiteral("<br>⚠ ")));
    m_warning->setVisible(!lines.isEmpty());
}

Status FleetPanel::fitSelected() {
    const int row = selectedRow();
    if (row < 0) return Error{"Select an imported file to fit"};
    const auto& r = m_explorer->result();
    if (!r) return Error{"The scenario has no result to fit against"};
    const Calibration& c = m_model.at(row).calibration;
    auto fit = fitCalibration(c, r->eval->cost.inputs(), r->eval->tiers);
    if (!fit) return fit.error();
    m_fit = std::move(*fit);
    m_fitRow = row;
    std::map<std::string, double> pstar;
    for (const auto& [n, p] : m_fit->breakevenPrefix)
        if (p) pstar[n] = std::ceil(*p);
    m_model.setFitted(row, m_fit->params, pstar);

    CostInputs in = r->eval->cost.inputs();
    if (m_fit->params.utilisation) in.utilisation = *m_fit->params.utilisation;
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
    for (const auto& n : m_fit->notes)
        s << QString::fromStdString(n).toHtmlEscaped();
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

Status FleetPanel::adoptFitted() {
    if (!m_fit) return Error{"Fit a file first"};
    m_explorer->edit(adoptFit(m_explorer->scenario(), m_fit->params), tr("Adopt fitted values"));
    emit message(tr("Adopted the fitted values into the scenario"));
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

std::vector<TtftChart::Overlay> FleetPanel::overlays() const {
    std::vector<TtftChart::Overlay> out;
    for (int i = 0; i < m_model.rowCount(); ++i) {
        const auto& ic = m_model.at(i);
        const Calibration& c = ic.calibration;
        if (ic.prefillCurve.empty() && c.curves.empty() && ic.hitPoints.empty()) continue;
        const QString who = QString::fromStdString(
            c.host.empty() ? QFileInfo(QString::fromStdString(c.source)).fileName().toStdString()
                           : c.host);
        const QColor color = kNodeColors[out.size() % std::size(kNodeColors)];
        if (!ic.prefillCurve.empty())
            out.push_back({QStringLiteral("overlay/%1/prefill").arg(i),
                           tr("%1: measured recompute").arg(who), ic.prefillCurve, color, true});
        // py-kvcache v2: the load curves beside f (f is the recompute curve above).
        for (const auto& [name, k] : c.curves) {
            if (name == "f") continue;
            std::vector<QPointF> pts;
            for (const auto& [m, sec] : k.knots)
                if (m > 0) pts.emplace_back(m, sec);
            out.push_back({QStringLiteral("overlay/%1/%2").arg(i).arg(QString::fromStdString(name)),
                           tr("%1: %2 (%3)").arg(who, QString::fromStdString(name),
                                                 name == "g_ssd" ? tr("load from the SSD") : tr("load from host memory")),
                           std::move(pts), name == "g_ssd" ? color.darker(140) : color.lighter(140), true});
        }
        // Measured hits and golden points, drawn as points, not only used in the fit.
        if (!ic.hitPoints.empty())
            out.push_back({QStringLiteral("overlay/%1/hits").arg(i),
                           tr("%1: measured hits and golden points (%2)").arg(who).arg(c.hits.size() + c.golden.size()),
                           ic.hitPoints, color, false});
    }
    const auto& r = m_explorer->result();
    if (!m_fitCost || !r) return out;
    // Fitted beside nominal: the same curves as the chart's own, with the fitted values and the
    // overhead both paths share.
    const double f = r->scenario.cachedFraction, overhead = m_fit->params.overheadS;
    std::vector<QPointF> miss;
    for (double n : r->curves.tokens)
        miss.emplace_back(n, m_fitCost->tMiss(n) + overhead);
    out.push_back({QStringLiteral("overlay/fit/recompute"), tr("fitted recompute"), std::move(miss),
                   QColor("#ff7f11"), true});
    const QColor hitColors[] = {QColor("#ffb703"), QColor("#bc6c25"), QColor("#e9c46a")};
    for (size_t t = 0; t < m_fitTiers.size(); ++t) {
        std::vector<QPointF> hit;
        for (double n : r->curves.tokens)
            hit.emplace_back(n, m_fitCost->tHit(m_fitTiers[t], n, f * n) + overhead);
        out.push_back({QStringLiteral("overlay/fit/hit-%1").arg(t),
                       tr("fitted hit from %1").arg(QString::fromStdString(m_fitTiers[t].name)),
                       std::move(hit), hitColors[t % std::size(hitColors)], true});
    }
    return out;
}

} // namespace kvbe
