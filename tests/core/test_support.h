// Helpers shared by the core tests.
#pragma once

#include "kvbe/scenario/presets.h"

#include <QFile>
#include <QString>
#include <QTest>
#include <cmath>
#include <string>

namespace kvbe::test {

inline const Presets& presets() {
    static const Presets p = [] {
        auto r = Presets::loadBuiltin();
        if (!r) qFatal("presets: %s", r.message().c_str());
        return *r;
    }();
    return p;
}

inline const ModelSpec& preset(const char* id) {
    const auto* m = presets().findModel(id);
    if (!m) qFatal("no preset %s", id);
    return m->spec;
}

inline bool near(double actual, double expected, double relTol) {
    return std::abs(actual - expected) <= relTol * std::abs(expected);
}

inline void writeFile(const QString& path, const QByteArray& data) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(data);
}

} // namespace kvbe::test

#define KVBE_COMPARE_REL(actual, expected, tol)                                                    \
    do {                                                                                           \
        const double a_ = (actual), e_ = (expected);                                               \
        if (!kvbe::test::near(a_, e_, (tol)))                                                      \
            QFAIL(qPrintable(QString("%1 = %2, expected %3 (±%4 %)")                               \
                                 .arg(#actual)                                                     \
                                 .arg(a_, 0, 'g', 10)                                              \
                                 .arg(e_, 0, 'g', 10)                                              \
                                 .arg((tol)*100)));                                                \
    } while (0)
