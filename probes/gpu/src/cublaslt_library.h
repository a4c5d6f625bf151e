// cuBLASLt, loaded with dlopen when the first GEMM runner is made (as NVML is, nvml_info.h), so
// that a kvbe-cli that runs no GPU probe never maps it. Linked at start, it took 145 MB of every
// kvbe-cli's resident memory, a trace plan's included: 84 MB of its zero-initialised data written
// while it loads, and 60 MB of its code and read-only data (measured on CUDA 13.0, 2026-12-03).
#pragma once

#include "kvbe/base/result.h"

#include <cublasLt.h>

namespace kvbe::gpu {

// The functions kvbe calls, by their own names and types.
#define KVBE_CUBLASLT_FUNCTIONS(X)                                                                 \
    X(cublasLtCreate)                                                                              \
    X(cublasLtDestroy)                                                                             \
    X(cublasLtGetStatusString)                                                                     \
    X(cublasLtMatmul)                                                                              \
    X(cublasLtMatmulAlgoGetHeuristic)                                                              \
    X(cublasLtMatmulDescCreate)                                                                    \
    X(cublasLtMatmulDescDestroy)                                                                   \
    X(cublasLtMatmulDescSetAttribute)                                                              \
    X(cublasLtMatmulPreferenceCreate)                                                              \
    X(cublasLtMatmulPreferenceDestroy)                                                             \
    X(cublasLtMatmulPreferenceSetAttribute)                                                        \
    X(cublasLtMatrixLayoutCreate)                                                                  \
    X(cublasLtMatrixLayoutDestroy)

struct CublasLt {
#define KVBE_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
    KVBE_CUBLASLT_FUNCTIONS(KVBE_CUBLASLT_MEMBER)
#undef KVBE_CUBLASLT_MEMBER
};

// The library (libcublasLt.so.<the major version built against>, from the loader's path, then
// from the toolkit kvbe was built with), loaded once and kept for the life of the process. An
// error names the library, the loader's reason and the function missing, if one is.
Result<const CublasLt*> cublasLt();

// Whether the library is mapped into this process now (for tests: not before cublasLt()).
bool cublasLtMapped();

} // namespace kvbe::gpu
