// Runs the blocks of a LayerPlan on the GPU: one layer of random BF16 weights per block, one
// activation arena for the longest prompt, and event-timed runs of each block.
#pragma once

#include "cuda_device.h"
#include "gemm_runner.h"
#include "kvbe/gpu/layer_plan.h"

#include <memory>
#include <vector>

namespace kvbe::gpu {

struct BlockTiming {
    double seconds = 0; // median of the samples, one layer
    std::vector<double> samples;
    int runsPerSample = 1;
};

class PrefillRunner {
  public:
    // Allocates and fills the weights and an arena for `maxTokens` tokens.
    static Result<std::unique_ptr<PrefillRunner>> create(const LayerPlan& plan,
                                                         std::int64_t maxTokens);
    ~PrefillRunner();

    // Queues one run of the block (index into plan.blocks) at `tokens` tokens.
    Status runBlock(size_t block, std::int64_t tokens);
    Status runLmHead();
    // A warm-up run, then `samples` timed samples of at least ~2 ms each.
    Result<BlockTiming> timeBlock(size_t block, std::int64_t tokens, int samples);
    Result<BlockTiming> timeLmHead(int samples);

  private:
    PrefillRunner(const LayerPlan& plan) : m_plan(plan) {}
    template <class Fn> Result<BlockTiming> time(Fn run, int samples);
    Status runGemms(const std::vector<GemmOp>& ops, const std::vector<Buffer>& weights,
                    std::int64_t tokens);

    LayerPlan m_plan;
    std::unique_ptr<GemmRunner> m_gemm;
    std::vector<std::vector<Buffer>> m_weights; // per block, per GEMM op
    Buffer m_lmHead;
    Buffer m_arena;
    cudaStream_t m_stream = nullptr;
};

} // namespace kvbe::gpu
