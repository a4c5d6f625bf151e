// BF16 GEMMs through cuBLASLt with FP32 accumulation, in the layout of a linear layer:
// C[m × n] = A[m × k] · Wᵀ, A and C row-major, W stored as [n × k] row-major (as PyTorch's
// nn.Linear keeps its weight). In cuBLAS's column-major terms this is the "TN" case,
// Cᵀ = W · Aᵀ, the layout cuBLASLt is fastest at.
#pragma once

#include "kvbe/base/result.h"

#include <cstdint>
#include <cuda_runtime.h>
#include <map>
#include <memory>
#include <tuple>

namespace kvbe::gpu {

class GemmRunner {
  public:
    static Result<std::unique_ptr<GemmRunner>> create(std::size_t workspaceBytes);
    ~GemmRunner();
    GemmRunner(const GemmRunner&) = delete;
    GemmRunner& operator=(const GemmRunner&) = delete;

    // Queues one GEMM on `stream`. The algorithm for each (m, n, k, pointer alignment) is chosen
    // once by the cuBLASLt heuristic and reused.
    Status run(const void* a, const void* w, void* c, std::int64_t m, std::int64_t n,
               std::int64_t k, cudaStream_t stream);

  private:
    GemmRunner() = default;
    struct Plan;
    Result<Plan*> plan(std::int64_t m, std::int64_t n, std::int64_t k, std::uint32_t alignment);

    void* m_handle = nullptr; // cublasLtHandle_t
    void* m_workspace = nullptr;
    std::size_t m_workspaceBytes = 0;
    std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::uint32_t>,
             std::unique_ptr<Plan>>
        m_plans;
};

} // namespace kvbe::gpu
