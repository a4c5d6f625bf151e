// The scenario panel: every input of the what-if, each with its unit, editing the Explorer's
// scenario live. Values that cannot be right are refused in place with the reason.
#pragma once

#include "kvbe/ui/explorer.h"
#include "kvbe/ui/number_field.h"
#include "kvbe/ui/tier_table_model.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSlider;
class QTableView;

namespace kvbe {

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

    QComboBox* modelBox() const { return m_model; }
    QComboBox* gpuBox() const { return m_gpu; }
    NumberField* peakField() const { return m_peak; }
    QComboBox* computeDtypeBox() const { return m_computeDtype; }
    QSlider* utilisationSlider() const { return m_util; }
    QComboBox* flopModelBox() const { return m_flopModel; }
    QComboBox* kvDtypeBox() const { return m_kvDtype; }
    // Only the sizes the model can be split into (tensorParallelProblem); data: the size.
    QComboBox* tensorParallelBox() const { return m_tp; }
    QComboBox* stateDtypeBox() const { return m_stateDtype; }
    QString modelInfoText() const;
    QCheckBox* sharedPathBox() const { return m_sharedPath; }
    TierTableModel* tierModel() const { return m_tiers; }
    QTableView* tierView() const { return m_tierView; }
    QSlider* fractionSlider() const { return m_fraction; }
    NumberField* minTokensField() const { return m_minTokens; }
    NumberField* maxTokensField() const { return m_maxTokens; }
    QCheckBox* logLengthsBox() const { return m_logLengths; }
    NumberField* sweepTokensField() const { return m_sweepTokens; }
    QString messageText() const; // the latest refusal or evaluation error
    // The scenario's name: empty when it is described from its inputs, whose label it then
    // shows greyed as QLineEdit placeholder text.
    QLineEdit* nameField() const { return m_name; }

  private:
    // A change of the scenario, undoable as `what`; mergeKey ≥ 0 merges a drag into one step.
    template <class F> void edit(const QString& what, F&& change, int mergeKey = -1);
    void updateName();
    QString currentLabelName() const;
    void fillModels();
    void showMessage(const QString& text);
    void onModelActivated(int index);
    void addTier(const QString& presetKey);
    void pickTierColour();
    void updateSummary();
    void fillTensorParallel(const Scenario& s);

    Explorer* m_explorer;
    bool m_showing = false;
    bool m_applying = false;
    QLineEdit* m_name;
    QComboBox* m_model;
    QLabel* m_modelInfo;
    QComboBox* m_gpu;
    NumberField* m_peak;
    QComboBox* m_computeDtype;
    QSlider* m_util;
    QLabel* m_utilLabel;
    QComboBox* m_flopModel;
    QComboBox* m_kvDtype;
    QComboBox* m_stateDtype; // hybrids: the recurrent state's dtype
    QComboBox* m_tp;
    QCheckBox* m_sharedPath;
    TierTableModel* m_tiers;
    QTableView* m_tierView;
    QSlider* m_fraction;
    QLabel* m_fractionLabel;
    NumberField* m_minTokens;
    NumberField* m_maxTokens;
    QCheckBox* m_logLengths;
    NumberField* m_sweepTokens;
    QLabel* m_message;
};

} // namespace kvbe
