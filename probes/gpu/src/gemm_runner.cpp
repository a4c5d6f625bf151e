#include "gemm_runner.h"

#include "cublaslt_library.h"

#include <string>

namespace kvbe::gpu {

namespace {
// The library's functions, once GemmRunner::create has loaded it (every Plan and runner comes
// after; cublasLt() loads once and then returns the same table, from any thread).
const CublasLt& api() {
    return **cublasLt();
}
} // namespace

struct GemmRunner::Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr, cLayout = nullptr;
    cublasLtMatmulAlgo_t algo{};
    ~Plan() {
        if (cLayout) api().cublasLtMatrixLayoutDestroy(cLayout);
        if (bLayout) api().cublasLtMatrixLayoutDestroy(bLayout);
        if (aLayout) api().cublasLtMatrixLayoutDestroy(aLayout);
        if (desc) api().cublasLtMatmulDescDestroy(desc);
    }
};

namespace {
Error lt(const char* what, cublasStatus_t s) {
    return Error{std::string("cuBLASLt ") + what + " failed (" + api().cublasLtGetStatusString(s) +
                 ")"};
}
} // namespace

Result<std::unique_ptr<GemmRunner>> GemmRunner::create(std::size_t workspaceBytes) {
    if (auto loaded = cublasLt(); !loaded) return loaded.error();
    std::unique_ptr<GemmRunner> r(new GemmRunner);
    cublasLtHandle_t handle = nullptr;
    if (auto s = api().cublasLtCreate(&handle); s != CUBLAS_STATUS_SUCCESS)
        return lt("initialisation", s);
    r->m_handle = handle;
    if (cudaMalloc(&r->m_workspace, workspaceBytes) != cudaSuccess)
        return Error{"cannot allocate the " + std::to_string(workspaceBytes >> 20) +
                     " MiB cuBLASLt workspace on the GPU"};
    r->m_workspaceBytes = workspaceBytes;
    return r;
}

GemmRunner::~GemmRunner() {
    m_plans.clear();
    if (m_workspace) cudaFree(m_workspace);
    if (m_handle) api().cublasLtDestroy(static_cast<cublasLtHandle_t>(m_handle));
}

Result<GemmRunner::Plan*> GemmRunner::plan(std::int64_t m, std::int64_t n, std::int64_t k,
                                           std::uint32_t alignment) {
    const auto key = std::make_tuple(m, n, k, alignment);
    if (auto it = m_plans.find(key); it != m_plans.end()) return it->second.get();
    auto p = std::make_unique<Plan>();
    cublasStatus_t s = api().cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    if (s != CUBLAS_STATUS_SUCCESS) return lt("matmul descriptor", s);
    const cublasOperation_t opT = CUBLAS_OP_T, opN = CUBLAS_OP_N;
    api().cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof opT);
    api().cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof opN);
    // Column-major: A = W as k × n (ld k), transposed; B = activations as k × m (ld k);
    // C = n × m (ld n), which is the row-major m × n output.
    const auto u = [](std::int64_t v) { return static_cast<uint64_t>(v); };
    if ((s = api().cublasLtMatrixLayoutCreate(&p->aLayout, CUDA_R_16BF, u(k), u(n), k)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = api().cublasLtMatrixLayoutCreate(&p->bLayout, CUDA_R_16BF, u(k), u(m), k)) !=
            CUBLAS_STATUS_SUCCESS ||
        (s = api().cublasLtMatrixLayoutCreate(&p->cLayout, CUDA_R_16BF, u(n), u(m), n)) !=
            CUBLAS_STATUS_SUCCESS)
        return lt("matrix layout", s);

    cublasLtMatmulPreference_t pref = nullptr;
    if ((s = api().cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS)
        return lt("preference", s);
    api().cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                               &m_workspaceBytes, sizeof m_workspaceBytes);
    // The heuristic assumes 256-byte aligned operands unless told otherwise; MoE experts and
    // odd widths start at rows that are only 16-byte aligned.
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
        api().cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof alignment);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    s = api().cublasLtMatmulAlgoGetHeuristic(static_cast<cublasLtHandle_t>(m_handle), p->desc,
                                             p->aLayout, p->bLayout, p->cLayout, p->cLayout, pref,
                                             1, &result, &found);
    api().cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS) return lt("heuristic", s);
    if (found == 0)
        return Error{"cuBLASLt has no BF16 algorithm for a " + std::to_string(m) + "×" +
                     std::to_string(n) + "×" + std::to_string(k) + " GEMM on this GPU"};
    p->algo = result.algo;
    Plan* raw = p.get();
    m_plans.emplace(key, std::move(p));
    return raw;
}

Status GemmRunner::run(const void* a, const void* w, void* c, std::int64_t m, std::int64_t n,
                       std::int64_t k, cudaStream_t stream) {
    if (m <= 0 || n <= 0 || k <= 0) return Ok{};
    // The largest power of two (up to 256) that divides every operand's address.
    const auto bits = reinterpret_cast<std::uintptr_t>(a) | reinterpret_cast<std::uintptr_t>(w) |
                      reinterpret_cast<std::uintptr_t>(c) | std::uintptr_t(256);
    const auto alignment = static_cast<std::uint32_t>(bits & (~bits + 1));
    if (alignment < 2) return Error{"GEMM operands must be at least 2-byte aligned (BF16)"};
    auto p = plan(m, n, k, alignment);
    if (!p) return p.error();
    const float alpha = 1.0f, beta = 0.0f;
    const cublasStatus_t s =
        api().cublasLtMatmul(static_cast<cublasLtHandle_t>(m_handle), (*p)->desc, &alpha, w,
                             (*p)->aLayout, a, (*p)->bLayout, &beta, c, (*p)->cLayout, c,
                             (*p)->cLayout, &(*p)->algo, m_workspace, m_workspaceBytes, stream);
    if (s != CUBLAS_STATUS_SUCCESS) return lt("matmul", s);
    return Ok{};
}

} // namespace kvbe::gpu
