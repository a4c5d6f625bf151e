#include "kvbe/ui/workload/workload_view.h"

#include "kvbe/ui/charts/chart_view.h"

#include <QBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

namespace kvbe {

// The TTFT tab: the distribution, the links over time and the saturation sentence (core's
// saturationSentence). Under the distribution where the tab is tall enough for both charts,
// beside it where it is not (a 1366×768 screen), so that neither the tab nor the window needs
// more height than the other tabs.
TtftLinksTab::TtftLinksTab(ChartView* ttft, QWidget* parent) : QWidget(parent), m_ttft(ttft) {
    setObjectName(QStringLiteral("workloadTtftTab"));
    m_box = new QBoxLayout(QBoxLayout::LeftToRight, this);
    m_box->setContentsMargins(0, 0, 0, 0);
    m_box->setSpacing(4);
    m_box->addWidget(ttft, 3);
    m_side = new QWidget(this);
    auto* sv = new QVBoxLayout(m_side);
    sv->setContentsMargins(0, 0, 0, 0);
    sv->setSpacing(2);
    m_box->addWidget(m_side, 1);
    m_side->setVisible(false);
}

QLabel* TtftLinksTab::addLinks(ChartView* links) {
    links->setMinimumHeight(110);
    auto* sv = static_cast<QVBoxLayout*>(m_side->layout());
    sv->addWidget(links, 1);
    auto* label = new QLabel(m_side);
    label->setObjectName(QStringLiteral("workloadSaturation"));
    label->setWordWrap(true);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setVisible(false);
    sv->addWidget(label);
    m_side->setVisible(true);
    return label;
}

void TtftLinksTab::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    // Beside the distribution: a third of the width, at most 380 px.
    m_side->setMaximumWidth(m_box->direction() == QBoxLayout::LeftToRight
                                ? std::min(380, width() / 3)
                                : QWIDGETSIZE_MAX);
    // Both charts fit above each other, the links with room for their axes, from 640 px.
    const bool under = height() >= 640;
    const auto dir = under ? QBoxLayout::TopToBottom : QBoxLayout::LeftToRight;
    if (m_box->direction() == dir) return;
    m_box->setDirection(dir);
    m_box->setStretchFactor(m_ttft, under ? 2 : 3);
    m_box->setStretchFactor(m_side, 1);
    m_side->setMaximumWidth(under ? QWIDGETSIZE_MAX : std::min(380, width() / 3));
}

} // namespace kvbe
