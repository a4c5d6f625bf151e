#include "kvbe/ui/compare/pin_table_painter.h"

#include "kvbe/ui/charts/chart_export.h"
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
    QStringList notes;
    double width = 0, height = 0;
};

constexpr double kMaxLabelWidth = 360;

TableLayout layoutTable(const PinComparison& t) {
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

    // The scenario column: labels wrap at kMaxLabelWidth.
    double label = bm.horizontalAdvance(QObject::tr("Scenario"));
    for (const auto& row : t.rows)
        label = std::max(label, std::min(kMaxLabelWidth, fm.horizontalAdvance(row.label) + 1));
    L.labelW = label + 2 * L.padX;
    L.headerH = 2 * bm.height() + L.lineGap + 2 * L.padY;
    for (size_t c = 0; c < t.columns.size(); ++c) {
        double w = std::max(bm.horizontalAdvance(columnTitle(t.columns[c])),
                            bm.horizontalAdvance(columnUnit(t.columns[c])));
        for (size_t r = 0; r < t.rows.size(); ++r) {
            w = std::max(w, fm.horizontalAdvance(valueText(t.rows[r].values[c], t.columns[c])));
            if (r > 0) w = std::max(w, sm.horizontalAdvance(deltaLine(t, r, c)));
        }
        L.colW.push_back(w + 2 * L.padX);
    }
    double tableW = L.labelW;
    for (double w : L.colW)
        tableW += w;
    L.headingH = tm.height() + 6;
    const double textW = std::max(tableW, 600.0);
    L.subtitleH =
        sm.boundingRect(QRectF(0, 0, textW, 1e6), Qt::TextWordWrap, L.subtitle).height() + 12;
    for (const auto& row : t.rows) {
        const double labelH =
            fm.boundingRect(QRectF(0, 0, label, 1e6), Qt::TextWordWrap, row.label).height();
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

} // namespace

QSizeF pinTableNaturalSize(const PinComparison& t) {
    const auto L = layoutTable(t);
    return {L.width, L.height};
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
    const auto L = layoutTable(t);
    // Fitted: scaled to the canvas (never past 3×), centred across, from the top.
    const double scale = std::min({size.width() / L.width, size.height() / L.height, 3.0});
    p.save();
    p.translate((size.width() - L.width * scale) / 2, 0);
    p.scale(scale, scale);

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
        p.drawText(cell, Qt::AlignRight | Qt::AlignTop, columnTitle(t.columns[c]));
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
        x = x0;
        p.setPen(ink);
        p.setFont(row.current ? L.bold : L.text);
        p.drawText(QRectF(x + L.padX, y + L.padY, L.labelW - 2 * L.padX, h - 2 * L.padY),
                   Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, row.label);
        x += L.labelW;
        for (size_t c = 0; c < t.columns.size(); ++c) {
            const QRectF cell(x + L.padX, y + L.padY, L.colW[c] - 2 * L.padX, h - 2 * L.padY);
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
