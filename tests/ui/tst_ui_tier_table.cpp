// The scenario panel's tier table (TierTableModel, TierBox): bandwidths and fitted fixed costs
// with a few digits (the editor keeps them all), names that wrap rather than lose their middle,
// and a custom tier pipelined like the NVMe presets.
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QHeaderView>
#include <QMenu>
#include <QTableView>
#include <QToolButton>

using namespace kvbe;
using namespace kvbe::test;

class TestUiTierTable : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    // A model of another depth moved every fixed cost (5.74 → 16.4 ms from 3B to 70B, a part
    // per layer) with nothing said. The panel now says which moved, and how far.
    void aModelSwitchSaysTheFixedCostsMoved() {
        auto w = makeWindow();
        const PanelControls p = panelOf(w);
        QVERIFY(p.messageText().isEmpty());
        QVERIFY(p.selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        w->refreshNow();
        QVERIFY(QTest::qWaitFor([&] { return !explorerOf(w)->recomputePending(); }, 30000));
        const QString m = p.messageText();
        QVERIFY2(m.contains(QStringLiteral("80 layers, not 28")), qPrintable(m));
        QVERIFY2(m.contains(QString::fromUtf8("5.74 \u2192 16.4 ms")), qPrintable(m));
    }

    void tierBandwidthsReadWithASensiblePrecision() {
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.tiers[1].bandwidthGBps = 12.5031;
        explorerOf(w)->edit(s, QStringLiteral("measured"));
        auto* table = w->findChild<QTableView*>(QStringLiteral("tierView"));
        QVERIFY(table);
        const QModelIndex idx = table->model()->index(1, 1);
        QCOMPARE(idx.data(Qt::DisplayRole).toString(), QStringLiteral("12.5"));
        // Edited, the value is whole.
        QCOMPARE(idx.data(Qt::EditRole).toString(), QStringLiteral("12.5031"));
    }

    // An adopted fit's t_fixed of 5.74332 ms shows as 5.74 (the editor keeps every digit); the
    // tier names wrap onto a second line of their row instead of losing their middle.
    void tierTableShowsFewDigitsAndWholeNames() {
        auto w = makeIllustrativeWindow(); // no per-layer part in its fixed costs
        w->show();
        Scenario s = explorerOf(w)->scenario();
        s.tiers[0].tFixedMs = 5.74332;
        explorerOf(w)->edit(s, QStringLiteral("fitted"));
        QApplication::processEvents();
        auto* view = child<QTableView>(w.get(), QStringLiteral("tierView"));
        auto* m = view->model();
        QCOMPARE(m->index(0, TierTableModel::FixedCost).data().toString(), QStringLiteral("5.74"));
        QCOMPARE(m->index(0, TierTableModel::FixedCost).data(Qt::EditRole).toString(),
                 QStringLiteral("5.74332"));
        const QString name = m->index(0, TierTableModel::Name).data().toString();
        QCOMPARE(name, QStringLiteral("Host DRAM (PCIe 5.0)"));
        QVERIFY(view->wordWrap());
        const int column = view->columnWidth(TierTableModel::Name);
        const QFontMetrics fm(view->font());
        if (fm.horizontalAdvance(name) + 8 > column)
            QVERIFY2(view->rowHeight(0) >= 2 * fm.height(),
                     qPrintable(QStringLiteral("a row of %1 px for a name of %2 px in %3 px")
                                    .arg(view->rowHeight(0))
                                    .arg(fm.horizontalAdvance(name))
                                    .arg(column)));
    }

    void aCustomTierIsPipelinedLikeTheNvmePresets() {
        auto w = makeWindow();
        auto* add = w->findChild<QToolButton*>(QStringLiteral("addTier"));
        QVERIFY(add && add->menu());
        QAction* custom = nullptr;
        for (QAction* a : add->menu()->actions())
            if (a->text().startsWith(QStringLiteral("Custom"))) custom = a;
        QVERIFY(custom);
        custom->trigger();
        w->refreshNow();
        const auto& tiers = explorerOf(w)->scenario().tiers;
        QCOMPARE(QString::fromStdString(std::string(toString(tiers.back().staging))),
                 QString::fromStdString(std::string(toString(Staging::Pipelined))));
    }
};

QTEST_MAIN(TestUiTierTable)
#include "tst_ui_tier_table.moc"
