// What the Qt benchmarks share: settings of their own, cleared, so a developer's saved window
// state neither changes the figures nor is changed by them.
#pragma once

#include <QApplication>
#include <QSettings>
#include <QStandardPaths>

namespace kvbe::bench {

// After the QApplication is made.
inline void isolateBenchSettings() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName(QStringLiteral("kvbe-bench"));
    QApplication::setApplicationName(QStringLiteral("kvbe-bench"));
    QSettings().clear();
}

} // namespace kvbe::bench
