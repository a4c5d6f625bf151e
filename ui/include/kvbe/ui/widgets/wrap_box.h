// Two widgets side by side where the width allows, one under the other where it does not. Its
// minimum width is the narrower arrangement's, so a row of controls never makes the window wider
// than the screen: it wraps instead. The second widget may lay itself out anew for each
// arrangement (sideBySideChanged): a tall column beside the first, a wide row under it.
#pragma once

#include <QWidget>

class QBoxLayout;

namespace kvbe {

class WrapBox : public QWidget {
    Q_OBJECT
  public:
    WrapBox(QWidget* first, QWidget* second, QWidget* parent = nullptr);
    // Whether the second widget sits beside the first (else under it).
    bool sideBySide() const;
    QSize minimumSizeHint() const override;

  signals:
    // Before the new arrangement is laid out.
    void sideBySideChanged(bool sideBySide);

  protected:
    void resizeEvent(QResizeEvent* e) override;

  private:
    // The width both need side by side: the first at its minimum, the second at its size hint
    // as it was last seen beside the first.
    int sideBySideWidth() const;
    void arrange(int width);

    QWidget* m_first;
    QWidget* m_second;
    QBoxLayout* m_layout;
    mutable int m_secondBeside = 0;
};

} // namespace kvbe
