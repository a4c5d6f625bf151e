#include "kvbe/ui/widgets/ask.h"

#include <QGuiApplication>

namespace kvbe {

QMessageBox::StandardButton askWithMessageBox(QWidget* parent, const Question& q) {
    if (QGuiApplication::platformName() == QLatin1String("offscreen")) return q.unattended;
    QMessageBox box(QMessageBox::Question, q.title, q.text, q.buttons, parent);
    box.setDefaultButton(q.defaultButton);
    if (!q.details.isEmpty()) box.setInformativeText(q.details);
    return QMessageBox::StandardButton(box.exec());
}

} // namespace kvbe
