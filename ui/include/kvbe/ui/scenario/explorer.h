// The explorer's state: presets, the current scenario, the models read so far, the latest
// result and the pins. Edits only schedule work; at most one recompute runs per frame.
//
// Two ways in: setScenario() starts over (open, reset, restore: the undo history is cleared),
// edit() is a user's change and joins the undo stack. A scenario's name describes it only while
// it fits: an edit of the inputs a name speaks of (model, GPU, utilisation, dtypes, TP) drops a
// name the user did not give, and the scenario then describes itself from its inputs.
#pragma once

#include "kvbe/scenario/presets.h"
#include "kvbe/ui/results/scenario_result.h"
#include "kvbe/ui/scenario/pin_model.h"

#include <QObject>
#include <QTimer>
#include <QUndoStack>

#include <map>
#include <optional>

namespace kvbe {

class Explorer : public QObject {
    Q_OBJECT
  public:
    explicit Explorer(Presets presets, QObject* parent = nullptr);

    const Presets& presets() const { return m_presets; }
    const Scenario& scenario() const { return m_scenario; }
    // The latest successful result; kept while the scenario is invalid, so charts don't go blank.
    const ResultPtr& result() const { return m_result; }
    const QString& lastError() const { return m_error; }
    PinModel* pins() { return &m_pins; }
    bool recomputePending() const { return m_timer.isActive(); }
    QUndoStack* undoStack() { return &m_undo; }

    // Replaces the scenario as a fresh start (no undo) and schedules a recompute. `nameGiven`:
    // its name is the user's own, kept whatever the inputs become.
    void setScenario(const Scenario& s, bool nameGiven = false);
    // A user's change, undoable under `text`. Edits with the same mergeKey (≥ 0) in a row merge
    // into one step (a slider drag) until endMerge().
    void edit(const Scenario& s, const QString& text, int mergeKey = -1);
    void endMerge() { ++m_mergeSerial; }
    // The user names the scenario (empty: describe it from its inputs again); undoable.
    void rename(const QString& name);
    bool nameGiven() const { return m_nameGiven; }
    // The label a scenario gets: its name, or its inputs described
    // ("Llama-3.3-70B-Instruct on H200 141GB, u = 50 %, BF16 KV").
    QString labelFor(const Scenario& s);

    // Reads a config.json (or cache entry) so it can be picked and joins the model-size chart.
    Result<ModelSpec> loadModel(const std::string& ref);
    // Models read from files, in the order they were loaded (ref, spec).
    const std::vector<std::pair<std::string, ModelSpec>>& loadedModels() const { return m_loaded; }

    // The model a scenario names, read once and cached (the panel's TP sizes come from it).
    Result<ModelSpec> modelFor(const std::string& ref);

    // Runs the pending recompute now (tests, headless export, benchmarks).
    void recomputeNow();
    // Pins the current result under a label; false when there is none.
    bool pinCurrent(const QString& label);

    // What an undo step restores: the scenario and whether its name is the user's.
    struct State {
        Scenario scenario;
        bool nameGiven = false;
        bool operator==(const State&) const = default;
    };
    // Used by the undo commands.
    void apply(const State& s);
    int mergeSerial() const { return m_mergeSerial; }

  signals:
    void scenarioChanged();
    void computed();
    void failed(const QString& message);

  private:
    void recompute();

    Presets m_presets;
    Scenario m_scenario;
    bool m_nameGiven = false;
    Scenario m_nameBasis; // the scenario as opened: its name fits these described inputs
    std::map<std::string, ModelSpec> m_modelCache; // by the scenario's model reference
    std::vector<std::pair<std::string, ModelSpec>> m_loaded;
    std::vector<ModelSpec> m_presetSpecs;
    ResultPtr m_result;
    QString m_error;
    PinModel m_pins;
    QTimer m_timer;
    QUndoStack m_undo;
    int m_mergeSerial = 0;
};

// The inputs a scenario's name speaks of are the same in both (model, GPU and its peak, compute
// dtype, utilisation, KV and state dtype, tensor parallel).
bool sameDescribedInputs(const Scenario& a, const Scenario& b);

} // namespace kvbe
