// Rendering a chart to PNG, SVG or PDF at a chosen size, on screen or without a display. The
// chart is copied into a hidden view of the requested size first, so the export looks like the
// screen (same zoom, hidden series, theme) but is laid out for its own size.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/ui/charts/chart_view.h"

#include <QDir>
#include <QImage>
#include <QSize>
#include <QString>

#include <functional>
#include <optional>

class QPainter;

namespace kvbe {

enum class ExportFormat { Png, Svg, Pdf };

// By the file's extension (.png, .svg, .pdf).
std::optional<ExportFormat> exportFormatFor(const QString& path);
// Refuses a path whose extension names no format, with the sentence that says which do.
Status checkExportFormat(const QString& path);
// "1600x900" into a size from 16x16 to 16384x16384.
std::optional<QSize> parseExportSize(const QString& text);

// The folder of the last export, where every export dialog starts, and remembering it (the
// folder of a file just written).
QDir exportFolder();
void rememberExportFolder(const QString& path);

// Writes what `paint` draws on a `size` canvas to `path`: PNG (tagged with `dpi`), SVG or PDF
// (pages of `size` points) by its extension. The file is replaced only once it is complete.
// The charts and the pin table export through it.
Status exportPainted(const QString& path, QSize size, int dpi, const QString& title,
                     const QString& description, const std::function<void(QPainter&)>& paint);
// Writes text (CSV) to `path`, replaced only once complete.
Status exportText(const QString& path, const QString& text);

// The chart as an image of `size` pixels, tagged with `dpi`.
QImage renderChartImage(const ChartView& chart, QSize size, int dpi = 96);
// Writes the chart to `path`; the format comes from its extension. PDF pages are `size` points.
Status exportChart(const ChartView& chart, const QString& path, QSize size, int dpi = 96);
// Writes the chart's data as CSV.
Status exportCsv(const ChartView& chart, const QString& path);

} // namespace kvbe
