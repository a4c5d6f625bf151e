#include "kvbe/ui/widgets/wrap_box.h"

#include <QBoxLayout>
#include <QResizeEvent>

#include <algorithm>

namespace kvbe {

WrapBox::WrapBox(QWidget* first, QWidget* second, QWidget* parent)
    : QWidget(parent), m_first(first), m_second(second),
      m_layout(new QBoxLayout(QBoxLayout::LeftToRight, this)) {
    m_layout->setContentsMargins(0, 0, 0, 0);
    m_layout->setSpacing(12);
    m_layout->addWidget(first, 1);
    m_layout->addWidget(second);
}

bool WrapBox::sideBySide() const {
    return m_layout->direction() == QBoxLayout::LeftToRight;
}

int WrapBox::sideBySideWidth() const {
    if (sideBySide()) m_secondBeside = m_second->sizeHint().width();
    return m_first->minimumSizeHint().width() + m_layout->spacing() + m_secondBeside;
}

QSize WrapBox::minimumSizeHint() const {
    const QSize a = m_first->minimumSizeHint(), b = m_second->minimumSizeHint();
    // The height is the arrangement's now; a wrap makes it taller.
    const int height = sideBySide() ? std::max(a.height(), b.height())
                                    : a.height() + m_layout->spacing() + b.height();
    return QSize(std::max(a.width(), b.width()), height);
}

void WrapBox::arrange(int width) {
    const bool side = width >= sideBySideWidth();
    // Beside the first, the second keeps the width it asked for (its combo boxes' whole
    // choices); the first, whose minimum fits the rest, gives way.
    m_second->setMinimumWidth(side ? m_secondBeside : 0);
    if (side == sideBySide()) return;
    m_layout->setDirection(side ? QBoxLayout::LeftToRight : QBoxLayout::TopToBottom);
    emit sideBySideChanged(side);
    updateGeometry();
}

void WrapBox::resizeEvent(QResizeEvent* e) {
    QWidget::resizeEvent(e);
    arrange(e->size().width());
}

} // namespace kvbe
