#include "kvbe/base/allocator.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kvbe {

bool returnLargeFreesToTheSystem() {
#if defined(__GLIBC__)
    // Setting the threshold also stops glibc from raising it (and the trim threshold) as large
    // blocks are freed (mallopt(3), M_MMAP_THRESHOLD).
    return ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kOwnMappingBytes)) == 1;
#else
    return false;
#endif
}

} // namespace kvbe
