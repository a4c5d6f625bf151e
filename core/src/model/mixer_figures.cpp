#include "mixer_figures.h"

#include <cmath>
#include <string>

namespace kvbe::detail {

namespace {

// The Mamba-2 mixer (transformers' NemotronHMamba2Mixer, GraniteMoeHybridMambaLayer,
// FalconH1Mixer; vLLM's MambaMixer2): d_inner = heads · head_dim, conv over
// d_inner + 2·groups·d_state channels.
struct Mamba2Names {
    const char *heads, *headDim, *state, *groups, *kernel, *convBias, *projBias;
    bool convBiasDefault;
};

MixerFigures mamba2(const Fields& f, const std::string& type, int hidden) {
    Mamba2Names n{};
    if (type == "nemotron_h")
        n = {"mamba_num_heads", "mamba_head_dim", "ssm_state_size",  "n_groups",
             "conv_kernel",     "use_conv_bias",  "mamba_proj_bias", true};
    else
        n = {"mamba_n_heads", "mamba_d_head",    "mamba_d_state",   "mamba_n_groups",
             "mamba_d_conv",  "mamba_conv_bias", "mamba_proj_bias", true};
    const double h = hidden;
    const bool hf = type == "granitemoehybrid" || type == "falcon_h1";
    // GraniteMoeHybridConfig and FalconH1Config: 128 heads, d_state 256, mamba_d_head "auto".
    const int heads = hf ? f.intOr(n.heads, "a positive integer (Mamba-2 heads)", 1, kMaxDim, 128)
                         : f.requiredInt(n.heads, "a positive integer (Mamba-2 heads)", 1, kMaxDim);
    double dInner = 0;
    if (hf) {
        // The Mamba width: granite's mixer is mamba_expand · hidden; Falcon-H1's is mamba_d_ssm
        // (FalconH1Config default 1024; null means mamba_expand · hidden).
        const double expand = f.intOr("mamba_expand", "a positive integer", 1, 1024, 2);
        if (type == "falcon_h1" && f.find("mamba_d_ssm") == nullptr)
            dInner = 1024;
        else if (type == "falcon_h1" && f.has("mamba_d_ssm"))
            dInner = f.requiredInt("mamba_d_ssm", "a positive integer or null (the Mamba-2 width)",
                                   1, kMaxDim);
        else
            dInner = expand * h;
    }
    int headDim = 0;
    const json* hdj = f.find(n.headDim);
    if (hf && (!hdj || hdj->is_null() || (hdj->is_string() && hdj->get<std::string>() == "auto"))) {
        headDim = static_cast<int>(dInner) / heads; // "auto": width // heads
    } else {
        headDim =
            f.requiredInt(n.headDim, "a positive integer (Mamba-2 head dimension)", 1, kMaxDim);
    }
    if (hf && static_cast<double>(heads) * headDim != dInner) {
        const std::string width =
            type == "falcon_h1"
                ? "mamba_d_ssm (" + std::to_string(static_cast<long long>(dInner)) + ")"
                : "mamba_expand · hidden_size (" + std::to_string(static_cast<long long>(dInner)) +
                      ")";
        throw ConfigError{f.source() + ": field '" + f.path(n.heads) + "' (" +
                          std::to_string(heads) + ") times '" + f.path(n.headDim) + "' (" +
                          std::to_string(headDim) + ") is not " + width +
                          "; transformers refuses such a config, and so does kvbe"};
    }
    if (dInner <= 0) dInner = static_cast<double>(heads) * headDim;
    const double state =
        hf ? f.intOr(n.state, "a positive integer (the SSM state size)", 1, kMaxDim, 256)
           : f.requiredInt(n.state, "a positive integer (the SSM state size)", 1, kMaxDim);
    const double groups = f.intOr(n.groups, "a positive integer (Mamba-2 groups)", 1, kMaxDim, 1);
    const double kernel = f.intOr(n.kernel, "a positive integer (the conv kernel)", 1, 1024, 4);
    const bool convBias = f.boolean(n.convBias).value_or(n.convBiasDefault);
    const bool projBias = f.boolean(n.projBias).value_or(false);
    const bool norm = type == "falcon_h1" ? f.boolean("mamba_rms_norm").value_or(false) : true;

    const double convDim = dInner + 2 * groups * state;
    const double inProj = h * (dInner + convDim + heads);
    const double outProj = dInner * h;
    MixerFigures m;
    m.matmul = inProj + outProj + convDim * kernel;
    m.params = m.matmul + (convBias ? convDim : 0) + (projBias ? dInner + convDim + heads + h : 0) +
               3.0 * heads /* dt_bias, A_log, D */ + (norm ? dInner : 0);
    m.ssmElems = heads * static_cast<double>(headDim) * state;
    m.convElems = convDim * (kernel - 1);
    m.flopsPerToken = 4 * heads * static_cast<double>(headDim) * state;
    return m;
}

// Jamba's Mamba (v1) mixer: d_inner = mamba_expand · hidden; x_proj to dt_rank + 2·d_state;
// dt, B and C layer norms.
MixerFigures mamba1(const Fields& f, int hidden) {
    const double h = hidden;
    const double expand = f.intOr("mamba_expand", "a positive integer", 1, 1024, 2);
    const double di = expand * h;
    const double state =
        f.intOr("mamba_d_state", "a positive integer (the SSM state size)", 1, kMaxDim, 16);
    const double kernel =
        f.intOr("mamba_d_conv", "a positive integer (the conv kernel)", 1, 1024, 4);
    double rank = std::ceil(h / 16); // JambaConfig: mamba_dt_rank "auto"
    if (const json* j = f.find("mamba_dt_rank");
        j && !(j->is_string() && j->get<std::string>() == "auto"))
        rank = f.requiredInt("mamba_dt_rank", "a positive integer or \"auto\"", 1, kMaxDim);
    const bool convBias = f.boolean("mamba_conv_bias").value_or(true);
    const bool projBias = f.boolean("mamba_proj_bias").value_or(false);
    MixerFigures m;
    m.matmul = h * 2 * di + di * kernel + di * (rank + 2 * state) + rank * di + di * h;
    m.params = m.matmul + (convBias ? di : 0) + (projBias ? 2 * di + h : 0) + di /* dt bias */ +
               di * state /* A_log */ + di /* D */ + rank + 2 * state /* dt, B, C norms */;
    m.ssmElems = di * state;
    m.convElems = di * (kernel - 1);
    m.flopsPerToken = 4 * di * state;
    return m;
}

// Gated DeltaNet (transformers' Qwen3NextGatedDeltaNet): in_proj_qkvz, in_proj_ba, a depthwise
// conv over q, k and v, dt_bias, A_log, a gated norm over the value head, out_proj.
// Fields left out take Qwen3NextConfig's / Qwen3_5TextConfig's / Qwen3_5MoeTextConfig's defaults
// (the same in all three): 16 key heads, 32 value heads, 128 dims each, a 4-tap conv.
MixerFigures gatedDeltaNet(const Fields& f, int hidden) {
    const double h = hidden;
    const double hk = f.intOr("linear_num_key_heads", "a positive integer", 1, kMaxDim, 16);
    const double hv = f.intOr("linear_num_value_heads", "a positive integer", 1, kMaxDim, 32);
    const double dk = f.intOr("linear_key_head_dim", "a positive integer", 1, kMaxDim, 128);
    const double dv = f.intOr("linear_value_head_dim", "a positive integer", 1, kMaxDim, 128);
    const double kernel = f.intOr("linear_conv_kernel_dim", "a positive integer", 1, 1024, 4);
    const double convDim = 2 * hk * dk + hv * dv;
    MixerFigures m;
    m.matmul = h * (2 * hk * dk + 2 * hv * dv) + h * 2 * hv + convDim * kernel + hv * dv * h;
    m.params = m.matmul + 2 * hv /* dt_bias, A_log */ + dv /* norm */;
    m.ssmElems = hv * dk * dv;
    m.convElems = convDim * (kernel - 1);
    m.flopsPerToken = 6 * hv * dk * dv;
    return m;
}

// Kimi Delta Attention: num_heads heads of head_dim for q, k and v, each with its own short
// conv; the state is a head_dim × head_dim matrix per head (vLLM's kda_state_shape).
MixerFigures kda(const Fields& f, int hidden) {
    const json& c = *f.find("linear_attn_config");
    const double h = hidden;
    const double heads = intField(c, f, "linear_attn_config", "num_heads");
    const double d = intField(c, f, "linear_attn_config", "head_dim");
    const double kernel = intField(c, f, "linear_attn_config", "short_conv_kernel_size");
    MixerFigures m;
    m.matmul = 4 * h * heads * d + 3 * heads * d * kernel; // q, k, v, o; the three convs
    m.params = m.matmul;
    m.ssmElems = heads * d * d;
    m.convElems = 3 * heads * d * (kernel - 1);
    m.flopsPerToken = 6 * heads * d * d;
    return m;
}

// MiniMax lightning attention: qkv_proj, output_gate, out_proj and a norm; the state is a
// head_dim × head_dim matrix per head, no convolution.
MixerFigures lightning(int hidden, int qHeads, int headDim) {
    const double h = hidden, hd = static_cast<double>(qHeads) * headDim;
    MixerFigures m;
    m.matmul = h * 3 * hd + h * hd + hd * h;
    m.params = m.matmul + hd;
    m.ssmElems = hd * headDim;
    m.flopsPerToken = 6 * hd * headDim;
    return m;
}

// LFM2 short convolution: in_proj to 3·hidden, a depthwise conv of conv_L_cache taps, out_proj.
MixerFigures shortConv(const Fields& f, int hidden) {
    const double h = hidden;
    const double kernel =
        f.requiredInt("conv_L_cache", "a positive integer (the conv length)", 1, 1024);
    const bool bias = f.boolean("conv_bias").value_or(false);
    MixerFigures m;
    m.matmul = h * 3 * h + h * kernel + h * h;
    m.params = m.matmul + (bias ? 3 * h + h + h : 0);
    m.convElems = h * (kernel - 1);
    return m;
}

} // namespace

MixerFigures mixerFigures(const Fields& f, const std::string& type, Mixer mixer, int hidden,
                          int qHeads, int headDim) {
    switch (mixer) {
    case Mixer::Mamba2:
    case Mixer::Parallel:
        return mamba2(f, type, hidden);
    case Mixer::Mamba1:
        return mamba1(f, hidden);
    case Mixer::GatedDeltaNet:
        return gatedDeltaNet(f, hidden);
    case Mixer::Kda:
        return kda(f, hidden);
    case Mixer::Lightning:
        return lightning(hidden, qHeads, headDim);
    case Mixer::ShortConv:
        return shortConv(f, hidden);
    case Mixer::Attention:
    case Mixer::None:
        return {};
    }
    return {};
}

} // namespace kvbe::detail
