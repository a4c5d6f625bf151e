// The CUDA runtime, wrapped: find and open a device (one sentence when there is none), owned
// device and host buffers, event timing, and the small kernels the probes share.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/gpu/nvml_info.h"

#include <cstdint>
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>
#include <string>

namespace kvbe::gpu {

struct DeviceInfo {
    int index = 0;
    std::string name;
    std::string pciBusId;
    int computeMajor = 0, computeMinor = 0;
    int multiprocessors = 0;
    std::size_t totalBytes = 0;
    int runtimeVersion = 0, driverVersion = 0;
};

// Whether a CUDA device can be used here; the error is the one sentence the probes print
// ("no CUDA GPU is present…", "the NVIDIA driver is not loaded…").
Status cudaUsable();
// Checks that device `index` exists, makes it current and describes it.
Result<DeviceInfo> openDevice(int index);
// Free and total memory of the current device.
Result<std::pair<std::size_t, std::size_t>> deviceMemory();

// A sentence for a CUDA error at one step ("cudaMalloc of 1 GiB: out of memory").
Error cudaFailure(const std::string& step, cudaError_t err);
#define KVBE_CUDA_TRY(step, expr)                                                                  \
    do {                                                                                           \
        if (cudaError_t kvbeErr_ = (expr); kvbeErr_ != cudaSuccess)                                \
            return ::kvbe::gpu::cudaFailure(step, kvbeErr_);                                       \
    } while (0)

// The device and NVML's view of it, for headers and results.
nlohmann::ordered_json deviceJson(const DeviceInfo& d, const NvmlLibrary& nvml);

enum class MemoryKind { Device, Pinned, Pageable };

// An owned allocation; moves, never copies.
class Buffer {
  public:
    Buffer() = default;
    static Result<Buffer> allocate(MemoryKind kind, std::size_t bytes, const std::string& what);
    Buffer(Buffer&& o) noexcept { *this = std::move(o); }
    Buffer& operator=(Buffer&& o) noexcept;
    ~Buffer();
    void* get() const { return m_ptr; }
    std::size_t bytes() const { return m_bytes; }
    template <class T> T* as() const { return static_cast<T*>(m_ptr); }

  private:
    void reset();
    void* m_ptr = nullptr;
    std::size_t m_bytes = 0;
    MemoryKind m_kind = MemoryKind::Device;
};

// Start and stop events on one stream.
class EventTimer {
  public:
    EventTimer();
    ~EventTimer();
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;
    void start(cudaStream_t s) { cudaEventRecord(m_start, s); }
    void stop(cudaStream_t s) { cudaEventRecord(m_stop, s); }
    // Waits for the stop event; seconds between the two.
    Result<double> seconds();
    cudaEvent_t startEvent() const { return m_start; }
    cudaEvent_t stopEvent() const { return m_stop; }

  private:
    cudaEvent_t m_start = nullptr, m_stop = nullptr;
};

// Kernels (device_kernels.cu).
// Normal(0, stddev) BF16 values from a counter-based hash: the same seed gives the same data.
void fillNormalBf16(void* dst, std::size_t count, std::uint64_t seed, float stddev, cudaStream_t s);
// Holds a stream until *release becomes non-zero (host-mapped memory) or timeoutNs passes;
// on a timeout it sets *timedOut. The nvbandwidth way to queue copies before they start.
void launchSpin(volatile int* release, int* timedOut, std::uint64_t timeoutNs, cudaStream_t s);

} // namespace kvbe::gpu
