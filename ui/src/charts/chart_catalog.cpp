#include "kvbe/ui/charts/chart_catalog.h"

#include "kvbe/ui/charts/breakeven_chart.h"
#include "kvbe/ui/charts/capacity_chart.h"
#include "kvbe/ui/charts/fraction_chart.h"
#include "kvbe/ui/charts/frontier_chart.h"
#include "kvbe/ui/charts/link_chart.h"
#include "kvbe/ui/charts/live_chart.h"
#include "kvbe/ui/charts/model_size_chart.h"
#include "kvbe/ui/charts/plan_chart.h"
#include "kvbe/ui/charts/router_chart.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/charts/workload_charts.h"

#include <QCoreApplication>

namespace kvbe {

namespace {

using Tier = void (*)(ChartView&, int);
using Imports = void (*)(ChartView&, const ImportDrawing&);
using Target = Status (*)(ChartView&, const QString&);
using Compute = Status (*)(ChartView&);

template <class T>
ChartKind row(const char* key, const char* title, const char* shortTitle, ChartSource source,
              Tier tier = nullptr, Imports imports = nullptr, Target target = nullptr,
              Compute compute = nullptr) {
    return {
        QLatin1String(key),
        title,
        shortTitle,
        source,
        &T::staticMetaObject,
        [](QWidget* parent) -> std::unique_ptr<ChartView> { return std::make_unique<T>(parent); },
        tier,
        imports,
        target,
        compute};
}

// What the charts that draw a tier or imports are given, by their own setters.
void frontierTier(ChartView& c, int tier) {
    static_cast<FrontierChart&>(c).setTier(tier);
}
template <class T> void drawImplied(ChartView& c, const ImportDrawing& d) {
    static_cast<T&>(c).setImplied(d.implied);
}
void drawCurves(ChartView& c, const ImportDrawing& d) {
    static_cast<TtftChart&>(c).setOverlays(d.curves);
}
Status capacityTarget(ChartView& c, const QString& target) {
    return static_cast<SloCapacityChart&>(c).setTargetText(target);
}
Status capacityNow(ChartView& c) {
    return static_cast<SloCapacityChart&>(c).computeNow();
}
Status planNow(ChartView& c) {
    return static_cast<PlanChart&>(c).computeNow();
}

// Titles are translated where they are shown (ChartView::title, the window's tabs), in
// ChartView's context.
#define KVBE_TITLE(text) QT_TRANSLATE_NOOP("kvbe::ChartView", text)

} // namespace

const std::vector<ChartKind>& chartKinds() {
    constexpr auto S = ChartSource::Scenario, T = ChartSource::Trace;
    static const std::vector<ChartKind> kinds = {
        row<BreakevenChart>("breakeven", KVBE_TITLE("Break-even bandwidth"),
                            KVBE_TITLE("Break-even"), S, nullptr, drawImplied<BreakevenChart>),
        row<FractionChart>("fraction", KVBE_TITLE("Minimum cached fraction"),
                           KVBE_TITLE("Cached fraction"), S, nullptr, drawImplied<FractionChart>),
        row<TtftChart>("ttft", KVBE_TITLE("Time to first token"), KVBE_TITLE("TTFT"), S, nullptr,
                       drawCurves),
        row<ModelSizeChart>("models", KVBE_TITLE("Model size"), nullptr, S),
        row<FrontierChart>("frontier", KVBE_TITLE("Frontier map"), KVBE_TITLE("Frontier"), S,
                           frontierTier),
        row<PromptLengthChart>("workload-lengths", KVBE_TITLE("Prompt lengths"), nullptr, T),
        row<CapacityChart>("workload-capacity", KVBE_TITLE("Cache size"), nullptr, T),
        row<TtftDistributionChart>("workload-ttft", KVBE_TITLE("TTFT distribution"), nullptr, T),
        // Drawn under the TTFT distribution, in its tab (workload_view.cpp).
        row<LinkUseChart>("workload-links", KVBE_TITLE("Links over time"), nullptr, T),
        row<RouterChart>("workload-routers", KVBE_TITLE("Routers"), nullptr, T),
        // In its tab with the live replay's folder and the figures (live_section.cpp).
        row<LiveChart>("workload-live", KVBE_TITLE("Live replay"), nullptr, T),
        row<SloCapacityChart>("capacity", KVBE_TITLE("Capacity"), nullptr, T, nullptr, nullptr,
                              capacityTarget, capacityNow),
        row<PlanChart>("plan", KVBE_TITLE("Plan"), nullptr, T, nullptr, nullptr, nullptr, planNow),
    };
    return kinds;
}

QStringList chartKeys(ChartSource source) {
    QStringList keys;
    for (const auto& k : chartKinds())
        if (k.source == source) keys << k.key;
    return keys;
}

const ChartKind* findChartKind(const QString& key) {
    for (const auto& k : chartKinds())
        if (k.key == key) return &k;
    return nullptr;
}

const ChartKind* chartKindOf(const ChartView& chart) {
    for (const auto& k : chartKinds())
        if (k.type == chart.metaObject()) return &k;
    return nullptr;
}

std::unique_ptr<ChartView> createChart(const QString& key, QWidget* parent) {
    const ChartKind* k = findChartKind(key);
    return k ? k->create(parent) : nullptr;
}

QString ChartView::key() const {
    const ChartKind* k = chartKindOf(*this);
    return k ? k->key : QString();
}

QString ChartView::title() const {
    const ChartKind* k = chartKindOf(*this);
    return k ? tr(k->title) : QString();
}

void drawImports(const ImportDrawing& imports, const std::vector<ChartView*>& charts) {
    for (ChartView* c : charts)
        if (const ChartKind* k = chartKindOf(*c); k && k->drawImports) k->drawImports(*c, imports);
}

} // namespace kvbe
