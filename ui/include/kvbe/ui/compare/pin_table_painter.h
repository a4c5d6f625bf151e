// The pin comparison (pin_comparison.h) drawn for a slide, and its export.
#pragma once

#include "kvbe/ui/compare/pin_comparison.h"

#include <QSize>
#include <QStringList>

#include <vector>

class QPainter;

namespace kvbe {

// The table drawn for a slide: title, header, rows (value and Δ), notes. Its own size at the
// base font, and the drawing, fitted into `size`: laid out across its width (the labels take the
// room the numbers leave, wrapped, at most three lines, the last cut with "…"), scaled to the
// height, the rows sharing what is left, centred.
QSizeF pinTableNaturalSize(const PinComparison& t);
void paintPinTable(QPainter& p, const PinComparison& t, QSize size, bool dark);
// Each row's label as paintPinTable draws it in `size`, line by line.
std::vector<QStringList> pinTableLabelLines(const PinComparison& t, QSize size);
// Writes the table as PNG, SVG or PDF (by the extension) of `size` pixels, or as CSV (.csv).
Status exportPinTable(const PinComparison& t, const QString& path, QSize size, int dpi = 96,
                      bool dark = false);

} // namespace kvbe
