// The seed's illustrative scenario (resources/scenarios/illustrative.kvbe.json: Llama 3.2 3B on
// an H100 SXM at u = 50 %, the tier presets' nominal fixed costs, three tiers): the scenario the
// tests that work numbers out by hand start from, so that their values do not move with the
// default scenario's fit to the published figures.
#pragma once

#include "kvbe/scenario/builtin_scenarios.h"
#include "test_support.h"

namespace kvbe::test {

inline Scenario illustrative() {
    auto s = builtinScenario("illustrative", presets());
    if (!s) qFatal("illustrative scenario: %s", s.message().c_str());
    return *s;
}

} // namespace kvbe::test
