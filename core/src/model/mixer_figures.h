// What each non-attention mixer of a hybrid model weighs, keeps as state and costs per token
// (internal to the config reader). docs/cost-model.md, "Hybrid and sparse models", has the table
// this follows.
#pragma once

#include "hybrid_layers.h"

#include <string>

namespace kvbe::detail {

// What one non-attention mixer (or the Mamba half of a parallel layer) adds per layer.
struct MixerFigures {
    double params = 0;        // every weight of the mixer
    double matmul = 0;        // the weights one token multiplies (projections, conv taps)
    double ssmElems = 0;      // recurrent / SSM state elements kept per cached prefix
    double convElems = 0;     // convolution state elements kept per cached prefix
    double flopsPerToken = 0; // the recurrence itself, per token
};
MixerFigures mixerFigures(const Fields& f, const std::string& type, Mixer mixer, int hidden,
                          int qHeads, int headDim);

} // namespace kvbe::detail
