// How freed memory goes back to the system (docs/workload-model.md, "Memory of a plan"). A plan
// allocates and frees arrays of tens of MiB in every replay, on several threads. glibc's malloc
// raises its mmap threshold each time such an array is freed (up to 32 MiB), so later arrays
// come from its arenas, whose freed middles it keeps: the 10^6-request plan peaked at 761 MB of
// RSS with 283 MB in use. Fixing the threshold at 1 MiB maps every large array on its own and
// unmaps it when freed: the same plan peaks at 450 MB, in the same time.
#pragma once

#include <cstddef>

namespace kvbe {

inline constexpr std::size_t kOwnMappingBytes = std::size_t(1) << 20;

// Call once at the start of main(), before any thread starts. Returns false where the allocator
// cannot be told (not glibc, or a sanitizer's allocator): nothing changes then.
bool returnLargeFreesToTheSystem();

} // namespace kvbe
