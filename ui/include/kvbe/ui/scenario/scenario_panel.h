// The scenario panel: every input of the what-if, each with its unit, editing the Explorer's
// scenario live. Values that cannot be right are refused in place with the reason.
#pragma once

#include "kvbe/ui/scenario/explorer.h"
#include "kvbe/ui/scenario/number_field.h"
#include "kvbe/ui/scenario/tier_table_model.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSlider;
class QTableView;
class QTableWidget;
class QToolButton;

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
    // A measured prefill table from a CSV file: a (tokens, seconds) pair a line ("8k,0.61",
    // "8192,610ms"; a header line is skipped). False, with the line and what was expected in the
    // message, when the file does not make a table.
    bool importPrefillTable(const QString& path);

    // Its controls have object names (each builder in scenario_panel.cpp sets them): tests find
    // them with findChild. The tensor-parallel list offers only the sizes the model can be split
    // into (data: the size). The name field holds a name the user gave; with none, it is empty and
    // shows the label built from the inputs in grey (see updateName).

    // The latest refusal or evaluation error (what opening a model that fails reports).
    QString messageText() const;

  protected:
    void showEvent(QShowEvent* e) override;

  private:
    // One builder per part of the panel: it makes the controls, names them and connects them.
    QFormLayout* buildNameRow();
    QGroupBox* buildModelBox();
    QGroupBox* buildGpuBox();
    QGroupBox* buildTierBox();
    QGroupBox* buildPromptBox();
    // The fields few change (P, utilisation ramp, host link, measured prefill), folded away.
    QWidget* buildAdvancedBox();
    // Its number fields (P, ramp, host link) and its prefill table with the table's buttons.
    void addAdvancedNumbers(QWidget* box, QFormLayout* form);
    void addPrefillTable(QWidget* box, QFormLayout* form);
    // An advanced field: a value is an edit (keystrokes merge into one undo step), empty text
    // puts the default back, text that is no value is refused in the panel's message.
    using OptionalSetter = void (*)(Scenario&, std::optional<double>);
    void connectOptionalField(NumberField* f, const QString& what, int mergeKey,
                              OptionalSetter set);
    // The Explorer's signals: a new scenario, a result, a failure.
    void connectExplorer();
    // A change of the scenario, undoable as `what`; mergeKey ≥ 0 merges a drag into one step.
    template <class F> void edit(const QString& what, F&& change, int mergeKey = -1);
    void updateName();
    QString currentLabelName() const;
    void fillModels();
    void showMessage(const QString& text);
    void onModelActivated(int index);
    void addTier(const QString& presetKey);
    void pickTierColour();
    // The tier table's minimum width: every column whole, the name column elided at most to a
    // short name.
    void fitTierColumns();
    void updateSummary();
    void fillTensorParallel(const Scenario& s);
    // The advanced fields; unfolds them when the scenario sets any.
    void showAdvanced(const Scenario& s);
    void showPrefillTable(const Scenario& s);
    void showPrefillState(const Scenario& s);
    // The table's rows as the scenario's measured prefill, or the refusal of the first bad cell.
    void applyPrefillTable();

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
    QToolButton* m_advancedToggle;
    QWidget* m_advanced;
    NumberField* m_params;   // P of the simple FLOP model; empty: the model's
    NumberField* m_ramp;     // n_half of the utilisation ramp; empty: none
    NumberField* m_hostLink; // GB/s; empty: the GPU preset's
    QTableWidget* m_prefill; // (tokens, seconds) rows; empty: analytic
    QLabel* m_prefillState;
    QLabel* m_message;
};

} // namespace kvbe
