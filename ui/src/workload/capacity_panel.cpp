#include "kvbe/ui/workload/capacity_panel.h"

#include "kvbe/ui/workload/background_job.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

#include <algorithm>

namespace kvbe {

bool CapacityPanel::Key::operator==(const Key& o) const {
    return trace == o.trace && eval == o.eval && settings == o.settings &&
           target.mean == o.target.mean && target.percentile == o.target.percentile &&
           target.seconds == o.target.seconds;
}

CapacityPanel::CapacityPanel(SloCapacityChart* chart, QWidget* parent)
    : QWidget(parent), m_chart(chart), m_target(*parseLatencyTarget(kDefaultLatencyTarget)) {
    setObjectName(QStringLiteral("capacityPanel"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(4);
    v->addWidget(m_chart, 1);

    m_sentence = new QLabel(this);
    m_sentence->setObjectName(QStringLiteral("capacitySentence"));
    m_sentence->setWordWrap(true);
    m_sentence->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sentence->setToolTip(QString::fromUtf8(kCapacityTtftNote));
    QFont f = m_sentence->font();
    f.setBold(true);
    m_sentence->setFont(f);
    v->addWidget(m_sentence);

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("capacityError"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->setVisible(false);
    v->addWidget(m_error);

    auto* row = new QHBoxLayout;
    auto* label = new QLabel(tr("Latency target"), this);
    m_field = new QLineEdit(QString::fromLatin1(kDefaultLatencyTarget), this);
    m_field->setObjectName(QStringLiteral("capacityTarget"));
    m_field->setToolTip(
        tr("A TTFT statistic and the most it may be, with a unit: p99=5s, p90=500ms, p50=1.5s, "
           "mean=300ms; Enter searches again.\n%1")
            .arg(QString::fromUtf8(kCapacityTtftNote)));
    m_field->setMaximumWidth(
        m_field->fontMetrics().horizontalAdvance(QStringLiteral("p99.9=1500ms")) + 24);
    label->setBuddy(m_field);
    connect(m_field, &QLineEdit::editingFinished, this, [this] { setTargetText(m_field->text()); });
    m_progress = new QProgressBar(this);
    m_progress->setObjectName(QStringLiteral("capacityProgress"));
    m_progress->setRange(0, 1000);
    m_progress->setMaximumWidth(220);
    m_progress->setFormat(tr("Searching: %p%"));
    m_progress->setVisible(false);
    m_cancel = new QPushButton(tr("Cancel"), this);
    m_cancel->setObjectName(QStringLiteral("capacityCancel"));
    m_cancel->setVisible(false);
    connect(m_cancel, &QPushButton::clicked, this, &CapacityPanel::cancel);
    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("capacityStatus"));
    m_status->setWordWrap(true);
    QFont small = m_status->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    m_status->setFont(small);
    row->addWidget(label);
    row->addWidget(m_field);
    row->addWidget(m_progress);
    row->addWidget(m_cancel);
    row->addWidget(m_status, 1);
    v->addLayout(row);

    m_job = new BackgroundJob(m_progress, m_cancel, m_status, this);
    connect(m_job, &BackgroundJob::cancelled, this, [this] {
        m_status->setText(tr("Cancelled; the chart shows the last search. Enter in the "
                             "target field searches again."));
        emit cancelled();
    });
}

CapacityPanel::~CapacityPanel() = default;

bool CapacityPanel::computing() const {
    return m_job->running();
}

CapacityPanel::Key CapacityPanel::keyNow() const {
    Key k;
    k.trace = m_workload ? m_workload->trace.get() : nullptr;
    k.eval = m_workload ? m_workload->eval.get() : nullptr;
    if (m_workload) k.settings = m_workload->settings;
    // The searches run every rule and read no sweep.
    k.settings.admission = Admission::Optimal;
    k.settings.sweepTier = 0;
    k.target = m_target;
    return k;
}

void CapacityPanel::setWorkload(WorkloadPtr w) {
    const bool newTrace = !m_workload || !w || m_workload->trace != w->trace;
    m_workload = std::move(w);
    if (newTrace) {
        m_sentence->clear();
        m_status->clear();
    }
    request();
}

bool CapacityPanel::setTargetText(const QString& text) {
    if (m_field->text() != text) m_field->setText(text);
    auto t = parseLatencyTarget(text.trimmed().toStdString());
    if (!t) {
        m_targetError = tr("Latency target %1").arg(QString::fromStdString(t.message()));
        showError(m_targetError);
        return false;
    }
    m_targetError.clear();
    m_error->setVisible(false);
    m_target = *t;
    emit targetChanged();
    // An entry starts a search the user cancelled, even for the same target.
    m_cancelKey.reset();
    request();
    return true;
}

void CapacityPanel::showEvent(QShowEvent* e) {
    QWidget::showEvent(e);
    request();
}

void CapacityPanel::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    holdTextHeight();
}

void CapacityPanel::holdTextHeight() {
    bool changed = false;
    for (QLabel* l : {m_sentence, m_error, m_status}) {
        const int h = l->text().isEmpty() || l->width() <= 0 ? 0 : l->heightForWidth(l->width());
        if (l->minimumHeight() == std::max(0, h)) continue;
        l->setMinimumHeight(std::max(0, h));
        changed = true;
    }
    // A tab widget does not pass its pages' new minimum on: the widgets above it ask again.
    if (changed)
        for (QWidget* p = parentWidget(); p && !qobject_cast<QScrollArea*>(p);
             p = p->parentWidget())
            p->updateGeometry();
}

void CapacityPanel::request() {
    if (!m_workload || !m_workload->trace || !isVisible()) return;
    const Key k = keyNow();
    if ((m_searched && *m_searched == k) || (m_cancelKey && *m_cancelKey == k)) return;
    m_searched = k;
    start();
}

void CapacityPanel::start() {
    auto out = std::make_shared<WorkloadCapacity>();
    WorkloadPtr w = m_workload;
    const LatencyTarget target = m_target;
    m_job->run(
        [out, w, target](const BackgroundJob::Progress& progress) {
            *out = computeCapacity(w, target, progress);
        },
        [this, out] {
            if (!out->cancelled) apply(out);
        },
        tr("Searching for %1…").arg(QString::fromStdString(target.text())));
}

void CapacityPanel::cancel() {
    if (!m_job->running()) return;
    m_job->cancel();
    m_cancelKey = m_searched;
    m_searched.reset();
}

void CapacityPanel::apply(const std::shared_ptr<WorkloadCapacity>& c) {
    m_capacity = c;
    m_chart->setCapacity(c);
    if (!c->error.isEmpty()) {
        m_sentence->clear();
        m_status->clear();
        showError(c->error);
    } else {
        // A bad target's sentence stays while the field holds it.
        if (m_targetError.isEmpty())
            m_error->setVisible(false);
        else
            showError(m_targetError);
        QString s = c->serversSentence;
        if (!c->loadSentence.isEmpty()) s += QLatin1Char(' ') + c->loadSentence;
        m_sentence->setText(s);
        holdTextHeight();
        const CapacityResult& r = *c->result;
        QString status = tr("Searched in %1 s (%2 cache passes, %3 queueings); decode is not "
                            "modelled")
                             .arg(c->seconds, 0, 'f', 2)
                             .arg(r.passes)
                             .arg(r.evaluations);
        // Bisection assumes the statistic rises with the load: say where it did not.
        std::size_t falls = 0, loads = 0;
        for (const auto& h : r.loadHeld) {
            falls += h.falls.size();
            loads += h.evaluated.size();
        }
        if (falls > 0)
            status += tr("; %1 falls a little as the load rises at %2 of %3 loads evaluated, so a "
                         "mark is the first load found where the target stops holding")
                          .arg(QString::fromStdString(r.target.statistic()))
                          .arg(falls)
                          .arg(loads);
        m_status->setText(status);
    }
    holdTextHeight();
    emit computed();
}

void CapacityPanel::showError(const QString& message) {
    m_error->setText(message);
    m_error->setVisible(true);
    holdTextHeight();
}

} // namespace kvbe
