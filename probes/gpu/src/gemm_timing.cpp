#include "gemm_timing.h"

#include "cuda_device.h"
#include "probe_util.h"

#include <cmath>

namespace kvbe::gpu {

Result<SquareGemmTiming> timeSquareGemm(GemmRunner& runner, int size, int samples, double warmupS,
                                        cudaStream_t stream) {
    const std::size_t elems = std::size_t(size) * size;
    const std::string what = std::to_string(size) + "² GEMM operands";
    auto a = Buffer::allocate(MemoryKind::Device, elems * 2, what);
    if (!a) return a.error();
    auto b = Buffer::allocate(MemoryKind::Device, elems * 2, what);
    if (!b) return b.error();
    auto c = Buffer::allocate(MemoryKind::Device, elems * 2, what);
    if (!c) return c.error();
    fillNormalBf16(a->get(), elems, 1, 1.0f, stream);
    fillNormalBf16(b->get(), elems, 2, 1.0f, stream);

    const auto batch = [&](int count) -> Status {
        for (int i = 0; i < count; ++i)
            if (auto st = runner.run(a->get(), b->get(), c->get(), size, size, size, stream); !st)
                return st;
        return Ok{};
    };
    EventTimer timer;
    // One GEMM to choose the algorithm and estimate the time of one.
    if (auto st = batch(1); !st) return st.error();
    timer.start(stream);
    if (auto st = batch(1); !st) return st.error();
    timer.stop(stream);
    auto one = timer.seconds();
    if (!one) return one.error();
    const double t1 = std::max(*one, 1e-6);
    const int warm = int(std::clamp(std::ceil(warmupS / t1), 1.0, 20000.0));
    if (auto st = batch(warm); !st) return st.error();
    SquareGemmTiming out;
    out.size = size;
    out.gemmsPerSample = int(std::clamp(std::ceil(0.05 / t1), 1.0, 2000.0));
    const double flops = 2.0 * double(size) * size * size * out.gemmsPerSample;
    for (int s = 0; s < samples; ++s) {
        timer.start(stream);
        if (auto st = batch(out.gemmsPerSample); !st) return st.error();
        timer.stop(stream);
        auto sec = timer.seconds();
        if (!sec) return sec.error();
        out.tflops.push_back(flops / *sec / 1e12);
    }
    out.medianTflops = median(out.tflops);
    return out;
}

} // namespace kvbe::gpu
