#include "kvbe/gpu/nvml_info.h"

#include "dl_symbol.h"

#include <dlfcn.h>

namespace kvbe::gpu {

namespace {
using NvmlDevice = void*;
using NvmlReturn = int; // NVML_SUCCESS is 0
constexpr int kClockSm = 1, kClockMem = 2, kTempGpu = 0;
} // namespace

struct NvmlLibrary::Api {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*byPciBusId)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
    NvmlReturn (*clock)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*maxClock)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*powerLimit)(NvmlDevice, unsigned*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, int, unsigned*) = nullptr;
    NvmlReturn (*driverVersion)(char*, unsigned) = nullptr;
    NvmlReturn (*eventReasons)(NvmlDevice, unsigned long long*) = nullptr;
};

NvmlLibrary::NvmlLibrary() {
    for (const char* lib : {"libnvidia-ml.so.1", "libnvidia-ml.so"}) {
        m_handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (m_handle) break;
    }
    if (!m_handle) {
        m_reason = "libnvidia-ml.so.1 (NVML, part of the NVIDIA driver) is not installed";
        return;
    }
    m_api = new Api;
    bindSymbol(m_handle, m_api->init, "nvmlInit_v2");
    bindSymbol(m_handle, m_api->shutdown, "nvmlShutdown");
    bindSymbol(m_handle, m_api->byPciBusId, "nvmlDeviceGetHandleByPciBusId_v2");
    bindSymbol(m_handle, m_api->name, "nvmlDeviceGetName");
    bindSymbol(m_handle, m_api->clock, "nvmlDeviceGetClockInfo");
    bindSymbol(m_handle, m_api->maxClock, "nvmlDeviceGetMaxClockInfo");
    bindSymbol(m_handle, m_api->power, "nvmlDeviceGetPowerUsage");
    bindSymbol(m_handle, m_api->powerLimit, "nvmlDeviceGetEnforcedPowerLimit");
    bindSymbol(m_handle, m_api->temperature, "nvmlDeviceGetTemperature");
    bindSymbol(m_handle, m_api->driverVersion, "nvmlSystemGetDriverVersion");
    bindSymbol(m_handle, m_api->eventReasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!m_api->eventReasons)
        bindSymbol(m_handle, m_api->eventReasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!m_api->init || !m_api->shutdown || !m_api->byPciBusId) {
        m_reason =
            "libnvidia-ml lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 (driver too old)";
        return;
    }
    if (m_api->init() != 0) {
        m_reason = "nvmlInit failed (the NVIDIA driver is not loaded)";
        return;
    }
    m_ready = true;
}

NvmlLibrary::~NvmlLibrary() {
    if (m_ready) m_api->shutdown();
    delete m_api;
    if (m_handle) dlclose(m_handle);
}

std::optional<GpuTelemetry> NvmlLibrary::query(const std::string& pciBusId) const {
    if (!m_ready) return std::nullopt;
    NvmlDevice dev = nullptr;
    if (m_api->byPciBusId(pciBusId.c_str(), &dev) != 0) return std::nullopt;
    GpuTelemetry t;
    char text[128] = {};
    if (m_api->name && m_api->name(dev, text, sizeof text) == 0) t.name = text;
    if (m_api->driverVersion && m_api->driverVersion(text, sizeof text) == 0)
        t.driverVersion = text;
    unsigned v = 0;
    if (m_api->clock && m_api->clock(dev, kClockSm, &v) == 0) t.smClockMHz = v;
    if (m_api->maxClock && m_api->maxClock(dev, kClockSm, &v) == 0) t.maxSmClockMHz = v;
    if (m_api->clock && m_api->clock(dev, kClockMem, &v) == 0) t.memClockMHz = v;
    if (m_api->power && m_api->power(dev, &v) == 0) t.powerW = v / 1000.0;
    if (m_api->powerLimit && m_api->powerLimit(dev, &v) == 0) t.powerLimitW = v / 1000.0;
    if (m_api->temperature && m_api->temperature(dev, kTempGpu, &v) == 0) t.temperatureC = v;
    unsigned long long reasons = 0;
    if (m_api->eventReasons && m_api->eventReasons(dev, &reasons) == 0)
        t.clockEventReasons = reasons;
    return t;
}

nlohmann::ordered_json toJson(const GpuTelemetry& t) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (!t.name.empty()) j["name"] = t.name;
    if (!t.driverVersion.empty()) j["driver"] = t.driverVersion;
    if (t.smClockMHz) j["sm_clock_MHz"] = *t.smClockMHz;
    if (t.maxSmClockMHz) j["max_sm_clock_MHz"] = *t.maxSmClockMHz;
    if (t.memClockMHz) j["mem_clock_MHz"] = *t.memClockMHz;
    if (t.powerW) j["power_W"] = *t.powerW;
    if (t.powerLimitW) j["power_limit_W"] = *t.powerLimitW;
    if (t.temperatureC) j["temperature_C"] = *t.temperatureC;
    if (t.clockEventReasons) j["clock_event_reasons"] = *t.clockEventReasons;
    return j;
}

} // namespace kvbe::gpu
