// What an imported py-kvcache v2 file's own curves imply (core's pyKvcacheImplied): per tier,
// B* at each measured length and golden point, the bandwidth its load curve implies, and p* by
// py-kvcache's rule. The break-even chart draws the B* and p*, the minimum-fraction chart the p*.
#pragma once

#include "kvbe/calibration/fit.h"

#include <QColor>
#include <QString>

namespace kvbe {

struct ImpliedOverlay {
    QString file; // the file's name, in every series name and label
    QColor color;
    QString model; // the model the file was measured with; empty: not said
    PyKvcacheImplied implied;
};

// "SSD" or "host memory" for py-kvcache's tiers.
inline QString impliedTierText(const std::string& tier) {
    return tier == "ssd" ? QStringLiteral("SSD") : QStringLiteral("host memory");
}
// The SSD a little darker than the file's colour, host memory a little lighter.
inline QColor impliedTierColor(const ImpliedOverlay& o, const std::string& tier) {
    return tier == "ssd" ? o.color.darker(130) : o.color.lighter(125);
}

} // namespace kvbe
