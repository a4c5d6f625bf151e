// The charts, one table: each chart's key (what `kvbe --chart` accepts), its title, how to make
// it and what it can draw. The window's tabs, the Workload view's tabs, `kvbe --chart` with its
// help and its errors, and the headless export all read this table; a chart's class says none of
// it again. A new chart is its own files and one line in chart_catalog.cpp.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/ui/charts/implied_overlay.h"
#include "kvbe/ui/charts/ttft_chart.h"

#include <QStringList>

#include <memory>
#include <vector>

namespace kvbe {

class ChartView;

// What imported calibration files (the Fleet view, `kvbe --import`) draw on the charts: nodes'
// measured curves and a fit's curves on the TTFT chart, the B* and p* py-kvcache v2 files imply
// on the break-even and minimum-fraction charts.
struct ImportDrawing {
    std::vector<TtftChart::Overlay> curves;
    std::vector<ImpliedOverlay> implied;
};

// What a chart is drawn from: the scenario alone (the window's tabs), or a request trace
// replayed through the scenario besides (the Workload view's tabs, `kvbe --trace`).
enum class ChartSource { Scenario, Trace };

struct ChartKind {
    QString key;       // "breakeven": --chart, object names, export file names
    const char* title; // the tab's title, untranslated (ChartView::title translates it)
    // The window's tab title where the full ones do not fit (2560×1600 at ×2), untranslated, in
    // ChartView's context; null where the title is short enough.
    const char* shortTitle;
    ChartSource source;
    const QMetaObject* type;
    std::unique_ptr<ChartView> (*create)(QWidget* parent);
    // The tier the chart is drawn for (`kvbe --tier`, from 0); null where it draws every tier.
    void (*setTier)(ChartView& chart, int tier) = nullptr;
    // Draws imported files on the chart; null where it draws none.
    void (*drawImports)(ChartView& chart, const ImportDrawing& imports) = nullptr;
    // The latency target the chart is drawn for (`kvbe --slo`, "p99=5s"); null where it draws
    // none. Fails with a sentence on text that does not parse.
    Status (*setTarget)(ChartView& chart, const QString& target) = nullptr;
    // Computes on the calling thread what the chart draws beyond the trace's replay (the window
    // computes it on a worker); null where the replay is all it draws.
    Status (*computeNow)(ChartView& chart) = nullptr;
};

// Every chart, in the order of their tabs.
const std::vector<ChartKind>& chartKinds();
// The keys of the charts drawn from `source`, in that order.
QStringList chartKeys(ChartSource source);
// The chart of that key; null for an unknown key.
const ChartKind* findChartKind(const QString& key);
// A chart's row in the table, by its class; null for a class the table does not list.
const ChartKind* chartKindOf(const ChartView& chart);
// A new chart of the given key; null for an unknown key.
std::unique_ptr<ChartView> createChart(const QString& key, QWidget* parent = nullptr);
// The imports onto each chart among `charts` that draws them.
void drawImports(const ImportDrawing& imports, const std::vector<ChartView*>& charts);

} // namespace kvbe
