#include "kvbe/ui/compare/pin_table_painter.h"

#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/charts/chart_legend.h"
#include "kvbe/ui/compare/pin_table_csv.h"
#include "kvbe/ui/widgets/qt_error.h"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

struct TableLayout {
    QFont title, text, bold, small;
    double margin = 28, padX = 12, padY = 7, lineGap = 3;
    QString heading, subtitle;
    double headingH = 0, subtitleH = 0, headerH = 0, notesH = 0;
    double labelW = 0;
    std::vector<double> colW;
    std::vector<double> rowH;
    std::vector<QStringList> labelLines; // each row's label as drawn, line by line
    std::vector<QStringList> titleLines; // each column's title as drawn
    QStringList notes;
    double width = 0, height = 0;
    double longestWord = 0; // of the labels: the label column is never narrower
    bool labelCut = false;  // a label took more than kMaxLabelLines lines and ends in "…"
    double scale = 1;       // design units to the canvas's pixels
    QPointF origin;         // of the table's top-left corner on the canvas
};

// The label column's width on its own (labels wrap past it) and its least; a label takes at most
// kMaxLabelLines lines, the last cut with "…" (never a word cut silently: "…, FP8 compute" read
// as FP8 KV when its last word fell off).
constexpr double kMaxLabelWidth = 360;
constexpr double kMinLabelWidth = 150;
constexpr int kMaxLabelLines = 3;
// The most the table is scaled up on a canvas, and the most its rows grow to fill it (+150 %).
constexpr double kMaxScale = 3;
constexpr double kRowGrowth = 1.5;

QStringList labelLines(const QString& label, const QFont& font, double width) {
    const QFontMetricsF fm(font);
    QStringList lines = wrapText(label, fm, width).split(QLatin1Char('\n'));
    if (lines.size() > kMaxLabelLines) {
        const QString rest = lines.mid(kMaxLabelLines - 1).join(QLatin1Char(' '));
        lines = lines.mid(0, kMaxLabelLines - 1);
        lines << fm.elidedText(rest, Qt::ElideRight, width);
    }
    return lines;
}

// The table laid out `width` design units wide (0: its natural width): the value columns at their
// width, the labels the rest, wrapped; past what the labels need, the value columns share the
// room, so that the table spans the width it is given.
TableLayout layoutTable(const PinComparison& t, double width = 0) {
    TableLayout L;
    L.text.setFamily(QStringLiteral("sans-serif"));
    L.text.setPixelSize(16);
    L.bold = L.text;
    L.bold.setBold(true);
    L.small = L.text;
    L.small.setPixelSize(14);
    L.title = L.bold;
    L.title.setPixelSize(22);
    const QFontMetricsF fm(L.text), bm(L.bold), sm(L.small), tm(L.title);
    L.heading = QObject::tr("Pinned scenarios against the current one");
    L.subtitle =
        QObject::tr("B*: the bandwidth one storage path needs for a fully cached prompt to tie "
                    "with recompute. p*: the shortest prefix whose load from the tier beats "
                    "recomputing it. Δ: against the current scenario.");

    // Each label in the font it is drawn in: the current row's is bold.
    double widest = bm.horizontalAdvance(QObject::tr("Scenario"));
    for (const auto& row : t.rows) {
        const QFontMetricsF rm(row.current ? L.bold : L.text);
        widest = std::max(widest, rm.horizontalAdvance(row.label) + 1);
        for (const QString& word : row.label.split(QLatin1Char(' '), Qt::SkipEmptyParts))
            L.longestWord = std::max(L.longestWord, rm.horizontalAdvance(word) + 1);
    }
    double valuesW = 0;
    for (size_t c = 0; c < t.columns.size(); ++c) {
        // On a slide a column title may wrap at its words ("p* Host DRAM" over "(PCIe 5.0)"),
        // so that the numbers, not the titles, set the width; on its own it takes one line.
        const QString title = columnTitle(t.columns[c]);
        double titleW = bm.horizontalAdvance(title);
        if (width > 0) {
            titleW = 0;
            for (const QString& word : title.split(QLatin1Char(' '), Qt::SkipEmptyParts))
                titleW = std::max(titleW, bm.horizontalAdvance(word) + 1);
        }
        double w = std::max(titleW, bm.horizontalAdvance(columnUnit(t.columns[c])));
        for (size_t r = 0; r < t.rows.size(); ++r) {
            w = std::max(w, fm.horizontalAdvance(valueText(t.rows[r].values[c], t.columns[c])));
            if (r > 0) w = std::max(w, sm.horizontalAdvance(deltaLine(t, r, c)));
        }
        L.colW.push_back(w + 2 * L.padX);
        valuesW += w + 2 * L.padX;
    }
    double label = std::min(kMaxLabelWidth, widest);
    double textW = std::max(label + 2 * L.padX + valuesW, 600.0);
    if (width > 0) {
        textW = width - 2 * L.margin;
        label = std::min(widest, std::max(kMinLabelWidth, textW - valuesW - 2 * L.padX));
        // Too narrow for the numbers and the least label: wider than asked (the fit says no).
        textW = std::max(textW, label + 2 * L.padX + valuesW);
        const double spare = textW - (label + 2 * L.padX + valuesW);
        if (spare > 0 && !L.colW.empty())
            for (double& w : L.colW)
                w += spare / double(L.colW.size());
    }
    L.labelW = label + 2 * L.padX;
    // The titles wrapped to their columns, over the unit.
    qsizetype titleLines = 1;
    for (size_t c = 0; c < t.columns.size(); ++c) {
        L.titleLines.push_back(wrapText(columnTitle(t.columns[c]), bm, L.colW[c] - 2 * L.padX + 0.5)
                                   .split(QLatin1Char('\n')));
        titleLines = std::max(titleLines, L.titleLines.back().size());
    }
    L.headerH = double(titleLines + 1) * bm.height() + L.lineGap + 2 * L.padY;
    L.headingH = tm.height() + 6;
    L.subtitleH =
        sm.boundingRect(QRectF(0, 0, textW, 1e6), Qt::TextWordWrap, L.subtitle).height() + 12;
    for (const auto& row : t.rows) {
        const QFont& font = row.current ? L.bold : L.text;
        L.labelLines.push_back(labelLines(row.label, font, label));
        if (L.labelLines.back().join(QLatin1Char(' ')) != row.label.simplified()) L.labelCut = true;
        const double labelH = double(L.labelLines.back().size()) * QFontMetricsF(font).height();
        const double cellH = fm.height() + (row.current ? 0 : L.lineGap + sm.height());
        L.rowH.push_back(std::max(labelH, cellH) + 2 * L.padY);
    }
    L.notes = t.notes;
    for (const QString& n : L.notes)
        L.notesH += sm.boundingRect(QRectF(0, 0, textW, 1e6), Qt::TextWordWrap, n).height() + 4;
    if (!L.notes.isEmpty()) L.notesH += 10;
    L.width = textW + 2 * L.margin;
    double rowsH = 0;
    for (double h : L.rowH)
        rowsH += h;
    L.height = L.margin + L.headingH + L.subtitleH + L.headerH + rowsH + L.notesH + L.margin;
    return L;
}

// The table fitted to a canvas: the largest scale (at most kMaxScale) at which the table, laid
// out across the whole width, fits the height; rows share what height is left (up to twice
// their own), and the table is centred.
TableLayout fittedTable(const PinComparison& t, QSizeF canvas) {
    TableLayout best = layoutTable(t);
    // Larger type while the labels keep most of their natural width (two or three lines for a
    // description of the inputs) and whole words: not 3× type with a name broken over five lines.
    const double leastLabel =
        std::max(0.6 * (best.labelW - 2 * best.padX), std::min(best.longestWord, kMaxLabelWidth));
    best.scale = std::min({canvas.width() / best.width, canvas.height() / best.height, kMaxScale});
    for (double s = kMaxScale; s > best.scale; s -= 0.02) {
        TableLayout L = layoutTable(t, canvas.width() / s);
        // Smaller type rather than a name cut with "…" where the table's own width keeps it
        // whole.
        if (L.width * s > canvas.width() + 0.5 || L.height * s > canvas.height() ||
            L.labelW - 2 * L.padX < leastLabel - 0.5 || (L.labelCut && !best.labelCut))
            continue;
        L.scale = s;
        best = std::move(L);
        break;
    }
    double rowsH = 0;
    for (double h : best.rowH)
        rowsH += h;
    const double spare = canvas.height() / best.scale - best.height;
    if (spare > 0 && rowsH > 0) {
        const double grow = std::min(spare, kRowGrowth * rowsH) / rowsH;
        for (double& h : best.rowH)
            h *= 1 + grow;
        best.height += rowsH * grow;
    }
    best.origin = QPointF((canvas.width() - best.width * best.scale) / 2,
                          std::max(0.0, (canvas.height() - best.height * best.scale) / 2));
    return best;
}

} // namespace

QSizeF pinTableNaturalSize(const PinComparison& t) {
    const auto L = layoutTable(t);
    return {L.width, L.height};
}

std::vector<QStringList> pinTableLabelLines(const PinComparison& t, QSize size) {
    return fittedTable(t, QSizeF(size)).labelLines;
}

void paintPinTable(QPainter& p, const PinComparison& t, QSize size, bool dark) {
    const QColor bg = dark ? QColor(30, 30, 36) : QColor(Qt::white);
    const QColor ink = dark ? QColor(230, 230, 235) : QColor(30, 30, 35);
    const QColor faint = dark ? QColor(160, 160, 170) : QColor(95, 95, 105);
    const QColor rule = dark ? QColor(80, 80, 90) : QColor(200, 200, 208);
    const QColor band = dark ? QColor(48, 52, 62) : QColor(238, 242, 248);
    p.setRenderHint(QPainter::Antialiasing);
    p.setRenderHint(QPainter::TextAntialiasing);
    p.fillRect(QRect(QPoint(0, 0), size), bg);
    if (t.empty()) return;
    const auto L = fittedTable(t, QSizeF(size));
    p.save();
    p.translate(L.origin);
    p.scale(L.scale, L.scale);

    double y = L.margin;
    const double x0 = L.margin;
    double tableW = L.labelW;
    for (double w : L.colW)
        tableW += w;
    const double textW = L.width - 2 * L.margin;
    p.setPen(ink);
    p.setFont(L.title);
    p.drawText(QRectF(x0, y, textW, L.headingH), Qt::AlignLeft | Qt::AlignTop, L.heading);
    y += L.headingH;
    p.setFont(L.small);
    p.setPen(faint);
    p.drawText(QRectF(x0, y, textW, L.subtitleH), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
               L.subtitle);
    y += L.subtitleH;

    // Header: the title over its unit.
    const QFontMetricsF bm(L.bold), fm(L.text), sm(L.small);
    p.setFont(L.bold);
    p.setPen(ink);
    double x = x0;
    p.drawText(QRectF(x + L.padX, y + L.padY, L.labelW - 2 * L.padX, L.headerH - 2 * L.padY),
               Qt::AlignLeft | Qt::AlignBottom, QObject::tr("Scenario"));
    x += L.labelW;
    for (size_t c = 0; c < t.columns.size(); ++c) {
        const QRectF cell(x + L.padX, y + L.padY, L.colW[c] - 2 * L.padX, L.headerH - 2 * L.padY);
        for (qsizetype i = 0; i < L.titleLines[c].size(); ++i)
            p.drawText(QRectF(cell.left(), cell.top() + double(i) * bm.height(), cell.width(),
                              bm.height()),
                       Qt::AlignRight | Qt::AlignTop | Qt::TextDontClip, L.titleLines[c][i]);
        p.drawText(cell, Qt::AlignRight | Qt::AlignBottom, columnUnit(t.columns[c]));
        x += L.colW[c];
    }
    y += L.headerH;
    p.setPen(QPen(ink, 1.2));
    p.drawLine(QPointF(x0, y), QPointF(x0 + tableW, y));

    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        const double h = L.rowH[r];
        if (row.current) p.fillRect(QRectF(x0, y, tableW, h), band);
        // The row's contents centred in its height (rows grow to fill a slide).
        const double labelH =
            double(L.labelLines[r].size()) * QFontMetricsF(row.current ? L.bold : L.text).height();
        const double cellH = fm.height() + (row.current ? 0 : L.lineGap + sm.height());
        const double top = y + (h - std::max(labelH, cellH)) / 2;
        x = x0;
        p.setPen(ink);
        p.setFont(row.current ? L.bold : L.text);
        const double lineH = QFontMetricsF(p.font()).height();
        for (qsizetype i = 0; i < L.labelLines[r].size(); ++i)
            p.drawText(QRectF(x + L.padX, top + double(i) * lineH, L.labelW - 2 * L.padX, lineH),
                       Qt::AlignLeft | Qt::AlignTop | Qt::TextDontClip, L.labelLines[r][i]);
        x += L.labelW;
        for (size_t c = 0; c < t.columns.size(); ++c) {
            const QRectF cell(x + L.padX, top, L.colW[c] - 2 * L.padX, cellH);
            p.setFont(L.text);
            p.setPen(ink);
            p.drawText(QRectF(cell.left(), cell.top(), cell.width(), fm.height()),
                       Qt::AlignRight | Qt::AlignTop, valueText(row.values[c], t.columns[c]));
            if (!row.current) {
                p.setFont(L.small);
                p.setPen(faint);
                p.drawText(QRectF(cell.left(), cell.top() + fm.height() + L.lineGap, cell.width(),
                                  sm.height()),
                           Qt::AlignRight | Qt::AlignTop, deltaLine(t, r, c));
            }
            x += L.colW[c];
        }
        y += h;
        p.setPen(QPen(rule, 1));
        p.drawLine(QPointF(x0, y), QPointF(x0 + tableW, y));
    }
    if (!L.notes.isEmpty()) {
        y += 10;
        p.setFont(L.small);
        p.setPen(faint);
        for (const QString& n : L.notes) {
            const QRectF box = sm.boundingRect(QRectF(x0, y, textW, 1e6), Qt::TextWordWrap, n);
            p.drawText(QRectF(x0, y, textW, box.height()),
                       Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, n);
            y += box.height() + 4;
        }
    }
    p.restore();
}

Status exportPinTable(const PinComparison& t, const QString& path, QSize size, int dpi, bool dark) {
    if (t.empty())
        return fail(QObject::tr("there is no table to export: the scenario has not been computed"));
    if (QFileInfo(path).suffix().compare(QLatin1String("csv"), Qt::CaseInsensitive) == 0)
        return exportText(path, pinComparisonCsv(t));
    return exportPainted(path, size, dpi, QObject::tr("Pinned scenarios compared"),
                         QObject::tr("B* and p* of %1 against the current one")
                             .arg(t.rows.size() == 2
                                      ? QObject::tr("one pin")
                                      : QObject::tr("%1 pins").arg(t.rows.size() - 1)),
                         [&](QPainter& p) { paintPinTable(p, t, size, dark); });
}

// ---- the model

} // namespace kvbe
