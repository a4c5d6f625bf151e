#include "cuda_device.h"

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace kvbe::gpu {

namespace {
std::string version(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string sizeText(std::size_t bytes) {
    char text[32];
    if (bytes >= (1ull << 30))
        std::snprintf(text, sizeof text, "%.1f GiB", double(bytes) / double(1ull << 30));
    else
        std::snprintf(text, sizeof text, "%.1f MiB", double(bytes) / double(1ull << 20));
    return text;
}
} // namespace

Error cudaFailure(const std::string& step, cudaError_t err) {
    return Error{step + " failed: " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")"};
}

Status cudaUsable() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorNoDevice || (err == cudaSuccess && count == 0))
        return Error{"no CUDA GPU is present on this machine, so the GPU probes cannot run here"};
    if (err == cudaErrorInsufficientDriver) {
        int driver = 0;
        cudaDriverGetVersion(&driver);
        int runtime = 0;
        cudaRuntimeGetVersion(&runtime);
        if (driver == 0)
            return Error{"no CUDA GPU can be used here: the NVIDIA driver is not installed or not "
                         "loaded (libcuda.so was not found)"};
        return Error{"no CUDA GPU can be used here: the NVIDIA driver supports CUDA " +
                     version(driver) + " but this kvbe-cli was built with CUDA " +
                     version(runtime) + "; update the driver"};
    }
    if (err != cudaSuccess)
        return Error{std::string("no CUDA GPU can be used here: ") + cudaGetErrorString(err) +
                     " (" + cudaGetErrorName(err) + ")"};
    return Ok{};
}

Result<DeviceInfo> openDevice(int index) {
    if (auto st = cudaUsable(); !st) return st.error();
    int count = 0;
    cudaGetDeviceCount(&count);
    if (index < 0 || index >= count)
        return Error{"--device " + std::to_string(index) + ": this machine has " +
                     std::to_string(count) + " CUDA GPU" + (count == 1 ? "" : "s") + " (0 to " +
                     std::to_string(count - 1) + ")"};
    KVBE_CUDA_TRY("cudaSetDevice", cudaSetDevice(index));
    cudaDeviceProp prop{};
    KVBE_CUDA_TRY("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, index));
    DeviceInfo d;
    d.index = index;
    d.name = prop.name;
    d.computeMajor = prop.major;
    d.computeMinor = prop.minor;
    d.multiprocessors = prop.multiProcessorCount;
    d.totalBytes = prop.totalGlobalMem;
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) d.pciBusId = bus;
    cudaRuntimeGetVersion(&d.runtimeVersion);
    cudaDriverGetVersion(&d.driverVersion);
    if (d.computeMajor < 8)
        return Error{d.name + " has compute capability " + std::to_string(d.computeMajor) + "." +
                     std::to_string(d.computeMinor) +
                     "; the GPU probes need BF16 tensor cores (8.0, Ampere, or newer)"};
    // Make the context now, so that its cost and its errors fall here rather than in a timing.
    KVBE_CUDA_TRY("creating the CUDA context", cudaFree(nullptr));
    return d;
}

Result<std::pair<std::size_t, std::size_t>> deviceMemory() {
    std::size_t freeBytes = 0, totalBytes = 0;
    KVBE_CUDA_TRY("cudaMemGetInfo", cudaMemGetInfo(&freeBytes, &totalBytes));
    return std::make_pair(freeBytes, totalBytes);
}

nlohmann::ordered_json deviceJson(const DeviceInfo& d, const NvmlLibrary& nvml) {
    nlohmann::ordered_json j;
    j["index"] = d.index;
    j["name"] = d.name;
    j["pci_bus_id"] = d.pciBusId;
    j["compute_capability"] = std::to_string(d.computeMajor) + "." + std::to_string(d.computeMinor);
    j["multiprocessors"] = d.multiprocessors;
    j["memory_bytes"] = d.totalBytes;
    j["cuda_runtime"] = version(d.runtimeVersion);
    j["cuda_driver"] = version(d.driverVersion);
    if (auto t = nvml.query(d.pciBusId))
        j["nvml"] = toJson(*t);
    else
        j["nvml_missing"] = nvml.loaded() ? "NVML does not know this device" : nvml.reason();
    return j;
}

Result<Buffer> Buffer::allocate(MemoryKind kind, std::size_t bytes, const std::string& what) {
    Buffer b;
    b.m_kind = kind;
    b.m_bytes = bytes;
    const std::string step = "allocating " + sizeText(bytes) + " for " + what;
    switch (kind) {
    case MemoryKind::Device: {
        const cudaError_t err = cudaMalloc(&b.m_ptr, bytes);
        if (err == cudaErrorMemoryAllocation)
            return Error{step + " failed: the GPU is out of memory"};
        KVBE_CUDA_TRY(step, err);
        break;
    }
    case MemoryKind::Pinned:
        KVBE_CUDA_TRY(step, cudaHostAlloc(&b.m_ptr, bytes, cudaHostAllocDefault));
        break;
    case MemoryKind::Pageable:
        b.m_ptr = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (!b.m_ptr) return Error{step + " failed: the host is out of memory"};
        break;
    }
    return b;
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        reset();
        m_ptr = std::exchange(o.m_ptr, nullptr);
        m_bytes = std::exchange(o.m_bytes, 0);
        m_kind = o.m_kind;
    }
    return *this;
}

Buffer::~Buffer() {
    reset();
}

void Buffer::reset() {
    if (!m_ptr) return;
    switch (m_kind) {
    case MemoryKind::Device:
        cudaFree(m_ptr);
        break;
    case MemoryKind::Pinned:
        cudaFreeHost(m_ptr);
        break;
    case MemoryKind::Pageable:
        std::free(m_ptr);
        break;
    }
    m_ptr = nullptr;
}

EventTimer::EventTimer() {
    cudaEventCreate(&m_start);
    cudaEventCreate(&m_stop);
}

EventTimer::~EventTimer() {
    cudaEventDestroy(m_start);
    cudaEventDestroy(m_stop);
}

Result<double> EventTimer::seconds() {
    KVBE_CUDA_TRY("waiting for the timed work", cudaEventSynchronize(m_stop));
    float ms = 0;
    KVBE_CUDA_TRY("reading the CUDA event timer", cudaEventElapsedTime(&ms, m_start, m_stop));
    return ms / 1e3;
}

} // namespace kvbe::gpu
