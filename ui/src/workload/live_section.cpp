#include "kvbe/ui/workload/live_section.h"

#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace kvbe {

LiveSection::LiveSection(LiveChart* chart, QWidget* parent) : QWidget(parent), m_chart(chart) {
    setObjectName(QStringLiteral("liveSection"));
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->setSpacing(4);

    auto* row = new QHBoxLayout;
    auto* open = new QPushButton(tr("Open live replay…"), this);
    open->setObjectName(QStringLiteral("liveOpen"));
    open->setToolTip(tr("The folder kvbe-cli probe replay --out wrote (replay.json and "
                        "requests.jsonl) for the trace open here: its requests are replayed "
                        "through the model on the same servers, router and load."));
    connect(open, &QPushButton::clicked, this, &LiveSection::choose);
    m_clear = new QPushButton(tr("Clear"), this);
    m_clear->setObjectName(QStringLiteral("liveClear"));
    m_clear->setEnabled(false);
    connect(m_clear, &QPushButton::clicked, this, [this] {
        m_dir.clear();
        emitChanged();
    });
    m_folder = new QLabel(tr("No live replay"), this);
    m_folder->setObjectName(QStringLiteral("liveFolder"));
    m_folder->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_folder->setMinimumWidth(0);
    m_folder->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    auto* engineLabel = new QLabel(tr("Engine"), this);
    m_engine = new QLineEdit(this);
    m_engine->setObjectName(QStringLiteral("liveEngine"));
    m_engine->setPlaceholderText(tr("none, or llama.cpp:cache_ram=16MiB"));
    m_engine->setToolTip(
        tr("The engine's own cache, replayed on top of the servers' GPU caches, as kvbe-cli "
           "trace replay --engine takes it: llama.cpp[:cache_ram=SIZE,similarity=F] (one "
           "sequence a slot, its RAM prompt cache of whole prompts). Empty: none. Enter "
           "applies."));
    m_engine->setMinimumWidth(
        m_engine->fontMetrics().horizontalAdvance(m_engine->placeholderText()) + 24);
    engineLabel->setBuddy(m_engine);
    connect(m_engine, &QLineEdit::editingFinished, this, [this] {
        if (!m_dir.isEmpty()) emitChanged();
    });
    m_asRouted = new QCheckBox(tr("As routed live"), this);
    m_asRouted->setObjectName(QStringLiteral("liveAsRouted"));
    m_asRouted->setToolTip(
        tr("Replay each request on the server the live run sent it to, not where the model's "
           "router would send it (kvbe-cli trace replay --as-routed): what error is left is the "
           "servers' and the caches', not the router's"));
    connect(m_asRouted, &QCheckBox::toggled, this, [this] {
        if (!m_dir.isEmpty()) emitChanged();
    });
    row->addWidget(open);
    row->addWidget(m_clear);
    row->addWidget(m_folder, 1);
    row->addWidget(engineLabel);
    row->addWidget(m_engine);
    row->addWidget(m_asRouted);
    v->addLayout(row);
    v->addWidget(m_chart, 1);

    m_figures = new QLabel(this);
    m_figures->setObjectName(QStringLiteral("liveFigures"));
    m_figures->setTextFormat(Qt::RichText);
    m_figures->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_figures->setWordWrap(true);
    m_figures->setVisible(false);
    v->addWidget(m_figures);
}

void LiveSection::emitChanged() {
    emit changed(m_dir, m_engine->text().trimmed(), m_asRouted->isChecked());
}

void LiveSection::choose() {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open a live replay (the folder probe replay --out wrote)"), m_dir);
    if (dir.isEmpty()) return;
    m_dir = dir;
    emitChanged();
}

void LiveSection::showSettings(const QString& dir, const QString& engine, bool asRouted) {
    m_dir = dir;
    if (m_engine->text() != engine) m_engine->setText(engine);
    if (m_asRouted->isChecked() != asRouted) {
        const QSignalBlocker quiet(m_asRouted);
        m_asRouted->setChecked(asRouted);
    }
    m_folder->setText(dir.isEmpty() ? tr("No live replay") : dir);
    m_folder->setToolTip(dir);
    m_clear->setEnabled(!dir.isEmpty());
}

void LiveSection::setWorkload(const WorkloadPtr& w) {
    if (!w) return;
    showSettings(QString::fromStdString(w->settings.liveDir),
                 QString::fromStdString(w->settings.engine), w->settings.liveAsRouted);
    if (!w->live) {
        m_figures->clear();
        m_figures->setVisible(false);
        return;
    }
    QString html = QStringLiteral("<table cellspacing=\"0\" cellpadding=\"2\"><tr>");
    for (const QString& h : {tr("figure"), tr("predicted"), tr("measured"), tr("error")})
        html += QStringLiteral("<th align=\"left\">%1&nbsp;&nbsp;</th>").arg(h);
    html += QStringLiteral("</tr>");
    for (const auto& r : liveComparisonRows(*w->live)) {
        html += QStringLiteral("<tr>");
        for (const auto& cell : r)
            html += QStringLiteral("<td>%1&nbsp;&nbsp;</td>")
                        .arg(QString::fromStdString(cell).toHtmlEscaped());
        html += QStringLiteral("</tr>");
    }
    html += QStringLiteral("</table>");
    const LiveComparison& c = *w->live;
    html += tr("Per request, the predicted TTFT is off by %1 % on average (MAPE).")
                .arg(c.mape * 100, 0, 'f', 1);
    html += QLatin1Char(' ') + QString::fromStdString(servedAloneSentence()).toHtmlEscaped();
    if (c.failed > 0)
        html +=
            QLatin1Char(' ') +
            (c.failed == 1 ? tr("1 request failed live and is left out of both.")
                           : tr("%1 requests failed live and are left out of both.").arg(c.failed));
    m_figures->setText(html);
    m_figures->setVisible(true);
}

QString LiveSection::figuresText() const {
    return m_figures->text();
}

} // namespace kvbe
