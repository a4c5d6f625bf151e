#include "kvbe/ui/workload/plan_section.h"

#include "kvbe/ui/workload/background_job.h"
#include "kvbe/ui/workload/plan_capacity_note.h"
#include "kvbe/ui/workload/price_fields.h"

#include "kvbe/base/units.h"
#include "kvbe/plan/plan_setup.h"

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QTableWidget>
#include <QTimer>
#include <QUndoStack>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <mutex>

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

// Holds the status label at its own size: no layout, so the label's text never reaches the
// window's layouts.
class StatusBox : public QWidget {
  public:
    using QWidget::QWidget;
    QSize sizeHint() const override { return {200, height()}; }
    QSize minimumSizeHint() const override { return {0, height()}; }

  protected:
    void resizeEvent(QResizeEvent* e) override {
        QWidget::resizeEvent(e);
        for (auto* c : findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly))
            c->setGeometry(rect());
    }
};

QString percent(double rate) {
    return QString::number(rate * 100, 'f', 2);
}

} // namespace

// A tick of the Exact box as a step of the window's undo stack.
class ExactCommand : public QUndoCommand {
  public:
    ExactCommand(PlanSection* section, bool exact)
        : QUndoCommand(exact ? PlanSection::tr("Exact plan") : PlanSection::tr("Fast plan")),
          m_section(section), m_exact(exact) {}
    void undo() override { set(!m_exact); }
    void redo() override { set(m_exact); }

  private:
    void set(bool exact) {
        if (!m_section) return;
        m_section->m_undoing = true;
        m_section->m_exact->setChecked(exact);
        m_section->m_undoing = false;
    }
    QPointer<PlanSection> m_section;
    bool m_exact;
};

bool PlanSection::Key::operator==(const Key& o) const {
    return trace == o.trace && eval == o.eval && settings == o.settings &&
           lifeYears == o.lifeYears && slo == o.slo && budget == o.budget && exact == o.exact &&
           allRouters == o.allRouters && exactBelow == o.exactBelow &&
           sampleRequests == o.sampleRequests && rate == o.rate;
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
    m_exact = new QCheckBox(tr("Exact"), this);
    m_exact->setObjectName(QStringLiteral("planExact"));
    row->addWidget(m_exact);
    setSampleOptions(m_sampleOptions); // the box's tooltip
    m_routers = new QCheckBox(tr("All routers"), this);
    m_routers->setObjectName(QStringLiteral("planRouters"));
    m_routers->setToolTip(
        tr("On a fleet (prefill servers above one), add a row of GPU-only caching behind each "
           "other router the field ships, on the same servers with nothing bought, as kvbe-cli "
           "trace plan --routers all: a better router competes with every purchase."));
    m_routers->setEnabled(false); // until the tab is a fleet
    row->addWidget(m_routers);
    connect(m_routers, &QCheckBox::toggled, this, [this] {
        m_cancelKey.reset();
        request();
    });
    connect(m_exact, &QCheckBox::toggled, this, [this](bool on) {
        if (m_undo && !m_undoing) m_undo->push(new ExactCommand(this, on));
        m_cancelKey.reset();
        request();
    });
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
    // The status line in a box of its own, three lines high, outside the layouts: the stage it
    // reports changes several times a second, and a label's new text asks every layout up to the
    // window's for a new pass, which repainted the whole window each time.
    auto* statusBox = new StatusBox(this);
    m_status = wrapped("planStatus", statusBox);
    QFont small = m_status->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_status->setFont(small);
    m_status->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    statusBox->setFixedHeight(3 * QFontMetrics(small).lineSpacing() + 2);
    // The progress and Cancel keep their place while hidden, so that a plan starting or ending
    // does not change the row's size and lay the window out anew.
    for (QWidget* w : {static_cast<QWidget*>(m_progress), static_cast<QWidget*>(m_cancel)}) {
        QSizePolicy p = w->sizePolicy();
        p.setRetainSizeWhenHidden(true);
        w->setSizePolicy(p);
    }
    row->addWidget(m_progress);
    row->addWidget(m_cancel);
    row->addStretch(1);
    v->addLayout(row);

    // Which mode the last plan ran in, its sample rate and error bound: under the sentence.
    m_mode = wrapped("planMode", this);
    m_mode->setFont(small);
    m_mode->setVisible(false);

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
    // At the top of the answer's column (which scrolls, so it raises no minimum height): the
    // stage while it plans, then the time it took; the sentence; the mode it ran in.
    answerLayout->addWidget(statusBox);
    answerLayout->addWidget(m_sentence);
    m_capacityNote = new PlanCapacityNote(answer);
    connect(m_capacityNote, &PlanCapacityNote::useLimit, this,
            [this](const QString& slo) { m_slo->setText(slo), readFields(); });
    answerLayout->addWidget(m_capacityNote);
    answerLayout->addWidget(m_mode);
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
    auto* l = static_cast<QVBoxLayout*>(m_driveLife->parentWidget()->layout());
    l->insertWidget(l->count() - 1, w); // before the stretch
}

bool PlanSection::computing() const {
    return m_job->running();
}

void PlanSection::showWaiting(const QString& text) {
    if (!m_job->running()) m_status->setText(text);
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
    k.exact = exact();
    k.allRouters = allRouters();
    k.exactBelow = m_sampleOptions.exactBelow;
    k.sampleRequests = m_sampleOptions.sampleRequests;
    k.rate = m_sampleOptions.rate;
    return k;
}

bool PlanSection::scheduled() const {
    return m_debounce->isActive();
}

void PlanSection::setWorkload(WorkloadPtr w) {
    const bool newTrace = !m_workload || !w || m_workload->trace != w->trace;
    m_workload = std::move(w);
    m_routers->setEnabled(m_workload && m_workload->config.isFleet());
    // A price for the link to a pool, where the tab pools a tier.
    if (auto* prices = findChild<PriceFields*>()) {
        const std::string link = m_workload ? planPoolLink(*m_workload) : std::string();
        prices->setLinks(link.empty() ? std::vector<std::string>{}
                                      : std::vector<std::string>{link});
    }
    if (newTrace) {
        m_sentence->clear();
        m_driveLife->clear();
        m_table->setRowCount(0);
        m_status->clear();
        m_mode->clear();
        m_mode->setVisible(false);
    }
    request();
}

bool PlanSection::allRouters() const {
    return m_routers->isChecked() && m_workload && m_workload->config.isFleet();
}

bool PlanSection::exact() const {
    return m_exact->isChecked();
}

void PlanSection::setExact(bool exact) {
    m_exact->setChecked(exact);
}

void PlanSection::setSampleOptions(const PlanSampleOptions& o) {
    m_sampleOptions = o;
    m_sampleOptions.exact = false;
    m_sampleOptions.stages = nullptr;
    m_exact->setToolTip(
        tr("Replay every configuration in full. Unticked, a trace of %L1 requests or more is "
           "planned as kvbe-cli trace plan plans it: the grid on two samples of its prefix "
           "trees, the shortlist replayed in full (the recommended configuration's figures are "
           "exact), the mode, sample rate and error bound stated beside the answer.")
            .arg(qulonglong(o.exactBelow)));
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
    m_capacityNote->setLimits(m_limits.sloP99S, m_capacityTarget);
    m_cancelKey.reset();
    request();
}

void PlanSection::setCapacityTarget(const LatencyTarget& t) {
    m_capacityTarget = t;
    m_capacityNote->setLimits(m_limits.sloP99S, m_capacityTarget);
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
    // The stage the worker is at, for the status line.
    struct Live {
        std::mutex m;
        std::optional<PlanProgress> at;
    };
    auto live = std::make_shared<Live>();
    PlanSampleOptions sampling = m_sampleOptions;
    sampling.exact = exact();
    sampling.stages = [live](const PlanProgress& p) {
        const std::lock_guard lock(live->m);
        live->at = p;
    };
    const bool exactAsked = sampling.exact;
    const bool routers = allRouters();
    m_job->run(
        [out, w, limits, presets, sampling, routers](const BackgroundJob::Progress& progress) {
            *out = computePlan(w, *presets, limits, progress, sampling, routers);
        },
        [this, out, exactAsked] {
            if (!out->cancelled) apply(out, exactAsked);
        },
        tr("Planning…"),
        [live] {
            const std::lock_guard lock(live->m);
            return live->at ? progressText(*live->at) : QString();
        });
}

void PlanSection::cancel() {
    m_debounce->stop();
    if (!m_job->running()) return;
    m_job->cancel();
    m_cancelKey = m_planned;
    m_planned.reset();
}

void PlanSection::apply(const std::shared_ptr<WorkloadPlan>& p, bool exactAsked) {
    m_plan = p;
    m_chart->setPlan(p);
    // The configuration in bold, the reasons after it in the label's own weight.
    QString sentence = planSentence(*p).toHtmlEscaped();
    if (p->result && p->result->recommended) {
        // The purchase as the sentence says it: for a fleet, "On each of the 4 nodes, …".
        QString head = qs(planPurchaseText(p->result->points[*p->result->recommended]));
        if (!head.isEmpty()) head[0] = head[0].toUpper();
        head = head.toHtmlEscaped();
        const QString lead = tr("Recommended: %1").arg(head);
        if (sentence.startsWith(lead))
            sentence = QStringLiteral("<b>%1</b>%2").arg(lead, sentence.mid(lead.size()));
    }
    m_sentence->setText(sentence);
    m_driveLife->clear();
    m_table->setRowCount(0);
    m_mode->setVisible(p->result.has_value());
    m_mode->setText(p->result ? modeText(*p->result, exactAsked) + fleetText(*p) : QString());
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
    // The mode first, in short (the line under the sentence has the rest).
    const QString mode = r.sampling.sampled
                             ? tr("Fast mode, sampled at %1 % (hit ratio within %2 points)")
                                   .arg(percent(r.sampling.rate))
                                   .arg(r.sampling.hitsError * 100, 0, 'f', 2)
                             : tr("Exact mode");
    m_status->setText(tr("%1: %2 replays in %3 s on %4 threads")
                          .arg(mode)
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
                (pt.sampled ? tr(" [sampled]") : QString()) +
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
            QString tip = planPointText(pt);
            if (pt.bandwidthBound) tip += QLatin1Char('\n') + qs(pt.saturation);
            if (pt.sampled)
                tip +=
                    QLatin1Char('\n') + tr("A sample's estimate, not replayed in full (the "
                                           "line under the recommendation gives the error bound)");
            item->setToolTip(tip);
            m_table->setItem(row, c, item);
        }
        ++row;
    }
}

} // namespace kvbe
