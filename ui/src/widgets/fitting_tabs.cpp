#include "kvbe/ui/widgets/fitting_tabs.h"

#include <QTabBar>

namespace kvbe {

FittingTabs::FittingTabs(QWidget* parent) : QTabWidget(parent) {}

int FittingTabs::addTab(QWidget* page, const QString& title, const QString& shortTitle) {
    const int i = QTabWidget::addTab(page, title);
    m_full.insert(i, title);
    m_shortTitles.insert(i, shortTitle);
    fit();
    return i;
}

void FittingTabs::resizeEvent(QResizeEvent* e) {
    QTabWidget::resizeEvent(e);
    fit();
}

void FittingTabs::showEvent(QShowEvent* e) {
    QTabWidget::showEvent(e);
    fit();
}

void FittingTabs::fit() {
    // Laid out only once shown: a hidden widget's width is not the one it will have.
    if (!isVisible() || m_full.size() != count()) return;
    QTabBar* bar = tabBar();
    const QFontMetrics fm = bar->fontMetrics();
    // The bar's width with the full titles: each tab as wide as now, its text the full one.
    int full = 0;
    for (int i = 0; i < count(); ++i)
        full += bar->tabRect(i).width() - fm.horizontalAdvance(bar->tabText(i)) +
                fm.horizontalAdvance(m_full[i]);
    const bool useShort = full > width();
    if (useShort == m_short &&
        bar->tabText(0) == (useShort && !m_shortTitles[0].isEmpty() ? m_shortTitles[0] : m_full[0]))
        return;
    m_short = useShort;
    for (int i = 0; i < count(); ++i) {
        const bool shortened = useShort && !m_shortTitles[i].isEmpty();
        setTabText(i, shortened ? m_shortTitles[i] : m_full[i]);
        setTabToolTip(i, shortened ? m_full[i] : QString());
    }
}

} // namespace kvbe
