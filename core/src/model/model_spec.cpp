#include "kvbe/model/model_spec.h"

#include "kvbe/base/text.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

namespace kvbe {

int bytesPerElement(KvDtype d) {
    switch (d) {
    case KvDtype::FP32:
        return 4;
    case KvDtype::BF16:
    case KvDtype::FP16:
        return 2;
    case KvDtype::FP8:
    case KvDtype::INT8:
        return 1;
    }
    return 2;
}

std::string_view toString(KvDtype d) {
    switch (d) {
    case KvDtype::FP32:
        return "fp32";
    case KvDtype::BF16:
        return "bf16";
    case KvDtype::FP16:
        return "fp16";
    case KvDtype::FP8:
        return "fp8";
    case KvDtype::INT8:
        return "int8";
    }
    return "bf16";
}

std::optional<KvDtype> parseKvDtype(std::string_view text) {
    const std::string s = lower(text);
    if (s == "bf16" || s == "bfloat16") return KvDtype::BF16;
    if (s == "fp16" || s == "float16" || s == "half") return KvDtype::FP16;
    if (s == "fp8" || s == "fp8_e4m3" || s == "fp8_e5m2" || s == "float8_e4m3fn")
        return KvDtype::FP8;
    if (s == "int8") return KvDtype::INT8;
    if (s == "fp32" || s == "float32" || s == "float") return KvDtype::FP32;
    return std::nullopt;
}

double bytesPerWeight(WeightDtype d) {
    switch (d) {
    case WeightDtype::FP32:
        return 4;
    case WeightDtype::BF16:
    case WeightDtype::FP16:
        return 2;
    case WeightDtype::FP8:
    case WeightDtype::INT8:
        return 1;
    case WeightDtype::INT4:
        return 0.5;
    }
    return 2;
}

std::string_view toString(WeightDtype d) {
    switch (d) {
    case WeightDtype::FP32:
        return "fp32";
    case WeightDtype::BF16:
        return "bf16";
    case WeightDtype::FP16:
        return "fp16";
    case WeightDtype::FP8:
        return "fp8";
    case WeightDtype::INT8:
        return "int8";
    case WeightDtype::INT4:
        return "int4";
    }
    return "bf16";
}

std::optional<WeightDtype> parseWeightDtype(std::string_view text) {
    const std::string s = lower(text);
    if (s == "int4" || s == "w4") return WeightDtype::INT4;
    if (auto kv = parseKvDtype(s)) return weightDtypeOf(*kv);
    return std::nullopt;
}

WeightDtype weightDtypeOf(KvDtype torchDtype) {
    switch (torchDtype) {
    case KvDtype::FP32:
        return WeightDtype::FP32;
    case KvDtype::BF16:
        return WeightDtype::BF16;
    case KvDtype::FP16:
        return WeightDtype::FP16;
    case KvDtype::FP8:
        return WeightDtype::FP8;
    case KvDtype::INT8:
        return WeightDtype::INT8;
    }
    return WeightDtype::BF16;
}

WeightDtype ModelSpec::servedWeights(std::optional<WeightDtype> chosen) const {
    if (chosen) return *chosen;
    if (quantizedWeights) return *quantizedWeights;
    return weightDtypeOf(weightDtype);
}

double ModelSpec::weightBytes(std::optional<WeightDtype> chosen) const {
    const double per = bytesPerWeight(servedWeights(chosen));
    const double own = bytesPerElement(weightDtype);
    if (per >= own) return paramsTotal * per;
    const double kept = std::min(paramsTotal, vocab * hidden + (tiedEmbeddings ? 0 : lmHeadParams));
    return (paramsTotal - kept) * per + kept * own;
}

namespace {
// Σ_{i=0}^{n-1} c(i) for each kind, continued to real n so that solvers can bisect.
double cumulativePairs(AttnKind kind, double w, double n) {
    if (n <= 0) return 0;
    switch (kind) {
    case AttnKind::Full:
        return n * (n + 1) / 2;
    case AttnKind::Sliding:
    case AttnKind::Sparse: // at most w keys per query, like a window (which keys differs)
        if (n <= w) return n * (n + 1) / 2;
        return w * (w + 1) / 2 + (n - w) * w;
    case AttnKind::Chunked: {
        const double chunks = std::floor(n / w);
        const double r = n - chunks * w;
        return chunks * w * (w + 1) / 2 + r * (r + 1) / 2;
    }
    }
    return 0;
}
} // namespace

double attentionPairs(AttnKind kind, double window, double nNew, double nPast) {
    return cumulativePairs(kind, window, nPast + nNew) - cumulativePairs(kind, window, nPast);
}

double cachedTokens(AttnKind kind, double window, double p) {
    if (kind == AttnKind::Full || kind == AttnKind::Sparse) return p; // sparse: all keys kept
    return std::min(p, window); // a chunked layer holds at most one chunk
}

bool ModelSpec::hasWindows() const {
    return std::any_of(attention.begin(), attention.end(),
                       [](const AttentionGroup& g) { return g.kind != AttnKind::Full; });
}

double ModelSpec::kvBytes(double p, KvDtype dtype) const {
    double elems = 0;
    double fixed = 0;
    for (const auto& g : attention) {
        const double tokens = cachedTokens(g.kind, g.window, p);
        elems += g.layers * g.kvElemsPerToken * tokens;
        fixed += g.layers * g.kvFixedBytesPerToken * tokens;
    }
    return elems * bytesPerElement(dtype) + fixed;
}

std::uint64_t ModelSpec::kvBlockBytes(KvDtype dtype) const {
    const double perToken = kvBytesPerToken(dtype);
    if (!(perToken > 0)) return 0;
    const auto bytes = static_cast<std::uint64_t>(perToken * kKvBlockTokens);
    return (bytes + 4095) / 4096 * 4096;
}

double ModelSpec::kvBytesPerToken(KvDtype dtype) const {
    double elems = 0;
    double fixed = 0;
    for (const auto& g : attention) {
        elems += g.layers * g.kvElemsPerToken;
        fixed += g.layers * g.kvFixedBytesPerToken;
    }
    return elems * bytesPerElement(dtype) + fixed;
}

double ModelSpec::simpleAttentionCoefficient() const {
    const int l = softmaxLayers > 0 ? softmaxLayers : layers;
    return static_cast<double>(l) * qHeads * (dQk + dV);
}

bool sameModelName(const std::string& a, const std::string& b) {
    auto name = [](const std::string& id) {
        return lower(id.substr(id.rfind('/') == std::string::npos ? 0 : id.rfind('/') + 1));
    };
    return name(a) == name(b);
}

bool ModelSpec::isHybrid() const {
    if (stateSsmElems > 0 || stateConvElems > 0) return true;
    // Layers that read another layer's KV (an indexer group holds its own keys: not those).
    return std::any_of(attention.begin(), attention.end(), [](const AttentionGroup& g) {
        return g.kvElemsPerToken == 0 && g.kvFixedBytesPerToken == 0;
    });
}

bool ModelSpec::hasSparseAttention() const {
    return std::any_of(attention.begin(), attention.end(),
                       [](const AttentionGroup& g) { return g.kind == AttnKind::Sparse; });
}

std::string ModelSpec::layerMix() const {
    // Count mixers (and MLP-only blocks by their MLP), then the MLPs of layers with a mixer.
    std::map<std::string, int> blocks, mlps;
    for (size_t i = 0; i < layerMixers.size(); ++i) {
        const std::string& mixer = layerMixers[i];
        const std::string mlp = i < layerMlps.size() ? layerMlps[i] : std::string();
        if (!mixer.empty()) {
            ++blocks[mixer];
            if (!mlp.empty()) ++mlps[mlp];
        } else if (!mlp.empty()) {
            ++blocks[mlp];
        }
    }
    auto ordered = [](const std::map<std::string, int>& counts) {
        std::vector<std::pair<std::string, int>> v(counts.begin(), counts.end());
        std::stable_sort(v.begin(), v.end(),
                         [](const auto& a, const auto& b) { return a.second > b.second; });
        std::string out;
        for (const auto& [name, n] : v) {
            if (!out.empty()) out += ", ";
            out += std::to_string(n) + " " + name;
        }
        return out;
    };
    std::string s = std::to_string(layers) + " layers";
    if (blocks.empty()) return s;
    s += ": " + ordered(blocks);
    if (!mlps.empty()) s += "; MLP: " + ordered(mlps);
    return s;
}

double ModelSpec::stateBytes(KvDtype ssmDtype) const {
    return stateSsmElems * bytesPerElement(ssmDtype) +
           stateConvElems * bytesPerElement(weightDtype);
}

double ModelSpec::attentionFlops(double nNew, double nPast) const {
    double f = 0;
    for (const auto& g : attention)
        f += g.layers * g.flopsPerPair * attentionPairs(g.kind, g.window, nNew, nPast);
    return f;
}

} // namespace kvbe
