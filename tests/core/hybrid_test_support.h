// Helpers shared by the hybrid model tests (tst_hybrid_models, tst_hybrid_layouts): a config
// parsed or refused, a layer list repeated, and the state per layer of Mamba-2 and Gated
// DeltaNet worked out from the shapes.
#pragma once

#include "kvbe/model/config_reader.h"

#include <QtGlobal>

#include <string>
#include <vector>

namespace kvbe::test::hybrid {

inline ModelSpec parse(const std::string& json) {
    auto m = parseModelConfig(json, "test.json", "test");
    if (!m) qFatal("%s", m.message().c_str());
    return *m;
}

inline std::string refusal(const std::string& json) {
    auto m = parseModelConfig(json, "test.json", "test");
    return m ? std::string() : m.message();
}

inline std::string repeatList(const std::vector<std::string>& unit, int times) {
    std::string s;
    for (int t = 0; t < times; ++t)
        for (const auto& u : unit)
            s += (s.empty() ? "" : ",") + ("\"" + u + "\"");
    return "[" + s + "]";
}

// Mamba-2 state per layer (vLLM mamba2_state_shape): ssm heads·head_dim·d_state, conv
// (heads·head_dim + 2·groups·d_state)·(kernel − 1).
inline double mamba2Ssm(double heads, double headDim, double state) {
    return heads * headDim * state;
}
inline double mamba2Conv(double heads, double headDim, double groups, double state, double kernel) {
    return (heads * headDim + 2 * groups * state) * (kernel - 1);
}
// Gated DeltaNet state per layer: recurrent h_v·d_k·d_v, conv (2·h_k·d_k + h_v·d_v)·(kernel − 1).
inline double gdnSsm(double hv, double dk, double dv) {
    return hv * dk * dv;
}
inline double gdnConv(double hk, double hv, double dk, double dv, double kernel) {
    return (2 * hk * dk + hv * dv) * (kernel - 1);
}

} // namespace kvbe::test::hybrid
