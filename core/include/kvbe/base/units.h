// Parsing and printing of the quantities users type: token counts ("8k"), byte sizes ("4GiB"),
// durations ("5s"), and human-readable formatting of bandwidths and times.
#pragma once

#include "kvbe/base/result.h"

#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// The largest token count a double holds exactly, 2^53; parseTokens refuses more.
inline constexpr double kMaxExactTokens = 9007199254740992.0;

// "8192", "8k" (= 8192: token counts use binary k, as 8k prompts do), "80k", "1.5k", "1m".
Result<double> parseTokens(std::string_view text);
// A comma-separated list of token counts: "1024,8k,80k".
Result<std::vector<double>> parseTokenList(std::string_view text);
// "4GiB", "1MiB", "128KiB", "512", "1GB" (1e9), "28MiB".
Result<double> parseBytes(std::string_view text);
Result<std::vector<double>> parseByteList(std::string_view text);
// "5s", "500ms", "2m", "250us".
Result<double> parseSeconds(std::string_view text);
// A parameter count P: "3.21e9", "70B" (1e9), "350M" (1e6), "1.2T" (1e12); positive, at most
// kMaxParams.
inline constexpr double kMaxParams = 1e16;
Result<double> parseParamCount(std::string_view text);

std::string formatTokens(double tokens);            // 8192 -> "8,192"
std::string formatBandwidth(double bytesPerSecond); // "7.24 GB/s"
std::string formatSeconds(double seconds);          // "12.2 s", "129.7 ms", "85 µs"
std::string formatBytes(double bytes);              // "939.5 MB", up to PB and EB

} // namespace kvbe
