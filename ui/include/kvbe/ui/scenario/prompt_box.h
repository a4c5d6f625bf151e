// The scenario panel's prompts: the cached fraction, the range of prompt lengths and its axis,
// and the length of the model-size chart.
#pragma once

#include "kvbe/ui/scenario/number_field.h"
#include "kvbe/ui/scenario/scenario_part.h"

class QCheckBox;
class QLabel;
class QSlider;

namespace kvbe {

class PromptBox : public ScenarioPart {
    Q_OBJECT
  public:
    explicit PromptBox(ScenarioEditing& editing, QWidget* parent = nullptr);
    void showScenario(const Scenario& s) override;

  private:
    void applyLengths();

    QSlider* m_fraction;
    QLabel* m_fractionLabel;
    NumberField* m_minTokens;
    NumberField* m_maxTokens;
    QCheckBox* m_logLengths;
    NumberField* m_sweepTokens;
};

} // namespace kvbe
