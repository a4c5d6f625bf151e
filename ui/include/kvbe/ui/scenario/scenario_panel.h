// The scenario panel: every input of the what-if, each with its unit, editing the Explorer's
// scenario live. Values that cannot be right are refused in place with the reason. Its parts,
// one widget each (scenario_part.h): the model, the GPU, the storage tiers, the prompts and the
// advanced fields, under the scenario's name and over the message line.
#pragma once

#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/scenario/scenario_part.h"

#include <QWidget>

#include <vector>

class QLabel;
class QLineEdit;

namespace kvbe {

class AdvancedBox;
class ModelBox;

class ScenarioPanel : public QWidget {
    Q_OBJECT
  public:
    explicit ScenarioPanel(Explorer* explorer, QWidget* parent = nullptr);

    // Shows the Explorer's scenario in every control (after open, drop or restore).
    void showScenario();
    // Picks a model by reference (preset id, file or folder); false with a message when it fails.
    bool selectModel(const QString& ref);
    // The model's config.json through a file dialog.
    void openModelConfig();
    // A measured prefill table from a CSV file (AdvancedBox::importPrefillTable).
    bool importPrefillTable(const QString& path);

    // Its controls have object names (each part sets them): tests find them with findChild. The
    // name field holds a name the user gave; with none, it is empty and shows the label built
    // from the inputs in grey (see updateName).

    // The latest refusal or evaluation error (what opening a model that fails reports).
    QString messageText() const;

  private:
    QLineEdit* buildName();
    // The Explorer's signals: a new scenario, a result, a failure.
    void connectExplorer();
    void updateName();
    QString currentLabelName() const;
    void showMessage(const QString& text);

    Explorer* m_explorer;
    ScenarioEditing m_editing;
    QLineEdit* m_name;
    ModelBox* m_model;
    AdvancedBox* m_advanced;
    std::vector<ScenarioPart*> m_parts; // in the panel's order
    QLabel* m_message;
};

} // namespace kvbe
