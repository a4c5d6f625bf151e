#include "report_document.h"

#include "report_figure.h"

#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QAbstractTextDocumentLayout>
#include <QPainter>
#include <QPalette>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTextLayout>

#include <algorithm>
#include <cmath>
#include <memory>

namespace kvbe {

namespace {

QString qs(const std::string& s) {
    return QString::fromStdString(s);
}
QString esc(const std::string& s) {
    return qs(s).toHtmlEscaped();
}

// The blocks of one section as HTML. `figure(n, block)` gives figure n's HTML (from 1).
template <class Figure>
QString blocksHtml(const ReportSection& s, int& figureNo, const Figure& figure) {
    QString h;
    for (const ReportBlock& b : s.blocks) {
        switch (b.kind) {
        case ReportBlock::Kind::Text:
            h += QStringLiteral("<p>%1</p>\n").arg(esc(b.text));
            break;
        case ReportBlock::Kind::Answer:
            h += QStringLiteral("<p class=\"answer\"><b>%1</b></p>\n").arg(esc(b.text));
            break;
        case ReportBlock::Kind::Code:
            // A paragraph a line: Qt's layout keeps an unwrapped paragraph whole, so a long one
            // would run over a page's end instead of going on to the next page. A line wider
            // than the page (a file's SHA-256 and its path) wraps (pre-wrap) rather than run
            // past the right margin.
            for (const QString& line : esc(b.text).split(QLatin1Char('\n')))
                h += QStringLiteral("<p class=\"code\"><code>%1</code></p>\n").arg(line);
            break;
        case ReportBlock::Kind::Items: {
            h += QStringLiteral("<ul>\n");
            for (const auto& i : b.items)
                h += QStringLiteral("<li>%1</li>\n").arg(esc(i));
            h += QStringLiteral("</ul>\n");
            break;
        }
        case ReportBlock::Kind::Table: {
            h += QStringLiteral("<table class=\"t\" border=\"1\" cellspacing=\"0\" "
                                "cellpadding=\"3\" width=\"100%\">\n<tr>");
            for (const auto& c : b.table.header)
                h += QStringLiteral("<th align=\"left\">%1</th>").arg(esc(c));
            h += QStringLiteral("</tr>\n");
            for (const auto& row : b.table.rows) {
                h += QStringLiteral("<tr>");
                for (const auto& c : row) {
                    h += QStringLiteral("<td>%1</td>").arg(esc(c));
                }
                h += QStringLiteral("</tr>\n");
            }
            h += QStringLiteral("</table>\n");
            break;
        }
        case ReportBlock::Kind::Figure:
            ++figureNo;
            h += figure(figureNo, b);
            h += QStringLiteral("<p class=\"caption\" align=\"center\"><i>Figure %1. %2</i></p>\n")
                     .arg(figureNo)
                     .arg(esc(b.text));
            break;
        }
    }
    return h;
}

const char* kPdfStyle = "body { font-family: 'DejaVu Sans', sans-serif; font-size: 10pt; }"
                        "h1 { font-size: 24pt; } h2 { font-size: 15pt; margin-top: 12pt; }"
                        "p.answer { font-size: 11pt; margin: 6pt 0; }"
                        "p.code, code { font-family: 'DejaVu Sans Mono', monospace; "
                        "font-size: 7pt; white-space: pre-wrap; margin: 0; }"
                        "p.caption { font-size: 9pt; } th { background-color: #e8eef2; }";

// The whole document as Qt's rich text: title page, contents (with `pages` where known),
// sections. Each figure is a marker (@@FIGUREn@@) that placeFigures turns into its chart object.
QString pdfHtml(const Report& r, const std::vector<int>& pages) {
    QString h = QStringLiteral("<html><head><style>%1</style></head><body>").arg(kPdfStyle);
    h += QStringLiteral("<p style=\"margin-top: 180pt\"></p><h1 align=\"center\">%1</h1>"
                        "<p align=\"center\" style=\"font-size: 14pt\">%2</p>"
                        "<p align=\"center\">%3</p>"
                        "<p align=\"center\" style=\"page-break-after: always\">Made with kvbe, "
                        "the KV offload break-even explorer.</p>")
             .arg(esc(r.title), esc(r.subtitle), esc(r.date));
    h += QStringLiteral("<h2>Contents</h2><table width=\"100%\" cellpadding=\"2\">");
    for (std::size_t i = 0; i < r.sections.size(); ++i)
        h += QStringLiteral("<tr><td>%1. %2</td><td align=\"right\">%3</td></tr>")
                 .arg(i + 1)
                 .arg(esc(r.sections[i].title))
                 .arg(i < pages.size() ? QString::number(pages[i]) : QStringLiteral("00"));
    h += QStringLiteral("</table><p style=\"page-break-after: always\"></p>");
    int figureNo = 0;
    for (std::size_t i = 0; i < r.sections.size(); ++i) {
        h += QStringLiteral("<h2>%1. %2</h2>\n").arg(i + 1).arg(esc(r.sections[i].title));
        h += blocksHtml(r.sections[i], figureNo, [](int n, const ReportBlock&) {
            return QStringLiteral("<p align=\"center\">@@FIGURE%1@@</p>\n").arg(n);
        });
    }
    return h + QStringLiteral("</body></html>");
}

// Each figure's marker in `doc` replaced by its chart object (drawn as vectors by the PDF writer).
void placeFigures(QTextDocument& doc, int count) {
    for (int n = 1; n <= count; ++n) {
        QTextCursor c = doc.find(QStringLiteral("@@FIGURE%1@@").arg(n));
        if (c.isNull()) continue;
        QTextCharFormat f;
        f.setObjectType(kChartObject);
        f.setProperty(kFigureIndex, n - 1);
        c.insertText(QString(QChar::ObjectReplacementCharacter), f);
    }
}

// The page each section's heading falls on (from 1; the title page is page 1).
// Where each page starts in the laid-out document: a page ends at the top of the first line
// that would cross its end, so that no line is split between two pages. Qt's own pagination lets
// a line's box run past a page's end (a list item's line by several millimetres), and a page
// drawn at multiples of its height cut that line at its top or bottom (a heading's top, half a
// line at a page's top). Every block's lines count, tables' cells and figures included.
std::vector<double> pageStarts(QTextDocument& doc, double pageH) {
    std::vector<std::pair<double, double>> lines;
    auto* layout = doc.documentLayout();
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        const QTextLayout* tl = b.layout();
        if (!tl) continue;
        const double top = layout->blockBoundingRect(b).top();
        for (int j = 0; j < tl->lineCount(); ++j) {
            const QTextLine l = tl->lineAt(j);
            lines.emplace_back(top + l.y(), top + l.y() + l.height());
        }
    }
    const double docH = layout->documentSize().height();
    std::vector<double> starts = {0};
    while (starts.back() + pageH < docH) {
        const double start = starts.back();
        double end = start + pageH;
        // A line taller than the page (none in a report) is cut rather than loop.
        for (bool moved = true; moved;) {
            moved = false;
            for (const auto& [t, b] : lines)
                if (t > start + 1 && t < end - 0.5 && b > end + 0.5) {
                    end = t;
                    moved = true;
                }
        }
        starts.push_back(end);
    }
    return starts;
}

// The page (from 1) each section's heading is on, from the page starts.
std::vector<int> sectionPages(QTextDocument& doc, const std::vector<double>& starts) {
    std::vector<int> pages;
    bool contents = true; // the first h2 is the contents' own heading
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        if (b.blockFormat().headingLevel() != 2) continue;
        if (contents) {
            contents = false;
            continue;
        }
        const double top = doc.documentLayout()->blockBoundingRect(b).top();
        pages.push_back(int(std::upper_bound(starts.begin(), starts.end(), top) - starts.begin()));
    }
    return pages;
}

} // namespace

Status writeReportPdf(const Report& report, const std::vector<QByteArray>& figures,
                      const QString& path) {
    QSaveFile out(path);
    if (!out.open(QIODevice::WriteOnly))
        return fail(QStringLiteral("cannot write %1: %2").arg(path, out.errorString()));
    QPdfWriter pdf(&out);
    pdf.setResolution(300);
    pdf.setPageSize(QPageSize(QPageSize::A4));
    pdf.setPageMargins(QMarginsF(20, 18, 20, 22), QPageLayout::Millimeter);
    pdf.setTitle(QString::fromStdString(report.title + ": " + report.subtitle));
    pdf.setCreator(QStringLiteral("kvbe"));
    const QRect body = pdf.pageLayout().paintRectPixels(pdf.resolution());
    const QSizeF page(body.width(), body.height());

    ReportFigure charts(figures, page.width() * 0.98);
    std::vector<int> pages;
    std::vector<double> starts;
    std::unique_ptr<QTextDocument> doc;
    // Laid out twice: the contents' page numbers come from the first layout.
    for (int pass = 0; pass < 2; ++pass) {
        doc = std::make_unique<QTextDocument>();
        doc->documentLayout()->setPaintDevice(&pdf);
        doc->documentLayout()->registerHandler(kChartObject, &charts);
        doc->setDocumentMargin(0);
        doc->setHtml(pdfHtml(report, pages));
        placeFigures(*doc, int(figures.size()));
        // Laid out once, whole, with the figures in place (the page size starts the layout).
        doc->setPageSize(page);
        starts = pageStarts(*doc, page.height());
        pages = sectionPages(*doc, starts);
    }
    const int count = int(starts.size());
    QPainter p;
    if (!p.begin(&pdf)) return fail(QStringLiteral("cannot write %1").arg(path));
    QFont footer(QStringLiteral("DejaVu Sans"));
    footer.setPointSizeF(8);
    for (int i = 0; i < count; ++i) {
        if (i > 0) pdf.newPage();
        p.save();
        // The page is the document from its start to the next page's (pageStarts): no line
        // crosses either, so the clip cuts none.
        const double top = starts[std::size_t(i)],
                     bottom = i + 1 < count ? starts[std::size_t(i) + 1]
                                            : doc->documentLayout()->documentSize().height();
        p.setClipRect(QRectF(0, 0, page.width(), bottom - top));
        p.translate(0, -top);
        QAbstractTextDocumentLayout::PaintContext ctx;
        // A pixel in from either end: the lines that end at the page's start or begin at its
        // end are the neighbours', and drawn here (clipped) their text would be in this page's
        // for a reader that extracts it.
        ctx.clip = QRectF(0, top + 1, page.width(), bottom - top - 2);
        ctx.palette.setColor(QPalette::Text, Qt::black);
        doc->documentLayout()->draw(&p, ctx);
        p.restore();
        if (i == 0) continue; // the title page goes without
        p.setFont(footer);
        p.setPen(QColor(0x55, 0x55, 0x55));
        const QRectF foot(0, page.height() + 20, page.width(), 80);
        p.drawText(foot, Qt::AlignLeft | Qt::AlignTop, QString::fromStdString(report.title));
        p.drawText(foot, Qt::AlignRight | Qt::AlignTop,
                   QStringLiteral("page %1 of %2").arg(i + 1).arg(count));
    }
    p.end();
    if (!out.commit())
        return fail(QStringLiteral("cannot write %1: %2").arg(path, out.errorString()));
    return Ok{};
}

Status writeReportHtml(const Report& r, const std::vector<QByteArray>& figures,
                       const QString& path) {
    QString h =
        QStringLiteral(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>%1</title>\n"
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;"
            "line-height:1.4}table{border-collapse:collapse;margin:0.6em 0}td,th{border:1px solid "
            "#bbb;padding:3px 6px;text-align:left;vertical-align:top}th{background:#e8eef2}"
            "p.answer{font-size:1.1em}p.code{margin:0;white-space:pre}"
            "p.code,code{font-family:monospace;font-size:0.9em;"
            "overflow-wrap:anywhere}p.caption{text-align:center;font-style:italic}"
            "figure{margin:1em 0;text-align:center}figure svg{max-width:100%;height:auto}</style>\n"
            "</head><body>\n<h1>%1</h1>\n<p>%2</p>\n<p>%3</p>\n<h2>Contents</h2>\n<ol>\n")
            .arg(esc(r.title), esc(r.subtitle), esc(r.date));
    for (std::size_t i = 0; i < r.sections.size(); ++i)
        h += QStringLiteral("<li><a href=\"#s%1\">%2</a></li>\n")
                 .arg(i + 1)
                 .arg(esc(r.sections[i].title));
    h += QStringLiteral("</ol>\n");
    int figureNo = 0;
    for (std::size_t i = 0; i < r.sections.size(); ++i) {
        h +=
            QStringLiteral("<h2 id=\"s%1\">%1. %2</h2>\n").arg(i + 1).arg(esc(r.sections[i].title));
        h += blocksHtml(r.sections[i], figureNo, [&](int n, const ReportBlock&) {
            QString svg =
                n - 1 < int(figures.size()) ? QString::fromUtf8(figures[n - 1]) : QString();
            // The SVG's own prolog is not allowed inside HTML.
            const qsizetype start = svg.indexOf(QStringLiteral("<svg"));
            svg = start < 0 ? QStringLiteral("(the chart could not be drawn)") : svg.mid(start);
            return QStringLiteral("<figure id=\"f%1\">%2</figure>\n").arg(n).arg(svg);
        });
    }
    h += QStringLiteral("</body></html>\n");
    return exportText(path, h);
}

} // namespace kvbe
