// The scenario panel's advanced fields, folded away until used: P of the simple FLOP model, the
// utilisation ramp, the host link, and a measured prefill table (typed in or imported from CSV).
// Each is empty by default; empty text puts the default back.
#pragma once

#include "kvbe/ui/scenario/number_field.h"
#include "kvbe/ui/scenario/scenario_part.h"

class QFormLayout;
class QLabel;
class QTableWidget;
class QToolButton;

namespace kvbe {

class AdvancedBox : public ScenarioPart {
    Q_OBJECT
  public:
    explicit AdvancedBox(ScenarioEditing& editing, QWidget* parent = nullptr);
    // Unfolds the fields when the scenario sets any.
    void showScenario(const Scenario& s) override;
    // The defaults the empty fields stand for, as core computed with them.
    void showResult(const ScenarioResult& r) override;

    // A measured prefill table from a CSV file: a (tokens, seconds) pair a line ("8k,0.61",
    // "8192,610ms"; a header line is skipped). False, with the line and what was expected in the
    // message, when the file does not make a table.
    bool importPrefillTable(const QString& path);

  private:
    void addNumbers(QWidget* box, QFormLayout* form);
    void addPrefillTable(QWidget* box, QFormLayout* form);
    // A value is an edit (keystrokes merge into one undo step), empty text puts the default
    // back, text that is no value is refused in the panel's message.
    using OptionalSetter = void (*)(Scenario&, std::optional<double>);
    void connectOptionalField(NumberField* f, const QString& what, int mergeKey,
                              OptionalSetter set);
    void showPrefillTable(const Scenario& s);
    void showPrefillState(const Scenario& s);
    // The table's rows as the scenario's measured prefill, or the refusal of the first bad cell.
    void applyPrefillTable();

    QToolButton* m_toggle;
    QWidget* m_fields;
    NumberField* m_params;   // P of the simple FLOP model; empty: the model's
    NumberField* m_ramp;     // n_half of the utilisation ramp; empty: none
    NumberField* m_hostLink; // GB/s; empty: the GPU preset's
    QTableWidget* m_prefill; // (tokens, seconds) rows; empty: analytic
    QLabel* m_prefillState;
};

} // namespace kvbe
