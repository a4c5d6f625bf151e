#include "kvbe/trace/trace_endurance.h"

#include "kvbe/base/text_table.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kvbe {

std::string formatLife(double years) {
    const double days = years * kDaysPerYear;
    if (days < 1) return formatFixed(days * 24, 1) + " hours";
    if (days < 100) return formatFixed(days, 0) + " days";
    return formatFixed(years, years < 10 ? 2 : 1) + " years";
}

TierEndurance tierEndurance(const TierReport& tier, const DriveRating& drive, double durationS) {
    TierEndurance e;
    e.drive = drive;
    if (durationS > 0) {
        // In a fleet a local tier's drives are each node's: what each copy takes, on average.
        const double copies = std::max<double>(1, tier.copies);
        e.bytesOfferedPerDay = tier.bytesWritten / copies * kSecondsPerDay / durationS;
        e.bytesStoredPerDay = tier.bytesStored / copies * kSecondsPerDay / durationS;
    }
    if (drive.capacityBytes && std::isfinite(tier.capacityBytes)) {
        // A hair below the quotient: 2 × 7.68 TB given in bytes takes 2 drives, not 3.
        const double n = std::ceil(tier.capacityBytes / *drive.capacityBytes * (1 - 1e-12));
        e.drives = static_cast<std::int64_t>(std::min(n, 1e15));
        e.installedBytes = static_cast<double>(*e.drives) * *drive.capacityBytes;
    }
    if (!drive.rated()) {
        e.note = drive.writesPerDay || drive.warrantyYears || drive.capacityBytes
                     ? "the drive's rating is incomplete (give drive_writes_per_day, "
                       "warranty_years and drive_capacity_TB)"
                     : "no drive rating";
    } else if (!e.drives) {
        e.note = "unlimited capacity: no drive count";
    } else if (*e.drives == 0) {
        e.note = "no capacity: no drives";
    } else if (!e.bytesStoredPerDay) {
        e.note = "the trace spans no time: no rate per day";
    }
    if (e.drives && *e.drives > 0 && e.bytesStoredPerDay) {
        e.driveWritesPerDay = *e.bytesStoredPerDay / e.installedBytes;
        if (drive.rated()) {
            if (*e.bytesStoredPerDay > 0)
                e.yearsToRatedEndurance = *drive.writesPerDay * *drive.warrantyYears *
                                          e.installedBytes / *e.bytesStoredPerDay;
            else
                e.note = "no writes: the rated endurance is never used";
        }
    }
    if (e.yearsToRatedEndurance && *e.yearsToRatedEndurance < *drive.warrantyYears) {
        const std::string n = std::to_string(*e.drives);
        e.warning = tier.name + ": its " + n + (*e.drives == 1 ? " drive" : " drives") + " (" +
                    formatFixed(*drive.writesPerDay, *drive.writesPerDay < 10 ? 1 : 0) +
                    " drive writes per day for " + formatFixed(*drive.warrantyYears, 0) +
                    " years) would take " + formatFixed(*e.driveWritesPerDay, 1) +
                    " drive writes per day and use up their rated endurance in " +
                    formatLife(*e.yearsToRatedEndurance) + ", short of the " +
                    formatFixed(*drive.warrantyYears, 0) + "-year warranty.";
    }
    return e;
}

} // namespace kvbe
