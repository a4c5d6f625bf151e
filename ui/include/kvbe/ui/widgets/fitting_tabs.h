// A tab widget whose tabs all stay in view: each tab has its full title and may have a short one;
// where the full titles do not fit the bar's width (2560×1600 at ×2 leaves the chart area some
// 760 px), every tab with a short title shows it, the full one in its tooltip, rather than the
// bar scrolling its last tabs out of sight.
#pragma once

#include <QTabWidget>

namespace kvbe {

class FittingTabs : public QTabWidget {
    Q_OBJECT
  public:
    explicit FittingTabs(QWidget* parent = nullptr);
    // Adds a page with its full title and, if not empty, a short one.
    int addTab(QWidget* page, const QString& title, const QString& shortTitle = QString());

  protected:
    void resizeEvent(QResizeEvent* e) override;
    void showEvent(QShowEvent* e) override;

  private:
    void fit();

    QStringList m_full, m_shortTitles;
    bool m_short = false;
};

} // namespace kvbe
