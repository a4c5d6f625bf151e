// What the plan tests share: the conversation trace and Llama 3.2 3B, each made once a process,
// and a small plan of them with hand-set prices and drive ratings.
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/plan/plan.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_setup.h"
#include "trace_test_support.h"

#include <QtGlobal>

#include <utility>

namespace kvbe::test {

inline constexpr double kPlanGiB = 1024.0 * 1024 * 1024;

// The conversation trace (tests/fixtures), read once.
inline const Trace& conversationTrace() {
    static const Trace t = [] {
        auto r = loadTrace(realTracePath().toStdString(), {});
        if (!r) qFatal("%s", r.message().c_str());
        return std::move(*r);
    }();
    return t;
}

inline const CostModel& llama3bModel() {
    static const CostModel c = llama3b();
    return c;
}

// The conversation trace on Llama 3.2 3B with 40 GB of GPU cache and write queues: DRAM at $10 a
// GiB (55 GB/s, 0.5 ms), a 6.4 TB drive rated 3 DWPD for 5 years at $500 (14 GB/s read, 10 GB/s
// write, 1 ms), the GPU at $2 an hour and two GPUs an instance; K 1 or 2, a 5-year life limit.
// The DRAM sizes and drive counts are the caller's.
inline PlanSetup smallPlanSetup(std::vector<double> dramBytes, std::vector<std::int64_t> drives) {
    PlanSetup s;
    s.trace = &conversationTrace();
    s.cost = &llama3bModel();
    s.base.blockBytes = traceBlockBytes(llama3bModel(), 512);
    s.base.gpuCapacityBytes = 40e9;
    s.base.writeQueue = true;
    s.dram = SimTier{"dram", 0, TierPath{"dram", 55e9, 0.5e-3}, 55e9};
    SimTier nvme{"nvme", 0, TierPath{"nvme", 14e9, 1e-3}, 10e9};
    nvme.drive.model = "mixed use";
    nvme.drive.writesPerDay = 3;
    nvme.drive.warrantyYears = 5;
    nvme.drive.capacityBytes = 6.4e12;
    s.driveTiers = {nvme};
    s.prices.origin = "the test";
    s.prices.dramPerGiB = Price{10, ""};
    s.prices.gpuPerHour["h100-sxm"] = Price{2, ""};
    s.prices.drive["nvme"] = Price{500, ""};
    s.gpuKey = "h100-sxm";
    s.gpusPerInstance = 2;
    s.grid.dramBytes = std::move(dramBytes);
    s.grid.drives = std::move(drives);
    s.grid.storeAfter = {1, 2};
    s.limits.lifeYears = 5;
    return s;
}

} // namespace kvbe::test
