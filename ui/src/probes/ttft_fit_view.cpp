#include "kvbe/ui/probes/ttft_fit_view.h"

#include "kvbe/base/units.h"

#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>

namespace kvbe {

namespace {

enum Column { Tier, Prompt, Prefix, Median, Spread, Fitted, Residual, Columns };
constexpr int kSeriesRole = Qt::UserRole + 1; // "recompute" or the tier, as the fit names them

QString millis(double seconds) {
    return QString::number(seconds * 1e3, 'f', seconds < 0.1 ? 2 : 1);
}

double number(const nlohmann::ordered_json& j, const char* key, double otherwise = NAN) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : otherwise;
}

} // namespace

TtftFitView::TtftFitView(int run, QWidget* parent)
    : QWidget(parent), m_fit(new QLabel(this)), m_table(new QTableWidget(0, Columns, this)) {
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    m_fit->setObjectName(QStringLiteral("runFit%1").arg(run));
    m_fit->setWordWrap(true);
    m_fit->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fit->hide();
    m_table->setObjectName(QStringLiteral("runTtft%1").arg(run));
    m_table->setHorizontalHeaderLabels({tr("Tier"), tr("Prompt"), tr("Prefix"), tr("TTFT ms"),
                                        tr("p5–p95 ms"), tr("Fitted ms"), tr("Residual")});
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->verticalHeader()->hide();
    m_table->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 4);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setMinimumHeight(5 * (fontMetrics().height() + 4));
    v->addWidget(m_fit);
    v->addWidget(m_table);
    hide();
}

bool TtftFitView::addPoint(const ProbePoint& p) {
    const bool cold = p.series == series::kColdTtft, hit = p.series == series::kHitTtft;
    if (!(cold || hit) || !(p.y > 0)) return false;
    const std::string tier = hit ? p.meta.value("tier", std::string("?")) : std::string();
    const int r = m_table->rowCount();
    m_table->insertRow(r);
    const double prefix = number(p.meta, "prefix", 0);
    const QStringList cells{cold ? tr("cold") : QString::fromStdString(tier),
                            QString::fromStdString(formatTokens(p.x)),
                            cold ? QString() : QString::fromStdString(formatTokens(prefix)),
                            millis(p.y),
                            std::isfinite(number(p.meta, "p05_s"))
                                ? QStringLiteral("%1–%2").arg(millis(number(p.meta, "p05_s")),
                                                              millis(number(p.meta, "p95_s")))
                                : QString(),
                            QString(),
                            QString()};
    for (int c = 0; c < Columns; ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        if (c > Tier) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(r, c, item);
    }
    m_table->item(r, Tier)->setData(kSeriesRole, cold ? QStringLiteral("recompute")
                                                      : QString::fromStdString(tier));
    m_table->item(r, Prompt)->setData(Qt::UserRole, p.x);
    m_table->item(r, Prefix)->setData(Qt::UserRole, prefix);
    show();
    return true;
}

void TtftFitView::showResult(const ProbeResult& r) {
    const auto& s = r.summary;
    if (!s.contains("tiers") || !s.contains("utilisation")) return;
    // Three significant digits, the way the Fleet view shows a fit: more are noise.
    QStringList parts;
    parts << tr("u = %1 %").arg(number(s, "utilisation") * 100, 0, 'f', 1)
          << tr("overhead %1 ms").arg(number(s, "overhead_s") * 1e3, 0, 'f', 2);
    for (const auto& [name, t] : s["tiers"].items()) {
        QString line = QString::fromStdString(name) + QStringLiteral(":");
        if (const double b = number(t, "bandwidth_Bps"); std::isfinite(b))
            line += QStringLiteral(" ") + QString::fromStdString(formatBandwidth(b)) +
                    QStringLiteral(",");
        line += tr(" t_fixed %1 ms").arg(number(t, "t_fixed_s") * 1e3, 0, 'f', 2);
        if (const double p = number(t, "breakeven_prefix_tokens"); std::isfinite(p))
            line += tr(", p* %1 tokens").arg(QString::fromStdString(formatTokens(std::ceil(p))));
        parts << line;
    }
    parts << tr("rms residual %1 %").arg(number(s, "rms_relative_residual") * 100, 0, 'f', 1);
    m_fit->setText(tr("Fitted to the %1 TTFTs: %2")
                       .arg(QString::fromStdString(s.value("fitted_to", std::string("median"))),
                            parts.join(QStringLiteral("; "))));
    m_fit->show();
    if (const auto it = s.find("residuals"); it != s.end() && it->is_array())
        for (const auto& res : *it) {
            const QString series = QString::fromStdString(res.value("series", std::string()));
            const double tokens = number(res, "tokens"), prefix = number(res, "prefix", 0);
            const double measured = number(res, "measured_s"), fitted = number(res, "fitted_s");
            for (int row = 0; row < m_table->rowCount(); ++row) {
                if (m_table->item(row, Tier)->data(kSeriesRole).toString() != series ||
                    m_table->item(row, Prompt)->data(Qt::UserRole).toDouble() != tokens ||
                    std::abs(m_table->item(row, Prefix)->data(Qt::UserRole).toDouble() - prefix) >
                        0.5)
                    continue;
                m_table->item(row, Fitted)->setText(millis(fitted));
                if (measured > 0)
                    m_table->item(row, Residual)
                        ->setText(QStringLiteral("%1 %").arg((fitted - measured) / measured * 100,
                                                             0, 'f', 1));
            }
        }
    show();
}

} // namespace kvbe
