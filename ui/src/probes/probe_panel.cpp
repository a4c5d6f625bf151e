#include "kvbe/ui/probes/probe_panel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QTableWidget>

#include "kvbe/base/units.h"
#include <QVBoxLayout>

namespace kvbe {

namespace {
bool isDrive(const QString& p) {
    return p.startsWith(QLatin1String("nvme-"));
}
constexpr int kGbpsRole = Qt::UserRole + 1;
enum Column {
    TierColumn,
    SizeColumn,
    QdColumn,
    GbpsColumn,
    IopsColumn,
    P50Column,
    P99Column,
    Columns
};
QString micros(const nlohmann::ordered_json& meta, const char* key) {
    const auto it = meta.find(key);
    if (it == meta.end() || !it->is_number()) return QString();
    const double us = it->get<double>();
    return us >= 1000 ? QStringLiteral("%1 ms").arg(us / 1000, 0, 'f', 2)
                      : QStringLiteral("%1 µs").arg(us, 0, 'f', 0);
}
} // namespace

ProbePanel::ProbePanel(QWidget* parent) : QWidget(parent) {
    auto* outer = new QHBoxLayout(this);
    outer->setContentsMargins(4, 4, 4, 4);

    auto* formBox = new QWidget(this);
    m_form = new QFormLayout(formBox);
    m_form->setContentsMargins(0, 0, 0, 0);
    m_probe = new QComboBox(formBox);
    m_probe->addItems(probeNames());
    m_form->addRow(tr("Probe:"), m_probe);

    m_targetRow = new QWidget(formBox);
    auto* tr_ = new QHBoxLayout(m_targetRow);
    tr_->setContentsMargins(0, 0, 0, 0);
    m_targetKind = new QComboBox(m_targetRow);
    m_targetKind->addItems({tr("folder"), tr("file")});
    m_targetKind->setToolTip(tr("A folder gets a scratch file, removed afterwards; an existing "
                                "file is only read"));
    m_target = new QLineEdit(m_targetRow);
    m_target->setPlaceholderText(tr("a folder on the drive to measure"));
    auto* browseButton = new QPushButton(tr("Browse…"), m_targetRow);
    tr_->addWidget(m_targetKind);
    tr_->addWidget(m_target, 1);
    tr_->addWidget(browseButton);
    m_form->addRow(tr("Drive:"), m_targetRow);
    connect(browseButton, &QPushButton::clicked, this, &ProbePanel::browse);

    auto edit = [formBox](const QString& placeholder, const QString& tip) {
        auto* e = new QLineEdit(formBox);
        e->setPlaceholderText(placeholder);
        e->setToolTip(tip);
        return e;
    };
    m_fileSize = edit(tr("4GiB"), tr("Size of the scratch file (folder only)"));
    m_blockSizes = edit(tr("128KiB,1MiB,4MiB and the KV block"), tr("Block sizes of the reads"));
    m_queueDepths = edit(tr("1,4,16,32,64"), tr("Queue depths"));
    m_duration = edit(tr("e.g. 1s"), tr("Measured time per setting"));
    m_sizes = edit(tr("64KiB to 1GiB by 4×, and the KV block"), tr("Copy sizes"));
    m_model = edit(tr("the scenario's model"), tr("Preset id, config.json or model folder"));
    m_lengths = edit(tr("1k,8k,32k,80k"), tr("Prompt lengths in tokens"));
    m_endpoint = edit(tr("http://127.0.0.1:8000/v1"),
                      tr("The server's OpenAI-compatible base URL (vLLM, SGLang)"));
    m_servedModel = edit(tr("as in /v1/models"), tr("The model name the server serves"));
    m_fractions = edit(tr("0.1,0.5,0.9,1"), tr("Cached fractions of each prompt"));
    m_outFolder =
        edit(tr("no files"), tr("Folder for the calibration, pareto CSV and py-kvcache files"));
    m_device = new QSpinBox(formBox);
    m_device->setRange(0, 63);
    m_device->setToolTip(tr("CUDA device index"));
    m_form->addRow(tr("File size:"), m_fileSize);
    m_form->addRow(tr("Block sizes:"), m_blockSizes);
    m_form->addRow(tr("Queue depths:"), m_queueDepths);
    m_form->addRow(tr("Duration:"), m_duration);
    m_form->addRow(tr("Copy sizes:"), m_sizes);
    m_form->addRow(tr("GPU:"), m_device);
    m_form->addRow(tr("Model:"), m_model);
    m_form->addRow(tr("Lengths:"), m_lengths);
    m_form->addRow(tr("Endpoint:"), m_endpoint);
    m_form->addRow(tr("Served model:"), m_servedModel);
    m_form->addRow(tr("Fractions:"), m_fractions);
    m_form->addRow(tr("Write to:"), m_outFolder);
    auto* runButton = new QPushButton(tr("Run"), formBox);
    runButton->setObjectName(QStringLiteral("runProbe"));
    m_form->addRow(QString(), runButton);
    connect(runButton, &QPushButton::clicked, this, [this] { run(); });
    connect(m_probe, &QComboBox::currentTextChanged, this, &ProbePanel::updateRows);
    connect(m_targetKind, &QComboBox::currentIndexChanged, this, &ProbePanel::updateRows);
    outer->addWidget(formBox);

    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    auto* historyBox = new QWidget(scroll);
    m_history = new QVBoxLayout(historyBox);
    m_history->setContentsMargins(2, 2, 2, 2);
    auto* empty = new QLabel(tr("Runs since the window opened appear here, newest first."));
    empty->setEnabled(false);
    m_history->addWidget(empty);
    m_history->addStretch();
    scroll->setWidget(historyBox);
    outer->addWidget(scroll, 1);
    updateRows();
}

QStringList ProbePanel::probeNames() {
    return {QStringLiteral("nvme-read"),   QStringLiteral("nvme-write"),
            QStringLiteral("host-memcpy"), QStringLiteral("gpu-copy"),
            QStringLiteral("gpu-prefill"), QStringLiteral("serving")};
}

void ProbePanel::updateRows() {
    const QString p = probe();
    const bool drive = isDrive(p);
    const bool gpu = p.startsWith(QLatin1String("gpu-"));
    // nvme-write never writes to an existing file: only a scratch folder.
    if (p == QLatin1String("nvme-write")) m_targetKind->setCurrentIndex(0);
    m_targetKind->setEnabled(p != QLatin1String("nvme-write"));
    m_form->setRowVisible(m_targetRow, drive);
    m_form->setRowVisible(m_fileSize, drive && m_targetKind->currentIndex() == 0);
    m_form->setRowVisible(m_blockSizes, drive);
    m_form->setRowVisible(m_queueDepths, drive);
    m_form->setRowVisible(m_duration, drive || p == QLatin1String("host-memcpy"));
    m_form->setRowVisible(m_sizes, p == QLatin1String("gpu-copy"));
    m_form->setRowVisible(m_device, gpu);
    const bool serving = p == QLatin1String("serving");
    m_form->setRowVisible(m_model, drive || gpu || serving);
    m_form->setRowVisible(m_lengths, p == QLatin1String("gpu-prefill") || serving);
    for (QWidget* w : {static_cast<QWidget*>(m_endpoint), static_cast<QWidget*>(m_servedModel),
                       static_cast<QWidget*>(m_fractions), static_cast<QWidget*>(m_outFolder)})
        m_form->setRowVisible(w, serving);
}

void ProbePanel::browse() {
    const QString path = m_targetKind->currentIndex() == 0
                             ? QFileDialog::getExistingDirectory(this, tr("Folder on the drive"))
                             : QFileDialog::getOpenFileName(this, tr("File to read"));
    if (!path.isEmpty()) m_target->setText(path);
}

void ProbePanel::setProbe(const QString& name) {
    m_probe->setCurrentText(name);
}
QString ProbePanel::probe() const {
    return m_probe->currentText();
}
void ProbePanel::setTarget(const QString& path, bool isFile) {
    m_targetKind->setCurrentIndex(isFile ? 1 : 0);
    m_target->setText(path);
}
void ProbePanel::setFileSize(const QString& size) {
    m_fileSize->setText(size);
}
void ProbePanel::setBlockSizes(const QString& list) {
    m_blockSizes->setText(list);
}
void ProbePanel::setQueueDepths(const QString& list) {
    m_queueDepths->setText(list);
}
void ProbePanel::setDuration(const QString& duration) {
    m_duration->setText(duration);
}
void ProbePanel::setModel(const QString& model) {
    m_model->setText(model);
}
void ProbePanel::setLengths(const QString& list) {
    m_lengths->setText(list);
}
void ProbePanel::setDefaultModel(const QString& model) {
    m_defaultModel = model;
    m_model->setPlaceholderText(model);
}
void ProbePanel::setEndpoint(const QString& url) {
    m_endpoint->setText(url);
}
void ProbePanel::setServedModel(const QString& name) {
    m_servedModel->setText(name);
}
void ProbePanel::setFractions(const QString& list) {
    m_fractions->setText(list);
}
void ProbePanel::setOutFolder(const QString& path) {
    m_outFolder->setText(path);
}
void ProbePanel::setGpuDevice(int index) {
    m_device->setValue(index);
}

QStringList ProbePanel::arguments() const {
    const QString p = probe();
    QStringList a{p};
    // Empty fields are left to kvbe-cli's defaults, which its --help documents.
    auto add = [&a, this](const char* flag, const QLineEdit* e) {
        QString v = e->text().trimmed();
        if (v.isEmpty() && e == m_model) v = m_defaultModel;
        if (!v.isEmpty()) a << QString::fromLatin1(flag) << v;
    };
    if (isDrive(p)) {
        const bool folder = m_targetKind->currentIndex() == 0;
        add(folder ? "--dir" : "--file", m_target);
        if (folder) add("--file-size", m_fileSize);
        add("--block-sizes", m_blockSizes);
        add("--queue-depths", m_queueDepths);
        add("--duration", m_duration);
        add("--model", m_model);
    } else if (p == QLatin1String("serving")) {
        add("--endpoint", m_endpoint);
        add("--model", m_servedModel);
        // The Model field gives the geometry for the fit when the served name is not a preset.
        add("--config", m_model);
        add("--lengths", m_lengths);
        add("--fractions", m_fractions);
        add("--out", m_outFolder);
    } else if (p == QLatin1String("host-memcpy")) {
        add("--duration", m_duration);
    } else {
        if (p == QLatin1String("gpu-copy")) add("--sizes", m_sizes);
        add("--model", m_model);
        if (p == QLatin1String("gpu-prefill")) add("--lengths", m_lengths);
        a << QStringLiteral("--device") << QString::number(m_device->value());
    }
    return a;
}

ProbeRunner* ProbePanel::run() {
    auto* runner = new ProbeRunner(this);
    runner->setHangTimeout(m_hangMs);
    const QStringList args = arguments();

    auto* row = new QFrame;
    row->setFrameShape(QFrame::StyledPanel);
    auto* v = new QVBoxLayout(row);
    v->setContentsMargins(6, 4, 6, 4);
    auto* title = new QLabel(
        QStringLiteral("<b>%1</b> %2")
            .arg(args.front().toHtmlEscaped(), args.mid(1).join(QLatin1Char(' ')).toHtmlEscaped()),
        row);
    title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* line = new QHBoxLayout;
    auto* bar = new QProgressBar(row);
    bar->setRange(0, 1000);
    auto* cancel = new QPushButton(tr("Cancel"), row);
    auto* keep = new QPushButton(tr("Keep as a tier"), row);
    keep->setObjectName(QStringLiteral("keepRun%1").arg(m_runs.size()));
    keep->setToolTip(tr("Add this run's partial result to the scenario as a tier, named for what "
                        "it is"));
    keep->hide();
    line->addWidget(bar, 1);
    line->addWidget(cancel);
    line->addWidget(keep);
    auto* status = new QLabel(tr("starting"), row);
    status->setWordWrap(true);
    status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // What the probe says a person must know (a fallback it took, a warning), one line each as
    // it arrives; a failed or stopped run keeps them, since they often say why.
    auto* notes = new QLabel(row);
    notes->setObjectName(QStringLiteral("runNotes%1").arg(m_runs.size()));
    notes->setTextFormat(Qt::PlainText);
    notes->setWordWrap(true);
    notes->setTextInteractionFlags(Qt::TextSelectableByMouse);
    notes->hide();
    // The run's table, as the CLI prints it: filled as the points arrive.
    auto* results = new QTableWidget(0, Columns, row);
    results->setObjectName(QStringLiteral("runResults%1").arg(m_runs.size()));
    results->setHorizontalHeaderLabels(
        {tr("Tier"), tr("Block / size"), tr("QD"), tr("GB/s"), tr("IOPS"), tr("p50"), tr("p99")});
    results->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    results->verticalHeader()->hide();
    results->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    results->setEditTriggers(QAbstractItemView::NoEditTriggers);
    results->setSelectionBehavior(QAbstractItemView::SelectRows);
    results->setSelectionMode(QAbstractItemView::SingleSelection);
    results->setMinimumHeight(6 * (fontMetrics().height() + 4));
    results->hide();
    auto* why = new QLabel(row);
    why->setObjectName(QStringLiteral("runTierWhy%1").arg(m_runs.size()));
    why->setWordWrap(true);
    why->hide();
    auto* useRow = new QPushButton(tr("Use selected row as the tier"), row);
    useRow->setObjectName(QStringLiteral("useRow%1").arg(m_runs.size()));
    useRow->hide();
    v->addWidget(title);
    v->addLayout(line);
    v->addWidget(status);
    v->addWidget(notes);
    v->addWidget(results);
    v->addWidget(why);
    v->addWidget(useRow, 0, Qt::AlignLeft);
    m_history->insertWidget(0, row);
    if (m_runs.empty()) m_history->itemAt(1)->widget()->hide(); // the "runs appear here" hint

    m_runs.push_back({runner, bar, status, notes, cancel, keep, results, why, useRow});
    const int index = int(m_runs.size()) - 1;
    connect(runner, &ProbeRunner::point, row,
            [this, index](const ProbePoint& p) { addResultRow(m_runs[size_t(index)], p); });
    connect(useRow, &QPushButton::clicked, this, [this, index, results] {
        const auto rows = results->selectionModel()->selectedRows();
        if (rows.isEmpty()) return;
        const int r = rows.front().row();
        emit tierRowChosen(index, results->item(r, GbpsColumn)->data(kGbpsRole).toDouble(),
                           results->item(r, SizeColumn)->text() +
                               (results->item(r, QdColumn)->text().isEmpty()
                                    ? QString()
                                    : tr(", QD %1").arg(results->item(r, QdColumn)->text())));
    });
    connect(keep, &QPushButton::clicked, this, [this, keep, index] {
        keep->setEnabled(false);
        keep->setText(tr("Kept"));
        emit keepRequested(index);
    });
    connect(cancel, &QPushButton::clicked, runner, &ProbeRunner::cancel);
    connect(runner, &ProbeRunner::progress, row, [bar, status](double f, const QString& stage) {
        bar->setValue(int(f * 1000));
        status->setText(stage);
    });
    connect(runner, &ProbeRunner::note, row, [notes](const QString& message) {
        const QString item = QStringLiteral("• ") + message;
        notes->setText(notes->text().isEmpty() ? item : notes->text() + QLatin1Char('\n') + item);
        notes->show();
    });
    connect(runner, &ProbeRunner::finished, row,
            [bar, status, cancel](ProbeRunner::Outcome o, const QString& message) {
                cancel->hide();
                if (o == ProbeRunner::Outcome::Succeeded) bar->setValue(1000);
                const bool bad = o == ProbeRunner::Outcome::Failed ||
                                 o == ProbeRunner::Outcome::Crashed ||
                                 o == ProbeRunner::Outcome::Hung;
                status->setText(message);
                // A stop is grey, not red: the user asked for it.
                status->setStyleSheet(bad ? QStringLiteral("color: #c1121f")
                                      : o == ProbeRunner::Outcome::Stopped
                                          ? QStringLiteral("color: gray")
                                          : QString());
            });
    emit runStarted(int(m_runs.size()) - 1, runner, args.front());
    runner->start(args);
    return runner;
}

void ProbePanel::offerKeep(int i, const QString& sentence) {
    if (i < 0 || i >= int(m_runs.size())) return;
    auto& r = m_runs[size_t(i)];
    r.status->setText(r.status->text() + QStringLiteral(" · ") + sentence);
    r.keep->show();
}

void ProbePanel::addResultRow(Run& run, const ProbePoint& p) {
    // Rates only: a GPU prefill's seconds are drawn on the TTFT chart.
    if (p.unit != "GB/s") return;
    const double gbps = p.y;
    const auto& meta = p.meta;
    const double bytes = p.x;
    auto* t = run.results;
    const int r = t->rowCount();
    t->insertRow(r);
    const double iops = meta.value("iops", 0.0);
    const QStringList cells{
        QString(),
        QString::fromStdString(formatBytes(bytes)) +
            (meta.value("kv_block", false) ? tr(" (KV block)") : QString()),
        meta.contains("queue_depth") ? QString::number(meta.value("queue_depth", 0)) : QString(),
        QString::number(gbps, 'f', 2),
        iops > 0 ? QString::number(iops, 'f', 0) : QString(),
        micros(meta, "p50_us"),
        micros(meta, "p99_us")};
    for (int c = 0; c < Columns; ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        if (c >= QdColumn) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        t->setItem(r, c, item);
    }
    t->item(r, GbpsColumn)->setData(kGbpsRole, gbps);
    t->show();
}

void ProbePanel::markTierRow(int i, double gbps, const QString& why) {
    if (i < 0 || i >= int(m_runs.size())) return;
    auto& run = m_runs[size_t(i)];
    auto* t = run.results;
    bool marked = false;
    for (int r = 0; r < t->rowCount(); ++r) {
        const bool is =
            !marked && gbps > 0 && t->item(r, GbpsColumn)->data(kGbpsRole).toDouble() == gbps;
        marked = marked || is;
        t->item(r, TierColumn)->setText(is ? tr("✓ tier") : QString());
        for (int c = 0; c < Columns; ++c) {
            QFont f = t->item(r, c)->font();
            f.setBold(is);
            t->item(r, c)->setFont(f);
        }
    }
    if (!why.isEmpty()) run.why->setText(why);
    run.why->setVisible(marked && !run.why->text().isEmpty());
    run.useRow->setVisible(marked && t->rowCount() > 1);
}

QString ProbePanel::runStatus(int i) const {
    return m_runs[size_t(i)].status->text();
}

QString ProbePanel::runNotes(int i) const {
    return m_runs[size_t(i)].notes->text();
}

bool ProbePanel::anyRunning() const {
    for (const auto& r : m_runs)
        if (r.runner->isRunning()) return true;
    return false;
}

} // namespace kvbe
