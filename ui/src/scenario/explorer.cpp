#include "kvbe/ui/scenario/explorer.h"

#include <QUndoCommand>

#include <algorithm>

namespace kvbe {

namespace {

// One undoable change of the scenario; a drag of one control merges into one step.
class ScenarioCommand : public QUndoCommand {
  public:
    ScenarioCommand(Explorer* e, Explorer::State before, Explorer::State after, const QString& text,
                    int mergeKey)
        : QUndoCommand(text), m_explorer(e), m_before(std::move(before)), m_after(std::move(after)),
          m_key(mergeKey), m_serial(e->mergeSerial()) {}
    void undo() override { m_explorer->apply(m_before); }
    void redo() override { m_explorer->apply(m_after); }
    int id() const override { return m_key; }
    bool mergeWith(const QUndoCommand* other) override {
        const auto* o = static_cast<const ScenarioCommand*>(other);
        if (o->m_key != m_key || o->m_serial != m_serial) return false;
        m_after = o->m_after;
        setObsolete(m_after == m_before);
        return true;
    }

  private:
    Explorer* m_explorer;
    Explorer::State m_before, m_after;
    int m_key;
    int m_serial;
};

} // namespace

bool sameDescribedInputs(const Scenario& a, const Scenario& b) {
    return a.model == b.model && a.paramsOverride == b.paramsOverride && a.gpu == b.gpu &&
           a.peakTflops == b.peakTflops && a.computeDtype == b.computeDtype &&
           a.utilisation == b.utilisation && a.kvDtype == b.kvDtype &&
           a.stateDtype == b.stateDtype && a.tensorParallel == b.tensorParallel;
}

Explorer::Explorer(Presets presets, QObject* parent)
    : QObject(parent), m_presets(std::move(presets)) {
    for (const auto& p : m_presets.models())
        m_presetSpecs.push_back(p.spec);
    // 16 ms: a drag delivers several value changes per frame; they collapse into one recompute.
    m_timer.setSingleShot(true);
    m_timer.setInterval(16);
    connect(&m_timer, &QTimer::timeout, this, &Explorer::recompute);
}

void Explorer::setScenario(const Scenario& s, bool nameGiven) {
    m_undo.clear();
    m_nameBasis = s;
    apply({s, nameGiven});
}

void Explorer::apply(const State& st) {
    m_nameGiven = st.nameGiven;
    if (st.scenario == m_scenario && (m_result || !m_error.isEmpty())) return;
    m_scenario = st.scenario;
    emit scenarioChanged();
    if (!m_timer.isActive()) m_timer.start();
}

void Explorer::edit(const Scenario& s, const QString& text, int mergeKey) {
    State after{s, m_nameGiven};
    // A name nobody gave ("Llama 3.2 3B on an H100 SXM" from the default) stops describing the
    // scenario once the inputs it names change: the label then comes from the inputs, until
    // they are what the name was given for again.
    if (!m_nameGiven && !sameDescribedInputs(s, m_scenario))
        after.scenario.name =
            sameDescribedInputs(s, m_nameBasis) ? m_nameBasis.name : std::string();
    State before{m_scenario, m_nameGiven};
    if (after == before) return;
    m_undo.push(new ScenarioCommand(this, std::move(before), std::move(after), text, mergeKey));
}

void Explorer::rename(const QString& name) {
    const std::string n = name.trimmed().toStdString();
    State after{m_scenario, !n.empty()};
    after.scenario.name = n;
    if (n.empty()) m_nameBasis.name.clear(); // cleared on purpose: no name comes back
    State before{m_scenario, m_nameGiven};
    if (after == before) return;
    m_undo.push(new ScenarioCommand(
        this, std::move(before), std::move(after),
        n.empty() ? tr("Clear the scenario's name") : tr("Name the scenario"), -1));
}

QString Explorer::labelFor(const Scenario& s) {
    if (!s.name.empty()) return QString::fromStdString(s.name);
    auto model = modelFor(s.model);
    if (!model) return QString::fromStdString(s.model);
    auto e = evaluate(s, m_presets, *model);
    if (!e) return QString::fromStdString(model->id);
    return describeInputs(s, *e);
}

Result<ModelSpec> Explorer::modelFor(const std::string& ref) {
    if (auto it = m_modelCache.find(ref); it != m_modelCache.end()) return it->second;
    auto spec = resolveModel(ref, m_presets);
    if (spec) m_modelCache.emplace(ref, *spec);
    return spec;
}

Result<ModelSpec> Explorer::loadModel(const std::string& ref) {
    auto spec = modelFor(ref);
    if (!spec) return spec;
    const bool known = std::any_of(m_loaded.begin(), m_loaded.end(),
                                   [&](const auto& l) { return l.first == ref; });
    if (!known && !m_presets.findModel(ref)) m_loaded.emplace_back(ref, *spec);
    return spec;
}

void Explorer::recomputeNow() {
    m_timer.stop();
    recompute();
}

void Explorer::recompute() {
    auto model = modelFor(m_scenario.model);
    if (!model) {
        m_error = QString::fromStdString(model.message());
        emit failed(m_error);
        return;
    }
    std::vector<ModelSpec> sweep = m_presetSpecs;
    for (const auto& [ref, spec] : m_loaded)
        sweep.push_back(spec);
    auto r = computeScenarioResult(m_scenario, m_presets, *model, sweep);
    if (!r) {
        m_error = QString::fromStdString(r.message());
        emit failed(m_error);
        return;
    }
    m_error.clear();
    m_result = std::make_shared<const ScenarioResult>(std::move(*r));
    emit computed();
}

bool Explorer::pinCurrent(const QString& label) {
    if (!m_result) return false;
    auto pinned = std::make_shared<ScenarioResult>(*m_result);
    if (!label.trimmed().isEmpty()) pinned->label = label.trimmed();
    m_pins.pin(std::move(pinned));
    return true;
}

} // namespace kvbe
