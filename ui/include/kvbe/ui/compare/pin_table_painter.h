// The pin comparison (pin_comparison.h) drawn for a slide, and its export.
#pragma once

#include "kvbe/ui/compare/pin_comparison.h"

#include <QSize>

class QPainter;

namespace kvbe {

// The table drawn for a slide: title, header, rows (value and Δ), notes. Its own size at the
// base font, and the drawing, fitted into `size` (scaled, top-centred).
QSizeF pinTableNaturalSize(const PinComparison& t);
void paintPinTable(QPainter& p, const PinComparison& t, QSize size, bool dark);
// Writes the table as PNG, SVG or PDF (by the extension) of `size` pixels, or as CSV (.csv).
Status exportPinTable(const PinComparison& t, const QString& path, QSize size, int dpi = 96,
                      bool dark = false);

} // namespace kvbe
