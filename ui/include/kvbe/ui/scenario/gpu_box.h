// The scenario panel's GPU: the preset or a custom peak, the compute dtype, the utilisation, the
// FLOP model, and the tensor-parallel sizes the model can be split into.
#pragma once

#include "kvbe/ui/scenario/number_field.h"
#include "kvbe/ui/scenario/scenario_part.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QSlider;

namespace kvbe {

class GpuBox : public ScenarioPart {
    Q_OBJECT
  public:
    explicit GpuBox(ScenarioEditing& editing, QWidget* parent = nullptr);
    void showScenario(const Scenario& s) override;

  private:
    void addUtilisationAndFlops(QWidget* box, QFormLayout* form);
    void addTensorParallel(QWidget* box, QFormLayout* form);
    // The tensor-parallel list offers only the sizes the model can be split into (data: the
    // size), and the scenario's own where the model cannot be split that way.
    void fillTensorParallel(const Scenario& s);

    QComboBox* m_gpu;
    NumberField* m_peak;
    QComboBox* m_computeDtype;
    QSlider* m_util;
    QLabel* m_utilLabel;
    QComboBox* m_flopModel;
    QComboBox* m_tp;
    QCheckBox* m_sharedPath;
};

} // namespace kvbe
