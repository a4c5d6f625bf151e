#include "cublaslt_library.h"

#include "dl_symbol.h"

#include <dlfcn.h>
#include <fstream>
#include <mutex>
#include <string>

namespace kvbe::gpu {

namespace {

#define KVBE_STR2(x) #x
#define KVBE_STR(x) KVBE_STR2(x)
constexpr const char* kSoname = "libcublasLt.so." KVBE_STR(CUBLAS_VER_MAJOR);

// Messages built by appending (GCC 12 warns, wrongly, on chains of string + literal here).
Error cannotLoad(const std::string& reason) {
    std::string m = "cannot load cuBLASLt (";
    m += kSoname;
    m += ", part of CUDA " KVBE_STR(CUBLAS_VER_MAJOR) "'s cuBLAS): ";
    m += reason;
    return Error{m};
}

Error missing(const char* function) {
    std::string m = "cannot load cuBLASLt: ";
    m += kSoname;
    m += " has no ";
    m += function;
    m += " (a different version)";
    return Error{m};
}

Result<const CublasLt*> load() {
    void* handle = dlopen(kSoname, RTLD_NOW | RTLD_LOCAL);
    std::string reason = handle ? "" : dlerror();
#ifdef KVBE_CUDA_LIBRARY_DIR
    if (!handle) {
        std::string path = KVBE_CUDA_LIBRARY_DIR "/";
        path += kSoname;
        handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            reason += "; ";
            reason += dlerror();
        }
    }
#endif
    if (!handle) return cannotLoad(reason);
    static CublasLt api;
#define KVBE_CUBLASLT_BIND(name)                                                                   \
    bindSymbol(handle, api.name, #name);                                                           \
    if (!api.name) return missing(#name);
    KVBE_CUBLASLT_FUNCTIONS(KVBE_CUBLASLT_BIND)
#undef KVBE_CUBLASLT_BIND
    return &api; // the handle stays open: the functions are used until the process ends
}

} // namespace

Result<const CublasLt*> cublasLt() {
    static std::once_flag once;
    static Result<const CublasLt*> loaded = Error{"not loaded"};
    std::call_once(once, [] { loaded = load(); });
    return loaded;
}

bool cublasLtMapped() {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("libcublasLt.so") != std::string::npos) return true;
    return false;
}

} // namespace kvbe::gpu
