// The replay a Workload tab test expects the view to have run, set up in the test from the
// scenario rather than through the view's own code.
#pragma once

#include "ui_test_support.h"

#include "kvbe/base/units.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "kvbe/trace/trace_sim.h"

namespace kvbe::test {

// The replay the view should have run, set up here from the scenario: blocks of B · KV bytes per
// token (+ state), the GPU's 90 % of HBM less the weights, and the scenario's first two tiers at
// the given capacities with their presets' write bandwidths, drained through write queues (the
// default, as in kvbe-cli trace replay; without them, writes keep up), storing a block in the
// offload tiers at its storeAfter-th sighting.
inline ReplayResult referenceReplay(const Trace& t, const Evaluation& e, double tier0Bytes,
                                    double tier1Bytes, bool writeQueue = true, int storeAfter = 1,
                                    int servers = 0, int nodeServers = 1) {
    ReplayConfig c;
    // Servers above one are a fleet behind round-robin, as the view replays them.
    c.instances = servers;
    c.fleet.enabled = servers > 1;
    c.fleet.nodeServers = nodeServers;
    c.writeQueue = writeQueue;
    c.storeAfter = storeAfter;
    c.blockBytes = e.cost.kvBytesPerToken() * t.summary.blockTokens + e.cost.stateBytes();
    const auto& m = e.model;
    c.gpuCapacityBytes = 0.9 * e.gpu->memoryBytes * e.scenario.tensorParallel -
                         m.paramsTotal * bytesPerElement(m.weightDtype);
    const double caps[] = {tier0Bytes, tier1Bytes};
    for (std::size_t i = 0; i < 2 && i < e.tiers.size(); ++i) {
        if (!(caps[i] > 0)) continue;
        SimTier st;
        st.name = e.scenario.tiers[i].preset;
        st.capacityBytes = caps[i];
        st.path = e.cost.resolved(e.tiers[i]); // a fixed cost per layer, on this model
        st.writeBps = presets().findTier(e.scenario.tiers[i].preset)->writeBps;
        c.tiers.push_back(st);
    }
    auto r = replayTrace(t, e.cost, c);
    if (!r) qFatal("reference replay: %s", r.message().c_str());
    return *r;
}

} // namespace kvbe::test
