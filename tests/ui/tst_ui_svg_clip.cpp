// Exports draw nothing past the plot: a pinned scenario whose lengths reach further than the
// current one's (its dashed B* curve runs on to 131,072 tokens, the axis stops at 16,384) is cut
// at the plot's right edge in the SVG as in the PNG. (Qt's SVG writer leaves out the clip the
// PNG gets, so the export cuts the lines itself.)
#include "ui_test_support.h"

#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"

#include <QApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// Pixels in a strip just right of the plot that are not the background: ink past the axis.
int inkRightOfPlot(const QImage& img, const QRectF& plot) {
    int ink = 0;
    for (int x = int(plot.right()) + 4; x < int(plot.right()) + 40 && x < img.width(); ++x)
        for (int y = int(plot.top()) + 20; y < int(plot.bottom()) - 20; ++y)
            ink += qGray(img.pixel(x, y)) < 200;
    return ink;
}

} // namespace

class TestUiSvgClip : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }

    void aPinnedLineStopsAtTheAxis() {
        auto w = makeWindow();
        QVERIFY(w->pinCurrent(QStringLiteral("to 131,072 tokens")));
        Scenario s = explorerOf(w)->scenario();
        s.lengths.maxTokens = 16384;
        explorerOf(w)->edit(s, QStringLiteral("shorter"));
        w->refreshNow();
        auto* c = chartOf(w, QStringLiteral("breakeven"));
        QVERIFY(c->seriesByKey(QStringLiteral("pin/0/bstar")));

        // The plot where the export lays the chart out: a copy of it at that size, made as the
        // export makes its own.
        const QSize size(1200, 700);
        auto copy = createChart(QStringLiteral("breakeven"));
        copy->setAttribute(Qt::WA_DontShowOnScreen);
        copy->resize(size);
        copy->show();
        QApplication::processEvents();
        copy->copyStateFrom(*c);
        QApplication::processEvents();
        const QRectF plot = copy->chart()->plotArea();

        QTemporaryDir dir;
        for (const char* ext : {"png", "svg"}) {
            const QString path = dir.filePath(QStringLiteral("breakeven.") + QLatin1String(ext));
            const Status st = exportChart(*c, path, size);
            QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
            QImage img(size, QImage::Format_ARGB32);
            img.fill(Qt::white);
            if (QLatin1String(ext) == QLatin1String("svg")) {
                QSvgRenderer svg(path);
                QVERIFY(svg.isValid());
                QPainter p(&img);
                svg.render(&p);
            } else {
                QVERIFY(img.load(path));
            }
            QCOMPARE(inkRightOfPlot(img, plot), 0);
        }
    }
};

QTEST_MAIN(TestUiSvgClip)
#include "tst_ui_svg_clip.moc"
