// The scratch data pattern: a hash of each 8-byte word's file offset, every byte non-zero.
#include "kvbe/probes/data_pattern.h"

#include <cstring>

namespace kvbe::probes {

namespace {

std::uint64_t patternWord(std::uint64_t wordIndex) {
    // A multiplicative hash of the offset, with every byte forced non-zero.
    return (wordIndex * 0x9E3779B97F4A7C15ull + 0x5851F42D4C957F2Dull) | 0x0101010101010101ull;
}

} // namespace

void fillPattern(std::byte* buffer, std::size_t length, std::uint64_t fileOffset) {
    std::size_t i = 0;
    for (; i < length && (fileOffset + i) % 8 != 0; ++i) {
        const std::uint64_t o = fileOffset + i;
        buffer[i] = static_cast<std::byte>(patternWord(o / 8) >> (8 * (o % 8)));
    }
    for (; i + 8 <= length; i += 8) {
        const std::uint64_t w = patternWord((fileOffset + i) / 8);
        std::memcpy(buffer + i, &w, 8); // little-endian: byte k is bits 8k..8k+7, as above
    }
    for (; i < length; ++i) {
        const std::uint64_t o = fileOffset + i;
        buffer[i] = static_cast<std::byte>(patternWord(o / 8) >> (8 * (o % 8)));
    }
}

std::size_t firstPatternMismatch(const std::byte* buffer, std::size_t length,
                                 std::uint64_t fileOffset) {
    std::size_t i = 0;
    auto byteAt = [&](std::uint64_t o) {
        return static_cast<std::byte>(patternWord(o / 8) >> (8 * (o % 8)));
    };
    for (; i < length && (fileOffset + i) % 8 != 0; ++i)
        if (buffer[i] != byteAt(fileOffset + i)) return i;
    for (; i + 8 <= length; i += 8) {
        const std::uint64_t w = patternWord((fileOffset + i) / 8);
        if (std::memcmp(buffer + i, &w, 8) != 0) {
            for (std::size_t k = i; k < i + 8; ++k)
                if (buffer[k] != byteAt(fileOffset + k)) return k;
        }
    }
    for (; i < length; ++i)
        if (buffer[i] != byteAt(fileOffset + i)) return i;
    return length;
}

} // namespace kvbe::probes
