// The scenario panel's model: the model (presets, files opened, the Hugging Face cache, a
// config.json to open), the KV and state dtypes, and a summary of the model once computed.
#pragma once

#include "kvbe/ui/scenario/scenario_part.h"

class QComboBox;
class QLabel;

namespace kvbe {

class ModelBox : public ScenarioPart {
    Q_OBJECT
  public:
    explicit ModelBox(ScenarioEditing& editing, QWidget* parent = nullptr);
    void showScenario(const Scenario& s) override;
    void showResult(const ScenarioResult& r) override;

    // Picks a model by reference (preset id, file or folder); false with a message when it fails.
    bool selectModel(const QString& ref);
    // The model's config.json through a file dialog.
    void openModelConfig();

  private:
    void fillModels();
    void onModelActivated(int index);

    QComboBox* m_model;
    QLabel* m_modelInfo;
    QComboBox* m_kvDtype;
    QComboBox* m_stateDtype; // hybrids: the recurrent state's dtype
    QComboBox* m_weights;    // the weights as served (Scenario::weightDtype)
};

} // namespace kvbe
