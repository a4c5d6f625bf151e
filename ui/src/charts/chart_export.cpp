#include "kvbe/ui/charts/chart_export.h"

#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/segment_clip.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QApplication>
#include <QBuffer>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsScene>
#include <QImageWriter>
#include <QPainter>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QScatterSeries>
#include <QSettings>
#include <QSvgGenerator>
#include <QXYSeries>

#include <algorithm>
#include <optional>

namespace kvbe {

namespace {

// Every line and scatter series cut to the plot. On screen and in PNG and PDF the painter's clip
// does it, but Qt's SVG writer leaves the clip out, so a pinned curve that reaches further than
// the axes ran on past them. A line keeps its longest run inside the plot.
void clipToPlot(ChartView& view) {
    QChart* chart = view.chart();
    const QRectF plot = chart->plotArea().adjusted(-0.5, -0.5, 0.5, 0.5);
    for (QAbstractSeries* s : chart->series()) {
        auto* xy = qobject_cast<QXYSeries*>(s);
        if (!xy || xy->count() == 0 || s->attachedAxes().size() < 2) continue;
        QList<QPointF> px;
        for (const QPointF& v : xy->points())
            px << chart->mapToPosition(v, s);
        QList<QPointF> kept;
        if (qobject_cast<QScatterSeries*>(s)) {
            for (int i = 0; i < px.size(); ++i)
                if (plot.contains(px[i])) kept << xy->at(i);
        } else {
            QList<QPointF> run, best;
            const auto close = [&] {
                if (run.size() > best.size()) best = run;
                run.clear();
            };
            for (int i = 0; i + 1 < px.size(); ++i) {
                const auto seg = clippedSegment(px[i], px[i + 1], plot);
                if (!seg) {
                    close();
                    continue;
                }
                if (run.isEmpty() || run.back() != seg->p1()) {
                    close();
                    run << seg->p1();
                }
                run << seg->p2();
                if (seg->p2() != px[i + 1]) close(); // it leaves the plot here
            }
            close();
            for (const QPointF& p : best)
                kept << chart->mapToValue(p, s);
        }
        if (kept.size() != xy->count() || kept != xy->points()) xy->replace(kept);
    }
}

// A hidden copy of the chart laid out at `size`. WA_DontShowOnScreen gives it real resize and
// layout events without a window appearing, on a display or offscreen.
std::unique_ptr<ChartView> layoutCopy(const ChartView& source, QSize size) {
    auto copy = createChart(source.key());
    copy->setProperty(kExportProperty, true);
    copy->setAttribute(Qt::WA_DontShowOnScreen);
    copy->setMinimumSize(1, 1);
    copy->resize(size);
    copy->show();
    QApplication::processEvents();
    copy->copyStateFrom(source);
    // The chart lays itself out in posted events; labels and the frontier image follow it.
    QApplication::processEvents();
    copy->copyStateFrom(source);
    QApplication::processEvents();
    clipToPlot(*copy);
    return copy;
}

void paintChart(ChartView& view, QPainter& p, QSize size) {
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    p.setRenderHint(QPainter::SmoothPixmapTransform);
    p.fillRect(QRect(QPoint(0, 0), size), view.chart()->backgroundBrush());
    view.scene()->render(&p, QRectF(QPointF(0, 0), size), QRectF(QPointF(0, 0), size));
}

} // namespace

std::optional<ExportFormat> exportFormatFor(const QString& path) {
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("png")) return ExportFormat::Png;
    if (ext == QLatin1String("svg")) return ExportFormat::Svg;
    if (ext == QLatin1String("pdf")) return ExportFormat::Pdf;
    return std::nullopt;
}

Status checkExportFormat(const QString& path) {
    if (exportFormatFor(path)) return Ok{};
    return fail(
        QStringLiteral("cannot tell the format of '%1': name it .png, .svg or .pdf").arg(path));
}

std::optional<QSize> parseExportSize(const QString& text) {
    static const QRegularExpression re(
        QStringLiteral("^\\s*(\\d{1,5})\\s*[xX×]\\s*(\\d{1,5})\\s*$"));
    const auto m = re.match(text);
    if (!m.hasMatch()) return std::nullopt;
    const int w = m.captured(1).toInt(), h = m.captured(2).toInt();
    if (w < 16 || h < 16 || w > 16384 || h > 16384) return std::nullopt;
    return QSize(w, h);
}

QImage renderChartImage(const ChartView& chart, QSize size, int dpi) {
    auto copy = layoutCopy(chart, size);
    QImage img(size, QImage::Format_ARGB32_Premultiplied);
    const int dpm = int(dpi / 0.0254 + 0.5);
    img.setDotsPerMeterX(dpm);
    img.setDotsPerMeterY(dpm);
    img.fill(Qt::white);
    QPainter p(&img);
    paintChart(*copy, p, size);
    p.end();
    return img;
}

QDir exportFolder() {
    return QDir(QSettings().value(QStringLiteral("export/folder"), QDir::currentPath()).toString());
}

void rememberExportFolder(const QString& path) {
    QSettings().setValue(QStringLiteral("export/folder"), QFileInfo(path).absolutePath());
}

Status exportPainted(const QString& path, QSize size, int dpi, const QString& title,
                     const QString& description, const std::function<void(QPainter&)>& paint) {
    if (auto st = checkExportFormat(path); !st) return st;
    const auto format = exportFormatFor(path);
    // Written to a temporary beside the target and renamed over it on commit: a failed or
    // killed export leaves the old file as it was.
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("cannot write %1: %2").arg(path, out.errorString()));
    QPainter p;
    if (*format == ExportFormat::Png) {
        QImage img(size, QImage::Format_ARGB32_Premultiplied);
        const int dpm = int(dpi / 0.0254 + 0.5);
        img.setDotsPerMeterX(dpm);
        img.setDotsPerMeterY(dpm);
        img.fill(Qt::white);
        if (!p.begin(&img)) return fail(QStringLiteral("cannot write %1").arg(path));
        paint(p);
        p.end();
        QImageWriter w(&out, "png");
        if (!w.write(img))
            return fail(QStringLiteral("cannot write %1: %2").arg(path, w.errorString()));
    } else if (*format == ExportFormat::Svg) {
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setResolution(dpi);
        svg.setTitle(title);
        svg.setDescription(description);
        if (!p.begin(&svg)) return fail(QStringLiteral("cannot write %1").arg(path));
        paint(p);
        p.end();
        // A series drawn wholly off the plot is an empty path (d=""): it draws nothing, and a
        // PDF that draws the SVG (the report) closed it with no current point, which poppler
        // reports as a syntax error. Left out.
        QString text = QString::fromUtf8(buffer.data());
        text.remove(QRegularExpression(QStringLiteral("<path[^>]*\\sd=\"\"[^>]*/>\\s*")));
        out.write(text.toUtf8());
    } else {
        QPdfWriter pdf(&out);
        // One page of `size` points: at 72 dpi a painter unit is a point, so the scene maps 1:1.
        pdf.setResolution(72);
        pdf.setPageSize(
            QPageSize(QSizeF(size), QPageSize::Point, QString(), QPageSize::ExactMatch));
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setTitle(description);
        pdf.setCreator(QStringLiteral("kvbe"));
        if (!p.begin(&pdf)) return fail(QStringLiteral("cannot write %1").arg(path));
        paint(p);
        p.end();
    }
    if (!out.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(path, out.errorString()));
    return Ok{};
}

Status exportText(const QString& path, const QString& text) {
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text))
        return fail(QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    f.write(text.toUtf8());
    if (!f.commit()) return fail(QStringLiteral("cannot write %1: %2").arg(path, f.errorString()));
    return Ok{};
}

Status exportChart(const ChartView& chart, const QString& path, QSize size, int dpi) {
    if (auto st = checkExportFormat(path); !st) return st;
    if (!chart.current())
        return fail(
            QStringLiteral("there is no chart to export: the scenario has not been computed"));
    auto copy = layoutCopy(chart, size);
    return exportPainted(path, size, dpi, chart.title(), chart.plainTitle(),
                         [&](QPainter& p) { paintChart(*copy, p, size); });
}

Status exportCsv(const ChartView& chart, const QString& path) {
    const QString text = chart.csv();
    if (text.isEmpty())
        return fail(
            QStringLiteral("there is no data to export: the scenario has not been computed"));
    return exportText(path, text);
}

} // namespace kvbe
