// Shared by the explorer's tests: a clean settings store, presets, and the window under test.
#pragma once

#include "kvbe/cost/curves.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/charts/workload_charts.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/probes/probe_panel.h"
#include "kvbe/ui/scenario/number_field.h"
#include "kvbe/ui/scenario/scenario_panel.h"
#include "kvbe/ui/scenario/tier_table_model.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMenu>
#include <QMenuBar>
#include <QSettings>
#include <QSlider>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include <algorithm>
#include <memory>

namespace kvbe::test {

// Test mode sends QSettings and QStandardPaths to a throwaway location; clearing it makes every
// window start from the default scenario.
inline void isolateSettings() {
    QStandardPaths::setTestModeEnabled(true);
    // One store per suite: ctest -j runs suites side by side, and a shared one let a suite's
    // saved scenario open in another suite's window (one suite's window once showed 35 % for 50 %).
    QCoreApplication::setOrganizationName(QStringLiteral("kvbe-tests"));
    QCoreApplication::setApplicationName(
        QFileInfo(QCoreApplication::applicationFilePath()).completeBaseName());
    QSettings().clear();
}

#ifdef KVBE_FAKE_PROBE_PATH
// Suites that run probes, once: the window's kvbe-cli is the fake probe (fake_probe.cpp).
inline void useFakeProbe() {
    qputenv("KVBE_CLI", KVBE_FAKE_PROBE_PATH);
}
// Before each test: the fake probe behaves as a probe that succeeds, at full speed.
inline void resetFakeProbe() {
    qunsetenv("KVBE_FAKE_PROBE");
    qunsetenv("KVBE_FAKE_PROBE_DELAY_MS");
}
#endif

inline const Presets& presets() {
    static const Presets p = [] {
        auto r = Presets::loadBuiltin();
        if (!r) qFatal("built-in presets do not load: %s", r.message().c_str());
        return *r;
    }();
    return p;
}

// The GPU's preset name as the window's labels shorten it ("H200 SXM 141GB").
inline QString gpuLabel(const char* key) {
    return QString::fromStdString(presets().findGpu(key)->name).remove(QStringLiteral("NVIDIA "));
}

inline std::unique_ptr<MainWindow> makeWindow() {
    auto w = std::make_unique<MainWindow>(presets());
    w->resize(1400, 900);
    w->refreshNow();
    return w;
}

// A window on the seed's illustrative scenario (resources/scenarios/illustrative.kvbe.json:
// u = 50 %, three tiers with the presets' nominal fixed costs), opened by name as
// `kvbe --scenario illustrative` opens it: for the tests whose figures were worked out on it,
// so that they do not move with the default scenario's fit to the published figures.
inline std::unique_ptr<MainWindow> makeIllustrativeWindow() {
    auto w = makeWindow();
    if (auto st = w->openFile(QStringLiteral("illustrative")); !st)
        qFatal("illustrative scenario: %s", st.message().c_str());
    w->refreshNow();
    return w;
}

// Core's own numbers for a scenario: the oracle the charts are held to.
struct Reference {
    Evaluation eval;
    CurveSet curves;
};
inline Reference reference(const Scenario& s) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("reference scenario does not evaluate: %s", e.message().c_str());
    // The charts stop at the model's context.
    const auto tokens =
        lengthGrid(s.lengths.minTokens, std::min(s.lengths.maxTokens, e->model.contextLimit),
                   s.lengths.points, s.lengths.log);
    CurveSet c = computeCurves(e->cost, e->tiers, tokens, s.cachedFraction);
    return {std::move(*e), std::move(c)};
}

// The descendant of `parent` of type T with this object name. A missing one stops the suite with
// its name: a renamed control is reported as such, not as a null pointer further on.
template <class T> T* child(const QObject* parent, const QString& name) {
    T* c = parent->findChild<T*>(name);
    if (!c) qFatal("no %s named \"%s\"", T::staticMetaObject.className(), qPrintable(name));
    return c;
}

// The window's parts, found by object name as a user's tools would find them.
template <class W> Explorer* explorerOf(const W& w) {
    return child<Explorer>(&*w, QStringLiteral("explorer"));
}
template <class W> ChartView* chartOf(const W& w, const QString& key) {
    return child<ChartView>(&*w, key + QStringLiteral("Chart"));
}
template <class W> std::vector<ChartView*> chartsOf(const W& w) {
    std::vector<ChartView*> charts;
    for (const QString& key : chartKeys(ChartSource::Scenario))
        charts.push_back(chartOf(w, key));
    return charts;
}
// A chart's legend: the item named "chartLegend" in its scene (chart_legend.h).
inline ChartLegend* legendOf(const ChartView* c) {
    for (QGraphicsItem* i : c->scene()->items())
        if (auto* l = dynamic_cast<ChartLegend*>(i); l && l->objectName() == "chartLegend")
            return l;
    return nullptr;
}
template <class W> QTabWidget* tabsOf(const W& w) {
    return child<QTabWidget>(&*w, QStringLiteral("chartTabs"));
}
template <class W> ChartView* currentChartOf(const W& w) {
    QWidget* page = tabsOf(w)->currentWidget();
    if (auto* chart = qobject_cast<ChartView*>(page)) return chart;
    if (auto* workload = qobject_cast<WorkloadView*>(page)) return workload->visibleChart();
    return page->findChild<ChartView*>();
}
// An action of the menu bar by its text, without the mnemonic.
inline QAction* menuAction(MainWindow* w, const QString& text) {
    for (QAction* menu : w->menuBar()->actions())
        if (menu->menu())
            for (QAction* a : menu->menu()->actions())
                if (a->text().remove(QLatin1Char('&')).startsWith(text)) return a;
    return nullptr;
}
template <class W> ProbePanel* probePanelOf(const W& w) {
    return child<ProbePanel>(&*w, QStringLiteral("probePanel"));
}
template <class W> FleetPanel* fleetPanelOf(const W& w) {
    return child<FleetPanel>(&*w, QStringLiteral("fleetPanel"));
}

// The scenario panel's controls by object name (ui/src/scenario/scenario_panel.cpp names them).
struct PanelControls {
    ScenarioPanel* panel;
    template <class T> T* get(const char* name) const {
        return child<T>(panel, QLatin1String(name));
    }
    QLineEdit* nameField() const { return get<QLineEdit>("name"); }
    QComboBox* modelBox() const { return get<QComboBox>("model"); }
    QComboBox* gpuBox() const { return get<QComboBox>("gpu"); }
    NumberField* peakField() const { return get<NumberField>("peak"); }
    QComboBox* computeDtypeBox() const { return get<QComboBox>("computeDtype"); }
    QSlider* utilisationSlider() const { return get<QSlider>("utilisation"); }
    QComboBox* flopModelBox() const { return get<QComboBox>("flopModel"); }
    QComboBox* kvDtypeBox() const { return get<QComboBox>("kvDtype"); }
    QComboBox* tensorParallelBox() const { return get<QComboBox>("tensorParallel"); }
    QComboBox* stateDtypeBox() const { return get<QComboBox>("stateDtype"); }
    QString modelInfoText() const { return get<QLabel>("modelInfo")->text(); }
    QCheckBox* sharedPathBox() const { return get<QCheckBox>("sharedPath"); }
    TierTableModel* tierModel() const { return get<TierTableModel>("tierModel"); }
    QTableView* tierView() const { return get<QTableView>("tierView"); }
    QSlider* fractionSlider() const { return get<QSlider>("fraction"); }
    NumberField* minTokensField() const { return get<NumberField>("minTokens"); }
    NumberField* maxTokensField() const { return get<NumberField>("maxTokens"); }
    QCheckBox* logLengthsBox() const { return get<QCheckBox>("logLengths"); }
    NumberField* sweepTokensField() const { return get<NumberField>("sweepTokens"); }
    QString messageText() const { return get<QLabel>("message")->text(); }
    // Chooses a GPU preset as the user does (the combo box's activated signal).
    void pickGpu(const QString& key) const {
        QComboBox* box = gpuBox();
        const int i = box->findData(key);
        QVERIFY2(i >= 0, qPrintable(key));
        box->setCurrentIndex(i);
        emit box->activated(i);
    }
    void showScenario() const { panel->showScenario(); }
    bool selectModel(const QString& ref) const { return panel->selectModel(ref); }
};
template <class W> PanelControls panelOf(const W& w) {
    return {child<ScenarioPanel>(&*w, QStringLiteral("scenarioPanel"))};
}

inline bool sameValue(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + 1e-300;
}

} // namespace kvbe::test
