// The five charts by name: what --chart accepts and what the window's tabs hold, in order.
#pragma once

#include "kvbe/ui/charts/chart_view.h"

#include <QStringList>

#include <memory>

namespace kvbe {

QStringList chartKeys(); // breakeven, fraction, ttft, models, frontier
// The Workload view's charts (they need a trace): workload-lengths, workload-capacity,
// workload-ttft.
QStringList workloadChartKeys();
// A new chart of the given kind (either list); null for an unknown key.
std::unique_ptr<ChartView> createChart(const QString& key, QWidget* parent = nullptr);

} // namespace kvbe
