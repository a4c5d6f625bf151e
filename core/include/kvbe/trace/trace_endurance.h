// Drive endurance of an offload tier over a replay (docs/workload-model.md, "Drive endurance"):
// the whole drives its capacity takes, the bytes that reached them scaled to a day, the drive
// writes per day that asks of them, and the years until their rated endurance is used up.
#pragma once

#include "kvbe/scenario/hardware.h"
#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kvbe {

inline constexpr double kSecondsPerDay = 86400;
inline constexpr double kDaysPerYear = 365;

struct TierEndurance {
    DriveRating drive;
    // ceil(capacity / drive capacity), at least 1 for a tier that stores anything; empty where the
    // capacity is unlimited or the drive's capacity unknown.
    std::optional<std::int64_t> drives;
    double installedBytes = 0; // drives × drive capacity
    // The bytes offered to the tier and those that reached it (a full write queue drops some),
    // per day: × 86,400 s / the trace's duration; in a fleet, a local tier's per node (its
    // drives are each node's). Empty when the trace spans no time.
    std::optional<double> bytesOfferedPerDay, bytesStoredPerDay;
    // Stored bytes per day ÷ installed capacity: the drive writes per day the workload asks for.
    std::optional<double> driveWritesPerDay;
    // Rated DWPD × warranty years × installed capacity ÷ stored bytes per day: the years until
    // the rated endurance (DWPD × 365 × years × capacity bytes) is written. Empty without a
    // rating, without a drive count, or without writes (then the drives never wear out here).
    std::optional<double> yearsToRatedEndurance;
    // Why a figure is missing ("no drive rating", "unlimited capacity: no drive count", …), or
    // empty.
    std::string note;
    // A sentence when the years to rated endurance are fewer than the warranty's, else empty.
    std::string warning;
};

// The endurance of offload tier `tier` (its report from a replay of durationS seconds of trace)
// built of `drive`.
TierEndurance tierEndurance(const TierReport& tier, const DriveRating& drive, double durationS);

// "5.0 years", "55 days": a life for the reports.
std::string formatLife(double years);

} // namespace kvbe
