// Shared by the explorer's tests: a clean settings store, presets, and the window under test.
#pragma once

#include "kvbe/curves.h"
#include "kvbe/presets.h"
#include "kvbe/scenario.h"
#include "kvbe/ui/main_window.h"

#include <QCoreApplication>
#include <QLineSeries>
#include <QSettings>
#include <QStandardPaths>
#include <QTest>

#include <algorithm>
#include <memory>

namespace kvbe::test {

// Test mode sends QSettings and QStandardPaths to a throwaway location; clearing it makes every
// window start from the default scenario.
inline void isolateSettings() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("kvbe-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("kvbe-tests"));
    QSettings().clear();
}

inline const Presets& presets() {
    static const Presets p = [] {
        auto r = Presets::loadBuiltin();
        if (!r) qFatal("built-in presets do not load: %s", r.message().c_str());
        return *r;
    }();
    return p;
}

inline std::unique_ptr<MainWindow> makeWindow() {
    auto w = std::make_unique<MainWindow>(presets());
    w->resize(1400, 900);
    w->refreshNow();
    return w;
}

// Core's own numbers for a scenario: the oracle the charts are held to.
struct Reference {
    Evaluation eval;
    CurveSet curves;
};
inline Reference reference(const Scenario& s) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("reference scenario does not evaluate: %s", e.message().c_str());
    // The charts stop at the model's context.
    const auto tokens = lengthGrid(s.lengths.minTokens, std::min(s.lengths.maxTokens, e->model.contextLimit),
                                   s.lengths.points, s.lengths.log);
    CurveSet c = computeCurves(e->cost, e->tiers, tokens, s.cachedFraction);
    return {std::move(*e), std::move(c)};
}

inline bool sameValue(double a, double b, double rel = 1e-9) {
    return std::abs(a - b) <= rel * std::max(std::abs(a), std::abs(b)) + 1e-300;
}

} // namespace kvbe::test
