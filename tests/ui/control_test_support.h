// Helpers shared by the scenario panel's control tests (tst_ui_controls, tst_ui_control_charts,
// tst_ui_control_inputs): a series against core's values, a combo box picked and a field typed
// into as a user would.
#pragma once

#include "ui_test_support.h"

#include <QComboBox>
#include <QLineEdit>
#include <QTest>
#include <QXYSeries>

#include <optional>
#include <vector>

namespace kvbe::test {

// The series holds exactly core's values, at core's prompt lengths, skipping core's gaps.
inline void expectSeries(QXYSeries* s, const std::vector<double>& xs,
                         const std::vector<std::optional<double>>& ys, double scale) {
    QVERIFY(s);
    const auto pts = s->points();
    qsizetype k = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
        if (!ys[i]) continue;
        QVERIFY2(k < pts.size(), "the series has fewer points than core has values");
        QCOMPARE(pts[k].x(), xs[i]);
        QVERIFY2(sameValue(pts[k].y(), *ys[i] * scale),
                 qPrintable(QStringLiteral("at N = %1: chart %2, core %3")
                                .arg(xs[i])
                                .arg(pts[k].y())
                                .arg(*ys[i] * scale)));
        ++k;
    }
    QCOMPARE(k, pts.size());
}

inline void expectSeries(QXYSeries* s, const std::vector<double>& xs, const std::vector<double>& ys,
                         double scale) {
    std::vector<std::optional<double>> o(ys.begin(), ys.end());
    expectSeries(s, xs, o, scale);
}

inline void pick(QComboBox* box, const QVariant& data) {
    const int i = box->findData(data);
    QVERIFY2(i >= 0, qPrintable(data.toString()));
    box->setCurrentIndex(i);
    emit box->activated(i);
}

// As if pasted: one edit with the whole text.
inline void typeInto(QLineEdit* edit, const QString& text) {
    edit->setText(text);
    emit edit->textEdited(text);
}

} // namespace kvbe::test
