#include "kvbe/ui/workload/plan_section.h"

#include "kvbe/ui/workload/background_job.h"

#include "kvbe/base/units.h"
#include "kvbe/plan/plan_setup.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QTimer>
#include <QVBoxLayout>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

QLabel* wrapped(const char* name, QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setObjectName(QLatin1String(name));
    l->setWordWrap(true);
    l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return l;
}

} // namespace

bool PlanSection::Key::operator==(const Key& o) const {
    return trace == o.trace && eval == o.eval && settings == o.settings &&
           lifeYears == o.lifeYears && slo == o.slo && budget == o.budget;
}

PlanSection::PlanSection(PlanChart* chart, const Presets* presets, QWidget* parent)
    : QWidget(parent), m_chart(chart), m_presets(presets) {
    setObjectName(QStringLiteral("planSection"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(4);

    // The limits, the progress and Cancel.
    auto* row = new QHBoxLayout;
    m_life = new QDoubleSpinBox(this);
    m_life->setObjectName(QStringLiteral("planLife"));
    m_life->setRange(0.5, 20);
    m_life->setDecimals(1);
    m_life->setSingleStep(0.5);
    m_life->setValue(m_limits.lifeYears);
    m_life->setSuffix(tr(" years"));
    m_life->setToolTip(tr("Every drive must last this long at the trace's write rate; also the "
                          "years over which savings are weighed against cost"));
    m_slo = new QLineEdit(this);
    m_slo->setObjectName(QStringLiteral("planSlo"));
    // An empty field means no limit (readFields() passes none on); the grey placeholder text
    // "no limit" shows that in the field itself, and the tooltip says it too.
    m_slo->setPlaceholderText(tr("no limit"));
    m_slo->setToolTip(tr("The p99 TTFT a configuration must meet, with a unit: 2s, 800ms; empty: "
                         "no limit. With a limit, each configuration's prefill servers are "
                         "counted."));
    m_budget = new QLineEdit(this);
    m_budget->setObjectName(QStringLiteral("planBudget"));
    m_budget->setPlaceholderText(tr("no limit"));
    m_budget->setToolTip(tr("The most a configuration may cost up front, in US dollars; empty: "
                            "no limit"));
    const int fieldWidth = m_slo->fontMetrics().horizontalAdvance(QStringLiteral("1500000")) + 24;
    m_slo->setMaximumWidth(fieldWidth);
    m_budget->setMaximumWidth(fieldWidth);
    auto addField = [&](const QString& text, QWidget* field) {
        auto* l = new QLabel(text, this);
        l->setBuddy(field);
        row->addWidget(l);
        row->addWidget(field);
    };
    addField(tr("Drive life"), m_life);
    addField(tr("p99 TTFT at most"), m_slo);
    addField(tr("Budget (USD)"), m_budget);
    connect(m_life, &QDoubleSpinBox::valueChanged, this, [this] { readFields(); });
    connect(m_slo, &QLineEdit::editingFinished, this, [this] { readFields(); });
    connect(m_budget, &QLineEdit::editingFinished, this, [this] { readFields(); });
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("planProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(200);
    m_progress->setFormat(tr("Planning: %p%"));
    m_progress->setVisible(false);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("planCancel"));
    m_cancel->setVisible(false);
    connect(m_cancel, &QPushButton::clicked, this, &PlanSection::cancel);
    m_status = wrapped("planStatus", this);
    QFont small = m_status->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_status->setFont(small);
    row->addWidget(m_progress);
    row->addWidget(m_cancel);
    row->addWidget(m_status, 1);
    v->addLayout(row);

    m_error = wrapped("planError", this);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->setVisible(false);
    v->addWidget(m_error);

    // The chart beside the answer: the sentence, the drive life per tier, the front's table.
    auto* body = new QHBoxLayout;
    body->addWidget(m_chart, 3);
    auto* side = new QVBoxLayout;
    m_sentence = wrapped("planSentence", this);
    m_sentence->setTextFormat(Qt::RichText);
    m_sentence->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_driveLife = wrapped("planDriveLife", this);
    m_driveLife->setTextFormat(Qt::RichText);
    m_table = new QTableWidget(this);
    m_table->setObjectName(QStringLiteral("planTable"));
    // The front: the hover, the tooltips and the CSV give the rest of each configuration.
    m_table->setColumnCount(4);
    m_table->setHorizontalHeaderLabels(
        {tr("Configuration"), tr("Cost"), tr("Mean TTFT"), tr("Drive life")});
    m_table->setTextElideMode(Qt::ElideRight);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
    for (int c = 1; c < 4; ++c)
        m_table->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
    // A configuration's name wraps in its cell rather than being cut ("128 GiB DRAM + 1 …").
    m_table->setWordWrap(true);
    m_table->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    // The sentence and the drive life scroll where a short screen leaves them too little height,
    // rather than being cut at the table's edge.
    auto* answer = new QWidget(this);
    auto* answerLayout = new QVBoxLayout(answer);
    answerLayout->setContentsMargins(0, 0, 0, 0);
    answerLayout->addWidget(m_sentence);
    answerLayout->addWidget(m_driveLife);
    answerLayout->addStretch(1);
    auto* answerScroll = new QScrollArea(this);
    answerScroll->setObjectName(QStringLiteral("planAnswer"));
    answerScroll->setWidget(answer);
    answerScroll->setWidgetResizable(true);
    answerScroll->setFrameShape(QFrame::NoFrame);
    answerScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Neither the answer nor the table may raise the Workload tab's minimum height (the window
    // must fit a 1366x768 screen); each scrolls what it cannot show.
    answerScroll->setMinimumHeight(48);
    m_table->setMinimumHeight(48);
    side->addWidget(answerScroll, 3);
    side->addWidget(m_table, 2);
    body->addLayout(side, 2);
    v->addLayout(body, 1);

    m_job = new BackgroundJob(m_progress, m_cancel, m_status, this);
    connect(m_job, &BackgroundJob::cancelled, this, [this] {
        m_status->setText(tr("Cancelled; the chart shows the last plan. A change of the "
                             "limits plans again."));
        emit cancelled();
    });
    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, [this] {
        if (!m_workload || !m_workload->trace || !isVisible()) return;
        const Key k = keyNow();
        if ((m_planned && *m_planned == k) || (m_cancelKey && *m_cancelKey == k)) return;
        m_planned = k;
        start();
    });
}

PlanSection::~PlanSection() = default;

void PlanSection::addToAnswer(QWidget* w) {
    // In the answer's scrolling column, under the sentence and the drive life.
    static_cast<QVBoxLayout*>(m_driveLife->parentWidget()->layout())->insertWidget(2, w);
}

bool PlanSection::computing() const {
    return m_job->running();
}

PlanSection::Key PlanSection::keyNow() const {
    Key k;
    k.trace = m_workload ? m_workload->trace.get() : nullptr;
    k.eval = m_workload ? m_workload->eval.get() : nullptr;
    if (m_workload) k.settings = m_workload->settings;
    // The plan chooses the tier sizes and K itself and reads no sweep.
    k.settings.tierCapacityBytes.clear();
    k.settings.storeAfter = 1;
    k.settings.sweepTier = 0;
    k.lifeYears = m_limits.lifeYears;
    k.slo = m_limits.sloP99S;
    k.budget = m_limits.budgetUsd;
    return k;
}

bool PlanSection::scheduled() const {
    return m_debounce->isActive();
}

void PlanSection::setWorkload(WorkloadPtr w) {
    const bool newTrace = !m_workload || !w || m_workload->trace != w->trace;
    m_workload = std::move(w);
    if (newTrace) {
        m_sentence->clear();
        m_driveLife->clear();
        m_table->setRowCount(0);
        m_status->clear();
    }
    request();
}

bool PlanSection::setLimitsText(double lifeYears, const QString& sloP99, const QString& budgetUsd) {
    const QSignalBlocker b(m_life);
    m_life->setValue(lifeYears);
    m_slo->setText(sloP99);
    m_budget->setText(budgetUsd);
    return (readFields(), !m_error->isVisible());
}

void PlanSection::readFields() {
    // The fields' text read with core's parsers, the limits checked by core (checkPlanLimits),
    // and each failure shown against the field it names.
    PlanLimits l;
    l.lifeYears = m_life->value();
    QStringList errors;
    const QString slo = m_slo->text().trimmed();
    const QString budget = m_budget->text().trimmed();
    auto fieldLabel = [&](RequestField f) {
        switch (f) {
        case RequestField::SloP99:
            return tr("p99 TTFT");
        case RequestField::Budget:
            return tr("Budget");
        case RequestField::Life:
            return tr("Drive life");
        default:
            return QString();
        }
    };
    if (!slo.isEmpty()) {
        if (auto s = parseSeconds(slo.toStdString()))
            l.sloP99S = *s;
        else
            errors << tr("%1 '%2': expected a time with a unit, such as 2s or 800ms, or nothing "
                         "for no limit")
                          .arg(fieldLabel(RequestField::SloP99), slo);
    }
    if (!budget.isEmpty()) {
        if (auto b = parseNumber(budget.toStdString()))
            l.budgetUsd = *b;
        else
            errors << tr("%1 '%2': expected US dollars, 0 or more, such as 20000, or nothing for "
                         "no limit")
                          .arg(fieldLabel(RequestField::Budget), budget);
    }
    if (errors.isEmpty())
        if (auto ok = checkPlanLimits(l); !ok)
            errors << tr("%1: %2").arg(fieldLabel(ok.error().field),
                                       QString::fromStdString(ok.error().message));
    m_error->setText(errors.join(QLatin1Char('\n')));
    m_error->setVisible(!errors.isEmpty());
    if (!errors.isEmpty()) return;
    m_limits = l;
    m_cancelKey.reset();
    request();
}

void PlanSection::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    request();
}

void PlanSection::request() {
    if (!m_workload || !m_workload->trace || !isVisible()) return;
    const Key k = keyNow();
    if ((m_planned && *m_planned == k && !m_job->pending()) || (m_cancelKey && *m_cancelKey == k)) {
        m_debounce->stop();
        return;
    }
    m_debounce->start();
}

void PlanSection::start() {
    auto out = std::make_shared<WorkloadPlan>();
    WorkloadPtr w = m_workload;
    const PlanLimits limits = m_limits;
    // A copy: the worker reads it while the window may read its own.
    auto presets = std::make_shared<const Presets>(*m_presets);
    m_job->run(
        [out, w, limits, presets](const BackgroundJob::Progress& progress) {
            *out = computePlan(w, *presets, limits, progress);
        },
        [this, out] {
            if (!out->cancelled) apply(out);
        },
        tr("Replaying the grid of configurations…"));
}

void PlanSection::cancel() {
    m_debounce->stop();
    if (!m_job->running()) return;
    m_job->cancel();
    m_cancelKey = m_planned;
    m_planned.reset();
}

void PlanSection::apply(const std::shared_ptr<WorkloadPlan>& p) {
    m_plan = p;
    m_chart->setPlan(p);
    // The configuration in bold, the reasons after it in the label's own weight.
    QString sentence = planSentence(*p).toHtmlEscaped();
    if (p->result && p->result->recommended) {
        const QString head =
            qs(describePlanPoint(p->result->points[*p->result->recommended])).toHtmlEscaped();
        const QString lead = tr("Recommended: %1").arg(head);
        if (sentence.startsWith(lead))
            sentence = QStringLiteral("<b>%1</b>%2").arg(lead, sentence.mid(lead.size()));
    }
    m_sentence->setText(sentence);
    m_driveLife->clear();
    m_table->setRowCount(0);
    if (!p->result) {
        m_status->clear();
        emit computed();
        return;
    }
    const PlanResult& r = *p->result;
    if (r.recommended) {
        QStringList lines;
        for (const QString& l : driveLifeLines(r.points[*r.recommended]))
            lines << (l.contains(QLatin1String("warranty"))
                          ? QStringLiteral("<span style='color:#c0392b'>%1</span>")
                                .arg(l.toHtmlEscaped())
                          : l.toHtmlEscaped());
        m_driveLife->setText(
            tr("<b>Drive life per tier</b><br>%1")
                .arg(lines.isEmpty() ? tr("no offload tier") : lines.join(QStringLiteral("<br>"))));
    }
    fillTable(*p);
    m_status->setText(tr("%1 configurations replayed in %2 s on %3 threads")
                          .arg(r.replays)
                          .arg(r.seconds, 0, 'f', 1)
                          .arg(r.threads));
    emit computed();
}

void PlanSection::fillTable(const WorkloadPlan& p) {
    const PlanResult& r = *p.result;
    m_table->setRowCount(int(r.front.size()));
    int row = 0;
    for (std::size_t i : r.front) {
        const PlanPoint& pt = r.points[i];
        const bool rec = r.recommended && *r.recommended == i;
        const QStringList cells = {
            qs(describePlanPoint(pt)) + (pt.bandwidthBound ? tr(" [bandwidth-bound]") : QString()) +
                (rec ? tr(" (recommended)") : QString()),
            QStringLiteral("$%L1").arg(qint64(std::llround(pt.capexUsd))),
            qs(formatSeconds(pt.ttftMeanS)),
            pt.shortestLifeYears ? qs(formatLife(*pt.shortestLifeYears)) : QStringLiteral("-")};
        for (int c = 0; c < cells.size(); ++c) {
            auto* item = new QTableWidgetItem(cells[c]);
            if (c == 3) item->setForeground(lifeBandColor(lifeBand(pt)));
            // Bandwidth-bound: the configuration's name in the colour of the chart's ring.
            if (c == 0 && pt.bandwidthBound) item->setForeground(QColor("#e76f51"));
            if (rec) {
                QFont f = item->font();
                f.setBold(true);
                item->setFont(f);
            }
            item->setToolTip(pt.bandwidthBound
                                 ? planPointText(pt) + QLatin1Char('\n') + qs(pt.saturation)
                                 : planPointText(pt));
            m_table->setItem(row, c, item);
        }
        ++row;
    }
}

} // namespace kvbe
