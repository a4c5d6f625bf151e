#include "kvbe/ui/scenario/scenario_panel.h"

#include "kvbe/ui/scenario/advanced_box.h"
#include "kvbe/ui/scenario/gpu_box.h"
#include "kvbe/ui/scenario/model_box.h"
#include "kvbe/ui/scenario/prompt_box.h"
#include "kvbe/ui/scenario/tier_box.h"

#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace kvbe {

ScenarioPanel::ScenarioPanel(Explorer* explorer, QWidget* parent)
    : QWidget(parent), m_explorer(explorer),
      m_editing(explorer, {[this](const QString& text) { showMessage(text); },
                           [this] { showScenario(); }, [this] { updateName(); }}) {
    // The message line first: the parts' refusals go to it (it is laid out under them).
    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setWordWrap(true);
    m_message->setStyleSheet(QStringLiteral("color: #c0392b;"));
    m_message->setVisible(false);

    auto* outer = new QVBoxLayout(this);
    auto* nameRow = new QFormLayout;
    nameRow->addRow(tr("Name"), buildName());
    outer->addLayout(nameRow);
    // Made in the panel's order, which is the order Tab moves through them.
    m_model = new ModelBox(m_editing, this);
    auto* gpu = new GpuBox(m_editing, this);
    auto* tiers = new TierBox(m_editing, this);
    auto* prompts = new PromptBox(m_editing, this);
    m_advanced = new AdvancedBox(m_editing, this);
    m_parts = {m_model, gpu, tiers, prompts, m_advanced};
    for (ScenarioPart* part : m_parts)
        outer->addWidget(part);
    outer->addWidget(m_message);
    outer->addStretch();

    connectExplorer();
    showScenario();
}

QLineEdit* ScenarioPanel::buildName() {
    m_name = new QLineEdit(this);
    m_name->setObjectName(QStringLiteral("name"));
    m_name->setToolTip(tr("The label of this scenario in legends, pins and exports. Left empty, "
                          "it is described from its inputs and follows them"));
    m_name->setClearButtonEnabled(true);
    connect(m_name, &QLineEdit::editingFinished, this, [this] {
        if (m_editing.showing() || m_name->text().trimmed() == currentLabelName()) return;
        m_editing.ownChange([this] { m_explorer->rename(m_name->text()); });
        updateName();
    });
    return m_name;
}

void ScenarioPanel::connectExplorer() {
    connect(m_explorer, &Explorer::scenarioChanged, this, [this] {
        if (!m_editing.applying()) showScenario();
    });
    connect(m_explorer, &Explorer::computed, this, [this] {
        if (m_message->property("evaluation").toBool()) showMessage(QString());
        updateName();
        if (const auto& r = m_explorer->result())
            for (ScenarioPart* part : m_parts)
                part->showResult(*r);
    });
    connect(m_explorer, &Explorer::failed, this, [this](const QString& msg) {
        showMessage(msg);
        m_message->setProperty("evaluation", true);
    });
}

bool ScenarioPanel::selectModel(const QString& ref) {
    return m_model->selectModel(ref);
}

void ScenarioPanel::openModelConfig() {
    m_model->openModelConfig();
}

bool ScenarioPanel::importPrefillTable(const QString& path) {
    return m_advanced->importPrefillTable(path);
}

void ScenarioPanel::showMessage(const QString& text) {
    m_message->setProperty("evaluation", false);
    m_message->setText(text);
    m_message->setVisible(!text.isEmpty());
}

QString ScenarioPanel::messageText() const {
    return m_message->text();
}

void ScenarioPanel::showScenario() {
    const Scenario& s = m_explorer->scenario();
    m_editing.setShowing(true);
    for (ScenarioPart* part : m_parts)
        part->showScenario(s);
    m_editing.setShowing(false);
    updateName();
}

QString ScenarioPanel::currentLabelName() const {
    return m_explorer->nameGiven() ? QString::fromStdString(m_explorer->scenario().name)
                                   : QString();
}

void ScenarioPanel::updateName() {
    // A given name is shown as text. Otherwise the field is empty, and QLineEdit draws the
    // label built from the inputs in grey (setPlaceholderText below).
    const Scenario& s = m_explorer->scenario();
    const QString text = m_explorer->nameGiven() ? QString::fromStdString(s.name) : QString();
    if (m_name->text() != text && !m_name->hasFocus()) m_name->setText(text);
    const auto& r = m_explorer->result();
    m_name->setPlaceholderText(r && r->scenario == s ? r->label : QString::fromStdString(s.name));
}

} // namespace kvbe
