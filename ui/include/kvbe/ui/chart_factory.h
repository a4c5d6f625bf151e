// The five charts by name: what --chart accepts and what the window's tabs hold, in order.
#pragma once

#include "kvbe/ui/chart_view.h"

#include <QStringList>

#include <memory>

namespace kvbe {

QStringList chartKeys(); // breakeven, fraction, ttft, models, frontier
// A new chart of the given kind; null for an unknown key.
std::unique_ptr<ChartView> createChart(const QString& key, QWidget* parent = nullptr);

} // namespace kvbe
