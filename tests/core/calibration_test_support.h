// Helpers shared by the calibration tests (tst_calibration, tst_calibration_tools,
// tst_calibration_fit): a calibration parsed from text, and the fixtures of
// tests/fixtures/calibration/.
#pragma once

#include "kvbe/calibration/calibration.h"

#include <QString>
#include <QtGlobal>

namespace kvbe::test {

inline Calibration parse(const char* text, const char* source = "fixture") {
    auto c = parseCalibration(text, source);
    if (!c) qFatal("%s", c.message().c_str());
    return *c;
}

inline const QString kFixtures = QStringLiteral(KVBE_SOURCE_DIR "/tests/fixtures/calibration/");

inline Calibration fixture(const char* name) {
    auto c = readCalibration((kFixtures + name).toStdString());
    if (!c) qFatal("%s", c.message().c_str());
    return *c;
}

} // namespace kvbe::test
