// What `kvbe --export` does, without a window: compute the scenario with core, draw one chart of
// the chart table (chart_catalog.h) and write it (chart_export.h). The chart's row says what else
// the export takes: a trace chart replays `trace` through the scenario's tiers with the Workload
// view's default settings; `imports` are read as the Fleet view reads them and drawn where the
// chart draws imported files; `tier` picks the tier of a chart drawn for one tier, and `target`
// the latency target of a chart drawn for one (computed here, on the calling thread).
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/ui/charts/chart_view.h"

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace kvbe {

struct HeadlessExport {
    QString chart = QStringLiteral("breakeven"); // a key of the chart table
    QString path;                                // .png, .svg or .pdf
    QSize size{1600, 900};
    ChartStyle style;
    std::optional<int> tier; // from 0; unset: the first, for a chart drawn for one tier
    QStringList imports;     // calibration files or folders
    QString trace;           // a request trace, for the trace charts
    QString target;          // a latency target ("p99=5s"), for the charts drawn for one
    // A live replay's folder (probe replay --out) and the engine's cache to model on it
    // (trace replay --engine), for the workload-live chart.
    QString live, engine;
    bool asRouted = false; // each request on the server the live run sent it to
};

// A file that cannot be read, a combination the chart cannot draw (a trace chart without a
// trace, imports on a chart that draws none) or a file that cannot be written fails with one
// sentence; nothing is written then.
Status exportHeadless(const Presets& presets, const Scenario& scenario,
                      const HeadlessExport& request);

// What `kvbe --help` says of --chart, from the chart table: the scenario charts, and the
// trace charts that go with --trace.
QString chartOptionHelp();
// The --tier option's help: the charts drawn for one tier.
QString tierOptionHelp();
// The --slo option's help: the charts drawn for a latency target.
QString targetOptionHelp();

} // namespace kvbe
