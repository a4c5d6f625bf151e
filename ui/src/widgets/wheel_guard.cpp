#include "kvbe/ui/widgets/wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QChildEvent>
#include <QComboBox>
#include <QEvent>
#include <QWidget>

namespace kvbe {

namespace {

bool guarded(const QObject* o) {
    return qobject_cast<const QComboBox*>(o) || qobject_cast<const QAbstractSpinBox*>(o) ||
           qobject_cast<const QAbstractSlider*>(o);
}

// One per guarded tree, owned by its root. It watches every widget of the tree: the wheel events
// of an unfocused input are ignored, so that QApplication passes them on to the parents, up to
// the scroll area; a child added later joins the watch.
class WheelGuard : public QObject {
  public:
    explicit WheelGuard(QWidget* root) : QObject(root) { watch(root); }

    bool eventFilter(QObject* o, QEvent* e) override {
        switch (e->type()) {
        case QEvent::Wheel:
            if (guarded(o) && !static_cast<QWidget*>(o)->hasFocus()) {
                // Not accepted: QApplication offers the wheel to the parents, the scroll area's
                // viewport among them. Returning true keeps the input itself from seeing it.
                e->ignore();
                return true;
            }
            break;
        case QEvent::ChildAdded:
        case QEvent::ChildPolished: {
            // A child announced by ChildAdded is still being made (its constructor runs): it
            // joins the watch at once, and its type is known when it is polished.
            QObject* child = static_cast<QChildEvent*>(e)->child();
            if (child && child->isWidgetType()) watch(static_cast<QWidget*>(child));
            break;
        }
        default:
            break;
        }
        return false;
    }

  private:
    void watch(QWidget* w) {
        strongFocus(w);
        if (w->property("kvbeWheelGuard").toBool()) return;
        w->setProperty("kvbeWheelGuard", true);
        w->installEventFilter(this);
        for (QWidget* c : w->findChildren<QWidget*>(Qt::FindDirectChildrenOnly))
            watch(c);
    }
    // Focus by click or Tab, not by the wheel (QComboBox and the spin boxes take Qt::WheelFocus).
    static void strongFocus(QWidget* w) {
        if (guarded(w) && w->focusPolicy() == Qt::WheelFocus) w->setFocusPolicy(Qt::StrongFocus);
    }
};

} // namespace

void guardWheel(QWidget* root) {
    new WheelGuard(root);
}

} // namespace kvbe
