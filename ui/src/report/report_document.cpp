#include "report_document.h"

#include "report_figure.h"

#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QAbstractTextDocumentLayout>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>

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
            // would run over a page's end instead of going on to the next page.
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
                        "font-size: 7pt; white-space: pre; margin: 0; }"
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
std::vector<int> sectionPages(QTextDocument& doc) {
    std::vector<int> pages;
    const double pageH = doc.pageSize().height();
    bool contents = true; // the first h2 is the contents' own heading
    for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
        if (b.blockFormat().headingLevel() != 2) continue;
        if (contents) {
            contents = false;
            continue;
        }
        const double top = doc.documentLayout()->blockBoundingRect(b).top();
        pages.push_back(int(std::floor(top / pageH)) + 1);
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
        pages = sectionPages(*doc);
    }
    const int count = doc->pageCount();
    QPainter p;
    if (!p.begin(&pdf)) return fail(QStringLiteral("cannot write %1").arg(path));
    QFont footer(QStringLiteral("DejaVu Sans"));
    footer.setPointSizeF(8);
    for (int i = 0; i < count; ++i) {
        if (i > 0) pdf.newPage();
        p.save();
        p.setClipRect(QRectF(0, 0, page.width(), page.height()));
        p.translate(0, -i * page.height());
        // A line is drawn on every page whose rectangle it meets, and Qt's pagination lets a
        // line's box run a few device pixels past the page: the rectangle leaves out 2 mm at
        // either edge, so a line is in the text of its own page only (the clip keeps the rest).
        const double edge = pdf.resolution() * 2 / 25.4;
        doc->drawContents(
            &p, QRectF(0, i * page.height() + edge, page.width(), page.height() - 2 * edge));
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
