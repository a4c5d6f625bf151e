// MainWindow's layout: the default layout for the screen it opens on, the Probes and
// Fleet docks collapsed to their tabs until used, and presentation mode (the chart alone).
#include "kvbe/ui/window/main_window.h"

#include <QDockWidget>
#include <QHBoxLayout>
#include <QLabel>
#include <QMenuBar>
#include <QShowEvent>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>

#include <algorithm>
#include <utility>

namespace kvbe {

namespace {

// A dock's title bar with a button that folds its contents away (the dock keeps its title and,
// tabified, its tab) and one that closes it.
QWidget* collapsibleTitle(QDockWidget* dock, QToolButton** toggle) {
    auto* bar = new QWidget(dock);
    auto* h = new QHBoxLayout(bar);
    h->setContentsMargins(6, 1, 2, 1);
    h->setSpacing(2);
    *toggle = new QToolButton(bar);
    (*toggle)->setObjectName(dock->objectName() + QStringLiteral("Toggle"));
    (*toggle)->setAutoRaise(true);
    (*toggle)->setCheckable(true);
    auto* title = new QLabel(dock->windowTitle(), bar);
    QFont f = title->font();
    f.setBold(true);
    title->setFont(f);
    auto* close = new QToolButton(bar);
    close->setAutoRaise(true);
    close->setIcon(dock->style()->standardIcon(QStyle::SP_TitleBarCloseButton));
    close->setToolTip(QObject::tr("Close (View menu to show again)"));
    QObject::connect(close, &QToolButton::clicked, dock, &QDockWidget::close);
    h->addWidget(*toggle);
    h->addWidget(title);
    h->addStretch();
    h->addWidget(close);
    return bar;
}

} // namespace

void MainWindow::buildDockTitles() {
    for (QDockWidget* d : {m_probeDock, m_fleetDock}) {
        QToolButton* toggle = nullptr;
        d->setTitleBarWidget(collapsibleTitle(d, &toggle));
        // Checked: expanded.
        connect(toggle, &QToolButton::toggled, this,
                [this](bool expanded) { setBottomDocksCollapsed(!expanded); });
        // A tab the user picks, or an import or a run that raises the dock, is "using" it.
        connect(d, &QDockWidget::visibilityChanged, this, [this](bool visible) {
            if (visible && m_layoutSettled && m_bottomCollapsed && !m_style.presentation)
                setBottomDocksCollapsed(false);
        });
    }
    setBottomDocksCollapsed(true);
}

void MainWindow::setBottomDocksCollapsed(bool collapsed) {
    const bool changed = collapsed != m_bottomCollapsed;
    m_bottomCollapsed = collapsed;
    for (QDockWidget* d : {m_probeDock, m_fleetDock}) {
        d->widget()->setVisible(!collapsed);
        QWidget* title = d->titleBarWidget();
        d->setMaximumHeight(collapsed && title ? title->sizeHint().height() : QWIDGETSIZE_MAX);
        if (auto* t =
                title ? title->findChild<QToolButton*>(d->objectName() + QStringLiteral("Toggle"))
                      : nullptr) {
            const QSignalBlocker block(t);
            t->setChecked(!collapsed);
            t->setArrowType(collapsed ? Qt::RightArrow : Qt::DownArrow);
            t->setToolTip(collapsed ? tr("Show the dock's contents")
                                    : tr("Fold the dock to its tab"));
        }
    }
    // Unfolded: about a third of the height, the chart keeps the rest.
    if (changed && !collapsed && isVisible())
        resizeDocks({m_probeDock, m_fleetDock}, {height() / 3, height() / 3}, Qt::Vertical);
}

void MainWindow::fitToScreen(const QRect& available) {
    m_fittedTo = available;
    placeOnScreen(available);
    setBottomDocksCollapsed(true);
    m_probeDock->raise();
    // The pins a few rows under the scenario panel.
    resizeDocks({m_panelDock, m_pinDock}, {height() - 200, 140}, Qt::Vertical);
}

void MainWindow::placeOnScreen(const QRect& available) {
    // The window manager's frame: known once shown, a title bar's worth before.
    QMargins frame(0, 32, 0, 0);
    if (isVisible())
        frame = QMargins(geometry().left() - frameGeometry().left(),
                         geometry().top() - frameGeometry().top(),
                         frameGeometry().right() - geometry().right(),
                         frameGeometry().bottom() - geometry().bottom());
    const QSize room(available.width() - frame.left() - frame.right(),
                     available.height() - frame.top() - frame.bottom());
    // A laptop screen gets all of it; a large one most of it, centred.
    const bool small = available.width() < 1500 || available.height() < 950;
    const QSize size = small ? room
                             : QSize(std::min(room.width() * 9 / 10, 1800),
                                     std::min(room.height() * 9 / 10, 1150));
    const QPoint topLeft =
        available.topLeft() + QPoint(frame.left(), frame.top()) +
        QPoint((room.width() - size.width()) / 2, (room.height() - size.height()) / 2);
    setWindowState(windowState() & ~(Qt::WindowMaximized | Qt::WindowFullScreen));
    setGeometry(QRect(topLeft, size));
}

void MainWindow::showEvent(QShowEvent* e) {
    QMainWindow::showEvent(e);
    // The docks' first visibility changes come from the window appearing, not from the user.
    // The frame is known now (none without a window manager): a window fitted to a screen is
    // fitted again, frame included.
    if (!m_layoutSettled)
        QTimer::singleShot(0, this, [this] {
            m_layoutSettled = true;
            if (m_fittedTo.isValid()) placeOnScreen(m_fittedTo);
        });
}

void MainWindow::setPresentation(bool on) {
    if (on == m_style.presentation) return;
    const auto docks = findChildren<QDockWidget*>(QString(), Qt::FindDirectChildrenOnly);
    const auto bars = findChildren<QToolBar*>(QString(), Qt::FindDirectChildrenOnly);
    if (on) {
        m_stateBeforePresentation = saveState();
        m_geometryBeforePresentation = saveGeometry();
        m_rectBeforePresentation = geometry();
        m_windowStateBeforePresentation = windowState();
        m_menuBarBeforePresentation = !menuBar()->isHidden();
        m_statusBarBeforePresentation = !statusBar()->isHidden();
    }
    m_style.presentation = on;
    if (on) {
        for (auto* d : docks)
            d->hide();
        for (auto* b : bars)
            b->hide();
        menuBar()->hide();
        statusBar()->hide();
        m_tabs->tabBar()->hide();
        for (QWidget* controls : m_chartControls)
            controls->hide();
        setWindowState(windowState() | Qt::WindowFullScreen);
    } else {
        // The docks reappearing is not the user unfolding them.
        const bool settled = std::exchange(m_layoutSettled, false);
        if (settled) QTimer::singleShot(0, this, [this] { m_layoutSettled = true; });
        // Leaving full screen gives the window back its normal geometry.
        setWindowState(m_windowStateBeforePresentation);
        // And its size, explicitly: a platform may restore a normal geometry it recorded
        // before the window was fitted to the screen.
        if (!(m_windowStateBeforePresentation & (Qt::WindowMaximized | Qt::WindowFullScreen)))
            setGeometry(m_rectBeforePresentation);
        // restoreState puts back the docks and toolbars as they were, sizes and tabs included.
        if (!m_stateBeforePresentation.isEmpty()) restoreState(m_stateBeforePresentation);
        menuBar()->setVisible(m_menuBarBeforePresentation);
        statusBar()->setVisible(m_statusBarBeforePresentation);
        m_tabs->tabBar()->show();
        for (QWidget* controls : m_chartControls)
            controls->show();
    }
    for (auto* c : m_charts)
        c->setChartStyle(m_style);
    m_leavePresentationAction->setEnabled(on);
    const QSignalBlocker block(m_presentationAction);
    m_presentationAction->setChecked(on);
}

} // namespace kvbe
