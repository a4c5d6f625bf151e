// NVML, loaded with dlopen so that kvbe-cli neither links against it nor needs it: GPU name,
// clocks, power and temperature for the stream's header and for each result.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kvbe::gpu {

struct GpuTelemetry {
    std::string name;
    std::string driverVersion;
    std::optional<unsigned> smClockMHz, maxSmClockMHz, memClockMHz;
    std::optional<double> powerW, powerLimitW;
    std::optional<unsigned> temperatureC;
    std::optional<unsigned long long> clockEventReasons; // bit mask, see nvmlClocksEventReasons
};

// One loaded libnvidia-ml; closed again on destruction. Without the library (no driver, a
// container without it) every query returns nothing and reason() says why.
class NvmlLibrary {
  public:
    NvmlLibrary();
    ~NvmlLibrary();
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;

    bool loaded() const { return m_ready; }
    const std::string& reason() const { return m_reason; }
    // The device with this PCI bus id ("0000:17:00.0", as cudaDeviceGetPCIBusId writes it).
    std::optional<GpuTelemetry> query(const std::string& pciBusId) const;

  private:
    struct Api;
    void* m_handle = nullptr;
    Api* m_api = nullptr;
    bool m_ready = false;
    std::string m_reason;
};

// {"name":…, "sm_clock_MHz":…, "power_W":…, …}; fields NVML did not give are left out.
nlohmann::ordered_json toJson(const GpuTelemetry& t);

} // namespace kvbe::gpu
