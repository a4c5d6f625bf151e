#include "kvbe/ui/probes/probe_panel.h"

#include "kvbe/base/units.h"
#include "kvbe/probe/probe_catalog.h"
#include "kvbe/ui/probes/probe_form.h"
#include "kvbe/ui/probes/ttft_fit_view.h"

#include <QComboBox>
#include <QFrame>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <utility>

namespace kvbe {

namespace {
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
// A block size as it was asked for: "4 MiB" for 4 MiB (not "4.19 MB"), decimal units otherwise.
QString blockText(double bytes) {
    for (const auto& [unit, name] : {std::pair{1024.0 * 1024 * 1024, "GiB"},
                                     std::pair{1024.0 * 1024, "MiB"}, std::pair{1024.0, "KiB"}})
        if (bytes >= unit && std::fmod(bytes, unit) == 0)
            return QStringLiteral("%1 %2").arg(bytes / unit).arg(QLatin1String(name));
    return QString::fromStdString(formatBytes(bytes));
}

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

    // Every probe of the catalog, each with its own form: the window runs any of them by key.
    auto* formBox = new QWidget(this);
    auto* column = new QVBoxLayout(formBox);
    column->setContentsMargins(0, 0, 0, 0);
    // The probe and Run on the top line: Run stays in sight however short the dock is.
    auto* pick = new QHBoxLayout;
    pick->setContentsMargins(0, 0, 0, 0);
    m_probe = new QComboBox(formBox);
    m_probe->setObjectName(QStringLiteral("probeChoice"));
    m_forms = new QStackedWidget(formBox);
    for (const auto& p : probeCatalog()) {
        const QString key = QString::fromUtf8(p.key);
        m_probe->addItem(QString::fromUtf8(p.title), key);
        m_probe->setItemData(m_probe->count() - 1, key, Qt::ToolTipRole);
        auto* form = new ProbeForm(p, m_forms);
        form->setObjectName(QStringLiteral("probeForm ") + key);
        m_forms->addWidget(form);
    }
    auto* pickLabel = new QLabel(tr("Probe:"), formBox);
    pickLabel->setBuddy(m_probe);
    m_about = new QLabel(formBox);
    m_about->setObjectName(QStringLiteral("probeAbout"));
    m_about->setWordWrap(true);
    m_about->setEnabled(false);
    auto* runButton = new QPushButton(tr("Run"), formBox);
    runButton->setObjectName(QStringLiteral("runProbe"));
    pick->addWidget(pickLabel);
    pick->addWidget(m_probe, 1);
    pick->addWidget(runButton);
    column->addLayout(pick);
    column->addWidget(m_about);
    column->addWidget(m_forms);
    column->addStretch();
    connect(runButton, &QPushButton::clicked, this, [this] { run(); });
    connect(m_probe, &QComboBox::currentIndexChanged, this, &ProbePanel::showProbe);
    outer->addWidget(formBox);

    auto* scroll = new QScrollArea(this);
    scroll->setObjectName(QStringLiteral("probeHistory"));
    scroll->setWidgetResizable(true);
    m_historyScroll = scroll;
    auto* historyBox = new QWidget(scroll);
    m_history = new QVBoxLayout(historyBox);
    m_history->setContentsMargins(2, 2, 2, 2);
    auto* empty = new QLabel(tr("Runs since the window opened appear here, newest first."));
    empty->setEnabled(false);
    m_history->addWidget(empty);
    m_history->addStretch();
    scroll->setWidget(historyBox);
    outer->addWidget(scroll, 1);
    showProbe();
}

QStringList ProbePanel::probeNames() {
    QStringList keys;
    for (const auto& p : probeCatalog())
        keys << QString::fromUtf8(p.key);
    return keys;
}

void ProbePanel::showProbe() {
    m_forms->setCurrentIndex(m_probe->currentIndex());
    const ProbeDescription& p = form()->probe();
    m_about->setText(
        tr("%1. Needs %2.").arg(QString::fromUtf8(p.description), QString::fromUtf8(p.needs)));
}

QString ProbePanel::runModel() const {
    const QStringList args = arguments();
    const auto valueOf = [&args](const QString& flag) {
        const qsizetype i = args.indexOf(flag);
        return i >= 0 && i + 1 < args.size() ? args[i + 1] : QString();
    };
    for (const auto& o : form()->probe().options)
        if (o.kind == ProbeOptionKind::Model)
            if (const QString v = valueOf(QString::fromUtf8(o.flag)); !v.isEmpty()) return v;
    return valueOf(QStringLiteral("--model"));
}

ProbeForm* ProbePanel::form() const {
    return static_cast<ProbeForm*>(m_forms->currentWidget());
}

bool ProbePanel::setProbe(const QString& key) {
    const int i = m_probe->findData(key);
    if (i < 0) return false;
    m_probe->setCurrentIndex(i);
    return true;
}

QString ProbePanel::probe() const {
    return m_probe->currentData().toString();
}

bool ProbePanel::setOption(const QString& flag, const QString& value) {
    return form()->setValue(flag, value);
}

void ProbePanel::setDefaultModel(const QString& model) {
    for (int i = 0; i < m_forms->count(); ++i)
        static_cast<ProbeForm*>(m_forms->widget(i))->setDefaultModel(model);
}

void ProbePanel::setDefaultGpu(const QString& gpu) {
    for (int i = 0; i < m_forms->count(); ++i)
        static_cast<ProbeForm*>(m_forms->widget(i))->setDefaultGpu(gpu);
}

QStringList ProbePanel::arguments() const {
    return form()->arguments();
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
    // A serving run's TTFTs and the values fitted to them.
    auto* ttft = new TtftFitView(int(m_runs.size()), row);
    v->addWidget(results);
    v->addWidget(ttft);
    v->addWidget(why);
    v->addWidget(useRow, 0, Qt::AlignLeft);
    m_history->insertWidget(0, row);
    // The newest run is at the top: show it, wherever the list was scrolled to.
    QTimer::singleShot(0, m_historyScroll, [scroll = m_historyScroll] {
        scroll->verticalScrollBar()->setValue(scroll->verticalScrollBar()->minimum());
    });
    if (m_runs.empty()) m_history->itemAt(1)->widget()->hide(); // the "runs appear here" hint

    m_runs.push_back({runner, bar, status, notes, cancel, keep, results, why, useRow});
    const int index = int(m_runs.size()) - 1;
    connect(runner, &ProbeRunner::point, row, [this, index, ttft](const ProbePoint& p) {
        if (!ttft->addPoint(p)) addResultRow(m_runs[size_t(index)], p);
    });
    connect(runner, &ProbeRunner::result, ttft, &TtftFitView::showResult);
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
        blockText(bytes) + (meta.value("kv_block", false) ? tr(" (KV block)") : QString()),
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
