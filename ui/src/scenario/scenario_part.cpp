#include "kvbe/ui/scenario/scenario_part.h"

#include <QGroupBox>
#include <QPainter>
#include <QSlider>
#include <QVBoxLayout>

namespace kvbe {

namespace {

// A slider that shows keyboard focus (the style draws none): a frame in the highlight colour.
class FocusSlider : public QSlider {
  public:
    using QSlider::QSlider;

  protected:
    void paintEvent(QPaintEvent* e) override {
        QSlider::paintEvent(e);
        if (!hasFocus()) return;
        QPainter p(this);
        p.setRenderHint(QPainter::Antialiasing);
        p.setPen(QPen(palette().color(QPalette::Highlight), 1.5));
        p.drawRoundedRect(QRectF(rect()).adjusted(1, 1, -1, -1), 3, 3);
    }
};

} // namespace

ScenarioPart::ScenarioPart(ScenarioEditing& editing, QWidget* parent)
    : QWidget(parent), m_editing(editing), m_layout(new QVBoxLayout(this)) {
    m_layout->setContentsMargins(0, 0, 0, 0);
}

QGroupBox* ScenarioPart::addBox(const QString& title) {
    auto* box = new QGroupBox(title, this);
    m_layout->addWidget(box);
    return box;
}

QSlider* ScenarioPart::percentSlider(int min, int max, QWidget* parent) {
    auto* s = new FocusSlider(Qt::Horizontal, parent);
    s->setFocusPolicy(Qt::StrongFocus);
    s->setRange(min, max);
    s->setPageStep(5);
    return s;
}

} // namespace kvbe
