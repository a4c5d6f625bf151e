// The study's published figures in the explorer: the fitted scenario offered by name, published
// markers with value and source on hover, the View toggle, and "nominal" on preset fixed costs.
#include "ui_test_support.h"

#include "kvbe/calibration/published.h"
#include "kvbe/scenario/builtin_scenarios.h"
#include "kvbe/ui/results/scenario_result.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/scenario/tier_table_model.h"

#include <QAction>
#include <QApplication>
#include <QScatterSeries>

using namespace kvbe;
using namespace kvbe::test;

namespace {

const QString kFitted = QStringLiteral("Llama 3.2 3B on the study's H100 node, fitted");

QAction* actionNamed(QWidget* w, const QString& text) {
    for (auto* a : w->findChildren<QAction*>())
        if (QString(a->text()).remove(QLatin1Char('&')) == text) return a;
    return nullptr;
}

bool hasPoint(const QList<QPointF>& pts, QPointF want) {
    for (const auto& p : pts)
        if (sameValue(p.x(), want.x(), 1e-9) && sameValue(p.y(), want.y(), 1e-9)) return true;
    return false;
}

} // namespace

class TestUiPublished : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void fittedScenarioShowsPublishedMarkers() {
        auto w = makeWindow();
        w->show(); // hover finds markers in pixels: the chart needs a plot area
        QVERIFY(QTest::qWaitForWindowExposed(w.get()));
        QAction* open = actionNamed(w.get(), kFitted);
        QVERIFY2(open, "File > Built-in scenarios offers the fitted scenario by name");
        open->trigger();
        w->refreshNow();
        QCOMPARE(QString::fromStdString(explorerOf(w)->scenario().name), kFitted);

        auto* be = chartOf(w, "breakeven");
        auto* markers = be->seriesByKey(kPublishedKey);
        QVERIFY(markers);
        QVERIFY(!be->isSeriesHidden(kPublishedKey));
        // Three B* at their N, two p* on their tier's bandwidth line.
        const auto pts = markers->points();
        QCOMPARE(pts.size(), 5);
        QVERIFY(hasPoint(pts, {1024, 23.2}));
        QVERIFY(hasPoint(pts, {8192, 10.4}));
        QVERIFY(hasPoint(pts, {81920, 3.5}));
        // A marker looks like neither a tier nor a measured point.
        auto* scatter = qobject_cast<QScatterSeries*>(markers);
        QVERIFY(scatter);
        QCOMPARE(scatter->markerShape(), QScatterSeries::MarkerShapeRotatedRectangle);

        const QString tip = be->hoverText(QPointF(1024, 23.2));
        QVERIFY2(tip.contains(QStringLiteral(
                     "published: B* 23.2 GB/s at 1k tokens (arXiv 2609.11744, section 5)")),
                 qPrintable(tip));
        QVERIFY(!be->hoverText(QPointF(40000, 100)).contains(QStringLiteral("published")));

        // f* at 8k and 80k, p* at (p*, 100 %) on the fraction chart (in per cent).
        auto* fr = chartOf(w, "fraction")->seriesByKey(kPublishedKey);
        QVERIFY(fr);
        QCOMPARE(fr->points().size(), 4);
        QVERIFY(hasPoint(fr->points(), {8192, 77.8}));
        QVERIFY(hasPoint(fr->points(), {6057, 100.0}));
    }

    // Two references that both match the scenario: the window shows the figures of both (the
    // rule of publishedMatches, as `kvbe-cli published compare` does), not only the first.
    void everyMatchingReferenceIsShown() {
        auto refs = builtinPublishedReferences(presets());
        QVERIFY(refs && !refs->empty());
        PublishedReference first = refs->front();
        PublishedReference second = first;
        second.name = "A second study of the same node";
        second.file = "second.json";
        for (auto& p : second.points)
            p.value *= 2;
        auto s = defaultScenario(presets());
        QVERIFY(s);
        auto e = evaluate(*s, presets());
        QVERIFY(e);
        const size_t perReference = matchingPoints(first, *e).size();
        QVERIFY(perReference > 0);

        ScenarioResult r;
        r.eval = std::make_shared<Evaluation>(*e);
        addPublished(r, {first, second});
        QCOMPARE(r.published.size(), 2 * perReference);
        QCOMPARE(r.publishedName, QString::fromStdString(first.name) +
                                      QStringLiteral("; A second study of the same node"));
        for (size_t i = 0; i < perReference; ++i)
            QCOMPARE(r.published[perReference + i].point.value, 2 * r.published[i].point.value);
    }

    void viewTogglesPublishedMarkers() {
        auto w = makeWindow(); // the default scenario: the study's model on an H100, so shown
        QVERIFY(chartOf(w, "breakeven")->seriesByKey(kPublishedKey));
        QAction* toggle = actionNamed(w.get(), QStringLiteral("Published figures"));
        QVERIFY(toggle && toggle->isCheckable() && toggle->isChecked());
        toggle->setChecked(false);
        for (auto* c : chartsOf(w))
            QVERIFY(c->isSeriesHidden(kPublishedKey));
        QVERIFY(!chartOf(w, "breakeven")
                     ->hoverText(QPointF(1024, 23.2))
                     .contains(QStringLiteral("published")));
        toggle->setChecked(true);
        for (auto* c : chartsOf(w))
            QVERIFY(!c->isSeriesHidden(kPublishedKey));
    }

    void noMarkersForAnotherModel() {
        auto w = makeWindow();
        Scenario s = explorerOf(w)->scenario();
        s.model = "meta-llama/Llama-3.3-70B-Instruct";
        explorerOf(w)->setScenario(s);
        w->refreshNow();
        auto* m = chartOf(w, "breakeven")->seriesByKey(kPublishedKey);
        QVERIFY(!m || m->points().isEmpty() || !m->isVisible());
    }

    // The fitted scenario, fitted on Llama 3.2 3B (28 layers), carried to Qwen3 4B when the
    // model is changed in the panel: its fixed costs per layer scale to 36 layers, the tier
    // table shows them on the new model, and the tooltip says so.
    void fittedScenarioCarriedToAnotherModel() {
        auto w = makeWindow();
        actionNamed(w.get(), kFitted)->trigger();
        w->refreshNow();
        const auto pc = panelOf(w);
        auto* m = pc.tierModel();
        const Scenario fitted = explorerOf(w)->scenario();
        QCOMPARE(fitted.fittedOn.size(), size_t(1));
        QCOMPARE(fitted.fittedOn[0].layers, 28);
        const QModelIndex cell = m->index(1, TierTableModel::FixedCost); // the NVMe tier
        const double tLayerMs = fitted.tiers[1].tLayerUs * 1e-3;
        QVERIFY(tLayerMs > 0);
        QVERIFY(sameValue(m->data(cell, Qt::EditRole).toString().toDouble(), 28 * tLayerMs, 1e-5));
        QVERIFY(!m->data(cell, Qt::ToolTipRole).toString().contains(QStringLiteral("scaled")));

        QVERIFY(pc.selectModel(QStringLiteral("Qwen/Qwen3-4B-Instruct-2507")));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().model, std::string("Qwen/Qwen3-4B-Instruct-2507"));
        // The scenario keeps its form: t0 and t_layer as fitted, evaluated with 36 layers.
        QCOMPARE(explorerOf(w)->scenario().tiers, fitted.tiers);
        QVERIFY(sameValue(m->data(cell, Qt::EditRole).toString().toDouble(), 36 * tLayerMs, 1e-5));
        const QString tip = m->data(cell, Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("fixed cost scaled to 36 layers")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("Fitted on meta-llama/Llama-3.2-3B (28 layers")),
                 qPrintable(tip));
        // The charts use the fixed cost on Qwen3 4B: its published p* within 10 %.
        const auto& rows = explorerOf(w)->result()->published;
        int checked = 0;
        for (const auto& r : rows)
            if (r.point.quantity == PublishedQuantity::BreakevenPrefix) {
                QVERIFY2(r.model && std::abs(*r.relative()) < 0.10, r.point.id.c_str());
                ++checked;
            }
        QCOMPARE(checked, 2);

        // An edit of the cell sets the fixed cost on this model and keeps the form.
        QVERIFY(m->setData(cell, QStringLiteral("7.2"), Qt::EditRole));
        w->refreshNow();
        const auto& t = explorerOf(w)->scenario().tiers[1];
        QCOMPARE(t.tFixedMs, 0.0);
        QVERIFY(sameValue(t.tLayerUs, 7.2e3 / 36, 1e-12));
    }

    // The window opens on the default scenario, fitted to the study: every B*, f* and p* it
    // shows beside the published figures is within 10 % of them, and no fixed cost says
    // nominal (issue 40, item 9). The seed's illustrative scenario is one menu entry away.
    void firstScreenAgreesWithTheStudy() {
        auto w = makeWindow();
        int checked = 0;
        for (const auto& r : explorerOf(w)->result()->published) {
            if (r.point.quantity == PublishedQuantity::Bandwidth) continue;
            QVERIFY2(r.model && std::abs(*r.relative()) <= 0.10, r.point.id.c_str());
            ++checked;
        }
        QCOMPARE(checked, 7);
        // The fitted fixed cost in the legend as the tier table shows it (it read 5.74332 ms).
        auto* dotted = chartOf(w, "breakeven")->seriesByKey(QStringLiteral("tier/0/bstar"));
        QVERIFY(dotted);
        QVERIFY2(dotted->name().endsWith(QStringLiteral("B* with 5.74 ms fixed cost")),
                 qPrintable(dotted->name()));
        auto* m = panelOf(w).tierModel();
        for (int row = 0; row < m->rowCount(); ++row)
            QVERIFY(!m->data(m->index(row, TierTableModel::FixedCost), Qt::DisplayRole)
                         .toString()
                         .contains(QStringLiteral("nominal")));
        QAction* seed = nullptr;
        for (auto* a : w->findChildren<QAction*>())
            if (a->text().contains(QStringLiteral("illustrative"))) seed = a;
        QVERIFY2(seed, "File > Built-in scenarios offers the illustrative scenario by name");
        seed->trigger();
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario(), *builtinScenario("illustrative", presets()));
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.5);
    }

    void presetFixedCostsSayNominal() {
        auto w = makeWindow();
        // The illustrative scenario, by its name as kvbe --scenario takes it: the presets' own
        // fixed costs.
        QVERIFY(w->openFile(QStringLiteral("illustrative")).ok());
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().utilisation, 0.5);
        auto* m = panelOf(w).tierModel();
        const QString shown =
            m->data(m->index(0, TierTableModel::FixedCost), Qt::DisplayRole).toString();
        QVERIFY2(shown.endsWith(QStringLiteral("(nominal)")), qPrintable(shown));
        // Editing starts from the bare number.
        QVERIFY(!m->data(m->index(0, TierTableModel::FixedCost), Qt::EditRole)
                     .toString()
                     .contains(QStringLiteral("nominal")));
        QVERIFY(m->data(m->index(0, TierTableModel::FixedCost), Qt::ToolTipRole)
                    .toString()
                    .contains(QStringLiteral("not measured or fitted")));
        QVERIFY(
            chartOf(w, "breakeven")->chart()->title().contains(QStringLiteral("nominal t_fixed")));

        actionNamed(w.get(), kFitted)->trigger();
        w->refreshNow();
        for (int row = 0; row < m->rowCount(); ++row)
            QVERIFY(!m->data(m->index(row, TierTableModel::FixedCost), Qt::DisplayRole)
                         .toString()
                         .contains(QStringLiteral("nominal")));
        QVERIFY(!chartOf(w, "breakeven")->chart()->title().contains(QStringLiteral("nominal")));
    }
};

QTEST_MAIN(TestUiPublished)
#include "tst_ui_published.moc"
