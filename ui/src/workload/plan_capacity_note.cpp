#include "kvbe/ui/workload/plan_capacity_note.h"

#include "kvbe/base/units.h"

#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include <cmath>

namespace kvbe {

namespace {

bool isP99(const LatencyTarget& t) {
    return !t.mean && t.percentile == 99;
}

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

PlanCapacityNote::PlanCapacityNote(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("planCapacityNote"));
    // The button under the sentence, so that a narrow answer column never cuts it.
    auto* row = new QVBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    m_text = new QLabel(this);
    m_text->setObjectName(QStringLiteral("planCapacityNoteText"));
    m_text->setWordWrap(true);
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_use = new QPushButton(this);
    m_use->setObjectName(QStringLiteral("planUseCapacityTarget"));
    m_use->setToolTip(tr("Set the plan's p99 TTFT limit to the Capacity tab's target: each "
                         "configuration's servers are then counted, and a configuration is "
                         "valued by the whole servers it saves"));
    connect(m_use, &QPushButton::clicked, this, [this] { emit useLimit(m_limit); });
    row->setSpacing(2);
    row->addWidget(m_text);
    row->addWidget(m_use, 0, Qt::AlignLeft);
    setVisible(false);
}

QString PlanCapacityNote::text(std::optional<double> planP99S,
                               const std::optional<LatencyTarget>& capacity) {
    if (!capacity) return {};
    const QString target = qs(capacity->text());
    if (!isP99(*capacity))
        return planP99S ? tr("The Capacity tab counts servers for %1; this plan's limit is a p99 "
                             "(%2), so the two count servers against different statistics.")
                              .arg(target, qs(formatSeconds(*planP99S)))
                        : tr("The Capacity tab counts whole servers for %1; this plan has no "
                             "latency limit, so it values the prefill time saved, not servers.")
                              .arg(target);
    if (!planP99S)
        return tr("The Capacity tab counts whole servers at %1; this plan has no p99 limit, so it "
                  "values the prefill time saved, not servers.")
            .arg(target);
    if (std::abs(*planP99S - capacity->seconds) <= 1e-9 * capacity->seconds) return {};
    return tr("The Capacity tab counts servers at %1; this plan at p99 ≤ %2.")
        .arg(target, qs(formatSeconds(*planP99S)));
}

void PlanCapacityNote::setLimits(std::optional<double> planP99S,
                                 std::optional<LatencyTarget> capacity) {
    const QString t = text(planP99S, capacity);
    m_text->setText(t);
    const bool offer = !t.isEmpty() && capacity && isP99(*capacity);
    if (offer) {
        m_limit = QString::number(capacity->seconds, 'g', 9) + QLatin1Char('s');
        m_use->setText(tr("Plan at %1").arg(qs(capacity->text())));
    }
    m_use->setVisible(offer);
    setVisible(!t.isEmpty());
}

} // namespace kvbe
