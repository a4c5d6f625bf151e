// The data a scratch file holds, so that what a read returns can be checked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kvbe::probes {

// The scratch data: every byte non-zero and a function of its file offset, so a sample of what
// comes back can be checked against where it was read from.
void fillPattern(std::byte* buffer, std::size_t length, std::uint64_t fileOffset);
// Index of the first byte that differs from the pattern, or `length` when all match.
std::size_t firstPatternMismatch(const std::byte* buffer, std::size_t length,
                                 std::uint64_t fileOffset);

} // namespace kvbe::probes
