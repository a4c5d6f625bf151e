// A question for the user (keep unsaved changes? adopt these values?), asked through a seam a
// test can answer: the window holds an AskFn, a message box unless replaced.
#pragma once

#include <QMessageBox>
#include <QString>

#include <functional>

namespace kvbe {

struct Question {
    QString title;
    QString text;
    QString details; // shown below the text (the old → new lines of an adopt)
    QMessageBox::StandardButtons buttons = QMessageBox::Ok | QMessageBox::Cancel;
    QMessageBox::StandardButton defaultButton = QMessageBox::Cancel;
    // The answer where nobody can answer (the offscreen platform, no AskFn set): the one that
    // loses nothing.
    QMessageBox::StandardButton unattended = QMessageBox::Cancel;
};

using AskFn = std::function<QMessageBox::StandardButton(QWidget* parent, const Question& q)>;

// A modal message box; offscreen, the question's unattended answer (a box there waits forever).
QMessageBox::StandardButton askWithMessageBox(QWidget* parent, const Question& q);

} // namespace kvbe
