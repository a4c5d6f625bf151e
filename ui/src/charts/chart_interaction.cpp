#include "kvbe/ui/charts/chart_view.h"

#include "kvbe/ui/charts/chart_legend.h"

#include <QFontMetricsF>
#include <QGraphicsLineItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QMouseEvent>
#include <QRubberBand>

#include <algorithm>

namespace kvbe {

// ---- zoom and pan
void ChartView::zoomBy(double factor, QPointF centreValue) {
    if (!m_x) return;
    const QRectF plot = chart()->plotArea();
    const QPointF c = toPixel(centreValue);
    // Zooming a pixel rectangle lets each axis (log or linear) do its own arithmetic.
    const QRectF r(c.x() - (c.x() - plot.left()) / factor, c.y() - (c.y() - plot.top()) / factor,
                   plot.width() / factor, plot.height() / factor);
    chart()->zoomIn(r);
    m_zoomed = true;
    layoutOverlays();
}

void ChartView::panBy(QPointF pixels) {
    chart()->scroll(-pixels.x(), pixels.y());
    keepHomeInView();
    m_zoomed = true;
    layoutOverlays();
}

// ---- interaction

void ChartView::updateCrosshair(QPointF pos) {
    const QRectF plot = chart()->plotArea();
    if (!m_current || !plot.contains(pos)) {
        hideCrosshair();
        return;
    }
    m_crossV->setLine(pos.x(), plot.top(), pos.x(), plot.bottom());
    m_crossH->setLine(plot.left(), pos.y(), plot.right(), pos.y());
    const QPointF value = chart()->mapToValue(pos, m_anchor);
    const QString text = hoverText(value);
    const QRectF view = mapToScene(viewport()->rect()).boundingRect().adjusted(2, 2, -2, -2);
    // Lines longer than the view wraps (a Plan configuration's drive life) wrap within it.
    m_tip->setText(wrapText(text, QFontMetricsF(m_tip->font()), std::max(80.0, view.width() - 12)));
    const QRectF tb = m_tip->boundingRect().adjusted(-5, -4, 5, 4);
    m_tipBox->setRect(QRectF(QPointF(0, 0), tb.size()));
    m_tip->setPos(5, 4);
    // Beside the cursor, on the side with room; never past the view's edges, where its first
    // lines or characters would be cut off (a tall box starts at the top).
    double x = pos.x() + 14, y = pos.y() + 14;
    if (x + tb.width() > plot.right()) x = pos.x() - 14 - tb.width();
    if (y + tb.height() > plot.bottom()) y = pos.y() - 14 - tb.height();
    x = std::max(view.left(), std::min(x, view.right() - tb.width()));
    y = std::max(view.top(), std::min(y, view.bottom() - tb.height()));
    m_tipBox->setPos(x, y);
    m_crossV->setVisible(true);
    m_crossH->setVisible(true);
    m_tipBox->setVisible(true);
    emit hovered(text);
}

void ChartView::hideCrosshair() {
    const bool shown = m_tipBox->isVisible();
    m_crossV->setVisible(false);
    m_crossH->setVisible(false);
    m_tipBox->setVisible(false);
    if (shown) emit hovered(QString()); // the status bar lets go of it too
}

void ChartView::mousePressEvent(QMouseEvent* e) {
    if (!chart()->plotArea().contains(e->position())) {
        QChartView::mousePressEvent(e); // legend markers
        return;
    }
    m_pressPos = e->position().toPoint();
    m_lastPan = e->position();
    const bool pan = e->button() == Qt::MiddleButton || e->button() == Qt::RightButton ||
                     (e->button() == Qt::LeftButton && (e->modifiers() & Qt::ShiftModifier));
    if (pan) {
        m_drag = Drag::Pan;
        setCursor(Qt::ClosedHandCursor);
    } else if (e->button() == Qt::LeftButton) {
        m_drag = Drag::Band;
        if (!m_band) m_band = new QRubberBand(QRubberBand::Rectangle, viewport());
        m_band->setGeometry(QRect(m_pressPos, QSize()));
        m_band->show();
    }
    e->accept();
}

void ChartView::mouseMoveEvent(QMouseEvent* e) {
    if (m_drag == Drag::Pan) {
        panBy(e->position() - m_lastPan);
        m_lastPan = e->position();
    } else if (m_drag == Drag::Band) {
        m_band->setGeometry(QRect(m_pressPos, e->position().toPoint()).normalized());
    }
    updateCrosshair(e->position());
    QChartView::mouseMoveEvent(e);
}

void ChartView::mouseReleaseEvent(QMouseEvent* e) {
    if (m_drag == Drag::Band) {
        m_band->hide();
        const QRect r = QRect(m_pressPos, e->position().toPoint()).normalized();
        if (r.width() > 4 && r.height() > 4) {
            chart()->zoomIn(QRectF(r).intersected(chart()->plotArea()));
            m_zoomed = true;
            layoutOverlays();
        }
    }
    if (m_drag != Drag::None) {
        m_drag = Drag::None;
        unsetCursor();
        e->accept();
        return;
    }
    QChartView::mouseReleaseEvent(e);
}

void ChartView::mouseDoubleClickEvent(QMouseEvent* e) {
    if (chart()->plotArea().contains(e->position()))
        resetZoom();
    else
        QChartView::mouseDoubleClickEvent(e);
}

void ChartView::wheelEvent(QWheelEvent* e) {
    const QPointF pos = e->position();
    if (!chart()->plotArea().contains(pos) || e->angleDelta().y() == 0) return;
    zoomBy(e->angleDelta().y() > 0 ? 1.25 : 0.8, chart()->mapToValue(pos, m_anchor));
    updateCrosshair(pos);
    e->accept();
}

void ChartView::keyPressEvent(QKeyEvent* e) {
    const QPointF centre = chart()->mapToValue(chart()->plotArea().center(), m_anchor);
    switch (e->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomBy(1.25, centre);
        break;
    case Qt::Key_Minus:
        zoomBy(0.8, centre);
        break;
    case Qt::Key_Left:
        panBy(QPointF(30, 0));
        break;
    case Qt::Key_Right:
        panBy(QPointF(-30, 0));
        break;
    case Qt::Key_Up:
        panBy(QPointF(0, 30));
        break;
    case Qt::Key_Down:
        panBy(QPointF(0, -30));
        break;
    case Qt::Key_Home:
    case Qt::Key_R:
        resetZoom();
        break;
    default:
        QChartView::keyPressEvent(e);
        return;
    }
    e->accept();
}

void ChartView::leaveEvent(QEvent* e) {
    hideCrosshair();
    QChartView::leaveEvent(e);
}

void ChartView::resizeEvent(QResizeEvent* e) {
    // The box was laid out for the old size and cursor (presentation mode, a dock unfolding):
    // it returns when the mouse moves.
    hideCrosshair();
    QChartView::resizeEvent(e);
    updateLegend();
    layoutOverlays();
}

} // namespace kvbe
