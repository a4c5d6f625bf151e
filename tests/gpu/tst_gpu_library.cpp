// cuBLASLt is loaded by the first GEMM runner, not when kvbe-cli starts (cublaslt_library.h):
// a process that runs no GPU probe does not map it, and loading it finds every function kvbe
// calls. Needs the CUDA toolkit (as the build does), not a GPU.
#include "check.h"
#include "cublaslt_library.h"

#include <string>

using namespace kvbe::gpu;

TEST_CASE("cuBLASLt: not mapped until asked for, then every function found") {
    CHECK(!cublasLtMapped()); // linked at start, it was mapped before main
    auto lt = cublasLt();
    CHECK_MSG(lt.ok(), lt.ok() ? "" : lt.message());
    if (!lt) return;
    CHECK(cublasLtMapped());
#define KVBE_CHECK_BOUND(name) CHECK_MSG((*lt)->name != nullptr, #name);
    KVBE_CUBLASLT_FUNCTIONS(KVBE_CHECK_BOUND)
#undef KVBE_CHECK_BOUND
    // A call that needs no GPU ("success" in CUDA 13.0).
    const char* name = (*lt)->cublasLtGetStatusString(CUBLAS_STATUS_SUCCESS);
    CHECK(name != nullptr && std::string(name).size() > 0);
    auto again = cublasLt(); // loaded once
    CHECK(again.ok() && *again == *lt);
}

int main(int argc, char** argv) {
    return kvbe::test::runAll(argc, argv);
}
