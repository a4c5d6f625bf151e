// A function of a library opened with dlopen, looked up by name into a pointer of its own type
// (null where the library lacks it). NVML (nvml_info.cpp) and cuBLASLt (cublaslt_library.cpp)
// are loaded this way.
#pragma once

#include <dlfcn.h>

namespace kvbe::gpu {

template <class F> void bindSymbol(void* handle, F& fn, const char* symbol) {
    fn = reinterpret_cast<F>(dlsym(handle, symbol));
}

} // namespace kvbe::gpu
