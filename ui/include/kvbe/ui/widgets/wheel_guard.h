// Combo boxes, spin boxes and sliders inside a scrolling panel take the mouse wheel only when
// they have keyboard focus (a click or Tab gives it); otherwise the wheel scrolls the panel, as
// in KDE and Qt Creator. Without it, wheeling down a panel changed whichever input slid under
// the pointer (a GPU combo box went H200 → L40S → … → Custom, unseen).
#pragma once

class QWidget;

namespace kvbe {

// Guards every combo box, spin box and slider under `root`, now and those made later, and gives
// them Qt::StrongFocus (a click or Tab focuses them, the wheel does not).
void guardWheel(QWidget* root);

} // namespace kvbe
