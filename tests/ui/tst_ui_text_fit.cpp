// Text on screen is whole and off the charts, crowded: a trace open, the Fleet files imported and
// their dock unfolded, on a laptop's 1366×768, on 1920×1080 (1728×972 of it, as the window opens)
// and on 2560×1600 at ×2 (1280×800 in Qt's pixels; the suite runs again at QT_SCALE_FACTOR=2).
// The Capacity sentence stays off the plot; the Workload charts keep a usable height (the tab
// scrolls instead); the replay's rules and timing line are not cut; the tab bar shows every tab;
// the Plan's front names are whole and its hover box stays in the chart.
#include "ui_test_support.h"

#include <QApplication>
#include <QCheckBox>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineEdit>
#include <QMouseEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStyleOptionComboBox>
#include <QTabBar>
#include <QTableWidget>

#include "kvbe/ui/workload/capacity_panel.h"
#include "kvbe/ui/workload/plan_section.h"

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFixtures = QStringLiteral(KVBE_FIXTURES);
constexpr int kTitleBar = 32;
// The least height a Workload chart keeps: its titles, a plot a hand can hover and the axis.
constexpr int kChartHeight = 280;

WorkloadView* workloadOf(MainWindow& w) {
    return child<WorkloadView>(&w, QStringLiteral("workloadView"));
}

bool settled(MainWindow& w) {
    auto* v = workloadOf(w);
    return QTest::qWaitFor(
        [&] {
            return !v->loading() && !v->replaying() && !fleetPanelOf(&w)->importing() &&
                   !explorerOf(&w)->recomputePending();
        },
        120000);
}

void addScreens() {
    QTest::addColumn<QSize>("screen");
    QTest::newRow("1366x768") << QSize(1366, 768);
    QTest::newRow("1920x1080") << QSize(1920, 1080);
    QTest::newRow("2560x1600 at x2") << QSize(1280, 800);
}

// The window fitted to the screen with the conversation trace, the Fleet files and both docks
// unfolded, on the Workload tab.
std::unique_ptr<MainWindow> crowded(QSize screen) {
    auto w = std::make_unique<MainWindow>(presets());
    w->fitToScreen(QRect(QPoint(0, 0), screen));
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) return nullptr;
    w->refreshNow();
    if (!w->openTrace(kFixtures + QStringLiteral("/traces/mooncake-conversation.jsonl")))
        return nullptr;
    if (!settled(*w)) return nullptr;
    if (!w->importCalibrations({kFixtures + QStringLiteral("/calibration")})) return nullptr;
    if (!settled(*w)) return nullptr;
    w->setBottomDocksCollapsed(false);
    QApplication::processEvents();
    tabsOf(w)->setCurrentWidget(workloadOf(*w));
    QApplication::processEvents();
    return w;
}

QTabWidget* innerTabs(MainWindow& w) {
    return child<QTabWidget>(workloadOf(w), QStringLiteral("workloadCharts"));
}

// A widget's rectangle in the window's coordinates.
QRect inWindow(const QWidget* c, const QWidget* w) {
    return QRect(c->mapTo(w, QPoint(0, 0)), c->size());
}

// The part of a scroll area's content a user sees, in the window's coordinates; the whole
// window where the widget is in none.
QRect seen(const QWidget* c, const QWidget* w) {
    for (const QWidget* p = c->parentWidget(); p; p = p->parentWidget())
        if (auto* area = qobject_cast<const QScrollArea*>(p)) return inWindow(area->viewport(), w);
    return w->rect();
}

// Whether a label shows all of its text: one line as wide as its text, or wrapped lines as tall
// as the text needs at its width.
QString cutLabel(const QLabel* l) {
    if (!l->isVisible() || l->text().isEmpty()) return {};
    const QRect r = l->contentsRect();
    const QFontMetrics fm(l->font());
    const QString plain = l->textFormat() == Qt::RichText ? QString() : l->text();
    if (plain.isEmpty()) return {};
    if (l->wordWrap()) {
        const int needed =
            fm.boundingRect(QRect(0, 0, r.width(), 100000), Qt::TextWordWrap, plain).height();
        if (needed > r.height() + 1)
            return QStringLiteral("\"%1\" needs %2 px, has %3")
                .arg(plain)
                .arg(needed)
                .arg(r.height());
        return {};
    }
    if (fm.horizontalAdvance(plain) > r.width() + 1)
        return QStringLiteral("\"%1\" needs %2 px, has %3")
            .arg(plain)
            .arg(fm.horizontalAdvance(plain))
            .arg(r.width());
    return {};
}

} // namespace

class TestUiTextFit : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    // The sentence under the Capacity chart never prints over its plot or axis, and is whole.
    void theCapacitySentenceStaysOffThePlot_data() { addScreens(); }
    void theCapacitySentenceStaysOffThePlot() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* panel = child<CapacityPanel>(w.get(), QStringLiteral("capacityPanel"));
        innerTabs(*w)->setCurrentWidget(panel);
        auto* sentence = child<QLabel>(panel, QStringLiteral("capacitySentence"));
        QVERIFY(QTest::qWaitFor([&] { return !panel->computing() && !sentence->text().isEmpty(); },
                                120000));
        QApplication::processEvents();
        auto* chart = qobject_cast<ChartView*>(workloadOf(*w)->visibleChart());
        QVERIFY(chart);
        // The plot in the window; the chart's own rectangle, whose axis is under the plot.
        const QRect plot(
            chart->viewport()->mapTo(
                w.get(), chart->mapFromScene(chart->chart()->plotArea()).boundingRect().topLeft()),
            chart->mapFromScene(chart->chart()->plotArea()).boundingRect().size());
        const QRect text = inWindow(sentence, w.get());
        const QRect view = inWindow(chart, w.get());
        QVERIFY2(!text.intersects(plot) && !text.intersects(view),
                 qPrintable(QStringLiteral("sentence at %1..%2, plot at %3..%4, chart at %5..%6")
                                .arg(text.top())
                                .arg(text.bottom())
                                .arg(plot.top())
                                .arg(plot.bottom())
                                .arg(view.top())
                                .arg(view.bottom())));
        const QString cut = cutLabel(sentence);
        QVERIFY2(cut.isEmpty(), qPrintable(cut));
    }

    // With a dock unfolded each Workload chart keeps a usable height; the tab scrolls instead.
    void workloadChartsKeepAUsableHeight_data() { addScreens(); }
    void workloadChartsKeepAUsableHeight() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* inner = innerTabs(*w);
        QStringList small;
        for (int k = 0; k < inner->count(); ++k) {
            inner->setCurrentIndex(k);
            QApplication::processEvents();
            auto* c = workloadOf(*w)->visibleChart();
            QVERIFY(c);
            if (c->height() < kChartHeight)
                small << QStringLiteral("%1: %2 px").arg(inner->tabText(k)).arg(c->height());
        }
        QVERIFY2(small.isEmpty(), qPrintable(small.join(QStringLiteral("; "))));
        // And the window still fits the screen: its minimum height is the screen's at most.
        QVERIFY(w->minimumSizeHint().height() <= screen.height() - kTitleBar);
    }

    // The replay's rules show their whole choice ("Host DRAM (PCIe 5.0)"), and the timing line
    // its end ("sliders re-run on release").
    void theRulesAndTheTimingAreWhole_data() { addScreens(); }
    void theRulesAndTheTimingAreWhole() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* v = workloadOf(*w);
        QStringList cut;
        for (auto* box : v->findChildren<QComboBox*>()) {
            if (!box->isVisible()) continue;
            QStyleOptionComboBox opt;
            opt.initFrom(box);
            opt.editable = box->isEditable();
            const QRect field = box->style()->subControlRect(QStyle::CC_ComboBox, &opt,
                                                             QStyle::SC_ComboBoxEditField, box);
            const int needed = box->fontMetrics().horizontalAdvance(box->currentText());
            if (needed > field.width())
                cut << QStringLiteral("%1 \"%2\": %3 px in %4")
                           .arg(box->objectName(), box->currentText())
                           .arg(needed)
                           .arg(field.width());
        }
        const QString timing = cutLabel(child<QLabel>(v, QStringLiteral("workloadTiming")));
        if (!timing.isEmpty()) cut << QStringLiteral("workloadTiming ") + timing;
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral("; "))));
    }

    // 1366×768 cut "571,392 toker", "no queueing", "Shared lin" and the status line, and put
    // Store after out of reach. Every label, check box and spin box of the Workload tab (its
    // charts aside) shows its whole text, and lies where a scroll area can bring it into view.
    void theWorkloadControlsAreWholeAndReachable_data() { addScreens(); }
    void theWorkloadControlsAreWholeAndReachable() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* v = workloadOf(*w);
        const auto inChart = [](const QWidget* c) {
            for (const QWidget* p = c->parentWidget(); p; p = p->parentWidget())
                if (qobject_cast<const ChartView*>(p)) return true;
            return false;
        };
        QStringList bad;
        int checked = 0;
        for (auto* c : v->findChildren<QWidget*>()) {
            if (!c->isVisible() || inChart(c)) continue;
            QString cut;
            if (auto* l = qobject_cast<QLabel*>(c)) {
                cut = cutLabel(l);
            } else if (auto* b = qobject_cast<QCheckBox*>(c)) {
                if (b->sizeHint().width() > b->width() + 1)
                    cut = QStringLiteral("\"%1\" needs %2 px, has %3")
                              .arg(b->text())
                              .arg(b->sizeHint().width())
                              .arg(b->width());
            } else if (auto* sb = qobject_cast<QAbstractSpinBox*>(c)) {
                auto* edit = sb->findChild<QLineEdit*>();
                const int needed = sb->fontMetrics().horizontalAdvance(sb->text());
                if (edit && needed > edit->width())
                    cut = QStringLiteral("\"%1\" needs %2 px, has %3")
                              .arg(sb->text())
                              .arg(needed)
                              .arg(edit->width());
            } else {
                continue;
            }
            ++checked;
            const QString name = c->objectName().isEmpty()
                                     ? QString::fromLatin1(c->metaObject()->className())
                                     : c->objectName();
            if (!cut.isEmpty()) bad << name + QLatin1Char(' ') + cut;
            // Within its scroll area's content, which the area can show whole or scroll to; or,
            // outside any, within the window.
            const QScrollArea* area = nullptr;
            for (const QWidget* p = c->parentWidget(); p && !area; p = p->parentWidget())
                area = qobject_cast<const QScrollArea*>(p);
            const QRect r = inWindow(c, w.get());
            if (!area) {
                if (!w->rect().contains(r))
                    bad << name + QStringLiteral(" lies outside the window");
                continue;
            }
            const QWidget* content = area->widget();
            const QRect inContent(c->mapTo(content, QPoint(0, 0)), c->size());
            const bool scrollsAcross = area->horizontalScrollBarPolicy() != Qt::ScrollBarAlwaysOff;
            if (!content->rect().contains(inContent) ||
                (inContent.right() > area->viewport()->width() && !scrollsAcross))
                bad << name + QStringLiteral(" lies beyond what its scroll area shows");
        }
        QVERIFY(checked > 10);
        QVERIFY2(bad.isEmpty(), qPrintable(bad.join(QStringLiteral("; "))));
    }

    // With the Fleet files imported and one fitted, every entry of the break-even chart's legend
    // shows its whole name (README: every series has its whole name), none cut for room.
    void theBreakevenLegendIsWhole_data() { addScreens(); }
    void theBreakevenLegendIsWhole() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* fleet = fleetPanelOf(w);
        for (int row = 0; row < fleet->model()->rowCount(); ++row)
            if (fleet->model()->at(row).calibration.source.find("node17") != std::string::npos) {
                fleet->selectRow(row);
                QVERIFY(fleet->fitSelected().ok());
            }
        QVERIFY(settled(*w));
        w->setBottomDocksCollapsed(false);
        auto* c = chartOf(w, QStringLiteral("breakeven"));
        tabsOf(w)->setCurrentWidget(c);
        w->refreshNow();
        QApplication::processEvents();
        QTest::qWait(50);
        ChartLegend* legend = legendOf(c);
        QVERIFY(legend);
        QVERIFY(legend->entries().size() > 6);
        const QRectF shown = legend->sceneBoundingRect();
        const QRectF view = c->mapToScene(c->viewport()->rect()).boundingRect();
        QStringList cut;
        for (QGraphicsItem* i : legend->childItems()) {
            const QRectF r = i->sceneBoundingRect();
            if (!shown.contains(r) || !view.contains(r))
                if (auto* t = dynamic_cast<QGraphicsSimpleTextItem*>(i)) cut << t->text();
        }
        QVERIFY2(cut.isEmpty(), qPrintable(QStringLiteral("%1 of %2 entries cut: %3")
                                               .arg(cut.size())
                                               .arg(legend->entries().size())
                                               .arg(cut.join(QStringLiteral("; ")))));
        QVERIFY2(!legend->toolTip().contains(QStringLiteral("Cut for room")),
                 qPrintable(legend->toolTip()));
    }

    // Every tab of the chart area is in view (no scroll arrows hiding Pin table), its title whole.
    void theTabBarShowsEveryTab_data() { addScreens(); }
    void theTabBarShowsEveryTab() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        w->resize(screen.width(), screen.height() - kTitleBar);
        QApplication::processEvents();
        QTabBar* bar = tabsOf(w)->tabBar();
        for (int i = 0; i < bar->count(); ++i) {
            const QRect r = bar->tabRect(i);
            QVERIFY2(bar->rect().contains(r),
                     qPrintable(QStringLiteral("%1 at %2..%3 of a bar %4 px wide")
                                    .arg(bar->tabText(i))
                                    .arg(r.left())
                                    .arg(r.right())
                                    .arg(bar->width())));
            QVERIFY2(r.width() >= bar->fontMetrics().horizontalAdvance(bar->tabText(i)),
                     qPrintable(bar->tabText(i)));
        }
    }

    // The Plan's front: each configuration's name whole in the table; the hover box at the
    // chart's right edge inside the chart.
    void thePlanNamesAndHoverAreWhole_data() { addScreens(); }
    void thePlanNamesAndHoverAreWhole() {
        QFETCH(QSize, screen);
        auto w = crowded(screen);
        QVERIFY(w);
        auto* section = child<PlanSection>(w.get(), QStringLiteral("planSection"));
        innerTabs(*w)->setCurrentWidget(section);
        auto* table = child<QTableWidget>(section, QStringLiteral("planTable"));
        QVERIFY(QTest::qWaitFor(
            [&] { return !section->computing() && !section->scheduled() && table->rowCount() > 0; },
            300000));
        QApplication::processEvents();
        QStringList cut;
        const int margin = 2 * (table->style()->pixelMetric(QStyle::PM_FocusFrameHMargin) + 1);
        for (int r = 0; r < table->rowCount(); ++r) {
            const QString text = table->item(r, 0)->text();
            const int width = table->columnWidth(0) - margin;
            const QVariant font = table->item(r, 0)->data(Qt::FontRole);
            const QFontMetrics fm(font.isValid() ? font.value<QFont>() : table->font());
            const int needed =
                table->wordWrap()
                    ? fm.boundingRect(QRect(0, 0, width, 100000), Qt::TextWordWrap, text).height()
                    : fm.height();
            const bool fits = table->wordWrap() ? needed <= table->rowHeight(r)
                                                : fm.horizontalAdvance(text) <= width;
            if (!fits) cut << text;
        }
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral("; "))));

        auto* c = qobject_cast<ChartView*>(workloadOf(*w)->visibleChart());
        QVERIFY(c);
        QGraphicsRectItem* box = nullptr;
        for (QGraphicsItem* i : c->scene()->items())
            if (auto* r = qgraphicsitem_cast<QGraphicsRectItem*>(i); r && r->zValue() == 100)
                box = r;
        QVERIFY(box);
        const PlanPtr& plan = section->plan();
        QVERIFY(plan && plan->result && !plan->result->points.empty());
        // The tab scrolls where it is short: the chart in view, as a user would scroll to it.
        auto* scroll = child<QScrollArea>(workloadOf(*w), QStringLiteral("workloadScroll"));
        scroll->verticalScrollBar()->setValue(c->mapTo(scroll->widget(), QPoint(0, 0)).y());
        QApplication::processEvents();
        const QRectF view = c->mapToScene(c->viewport()->rect()).boundingRect();
        // Over each point right of the middle, where the box must turn to the left.
        int hovered = 0;
        for (const PlanPoint& p : plan->result->points) {
            const QPointF at = c->chart()->mapToPosition(
                QPointF(p.capexUsd, PlanChart::ttftSavedS(*plan->result, p) * 1e3));
            if (at.x() < c->chart()->plotArea().center().x() ||
                !c->chart()->plotArea().contains(at))
                continue;
            // Straight to the chart (QTest::mouseMove goes through the window system, whose
            // mapping at QT_SCALE_FACTOR=2 missed the chart).
            const QPointF local = c->mapFromScene(at);
            QMouseEvent move(QEvent::MouseMove, local, c->viewport()->mapToGlobal(local),
                             Qt::NoButton, Qt::NoButton, Qt::NoModifier);
            QApplication::sendEvent(c->viewport(), &move);
            QApplication::processEvents();
            if (!box->isVisible()) continue;
            ++hovered;
            const QRectF r = box->sceneBoundingRect();
            QVERIFY2(view.contains(r),
                     qPrintable(QStringLiteral("box %1..%2 × %3..%4 in a view %5 × %6")
                                    .arg(r.left())
                                    .arg(r.right())
                                    .arg(r.top())
                                    .arg(r.bottom())
                                    .arg(view.width())
                                    .arg(view.height())));
        }
        QVERIFY(hovered > 0);
    }
};

QTEST_MAIN(TestUiTextFit)
#include "tst_ui_text_fit.moc"
