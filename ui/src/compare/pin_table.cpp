#include "kvbe/ui/compare/pin_table.h"

#include "kvbe/base/units.h"
#include "kvbe/cost/report.h"
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/scenario/explorer.h"

#include <QFileInfo>
#include <QFontMetricsF>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace kvbe {

namespace {

const QString kDash = QStringLiteral("—");
const QString kMinus = QStringLiteral("−");

Error fail(const QString& m) {
    return Error{m.toStdString()};
}

// Three significant digits, trailing zeros kept (12.3, 7.03, 4.70, 0.975), whole from 100 up:
// a column of them reads alike.
QString shortNumber(double v) {
    const double a = std::abs(v);
    if (a >= 100) return QString::fromStdString(formatTokens(v));
    if (a >= 10) return QString::number(v, 'f', 1);
    if (a >= 1) return QString::number(v, 'f', 2);
    return QString::number(v, 'g', 3);
}

QString tokenCountText(double v) {
    return QString::fromStdString(formatTokens(v)) +
           (std::abs(v) == 1 ? QObject::tr(" token") : QObject::tr(" tokens"));
}

QString signedText(double v, const QString& magnitude) {
    if (v > 0) return QLatin1Char('+') + magnitude;
    if (v < 0) return kMinus + magnitude;
    return magnitude;
}

QString csvField(const QString& s) {
    return QString::fromStdString(kvbe::csvField(s.toStdString()));
}

// A raw number for CSV: C locale, enough digits to read back the value.
QString csvNumber(double v) {
    return QString::number(v, 'g', 12);
}

} // namespace

std::vector<double> defaultCompareLengths() {
    return {4096, 32768, 131072};
}

Result<std::vector<double>> parseCompareLengths(const QString& text) {
    QString list = text.trimmed();
    // Spaces separate as well as commas do ("4k 32k").
    list.replace(QRegularExpression(QStringLiteral("[\\s;]+")), QStringLiteral(","));
    list.replace(QRegularExpression(QStringLiteral(",+")), QStringLiteral(","));
    if (list.startsWith(QLatin1Char(','))) list.remove(0, 1);
    if (list.endsWith(QLatin1Char(','))) list.chop(1);
    if (list.isEmpty())
        return fail(QObject::tr("Prompt lengths: give at least one token count, e.g. 4k, 32k, "
                                "128k (k = 1024)."));
    auto parsed = parseTokenList(list.toStdString());
    if (!parsed)
        return fail(
            QObject::tr("Prompt lengths: %1.").arg(QString::fromStdString(parsed.message())));
    std::vector<double> out = *parsed;
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    if (int(out.size()) > kMaxCompareLengths)
        return fail(QObject::tr("Prompt lengths: at most %1 lengths fit the table (got %2).")
                        .arg(kMaxCompareLengths)
                        .arg(out.size()));
    return out;
}

QString shortTokens(double tokens) {
    const double mi = 1024.0 * 1024.0;
    if (tokens >= mi && std::fmod(tokens, mi) == 0) return QString::number(tokens / mi) + 'm';
    if (tokens >= 1024 && std::fmod(tokens, 1024) == 0)
        return QString::number(tokens / 1024, 'f', 0) + 'k';
    if (tokens >= 1024 && std::fmod(tokens, 512) == 0)
        return QString::number(tokens / 1024, 'f', 1) + 'k';
    return QString::fromStdString(formatTokens(tokens));
}

QString compareLengthsText(const std::vector<double>& lengths) {
    QStringList parts;
    for (double n : lengths)
        parts << shortTokens(n).remove(QLatin1Char(','));
    return parts.join(QStringLiteral(", "));
}

std::optional<double> PinComparison::delta(size_t row, size_t column) const {
    if (row >= rows.size() || column >= columns.size()) return std::nullopt;
    const auto& a = rows[row].values[column];
    const auto& b = rows.front().values[column];
    if (!a.isNumber() || !b.isNumber()) return std::nullopt;
    return a.value - b.value;
}

std::optional<double> PinComparison::deltaPercent(size_t row, size_t column) const {
    const auto d = delta(row, column);
    if (!d) return std::nullopt;
    const double base = rows.front().values[column].value;
    if (base == 0) return std::nullopt;
    return *d / base * 100;
}

PinComparison comparePins(const ResultPtr& current, const std::vector<ResultPtr>& pins,
                          const std::vector<double>& lengths) {
    PinComparison t;
    if (!current) return t;
    std::vector<ResultPtr> all{current};
    for (const auto& p : pins)
        if (p) all.push_back(p);

    using Kind = CompareColumn::Kind;
    using State = CompareValue::State;
    for (double n : lengths)
        t.columns.push_back({Kind::Bandwidth, n, {}, {}});
    const size_t firstTier = t.columns.size();
    // Each scenario's tiers to their columns: by preset where both have one, else by name; a
    // column takes one tier of each scenario.
    std::vector<std::vector<size_t>> tierColumns(all.size());
    for (size_t s = 0; s < all.size(); ++s) {
        std::vector<bool> taken(t.columns.size(), false);
        for (const auto& tc : all[s]->scenario.tiers) {
            const QString name = QString::fromStdString(tc.name);
            size_t found = t.columns.size();
            for (size_t c = firstTier; c < t.columns.size(); ++c) {
                if (taken[c]) continue;
                const auto& col = t.columns[c];
                const bool match = !tc.preset.empty() && !col.preset.empty()
                                       ? tc.preset == col.preset
                                       : col.tier == name;
                if (match) {
                    found = c;
                    break;
                }
            }
            if (found == t.columns.size()) {
                t.columns.push_back({Kind::Prefix, 0, name, tc.preset});
                taken.push_back(false);
            }
            taken[found] = true;
            tierColumns[s].push_back(found);
        }
    }

    for (size_t s = 0; s < all.size(); ++s) {
        const ScenarioResult& r = *all[s];
        CompareRow row;
        row.label = r.label;
        row.current = s == 0;
        row.model = QString::fromStdString(r.model().id).section(QLatin1Char('/'), -1);
        row.contextTokens = r.model().contextLimit;
        row.values.assign(t.columns.size(), CompareValue{State::NoTier, 0});
        QStringList past;
        for (size_t c = 0; c < lengths.size(); ++c) {
            const double n = lengths[c];
            if (n > row.contextTokens) {
                row.values[c] = {State::PastContext, 0};
                past << shortTokens(n);
                continue;
            }
            const auto b = r.eval->cost.breakevenBandwidth(n);
            row.values[c] = b && std::isfinite(*b) ? CompareValue{State::Number, *b / 1e9}
                                                   : CompareValue{State::None, 0};
        }
        for (size_t i = 0; i < tierColumns[s].size(); ++i) {
            // p* as core computed it for the scenario's curves (the tier table and the
            // fraction chart show the same), whole tokens up as kvbe-cli calc prints it.
            const auto p = i < r.curves.tiers.size()
                               ? r.curves.tiers[i].breakevenPrefix
                               : r.eval->cost.breakevenPrefix(r.eval->tiers[i]);
            row.values[tierColumns[s][i]] =
                p ? CompareValue{State::Number, std::ceil(*p)} : CompareValue{State::Never, 0};
        }
        if (!past.isEmpty()) {
            const QString lengthsText =
                past.size() == 1 ? past.front()
                                 : past.mid(0, past.size() - 1).join(QStringLiteral(", ")) +
                                       QObject::tr(" and ") + past.back();
            t.notes << QObject::tr("%1: %2 %3 past the context of %4 (%5 tokens), so B* is not "
                                   "computed there.")
                           .arg(s == 0 ? QObject::tr("The current scenario")
                                       : QObject::tr("Pin %1 (%2)").arg(s).arg(row.label),
                                lengthsText,
                                past.size() == 1 ? QObject::tr("is") : QObject::tr("are"),
                                row.model, QString::fromStdString(formatTokens(row.contextTokens)));
        }
        t.rows.push_back(std::move(row));
    }
    return t;
}

QString columnTitle(const CompareColumn& c) {
    return c.kind == CompareColumn::Kind::Bandwidth
               ? QObject::tr("B* at %1").arg(shortTokens(c.tokens))
               : QObject::tr("p* %1").arg(c.tier);
}

QString columnUnit(const CompareColumn& c) {
    return c.kind == CompareColumn::Kind::Bandwidth ? QStringLiteral("GB/s")
                                                    : QObject::tr("tokens");
}

QString valueText(const CompareValue& v, const CompareColumn& c) {
    using State = CompareValue::State;
    switch (v.state) {
    case State::Number:
        return c.kind == CompareColumn::Kind::Bandwidth
                   ? shortNumber(v.value) + QStringLiteral(" GB/s")
                   : tokenCountText(v.value);
    case State::Never:
        return QObject::tr("never");
    case State::NoTier:
        return kDash;
    case State::PastContext:
        return QObject::tr("past context");
    case State::None:
        return QObject::tr("none");
    }
    return kDash;
}

QString deltaText(const PinComparison& t, size_t row, size_t column) {
    const auto d = t.delta(row, column);
    if (!d) return kDash;
    const auto& c = t.columns[column];
    return signedText(*d, c.kind == CompareColumn::Kind::Bandwidth
                              ? shortNumber(std::abs(*d)) + QStringLiteral(" GB/s")
                              : tokenCountText(std::abs(*d)));
}

QString deltaPercentText(const PinComparison& t, size_t row, size_t column) {
    const auto pct = t.deltaPercent(row, column);
    if (!pct) return {};
    const double shown = std::abs(*pct) < 0.05 ? 0 : *pct;
    return signedText(shown, shortNumber(std::abs(shown))) + QStringLiteral(" %");
}

QString deltaLine(const PinComparison& t, size_t row, size_t column) {
    const QString pct = deltaPercentText(t, row, column);
    return pct.isEmpty() ? deltaText(t, row, column)
                         : QStringLiteral("%1 (%2)").arg(deltaText(t, row, column), pct);
}

QString columnHeader(const CompareColumn& c) {
    if (c.kind == CompareColumn::Kind::Bandwidth)
        return QObject::tr("B*, GB/s\nat %1").arg(shortTokens(c.tokens));
    // A long tier name on two lines, split at the space nearest its middle.
    QString name = c.tier;
    if (name.size() > 12) {
        int best = -1;
        for (int i = 0; i < name.size(); ++i)
            if (name[i] == QLatin1Char(' ') &&
                (best < 0 || std::abs(i - name.size() / 2) < std::abs(best - name.size() / 2)))
                best = i;
        if (best > 0) name[best] = QLatin1Char('\n');
    }
    return QObject::tr("p*, tokens\n%1").arg(name);
}

QString pinComparisonCsv(const PinComparison& t) {
    if (t.empty()) return {};
    QStringList head{QStringLiteral("scenario"), QStringLiteral("current"), QStringLiteral("model"),
                     QStringLiteral("context_tokens")};
    for (const auto& c : t.columns) {
        if (c.kind == CompareColumn::Kind::Bandwidth) {
            const QString at = QStringLiteral("@%1").arg(csvNumber(c.tokens));
            head << QStringLiteral("breakeven_bandwidth_GBps") + at
                 << QStringLiteral("delta_breakeven_bandwidth_GBps") + at
                 << QStringLiteral("delta_breakeven_bandwidth_pct") + at;
        } else {
            head << csvField(c.tier + QStringLiteral(":breakeven_prefix_tokens"))
                 << csvField(c.tier + QStringLiteral(":delta_breakeven_prefix_tokens"))
                 << csvField(c.tier + QStringLiteral(":delta_breakeven_prefix_pct"));
        }
    }
    QString out = head.join(QLatin1Char(',')) + QLatin1Char('\n');
    for (size_t r = 0; r < t.rows.size(); ++r) {
        const auto& row = t.rows[r];
        QStringList f{csvField(row.label),
                      row.current ? QStringLiteral("true") : QStringLiteral("false"),
                      csvField(row.model), csvNumber(row.contextTokens)};
        for (size_t c = 0; c < t.columns.size(); ++c) {
            const auto& v = row.values[c];
            f << (v.isNumber()                            ? csvNumber(v.value)
                  : v.state == CompareValue::State::Never ? QStringLiteral("never")
                                                          : QString());
            const auto d = t.delta(r, c);
            const auto pct = t.deltaPercent(r, c);
            f << (d ? csvNumber(*d) : QString()) << (pct ? csvNumber(*pct) : QString());
        }
        out += f.join(QLatin1Char(',')) + QLatin1Char('\n');
    }
    return out;
}

// ---- the table for a slide

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

int PinTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(m_table.rows.size());
}

int PinTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() || m_table.empty() ? 0 : 1 + int(m_table.columns.size());
}

QVariant PinTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const size_t r = size_t(index.row());
    const auto& row = m_table.rows[r];
    if (index.column() == 0) {
        if (role == Qt::DisplayRole) return row.label;
        if (role == Qt::ToolTipRole)
            return tr("%1\nModel %2, context %3 tokens")
                .arg(row.label, row.model, QString::fromStdString(formatTokens(row.contextTokens)));
        if (role == Qt::FontRole && row.current) {
            QFont f;
            f.setBold(true);
            return f;
        }
        return {};
    }
    const size_t c = size_t(index.column() - 1);
    const auto& col = m_table.columns[c];
    const auto& v = row.values[c];
    using State = CompareValue::State;
    switch (role) {
    case Qt::DisplayRole: {
        // Narrow columns: the value, its difference, and the difference in %, a line each.
        if (row.current) return valueText(v, col);
        QString text = valueText(v, col) + QLatin1Char('\n') + deltaText(m_table, r, c);
        if (const QString pct = deltaPercentText(m_table, r, c); !pct.isEmpty())
            text += QLatin1Char('\n') + pct;
        return text;
    }
    case Qt::TextAlignmentRole:
        return int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ToolTipRole:
        switch (v.state) {
        case State::PastContext:
            return tr("%1 tokens is past the context of %2 (%3 tokens): B* is not computed there.")
                .arg(QString::fromStdString(formatTokens(col.tokens)), row.model,
                     QString::fromStdString(formatTokens(row.contextTokens)));
        case State::NoTier:
            return tr("This scenario has no tier \"%1\".").arg(col.tier);
        case State::Never:
            return tr("A hit from \"%1\" is slower than recomputing at every prefix up to the "
                      "context (%2 tokens).")
                .arg(col.tier, QString::fromStdString(formatTokens(row.contextTokens)));
        case State::None:
            return tr("Recompute takes no longer than the fixed cost: no bandwidth ties with it.");
        case State::Number:
            return col.kind == CompareColumn::Kind::Bandwidth
                       ? tr("The bandwidth one storage path needs for a fully cached %1-token "
                            "prompt to tie with recompute")
                             .arg(QString::fromStdString(formatTokens(col.tokens)))
                       : tr("The shortest prefix whose load from \"%1\" beats recomputing it")
                             .arg(col.tier);
        }
        return {};
    case ValueRole:
        return v.isNumber() ? QVariant(v.value) : QVariant();
    case DeltaRole:
        if (auto d = m_table.delta(r, c)) return *d;
        return {};
    case DeltaPercentRole:
        if (auto d = m_table.deltaPercent(r, c)) return *d;
        return {};
    case StateRole:
        return int(v.state);
    default:
        return {};
    }
}

QVariant PinTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o == Qt::Vertical) {
        if (role != Qt::DisplayRole || section < 0 || section >= int(m_table.rows.size()))
            return {};
        return section == 0 ? tr("Current") : tr("Pin %1").arg(section);
    }
    if (section == 0) return role == Qt::DisplayRole ? QVariant(tr("Scenario")) : QVariant();
    const size_t c = size_t(section - 1);
    if (c >= m_table.columns.size()) return {};
    const auto& col = m_table.columns[c];
    if (role == Qt::DisplayRole) return columnHeader(col);
    if (role == Qt::ToolTipRole)
        return col.kind == CompareColumn::Kind::Bandwidth
                   ? tr("Break-even bandwidth at %1 tokens, GB/s; under it, Δ against the "
                        "current scenario")
                         .arg(QString::fromStdString(formatTokens(col.tokens)))
                   : tr("Break-even prefix of \"%1\", tokens; under it, Δ against the current "
                        "scenario")
                         .arg(col.tier);
    if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

void PinTableModel::setComparison(PinComparison t) {
    beginResetModel();
    m_table = std::move(t);
    endResetModel();
}

// ---- the tab

PinTableView::PinTableView(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(6, 6, 6, 6);
    auto* top = new QHBoxLayout;
    auto* lengthsLabel = new QLabel(tr("B* at prompt lengths (tokens):"), this);
    m_lengthsEdit = new QLineEdit(this);
    m_lengthsEdit->setObjectName(QStringLiteral("pinTableLengths"));
    m_lengthsEdit->setPlaceholderText(QStringLiteral("4k, 32k, 128k"));
    m_lengthsEdit->setToolTip(
        tr("Up to %1 prompt lengths, separated by commas; k = 1024 (8k = 8,192). A length past "
           "a scenario's context is not computed for it.")
            .arg(kMaxCompareLengths));
    m_lengthsEdit->setMinimumWidth(160);
    lengthsLabel->setBuddy(m_lengthsEdit);
    top->addWidget(lengthsLabel);
    top->addWidget(m_lengthsEdit, 1);
    top->addStretch(1);
    for (const auto& [format, text] : {std::pair{QStringLiteral("csv"), tr("Export CSV…")},
                                       std::pair{QStringLiteral("png"), tr("PNG…")},
                                       std::pair{QStringLiteral("svg"), tr("SVG…")}}) {
        auto* b = new QPushButton(text, this);
        b->setObjectName(QStringLiteral("pinTableExport") + format.toUpper());
        b->setToolTip(format == QLatin1String("csv")
                          ? tr("The table as CSV: raw numbers, units in the header, Δ columns")
                          : tr("The table as an image, for a slide"));
        const QString f = format;
        connect(b, &QPushButton::clicked, this, [this, f] { emit exportRequested(f); });
        top->addWidget(b);
    }
    v->addLayout(top);
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("pinTableMessage"));
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #b3261e;"));
    m_message->hide();
    v->addWidget(m_message);

    m_model = new PinTableModel(this);
    m_model->setObjectName(QStringLiteral("pinTableModel"));
    m_view = new QTableView(this);
    m_view->setObjectName(QStringLiteral("pinTableView"));
    m_view->setModel(m_model);
    m_view->setWordWrap(true);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    // Room between the numbers: the columns are as wide as their widest line.
    m_view->setStyleSheet(QStringLiteral("QTableView::item { padding: 2px 8px; }"));
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_view->horizontalHeader()->setMinimumSectionSize(60);
    v->addWidget(m_view, 1);
    m_notes = new QLabel(this);
    m_notes->setObjectName(QStringLiteral("pinTableNotes"));
    m_notes->setWordWrap(true);
    v->addWidget(m_notes);

    const QString saved = QSettings().value(QStringLiteral("pinTable/lengths")).toString();
    auto lengths = parseCompareLengths(saved);
    m_lengths = saved.isEmpty() || !lengths ? defaultCompareLengths() : *lengths;
    m_lengthsEdit->setText(compareLengthsText(m_lengths));
    connect(m_lengthsEdit, &QLineEdit::editingFinished, this,
            [this] { setLengthsText(m_lengthsEdit->text()); });

    connect(m_explorer, &Explorer::computed, this, &PinTableView::refresh);
    connect(m_explorer->pins(), &PinModel::pinsChanged, this, &PinTableView::refresh);
    refresh();
}

bool PinTableView::setLengthsText(const QString& text) {
    auto lengths = parseCompareLengths(text);
    if (!lengths) {
        m_message->setText(QString::fromStdString(lengths.message()) +
                           tr(" The table keeps %1.").arg(compareLengthsText(m_lengths)));
        m_message->show();
        return false;
    }
    m_message->clear();
    m_message->hide();
    if (m_lengthsEdit->text() != compareLengthsText(*lengths))
        m_lengthsEdit->setText(compareLengthsText(*lengths));
    if (*lengths == m_lengths) return true;
    m_lengths = std::move(*lengths);
    QSettings().setValue(QStringLiteral("pinTable/lengths"), compareLengthsText(m_lengths));
    refresh();
    return true;
}

void PinTableView::refresh() {
    m_model->setComparison(
        comparePins(m_explorer->result(), m_explorer->pins()->pins(), m_lengths));
    const auto& t = m_model->comparison();
    QStringList notes = t.notes;
    if (t.rows.size() <= 1)
        notes.prepend(tr("Pin scenarios (Compare ▸ Pin current scenario, Ctrl+P) to see them "
                         "here beside the current one, with their differences."));
    m_notes->setText(notes.join(QLatin1Char('\n')));
    m_notes->setVisible(!notes.isEmpty());
    // The numbers keep their width; the labels take what is left and wrap.
    auto* h = m_view->horizontalHeader();
    if (m_model->columnCount() > 0) {
        h->setSectionResizeMode(QHeaderView::ResizeToContents);
        h->setSectionResizeMode(0, QHeaderView::Stretch);
    }
}

} // namespace kvbe
