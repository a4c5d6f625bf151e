// quantization_config, as Hugging Face transformers and vLLM write it: the precision the
// decoder's weights are stored in. Each method names its bits in its own fields:
//   fp8 (DeepSeek-V3, transformers' FineGrainedFP8Config) and fbgemm_fp8: 8-bit floats;
//   compressed-tensors (llm-compressor): config_groups.*.weights.num_bits and type;
//   awq, gptq, auto-round: bits; bitsandbytes: load_in_4bit / load_in_8bit;
//   modelopt (NVIDIA TensorRT Model Optimizer): quant_algo FP8 or NVFP4.
// A method not listed (mxfp4 quantizes only the experts) leaves the weights in torch_dtype, with
// a note: the scenario's weight precision then says what is served.
#include "config_parts.h"
#include "kvbe/base/text.h"

#include <string>

namespace kvbe::detail {

namespace {

std::optional<WeightDtype> fromBits(double bits, bool isFloat) {
    if (bits == 8) return isFloat ? WeightDtype::FP8 : WeightDtype::INT8;
    if (bits == 4) return WeightDtype::INT4;
    return std::nullopt;
}

std::optional<double> numberAt(const json& j, const char* key) {
    if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
    return j[key].get<double>();
}

// compressed-tensors: the first config group whose weights say their bits.
std::optional<WeightDtype> compressedTensors(const json& q) {
    if (!q.contains("config_groups") || !q["config_groups"].is_object()) return std::nullopt;
    for (const auto& [name, group] : q["config_groups"].items()) {
        if (!group.is_object() || !group.contains("weights")) continue;
        const json& w = group["weights"];
        const auto bits = numberAt(w, "num_bits");
        if (!bits) continue;
        const bool isFloat = w.contains("type") && w["type"].is_string() &&
                             lower(w["type"].get<std::string>()) == "float";
        return fromBits(*bits, isFloat);
    }
    return std::nullopt;
}

} // namespace

void readQuantization(const Fields& f, ModelSpec& m) {
    const json* q = f.find("quantization_config");
    if (!q || q->is_null()) return;
    if (!q->is_object()) f.fail("quantization_config", "an object", *q);
    const std::string method = q->contains("quant_method") && (*q)["quant_method"].is_string()
                                   ? lower((*q)["quant_method"].get<std::string>())
                                   : std::string();
    std::optional<WeightDtype> w;
    if (method == "fp8" || method == "fbgemm_fp8") {
        w = WeightDtype::FP8;
    } else if (method == "compressed-tensors") {
        w = compressedTensors(*q);
    } else if (method == "awq" || method == "gptq" || method == "auto-round" ||
               method == "autoround") {
        if (auto bits = numberAt(*q, "bits")) w = fromBits(*bits, false);
    } else if (method == "bitsandbytes") {
        if (q->value("load_in_4bit", false)) w = WeightDtype::INT4;
        if (q->value("load_in_8bit", false)) w = WeightDtype::INT8;
    } else if (method == "modelopt") {
        const std::string algo = q->contains("quant_algo") && (*q)["quant_algo"].is_string()
                                     ? lower((*q)["quant_algo"].get<std::string>())
                                     : std::string();
        if (algo == "fp8") w = WeightDtype::FP8;
        if (algo == "nvfp4") w = WeightDtype::INT4;
    }
    if (w) {
        m.quantizedWeights = w;
        return;
    }
    m.notes.push_back("quantization_config" +
                      (method.empty() ? std::string() : " (quant_method \"" + method + "\")") +
                      " is not read: the weights are counted in torch_dtype; set the scenario's "
                      "weight precision to what is served");
}

} // namespace kvbe::detail
