#include "kvbe/base/units.h"

#include "kvbe/base/text.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace kvbe {
namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return s;
}

std::string quoted(std::string_view s) {
    return "'" + std::string(s) + "'";
}

// Splits "1.5GiB" into 1.5 and "gib" (lower case, trimmed). Returns false when no finite number
// leads the text. from_chars reads the C locale's number whatever the process's locale is.
bool splitNumber(std::string_view s, double& value, std::string& suffix) {
    const char* begin = s.data();
    const char* end = s.data() + s.size();
    if (begin != end && *begin == '+') ++begin; // from_chars takes no plus sign
    auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || !std::isfinite(value)) return false;
    suffix = lower(trim(std::string_view(ptr, static_cast<size_t>(end - ptr))));
    return true;
}

template <class T, class F> Result<std::vector<T>> parseList(std::string_view text, F parseOne) {
    std::vector<T> out;
    size_t start = 0;
    while (start <= text.size()) {
        size_t comma = text.find(',', start);
        if (comma == std::string_view::npos) comma = text.size();
        auto item = parseOne(text.substr(start, comma - start));
        if (!item) return item.error();
        out.push_back(*item);
        start = comma + 1;
    }
    return out;
}

// A count's binary multiplier: "" 1, "k" 1024, "m" 1024² (where allowed); 0 for anything else.
double countFactor(const std::string& suffix, bool allowM) {
    if (suffix.empty()) return 1;
    if (suffix == "k") return 1024;
    if (allowM && suffix == "m") return 1024.0 * 1024.0;
    return 0;
}

} // namespace

Result<double> parseTokens(std::string_view text) {
    const auto s = trim(text);
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix))
        return Error{quoted(s) + " is not a token count; expected e.g. 8192 or 8k"};
    for (std::string_view word : {"tokens", "token", "tok"}) // "3e6tokens", "8ktok"
        if (suffix.ends_with(word)) {
            suffix = std::string(trim(suffix.substr(0, suffix.size() - word.size())));
            break;
        }
    const double factor = countFactor(suffix, true);
    if (factor == 0)
        return Error{quoted(s) + " has an unknown unit '" + suffix +
                     "'; expected a plain number, or k (×1024) or m (×1024²)"};
    v *= factor;
    if (v < 1) return Error{quoted(s) + " is not a positive token count"};
    // Past 2^53 a double no longer holds every whole number, so no count there is exact.
    if (v > kMaxExactTokens)
        return Error{quoted(s) + " is beyond 2^53 (9,007,199,254,740,992) tokens, "
                                 "past any prompt and past what a double counts exactly"};
    return std::round(v);
}

Result<std::vector<double>> parseTokenList(std::string_view text) {
    return parseList<double>(text, parseTokens);
}

Result<std::int64_t> parseCount(std::string_view text, std::int64_t min, std::int64_t max) {
    const auto s = trim(text);
    const std::string expected = "expected a whole number from " + std::to_string(min) + " to " +
                                 std::to_string(max) + " (k = 1024)";
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix)) return Error{quoted(s) + " is not a count; " + expected};
    const double factor = countFactor(suffix, false);
    if (factor == 0) return Error{quoted(s) + " has an unknown unit '" + suffix + "'; " + expected};
    v *= factor;
    if (v != std::floor(v) || v < double(min) || v > double(max))
        return Error{quoted(s) + " is out of range; " + expected};
    return static_cast<std::int64_t>(v);
}

Result<std::vector<std::int64_t>> parseCountList(std::string_view text, std::int64_t min,
                                                 std::int64_t max) {
    return parseList<std::int64_t>(
        text, [&](std::string_view item) { return parseCount(item, min, max); });
}

Result<double> parseBytes(std::string_view text) {
    const auto s = trim(text);
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix))
        return Error{quoted(s) + " is not a size; expected e.g. 1MiB or 4GiB"};
    struct Unit {
        const char* name;
        double factor;
    };
    static constexpr Unit units[] = {{"", 1},
                                     {"b", 1},
                                     {"k", 1024},
                                     {"kib", 1024},
                                     {"m", 1048576.0},
                                     {"mib", 1048576.0},
                                     {"g", 1073741824.0},
                                     {"gib", 1073741824.0},
                                     {"t", 1099511627776.0},
                                     {"tib", 1099511627776.0},
                                     {"kb", 1e3},
                                     {"mb", 1e6},
                                     {"gb", 1e9},
                                     {"tb", 1e12},
                                     {"pb", 1e15}};
    for (const auto& u : units) {
        if (suffix == u.name) {
            v *= u.factor;
            if (v <= 0) return Error{quoted(s) + " is not a positive size"};
            return v;
        }
    }
    return Error{quoted(s) + " has an unknown unit '" + suffix +
                 "'; expected B, KiB, MiB, GiB, TiB (or KB, MB, GB, TB for powers of 1000)"};
}

Result<std::uint64_t> parseWholeBytes(std::string_view text) {
    auto v = parseBytes(text);
    if (!v) return v.error();
    // 2^63: far past any buffer, and below where a double stops holding whole numbers of bytes
    // that a uint64 can take.
    if (*v != std::floor(*v) || *v > 9.2e18)
        return Error{quoted(trim(text)) + " is not a whole number of bytes; expected e.g. 1MiB"};
    return static_cast<std::uint64_t>(*v);
}

Result<std::vector<std::uint64_t>> parseWholeByteList(std::string_view text) {
    return parseList<std::uint64_t>(text, parseWholeBytes);
}

Result<Capacity> parseCapacity(std::string_view text) {
    const auto s = trim(text);
    const std::string expected =
        "expected bytes (512GiB, 8TB), blocks (6000blocks), tokens (3e6tokens) or unlimited";
    const std::string low = lower(s);
    if (low == "unlimited" || low == "inf") return Capacity{Capacity::Unit::Unlimited, 0};
    if (low == "0") return Capacity{Capacity::Unit::Bytes, 0};
    struct Word {
        const char* name;
        Capacity::Unit unit;
    };
    static constexpr Word words[] = {{"blocks", Capacity::Unit::Blocks},
                                     {"block", Capacity::Unit::Blocks},
                                     {"tokens", Capacity::Unit::Tokens},
                                     {"tok", Capacity::Unit::Tokens}};
    for (const auto& w : words) {
        const std::string_view word = w.name;
        if (low.size() <= word.size() || !low.ends_with(word)) continue;
        auto n = parseNumber(std::string_view(s).substr(0, s.size() - word.size()));
        if (!n || *n < 0)
            return Error{quoted(s) + " is not a capacity: expected a number of 0 or more before '" +
                         std::string(word) + "'"};
        return Capacity{w.unit, *n};
    }
    auto b = parseBytes(s);
    if (!b) return Error{quoted(s) + " is not a capacity; " + expected};
    return Capacity{Capacity::Unit::Bytes, *b};
}

namespace {
Result<double> seconds(std::string_view text, bool allowZero) {
    const auto s = trim(text);
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix))
        return Error{quoted(s) + " is not a duration; expected e.g. 5s or 500ms"};
    if (suffix.empty() || suffix == "s") {
    } else if (suffix == "ms")
        v *= 1e-3;
    else if (suffix == "us" || suffix == "µs")
        v *= 1e-6;
    else if (suffix == "m" || suffix == "min")
        v *= 60;
    else
        return Error{quoted(s) + " has an unknown unit '" + suffix +
                     "'; expected s, ms, us or min"};
    if (v < 0 || (v == 0 && !allowZero)) return Error{quoted(s) + " is not a positive duration"};
    return v;
}
} // namespace

Result<double> parseSeconds(std::string_view text) {
    return seconds(text, false);
}

Result<double> parseSecondsOrZero(std::string_view text) {
    return seconds(text, true);
}

Result<double> parseBandwidthGBps(std::string_view text) {
    const auto s = trim(text);
    const std::string expected =
        "expected a bandwidth in GB/s above 0 and at most 1,000,000, e.g. 13.5 or 500MB/s";
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix)) return Error{quoted(s) + " is not a bandwidth; " + expected};
    if (suffix.empty() || suffix == "gb/s")
        ;
    else if (suffix == "mb/s")
        v *= 1e-3;
    else if (suffix == "tb/s")
        v *= 1e3;
    else
        return Error{quoted(s) + " has an unknown unit '" + suffix +
                     "'; expected GB/s (the default), MB/s or TB/s"};
    if (!(v > 0) || v > kMaxBandwidthGBps)
        return Error{quoted(s) + " is out of range; " + expected};
    return v;
}

Result<double> parseFraction(std::string_view text, bool allowZero) {
    const auto s = trim(text);
    const std::string expected = std::string("expected a fraction ") +
                                 (allowZero ? "from 0 to 1" : "in (0, 1]") + ", e.g. 0.5 or 50%";
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix)) return Error{quoted(s) + " is not a fraction; " + expected};
    if (suffix == "%")
        v /= 100;
    else if (!suffix.empty())
        return Error{quoted(s) + " has an unknown unit '" + suffix + "'; " + expected};
    if (v < 0 || v > 1 || (!allowZero && v == 0))
        return Error{quoted(s) + " is out of range; " + expected};
    return v;
}

Result<std::vector<double>> parseFractionList(std::string_view text, bool allowZero) {
    return parseList<double>(text,
                             [&](std::string_view item) { return parseFraction(item, allowZero); });
}

Result<double> parseNumber(std::string_view text) {
    const auto s = trim(text);
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix) || !suffix.empty())
        return Error{quoted(s) + " is not a number; expected e.g. 2.5 or 1e3"};
    return v;
}

Result<double> parseParamCount(std::string_view text) {
    const auto s = trim(text);
    const std::string expected = "expected a positive parameter count, e.g. 3.21e9 or 70B";
    double v = 0;
    std::string suffix;
    if (!splitNumber(s, v, suffix))
        return Error{"'" + std::string(s) + "' is not a parameter count; " + expected};
    if (suffix == "b")
        v *= 1e9;
    else if (suffix == "m")
        v *= 1e6;
    else if (suffix == "t")
        v *= 1e12;
    else if (!suffix.empty())
        return Error{"'" + std::string(s) + "' has an unknown unit '" + suffix +
                     "'; expected a plain number, or M (×1e6), B (×1e9) or T (×1e12)"};
    if (!(v >= 1) || v > kMaxParams)
        return Error{"'" + std::string(s) + "' is out of range; " + expected + ", from 1 to 1e16"};
    return v;
}

std::string formatTokens(double tokens) {
    // Past 2^53 a double is no count anyone typed; print it as a number instead of overflowing.
    if (!(std::abs(tokens) < 9.0e15)) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", tokens);
        return buf;
    }
    auto n = static_cast<long long>(std::llround(tokens));
    std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return n < 0 ? "-" + out : out;
}

static std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string formatBandwidth(double bps) {
    const double gb = bps / 1e9;
    if (gb >= 100) return fmt("%.0f GB/s", gb);
    if (gb >= 10) return fmt("%.1f GB/s", gb);
    if (gb >= 0.01 || bps <= 0) return fmt("%.2f GB/s", gb);
    return fmt("%.3g MB/s", bps / 1e6); // what a prompt far past any context needs
}

std::string formatSeconds(double s) {
    if (s >= 1) return fmt("%.3g s", s);
    if (s >= 1e-3) return fmt("%.3g ms", s * 1e3);
    return fmt("%.3g µs", s * 1e6);
}

std::string formatBytes(double b) {
    if (b >= 1e18) return fmt("%.3g EB", b / 1e18);
    if (b >= 1e15) return fmt("%.2f PB", b / 1e15);
    if (b >= 1e12) return fmt("%.2f TB", b / 1e12);
    if (b >= 1e9) return fmt("%.2f GB", b / 1e9);
    if (b >= 1e6) return fmt("%.1f MB", b / 1e6);
    if (b >= 1e3) return fmt("%.1f kB", b / 1e3);
    return fmt("%.0f B", b);
}

} // namespace kvbe
