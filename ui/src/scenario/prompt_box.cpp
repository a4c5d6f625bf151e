#include "kvbe/ui/scenario/prompt_box.h"

#include "kvbe/base/units.h"

#include <QCheckBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSlider>

#include <cmath>

namespace kvbe {

PromptBox::PromptBox(ScenarioEditing& editing, QWidget* parent) : ScenarioPart(editing, parent) {
    auto* promptBox = addBox(tr("Prompts"));
    auto* pf = new QFormLayout(promptBox);
    auto* fracRow = new QHBoxLayout;
    m_fraction = percentSlider(0, 100, promptBox);
    m_fraction->setObjectName(QStringLiteral("fraction"));
    m_fractionLabel = new QLabel(promptBox);
    m_fractionLabel->setMinimumWidth(44);
    fracRow->addWidget(m_fraction);
    fracRow->addWidget(m_fractionLabel);
    pf->addRow(tr("Cached fraction"), fracRow);
    connect(m_fraction, &QSlider::valueChanged, this, [this](int v) {
        m_fractionLabel->setText(QStringLiteral("%1 %").arg(v));
        edit(
            tr("Cached fraction"), [&](Scenario& s) { s.cachedFraction = v / 100.0; },
            kMergeFraction);
    });
    connect(m_fraction, &QSlider::sliderReleased, explorer(), &Explorer::endMerge);

    m_minTokens = new NumberField(tr("tokens"), NumberField::tokens(tr("Shortest prompt"), 1, 1e8),
                                  promptBox);
    m_minTokens->setObjectName(QStringLiteral("minTokens"));
    m_maxTokens =
        new NumberField(tr("tokens"), NumberField::tokens(tr("Longest prompt"), 2, 1e8), promptBox);
    m_maxTokens->setObjectName(QStringLiteral("maxTokens"));
    pf->addRow(tr("Shortest"), m_minTokens);
    pf->addRow(tr("Longest"), m_maxTokens);
    connect(m_minTokens, &NumberField::valueEdited, this, &PromptBox::applyLengths);
    connect(m_maxTokens, &NumberField::valueEdited, this, &PromptBox::applyLengths);

    m_logLengths = new QCheckBox(tr("log scale"), promptBox);
    m_logLengths->setObjectName(QStringLiteral("logLengths"));
    pf->addRow(tr("Length axis"), m_logLengths);
    connect(m_logLengths, &QCheckBox::toggled, this,
            [this](bool on) { edit(tr("Length axis"), [&](Scenario& s) { s.lengths.log = on; }); });

    m_sweepTokens = new NumberField(
        tr("tokens"), NumberField::tokens(tr("Model-size length"), 1, 1e8), promptBox);
    m_sweepTokens->setObjectName(QStringLiteral("sweepTokens"));
    m_sweepTokens->setToolTip(tr("The prompt length of the model-size chart"));
    pf->addRow(tr("Model-size N"), m_sweepTokens);
    connect(m_sweepTokens, &NumberField::valueEdited, this, [this](double v) {
        edit(
            tr("Model-size N"), [&](Scenario& s) { s.sweepTokens = v; }, kMergeSweep);
    });
    // The typing in one field ends: the next change is a new undo step.
    for (NumberField* f : {m_minTokens, m_maxTokens, m_sweepTokens})
        connect(f->edit(), &QLineEdit::editingFinished, explorer(), &Explorer::endMerge);
}

void PromptBox::applyLengths() {
    const auto lo = m_minTokens->value(), hi = m_maxTokens->value();
    if (!lo || !hi) return;
    if (*hi <= *lo) {
        showMessage(tr("The longest prompt must be longer than the shortest (%1 ≤ %2 tokens).")
                        .arg(QString::fromStdString(formatTokens(*hi)),
                             QString::fromStdString(formatTokens(*lo))));
        return;
    }
    showMessage(QString());
    edit(
        tr("Prompt lengths"),
        [&](Scenario& s) {
            s.lengths.minTokens = *lo;
            s.lengths.maxTokens = *hi;
        },
        kMergeLengths);
}

void PromptBox::showScenario(const Scenario& s) {
    m_fraction->setValue(int(std::lround(s.cachedFraction * 100)));
    m_fractionLabel->setText(QStringLiteral("%1 %").arg(m_fraction->value()));
    m_minTokens->setValue(s.lengths.minTokens);
    m_maxTokens->setValue(s.lengths.maxTokens);
    m_logLengths->setChecked(s.lengths.log);
    m_sweepTokens->setValue(s.sweepTokens);
}

} // namespace kvbe
