// The explorer's state: presets, the current scenario, the models read so far, the latest
// result and the pins. Edits only schedule work; at most one recompute runs per frame.
#pragma once

#include "kvbe/presets.h"
#include "kvbe/ui/pin_model.h"
#include "kvbe/ui/scenario_result.h"

#include <QObject>
#include <QTimer>

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

    // Replaces the scenario and schedules a recompute. Reads the model only when it changed.
    void setScenario(const Scenario& s);
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

  signals:
    void scenarioChanged();
    void computed();
    void failed(const QString& message);

  private:
    void recompute();

    Presets m_presets;
    Scenario m_scenario;
    std::map<std::string, ModelSpec> m_modelCache; // by the scenario's model reference
    std::vector<std::pair<std::string, ModelSpec>> m_loaded;
    std::vector<ModelSpec> m_presetSpecs;
    ResultPtr m_result;
    QString m_error;
    PinModel m_pins;
    QTimer m_timer;
};

} // namespace kvbe
