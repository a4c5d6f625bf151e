// Parsing and printing of the quantities users type, one parser for each kind, used by every
// flag and field that takes one: token counts ("8k"), counts ("32"), byte sizes ("4GiB", "1GB"),
// capacities ("512GiB", "6000blocks", "unlimited"), durations ("5s"), bandwidths ("13.5",
// "500MB/s"), fractions ("0.5", "50%"), parameter counts ("70B") and plain numbers; and the
// human-readable formatting of bandwidths, times and sizes.
//
// Binary prefixes are binary and decimal ones decimal everywhere: KiB, MiB, GiB, TiB (and the
// bare k, m, g, t of a size) are powers of 1024; kB, MB, GB, TB are powers of 1000. A token or
// other count's k is 1024 (8k prompts are 8192 tokens).
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// The largest token count a double holds exactly, 2^53; parseTokens refuses more.
inline constexpr double kMaxExactTokens = 9007199254740992.0;

// "8192", "8k" (= 8192: token counts use binary k, as 8k prompts do), "80k", "1.5k", "1m",
// "3e6tokens". Rounded to a whole number; at least 1 and at most 2^53.
Result<double> parseTokens(std::string_view text);
// A comma-separated list of token counts: "1024,8k,80k".
Result<std::vector<double>> parseTokenList(std::string_view text);

// A whole count from min to max: "32", "1e4", "4k" (k = 1024, as for tokens). Fractions are
// refused rather than rounded.
Result<std::int64_t> parseCount(std::string_view text, std::int64_t min, std::int64_t max);
Result<std::vector<std::int64_t>> parseCountList(std::string_view text, std::int64_t min,
                                                 std::int64_t max);

// A positive size in bytes: "4GiB", "1MiB", "128KiB", "64k" (KiB), "512", "1GB" (1e9), "28MiB".
Result<double> parseBytes(std::string_view text);
// A positive whole number of bytes (block and buffer sizes): "1MiB", "1.5GiB", "1GB".
Result<std::uint64_t> parseWholeBytes(std::string_view text);
Result<std::vector<std::uint64_t>> parseWholeByteList(std::string_view text);

// How much a cache tier holds, as typed: bytes ("512GiB", "8TB"), blocks ("6000blocks"), tokens
// ("3e6tokens"), "unlimited" (or "inf"), or "0". Blocks and tokens become bytes where the block
// size is known (capacityBytes in kvbe/trace/trace_setup.h).
struct Capacity {
    enum class Unit { Bytes, Blocks, Tokens, Unlimited };
    Unit unit = Unit::Unlimited;
    double value = 0; // bytes, blocks or tokens; 0 or more
    bool operator==(const Capacity&) const = default;
};
Result<Capacity> parseCapacity(std::string_view text);

// A positive duration in seconds: "5s", "500ms", "2m" or "2min", "250us"; a bare number is
// seconds.
Result<double> parseSeconds(std::string_view text);
// The same, 0 taken too ("0", "0s", "0ms": none).
Result<double> parseSecondsOrZero(std::string_view text);

// The largest bandwidth a flag or field takes, in GB/s (a petabyte a second).
inline constexpr double kMaxBandwidthGBps = 1e6;
// A positive bandwidth in GB/s (1e9 bytes a second): "13.5", "13.5GB/s", "500MB/s", "1TB/s";
// a bare number is GB/s. At most kMaxBandwidthGBps.
Result<double> parseBandwidthGBps(std::string_view text);

// A fraction from 0 to 1: "0.5" or "50%". Without allowZero, 0 is refused too.
Result<double> parseFraction(std::string_view text, bool allowZero = true);
Result<std::vector<double>> parseFractionList(std::string_view text, bool allowZero = true);

// A parameter count P: "3.21e9", "70B" (1e9), "350M" (1e6), "1.2T" (1e12); positive, at most
// kMaxParams.
inline constexpr double kMaxParams = 1e16;
Result<double> parseParamCount(std::string_view text);

// A finite number without a unit: "989", "2.27", "1e-3". The caller checks the range.
Result<double> parseNumber(std::string_view text);

std::string formatTokens(double tokens);            // 8192 -> "8,192"
std::string formatBandwidth(double bytesPerSecond); // "7.24 GB/s"
std::string formatSeconds(double seconds);          // "12.2 s", "129.7 ms", "85 µs"
std::string formatBytes(double bytes);              // "939.5 MB", up to PB and EB

} // namespace kvbe
