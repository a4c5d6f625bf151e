#include "kvbe/ui/workload/price_fields.h"

#include "kvbe/base/units.h"
#include "kvbe/scenario/prices.h"
#include "kvbe/ui/scenario/explorer.h"

#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

#include <optional>

namespace kvbe {

namespace {

// The key a GPU's price goes by: its preset key, "custom" for a custom GPU (as the plan reads it).
constexpr int kPerRow = 1;

std::string gpuKey(const Scenario& s) {
    return s.gpu.empty() ? "custom" : s.gpu;
}

std::optional<Price> priceOf(const PriceTable& t, const QString& what, const std::string& gpu) {
    if (what == QLatin1String("dram")) return t.dramPerGiB;
    if (what == QLatin1String("gpu")) {
        if (auto it = t.gpuPerHour.find(gpu); it != t.gpuPerHour.end()) return it->second;
        return std::nullopt;
    }
    if (what.startsWith(QLatin1String("link:"))) {
        if (auto it = t.link.find(what.mid(5).toStdString()); it != t.link.end()) return it->second;
        return std::nullopt;
    }
    const std::string key = what.mid(6).toStdString(); // "drive:KEY"
    if (auto it = t.drive.find(key); it != t.drive.end()) return it->second;
    return std::nullopt;
}

QString usdText(double usd) {
    return QString::number(usd, 'f', usd < 100 ? 2 : 0);
}

} // namespace

PriceFields::PriceFields(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer) {
    setObjectName(QStringLiteral("planPrices"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(2);
    // The title over a form of one price a row: the section's answer column is narrow, and it
    // scrolls where a short screen leaves it little height.
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("planPricesTitle"));
    m_title->setWordWrap(true);
    v->addWidget(m_title);
    m_row = new QGridLayout;
    m_row->setContentsMargins(0, 0, 0, 0);
    m_row->setVerticalSpacing(2);
    m_row->setColumnStretch(2 * kPerRow, 1);
    v->addLayout(m_row);
    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("planPricesError"));
    m_error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_error->setWordWrap(true);
    m_error->setVisible(false);
    v->addWidget(m_error);
    connect(m_explorer, &Explorer::computed, this, &PriceFields::showPrices);
    connect(m_explorer, &Explorer::scenarioChanged, this, &PriceFields::showPrices);
    showPrices();
}

QLineEdit* PriceFields::field(const QString& what) const {
    auto it = m_fields.find(what);
    return it == m_fields.end() ? nullptr : it->second;
}

QLineEdit* PriceFields::addField(const QString& what, const QString& label) {
    auto* l = new QLabel(label, this);
    auto* f = new QLineEdit(this);
    f->setObjectName(QStringLiteral("planPrice-%1").arg(QString(what).replace(':', '-')));
    f->setMaximumWidth(f->fontMetrics().horizontalAdvance(QStringLiteral("99999.99")) + 16);
    f->setPlaceholderText(tr("none"));
    l->setBuddy(f);
    const int i = int(m_fields.size());
    m_row->addWidget(l, i / kPerRow, 2 * (i % kPerRow), Qt::AlignRight);
    m_row->addWidget(f, i / kPerRow, 2 * (i % kPerRow) + 1);
    connect(f, &QLineEdit::editingFinished, this, [this, what, f] { edited(what, f); });
    m_fields[what] = f;
    return f;
}

void PriceFields::setLinks(std::vector<std::string> links) {
    if (links == m_links) return;
    m_links = std::move(links);
    showPrices();
}

void PriceFields::showPrices() {
    const Scenario& s = m_explorer->scenario();
    const PriceTable t = pricesInForce(s.prices);
    // The fields: DRAM, the GPU, each priced drive.
    std::vector<std::pair<QString, QString>> wanted = {
        {QStringLiteral("dram"), tr("DRAM $/GiB")},
        {QStringLiteral("gpu"),
         tr("%1 $/h").arg(QString::fromStdString(s.gpu.empty() ? "GPU" : s.gpu))}};
    for (const auto& [key, price] : t.drive)
        wanted.push_back({QStringLiteral("drive:%1").arg(QString::fromStdString(key)),
                          tr("%1 $ each").arg(QString::fromStdString(key))});
    for (const auto& key : m_links)
        wanted.push_back({QStringLiteral("link:%1").arg(QString::fromStdString(key)),
                          tr("%1 link $ a node").arg(QString::fromStdString(key))});
    bool same = wanted.size() == m_fields.size();
    for (const auto& [what, label] : wanted)
        same = same && m_fields.count(what);
    if (!same) {
        while (QLayoutItem* item = m_row->takeAt(0)) {
            delete item->widget();
            delete item;
        }
        m_fields.clear();
        for (const auto& [what, label] : wanted)
            addField(what, label);
    }
    m_title->setText(t.example ? tr("<b>Prices</b> in USD: examples, to replace with your quotes")
                               : tr("<b>Prices</b> in USD"));
    m_title->setToolTip(QString::fromStdString(t.note));
    for (const auto& [what, f] : m_fields) {
        if (f->hasFocus()) continue;
        const auto p = priceOf(t, what, gpuKey(s));
        const auto own = priceOf(s.prices, what, gpuKey(s));
        f->setText(p ? usdText(p->usd) : QString());
        f->setToolTip(own ? tr("Your price, saved in the scenario's prices (Edit ▸ Undo takes it "
                               "back)")
                      : p ? tr("Example price: %1").arg(QString::fromStdString(p->source))
                          : tr("No price: the plan leaves this out until one is given"));
        QFont font = f->font();
        font.setItalic(!own);
        f->setFont(font);
    }
}

void PriceFields::edited(const QString& what, QLineEdit* f) {
    const QString text = f->text().trimmed();
    const Scenario& now = m_explorer->scenario();
    const auto inForce = priceOf(pricesInForce(now.prices), what, gpuKey(now));
    if (text.isEmpty() && !inForce) return;
    const auto v = parseNumber(text.toStdString());
    if (!v || *v < 0 || *v > 1e9) {
        m_error->setText(tr("Price '%1': expected US dollars, 0 or more, such as 12.5").arg(text));
        m_error->setVisible(true);
        return;
    }
    m_error->setVisible(false);
    if (inForce && usdText(inForce->usd) == usdText(*v)) return; // the shown value, unchanged
    Scenario s = now;
    const Price own{*v, ""};
    if (what == QLatin1String("dram"))
        s.prices.dramPerGiB = own;
    else if (what == QLatin1String("gpu"))
        s.prices.gpuPerHour[gpuKey(s)] = own;
    else if (what.startsWith(QLatin1String("link:")))
        s.prices.link[what.mid(5).toStdString()] = own;
    else
        s.prices.drive[what.mid(6).toStdString()] = own;
    s.prices.origin = "the scenario";
    m_explorer->edit(s, tr("Price"));
}

} // namespace kvbe
