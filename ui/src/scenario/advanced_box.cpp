#include "kvbe/ui/scenario/advanced_box.h"

#include "kvbe/base/csv.h"
#include "kvbe/base/interpolation.h"
#include "kvbe/base/units.h"
#include "kvbe/ui/widgets/file_dialogs.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace kvbe {

namespace {
// A parameter count as people write it: "3.21B", "70.6B", "350M", "1.2T".
QString paramCountText(double p, int digits = 6) {
    if (p >= 1e12) return QString::number(p / 1e12, 'g', digits) + QLatin1Char('T');
    if (p >= 1e9) return QString::number(p / 1e9, 'g', digits) + QLatin1Char('B');
    if (p >= 1e6) return QString::number(p / 1e6, 'g', digits) + QLatin1Char('M');
    return QString::number(p, 'g', digits);
}
} // namespace

AdvancedBox::AdvancedBox(ScenarioEditing& editing, QWidget* parent)
    : ScenarioPart(editing, parent) {
    m_toggle = new QToolButton(this);
    m_toggle->setObjectName(QStringLiteral("advancedToggle"));
    m_toggle->setText(tr("Advanced: P, ramp, host link, prefill table"));
    m_toggle->setToolTip(
        tr("The parameter count of the FLOP model, the utilisation ramp, the host-link bandwidth "
           "and a measured prefill table: each empty by default"));
    m_toggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_toggle->setArrowType(Qt::RightArrow);
    m_toggle->setAutoRaise(true);
    m_toggle->setCheckable(true);
    m_layout->addWidget(m_toggle);

    auto* box = addBox(); // the toggle above is its title
    m_fields = box;
    m_fields->setObjectName(QStringLiteral("advanced"));
    m_fields->setVisible(false);
    connect(m_toggle, &QToolButton::toggled, this, [this](bool on) {
        m_toggle->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
        m_fields->setVisible(on);
    });
    auto* af = new QFormLayout(box);
    addNumbers(box, af);
    addPrefillTable(box, af);
}

void AdvancedBox::connectOptionalField(NumberField* f, const QString& what, int mergeKey,
                                       OptionalSetter set) {
    f->setEmptyAllowed(true);
    f->setReportsInPlace(false);
    connect(f, &NumberField::valueEdited, this, [this, what, mergeKey, set](double v) {
        showMessage(QString());
        edit(
            what, [&](Scenario& s) { set(s, std::optional<double>(v)); }, mergeKey);
    });
    connect(f, &NumberField::cleared, this, [this, what, set] {
        showMessage(QString());
        edit(what, [&](Scenario& s) { set(s, std::nullopt); });
    });
    connect(f, &NumberField::refused, this, [this](const QString& why) { showMessage(why); });
    connect(f->edit(), &QLineEdit::editingFinished, explorer(), &Explorer::endMerge);
}

void AdvancedBox::addNumbers(QWidget* box, QFormLayout* af) {
    m_params = new NumberField(
        tr("parameters"),
        [](const QString& text, QString* why) -> std::optional<double> {
            auto v = parseParamCount(text.toStdString());
            if (!v) {
                *why = tr("Parameters: %1.").arg(QString::fromStdString(v.message()));
                return std::nullopt;
            }
            // No model has fewer; "7" on the way to "70B" is not applied.
            if (*v < 1e6) {
                *why = tr("Parameters: %1 is under a million; expected a model's count, e.g. "
                          "3.21e9 or 70B.")
                           .arg(text.trimmed());
                return std::nullopt;
            }
            return *v;
        },
        box);
    m_params->setObjectName(QStringLiteral("paramsOverride"));
    m_params->setToolTip(tr("P in the simple FLOP model's 2·P·N: 3.21e9, 70B. Empty: the "
                            "model's own count (active parameters for a mixture of experts). "
                            "The detailed FLOP model counts per layer and does not use it"));
    af->addRow(tr("Parameters"), m_params);
    connectOptionalField(m_params, tr("Parameter count"), kMergeParams,
                         [](Scenario& s, std::optional<double> v) { s.paramsOverride = v; });

    m_ramp =
        new NumberField(tr("tokens"), NumberField::tokens(tr("Utilisation ramp n½"), 1, 1e9), box);
    m_ramp->setObjectName(QStringLiteral("rampHalfTokens"));
    m_ramp->setPlaceholder(tr("off"));
    m_ramp->setToolTip(tr("Short prompts keep the GPU less busy: u(N) = u · N / (N + n½), half "
                          "the utilisation at N = n½ tokens. Empty: the same utilisation at "
                          "every length"));
    af->addRow(tr("Ramp n½"), m_ramp);
    connectOptionalField(m_ramp, tr("Utilisation ramp"), kMergeRamp,
                         [](Scenario& s, std::optional<double> v) { s.rampHalfTokens = v; });

    m_hostLink = new NumberField(
        tr("GB/s"), NumberField::decimal(tr("Host link"), 0.001, 1e6, tr("GB/s")), box);
    m_hostLink->setObjectName(QStringLiteral("hostLink"));
    m_hostLink->setToolTip(
        tr("The GPU's link to host memory that staged tiers load through (serial: 1/B = "
           "1/B_tier + 1/B_link; pipelined: min(B_tier, B_link)). Empty: the GPU preset's"));
    af->addRow(tr("Host link"), m_hostLink);
    connectOptionalField(m_hostLink, tr("Host link"), kMergeHostLink,
                         [](Scenario& s, std::optional<double> v) { s.hostLinkGBps = v; });
}

void AdvancedBox::addPrefillTable(QWidget* box, QFormLayout* af) {
    m_prefillState = new QLabel(box);
    m_prefillState->setObjectName(QStringLiteral("prefillState"));
    m_prefillState->setWordWrap(true);
    af->addRow(tr("Prefill"), m_prefillState);
    m_prefill = new QTableWidget(0, 2, box);
    m_prefill->setObjectName(QStringLiteral("prefillTable"));
    m_prefill->setHorizontalHeaderLabels({tr("Tokens"), tr("Seconds")});
    m_prefill->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_prefill->verticalHeader()->setVisible(false);
    m_prefill->setTabKeyNavigation(false);
    m_prefill->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_prefill->setToolTip(tr("Measured cold prefill times: tokens (8192 or 8k) and seconds "
                             "(0.61 or 610ms), at least two lengths. The recompute time follows "
                             "them (log-log interpolation) in place of the FLOP model"));
    m_prefill->setMinimumHeight(90);
    m_prefill->setMaximumHeight(150);
    af->addRow(m_prefill);
    connect(m_prefill, &QTableWidget::itemChanged, this, [this] {
        if (!showing()) applyPrefillTable();
    });

    auto* buttons = new QHBoxLayout;
    auto* addRow = new QPushButton(tr("Add row"), box);
    addRow->setObjectName(QStringLiteral("addPrefillRow"));
    connect(addRow, &QPushButton::clicked, this, [this] {
        const int row = m_prefill->rowCount();
        {
            const QSignalBlocker block(m_prefill); // empty cells: nothing to apply yet
            m_prefill->insertRow(row);
            for (int column = 0; column < 2; ++column)
                m_prefill->setItem(row, column, new QTableWidgetItem);
        }
        m_prefill->setFocus();
        m_prefill->setCurrentCell(row, 0);
        m_prefill->editItem(m_prefill->item(row, 0));
    });
    auto* removeRow = new QPushButton(tr("Remove"), box);
    removeRow->setObjectName(QStringLiteral("removePrefillRow"));
    connect(removeRow, &QPushButton::clicked, this, [this] {
        const auto rows = m_prefill->selectionModel()->selectedRows();
        const int row = rows.isEmpty() ? m_prefill->rowCount() - 1 : rows.front().row();
        if (row < 0) return;
        m_prefill->removeRow(row);
        applyPrefillTable();
    });
    auto* import = new QPushButton(tr("Import CSV…"), box);
    import->setObjectName(QStringLiteral("importPrefill"));
    import->setToolTip(tr("A CSV file of tokens and seconds, one length a line"));
    connect(import, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("Import a measured prefill table"), QString(),
                                         tr("CSV (*.csv *.txt);;All files (*)"));
        if (!path.isEmpty()) importPrefillTable(path);
    });
    auto* analytic = new QPushButton(tr("Analytic"), box);
    analytic->setObjectName(QStringLiteral("analyticPrefill"));
    analytic->setToolTip(tr("Drop the measured table: the recompute time comes from the FLOP "
                            "model again"));
    connect(analytic, &QPushButton::clicked, this, [this] {
        showMessage(QString());
        edit(tr("Analytic prefill"), [](Scenario& s) { s.measuredPrefill.clear(); });
        showPrefillTable(explorer()->scenario());
    });
    buttons->addWidget(addRow);
    buttons->addWidget(removeRow);
    buttons->addWidget(import);
    buttons->addWidget(analytic);
    buttons->addStretch();
    af->addRow(buttons);
}

void AdvancedBox::applyPrefillTable() {
    std::vector<std::pair<double, double>> points;
    auto cell = [this](int row, int column) {
        const auto* item = m_prefill->item(row, column);
        return item ? item->text().trimmed() : QString();
    };
    for (int row = 0; row < m_prefill->rowCount(); ++row) {
        const QString tokens = cell(row, 0), seconds = cell(row, 1);
        // A row being filled in waits for its other cell.
        if (tokens.isEmpty() || seconds.isEmpty()) continue;
        auto n = parseTokens(tokens.toStdString());
        if (!n) {
            showMessage(tr("Measured prefill, row %1, tokens: %2.")
                            .arg(row + 1)
                            .arg(QString::fromStdString(n.message())));
            return;
        }
        auto t = parseSeconds(seconds.toStdString());
        if (!t) {
            showMessage(tr("Measured prefill, row %1, seconds: %2.")
                            .arg(row + 1)
                            .arg(QString::fromStdString(t.message())));
            return;
        }
        points.emplace_back(*n, *t);
    }
    std::sort(points.begin(), points.end());
    if (!points.empty()) {
        if (auto table = PrefillTable::create(points, tr("Measured prefill").toStdString());
            !table) {
            showMessage(QString::fromStdString(table.message()) + QLatin1Char('.'));
            return;
        }
    }
    showMessage(QString());
    edit(tr("Measured prefill"), [&](Scenario& s) { s.measuredPrefill = points; });
    showPrefillState(explorer()->scenario());
}

bool AdvancedBox::importPrefillTable(const QString& path) {
    const QString name = QFileInfo(path).fileName();
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        showMessage(tr("Measured prefill: cannot read %1 (%2).").arg(name, file.errorString()));
        return false;
    }
    // A prefill table has tens of lengths; a file far past that is not one.
    constexpr qint64 kMaxBytes = 4 << 20;
    if (file.size() > kMaxBytes) {
        showMessage(tr("Measured prefill: %1 is %2; expected a CSV of tokens and seconds, a few "
                       "kilobytes.")
                        .arg(name, QString::fromStdString(formatBytes(double(file.size())))));
        return false;
    }
    std::vector<std::pair<double, double>> points;
    bool first = true;
    // Commas, semicolons or tabs between the columns (core's CSV reader).
    for (const CsvRow& row : readCsv(file.readAll().toStdString(), ",;\t")) {
        QStringList cells;
        for (const std::string& cell : row.cells) {
            QString c = QString::fromStdString(cell).trimmed();
            if (c.size() >= 2 && c.startsWith(QLatin1Char('"')) && c.endsWith(QLatin1Char('"')))
                c = c.mid(1, c.size() - 2).trimmed();
            cells << c;
        }
        if ((cells.size() == 1 && cells.front().isEmpty()) || cells.front().startsWith('#'))
            continue;
        const bool header = first;
        first = false;
        if (cells.size() < 2) {
            showMessage(tr("Measured prefill: %1, line %2: expected two columns, tokens and "
                           "seconds (e.g. 8192,0.61).")
                            .arg(name)
                            .arg(row.line));
            return false;
        }
        auto n = parseTokens(cells[0].toStdString());
        auto t = parseSeconds(cells[1].toStdString());
        // A first line that is no numbers names the columns.
        if (header && !n && !t) continue;
        if (!n || !t) {
            showMessage(tr("Measured prefill: %1, line %2, %3: %4.")
                            .arg(name)
                            .arg(row.line)
                            .arg(!n ? tr("tokens") : tr("seconds"))
                            .arg(QString::fromStdString(!n ? n.message() : t.message())));
            return false;
        }
        points.emplace_back(*n, *t);
    }
    std::sort(points.begin(), points.end());
    if (auto table =
            PrefillTable::create(points, tr("Measured prefill: %1").arg(name).toStdString());
        !table) {
        showMessage(QString::fromStdString(table.message()) + QLatin1Char('.'));
        return false;
    }
    showMessage(QString());
    edit(tr("Import measured prefill"), [&](Scenario& s) { s.measuredPrefill = points; });
    showPrefillTable(explorer()->scenario());
    m_toggle->setChecked(true);
    return true;
}

void AdvancedBox::showScenario(const Scenario& s) {
    if (s.paramsOverride)
        m_params->setValue(*s.paramsOverride, paramCountText(*s.paramsOverride));
    else
        m_params->clearValue();
    if (s.rampHalfTokens)
        m_ramp->setValue(*s.rampHalfTokens);
    else
        m_ramp->clearValue();
    if (s.hostLinkGBps)
        m_hostLink->setValue(*s.hostLinkGBps);
    else
        m_hostLink->clearValue();
    // Without an override the default is the GPU preset's (shown once computed, showResult).
    if (const auto* gpu = explorer()->presets().findGpu(s.gpu))
        m_hostLink->setPlaceholder(tr("%1: %2").arg(QString::fromStdString(gpu->name),
                                                    QString::number(gpu->hostLinkBps / 1e9)));
    showPrefillTable(s);
    if (s.paramsOverride || s.rampHalfTokens || s.hostLinkGBps || !s.measuredPrefill.empty())
        m_toggle->setChecked(true);
}

void AdvancedBox::showPrefillTable(const Scenario& s) {
    {
        const QSignalBlocker block(m_prefill);
        m_prefill->setRowCount(int(s.measuredPrefill.size()));
        for (size_t i = 0; i < s.measuredPrefill.size(); ++i) {
            const auto [n, t] = s.measuredPrefill[i];
            m_prefill->setItem(int(i), 0, new QTableWidgetItem(QString::number(n, 'g', 12)));
            m_prefill->setItem(int(i), 1, new QTableWidgetItem(QString::number(t, 'g', 6)));
        }
    }
    showPrefillState(s);
}

void AdvancedBox::showPrefillState(const Scenario& s) {
    if (s.measuredPrefill.empty()) {
        m_prefillState->setText(tr("Analytic: the FLOP model at the peak and utilisation above."));
        return;
    }
    const auto [lo, hi] = std::minmax_element(s.measuredPrefill.begin(), s.measuredPrefill.end());
    m_prefillState->setText(
        tr("Measured: %1 lengths from %2 to %3 tokens. Recompute follows the table; peak, "
           "utilisation, ramp and P do not apply.")
            .arg(s.measuredPrefill.size())
            .arg(QString::fromStdString(formatTokens(lo->first)),
                 QString::fromStdString(formatTokens(hi->first))));
}

void AdvancedBox::showResult(const ScenarioResult& r) {
    const auto& cost = r.eval->cost;
    if (!r.scenario.paramsOverride)
        m_params->setPlaceholder(tr("model's: %1").arg(paramCountText(cost.simpleParams(), 3)));
    if (!r.scenario.hostLinkGBps && !r.eval->gpu)
        m_hostLink->setPlaceholder(tr("default: %1").arg(r.eval->hostLinkBps / 1e9));
}

} // namespace kvbe
