// Laying the report out (report_document.cpp): core's content with each figure's SVG, as a PDF
// or as one HTML file. Private to ui/src/report.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/report/report.h"

#include <QByteArray>
#include <QString>

#include <vector>

namespace kvbe {

// figures[i]: the SVG of report.figures()[i] (empty: the chart could not be drawn).
Status writeReportPdf(const Report& report, const std::vector<QByteArray>& figures,
                      const QString& path);
Status writeReportHtml(const Report& report, const std::vector<QByteArray>& figures,
                       const QString& path);

} // namespace kvbe
