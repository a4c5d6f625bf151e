#include "kvbe/ui/explorer.h"

#include <algorithm>

namespace kvbe {

Explorer::Explorer(Presets presets, QObject* parent)
    : QObject(parent), m_presets(std::move(presets)) {
    for (const auto& p : m_presets.models())
        m_presetSpecs.push_back(p.spec);
    // 16 ms: a drag delivers several value changes per frame; they collapse into one recompute.
    m_timer.setSingleShot(true);
    m_timer.setInterval(16);
    connect(&m_timer, &QTimer::timeout, this, &Explorer::recompute);
}

void Explorer::setScenario(const Scenario& s) {
    if (s == m_scenario && (m_result || !m_error.isEmpty())) return;
    m_scenario = s;
    emit scenarioChanged();
    if (!m_timer.isActive()) m_timer.start();
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
