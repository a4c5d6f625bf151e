#include "kvbe/gpu/gpu_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

namespace kvbe::gpu {

std::vector<std::uint64_t> defaultCopySizes() {
    std::vector<std::uint64_t> sizes;
    for (std::uint64_t s = 64ull << 10; s <= (1ull << 30); s *= 4)
        sizes.push_back(s);
    return sizes;
}

std::vector<int> defaultGemmSizes() {
    return {4096, 8192, 16384};
}

std::vector<std::int64_t> defaultPrefillLengths() {
    return {1024, 8192, 32768, 81920};
}

namespace {

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
        ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
        --e;
    return s.substr(b, e - b);
}

std::string lower(std::string s) {
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// The number at the front and the unit after it.
bool splitNumber(const std::string& text, double& value, std::string& unit) {
    const std::string t = trim(text);
    if (t.empty()) return false;
    char* end = nullptr;
    value = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || !std::isfinite(value)) return false;
    unit = lower(trim(std::string(end)));
    return true;
}

std::vector<std::string> splitList(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        size_t start = 0;
        while (start <= item.size()) {
            const size_t comma = item.find(',', start);
            const std::string part = trim(
                item.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
            if (!part.empty()) out.push_back(part);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return out;
}

} // namespace

Result<std::uint64_t> parseByteSize(const std::string& text) {
    double v = 0;
    std::string unit;
    const std::string sentence =
        "'" + text + "' is not a size; expected bytes like 65536, 64KiB, 28MiB or 1GiB";
    if (!splitNumber(text, v, unit) || v <= 0) return Error{sentence};
    double scale = 0;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "k" || unit == "kib" || unit == "kb")
        scale = 1024.0;
    else if (unit == "m" || unit == "mib" || unit == "mb")
        scale = 1024.0 * 1024;
    else if (unit == "g" || unit == "gib" || unit == "gb")
        scale = 1024.0 * 1024 * 1024;
    else
        return Error{sentence};
    const double bytes = v * scale;
    if (bytes != std::floor(bytes)) return Error{"'" + text + "' is not a whole number of bytes"};
    return static_cast<std::uint64_t>(bytes);
}

Result<std::int64_t> parseTokenCount(const std::string& text) {
    double v = 0;
    std::string unit;
    const std::string sentence =
        "'" + text + "' is not a token count; expected a whole number like 8192 or 8k";
    if (!splitNumber(text, v, unit) || v <= 0) return Error{sentence};
    if (unit == "k")
        v *= 1024;
    else if (!unit.empty())
        return Error{sentence};
    if (v != std::floor(v) || v > 1e12) return Error{sentence};
    return static_cast<std::int64_t>(v);
}

Result<std::vector<std::uint64_t>> parseByteSizes(const std::vector<std::string>& items) {
    std::vector<std::uint64_t> out;
    for (const auto& part : splitList(items)) {
        auto v = parseByteSize(part);
        if (!v) return v.error();
        out.push_back(*v);
    }
    return out;
}

Result<std::vector<std::int64_t>> parseTokenCounts(const std::vector<std::string>& items) {
    std::vector<std::int64_t> out;
    for (const auto& part : splitList(items)) {
        auto v = parseTokenCount(part);
        if (!v) return v.error();
        out.push_back(*v);
    }
    return out;
}

namespace {
template <class T> void sortUnique(std::vector<T>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

Status checkCommon(int samples, int device) {
    if (samples < kMinSamples || samples > 1000)
        return Error{"--samples " + std::to_string(samples) +
                     " is out of range; expected 3 to 1000 (a median needs three)"};
    if (device < 0)
        return Error{"--device " + std::to_string(device) +
                     " is negative; expected a CUDA device index"};
    return Ok{};
}
} // namespace

Status validate(CopySettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (!s.pinned && !s.pageable)
        return Error{"--pinned-only and --pageable-only exclude each other; name one"};
    for (auto b : s.sizes)
        if (b < kMinCopyBytes || b > kMaxCopyBytes)
            return Error{"--sizes: " + std::to_string(b) +
                         " bytes is out of range; expected 4 KiB to 4 GiB"};
    sortUnique(s.sizes);
    return Ok{};
}

Status validate(GemmPeakSettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (s.sizes.empty()) s.sizes = defaultGemmSizes();
    for (int n : s.sizes)
        if (n < 256 || n > 32768 || n % 64 != 0)
            return Error{"--sizes: " + std::to_string(n) +
                         " is not a square GEMM size this probe runs; expected a multiple of 64 "
                         "from 256 to 32768"};
    sortUnique(s.sizes);
    return Ok{};
}

Status validate(PrefillSettings& s) {
    if (auto st = checkCommon(s.samples, s.device); !st) return st;
    if (s.model.empty())
        return Error{"gpu-prefill needs --model ID|PATH (a preset id, a config.json or a Hugging "
                     "Face cache id)"};
    if (s.lengths.empty()) s.lengths = defaultPrefillLengths();
    for (auto n : s.lengths)
        if (n < 1 || n > kMaxPrefillTokens)
            return Error{"--lengths: " + std::to_string(n) +
                         " tokens is out of range; expected 1 to " +
                         std::to_string(kMaxPrefillTokens)};
    if (s.lengths.size() > 64) return Error{"--lengths: at most 64 lengths per run"};
    sortUnique(s.lengths);
    if (s.gemmPeakTflops && !(*s.gemmPeakTflops > 0 && *s.gemmPeakTflops < 1e5))
        return Error{
            "--gemm-peak-tflops must be a positive rate in TFLOP/s, as gpu-gemm-peak reports it"};
    return Ok{};
}

} // namespace kvbe::gpu
