#include "kvbe/ui/compare/pin_table.h"

#include "kvbe/ui/scenario/explorer.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QTableView>
#include <QVBoxLayout>

#include <utility>

namespace kvbe {

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
