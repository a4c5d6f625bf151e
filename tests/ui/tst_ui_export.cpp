// Every chart exports to a valid PNG, SVG and PDF of the requested size, its data to CSV and
// its picture to the clipboard; `kvbe --export` does the same without a display, and fails
// with exit code 1 and one sentence.
#include "ui_test_support.h"

#include "kvbe/ui/charts/chart_catalog.h"
#include "kvbe/ui/charts/chart_export.h"

#include <QApplication>
#include <QClipboard>
#include <QGuiApplication>
#include <QImageReader>
#include <QProcess>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>

using namespace kvbe;
using namespace kvbe::test;

namespace {

void expectValidFile(const QString& path, QSize size) {
    QFile f(path);
    QVERIFY2(f.open(QIODevice::ReadOnly), qPrintable(path));
    const QByteArray bytes = f.readAll();
    QVERIFY(bytes.size() > 1000);
    const QString ext = QFileInfo(path).suffix();
    if (ext == "png") {
        QVERIFY(bytes.startsWith("\x89PNG\r\n\x1a\n"));
        QImage img;
        QVERIFY(img.loadFromData(bytes, "png"));
        QCOMPARE(img.size(), size);
        // Not blank: a chart has more than a handful of colours.
        QSet<QRgb> colours;
        for (int y = 0; y < img.height(); y += 7)
            for (int x = 0; x < img.width(); x += 7)
                colours.insert(img.pixel(x, y));
        QVERIFY(colours.size() > 10);
    } else if (ext == "svg") {
        QVERIFY(bytes.contains("<svg"));
        QSvgRenderer svg(bytes);
        QVERIFY(svg.isValid());
        QCOMPARE(svg.viewBox(), QRect(QPoint(0, 0), size));
        // The page is given in mm for 96 dpi, as browsers read it.
        static const QRegularExpression mm(
            QStringLiteral("<svg[^>]*width=\"([0-9.]+)mm\"\\s+height=\"([0-9.]+)mm\""));
        const auto m = mm.match(QString::fromUtf8(bytes));
        QVERIFY2(m.hasMatch(), "no width and height in mm");
        QCOMPARE(qRound(m.captured(1).toDouble() / 25.4 * 96), size.width());
        QCOMPARE(qRound(m.captured(2).toDouble() / 25.4 * 96), size.height());
    } else {
        QVERIFY(bytes.startsWith("%PDF-"));
        QVERIFY(bytes.trimmed().endsWith("%%EOF"));
        static const QRegularExpression box(
            QStringLiteral("/MediaBox\\s*\\[\\s*0\\s+0\\s+([0-9.]+)\\s+([0-9.]+)\\s*\\]"));
        const auto m = box.match(QString::fromLatin1(bytes));
        QVERIFY2(m.hasMatch(), "no page size in the PDF");
        QCOMPARE(qRound(m.captured(1).toDouble()), size.width());
        QCOMPARE(qRound(m.captured(2).toDouble()), size.height());
    }
}

struct Run {
    int code = -1;
    QString err;
};

Run runKvbe(const QStringList& args) {
    QProcess p;
    auto env = QProcessEnvironment::systemEnvironment();
    // As on a server: no display, no platform chosen; kvbe must pick offscreen itself.
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.remove("QT_QPA_PLATFORM");
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(KVBE_GUI_PATH), args);
    if (!p.waitForFinished(120000)) {
        p.kill();
        p.waitForFinished();
        return {};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
            QString::fromLocal8Bit(p.readAllStandardError())};
}

} // namespace

class TestUiExport : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        QVERIFY(m_dir.isValid());
        // The illustrative scenario: its preset tiers' nominal-t_fixed note is what an export
        // must keep without the note's on-screen hint.
        m_window = makeIllustrativeWindow();
    }
    void cleanupTestCase() {
        m_window.reset();
        QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); // export copies included
    }

    void eachChartExportsEachFormat_data() {
        QTest::addColumn<QString>("chart");
        QTest::addColumn<QString>("ext");
        for (const QString& c : chartKeys(ChartSource::Scenario))
            for (const char* e : {"png", "svg", "pdf"})
                QTest::newRow(qPrintable(c + "." + e)) << c << QString(e);
    }
    void eachChartExportsEachFormat() {
        QFETCH(QString, chart);
        QFETCH(QString, ext);
        const QString path = m_dir.filePath(chart + "." + ext);
        const QSize size(900, 500);
        const auto st = exportChart(*chartOf(m_window, chart), path, size);
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        expectValidFile(path, size);
    }

    void pngCarriesItsResolution() {
        const QString path = m_dir.filePath("dpi.png");
        QVERIFY(exportChart(*chartOf(m_window, "ttft"), path, QSize(640, 360), 300).ok());
        const QImage img(path);
        QCOMPARE(img.size(), QSize(640, 360));
        QCOMPARE(qRound(img.dotsPerMeterX() * 0.0254), 300);
    }

    // The chart table is the one list: every chart it names is made from it and answers to its
    // key and title, the window's tabs are its scenario charts in its order, the Workload view's
    // tabs its trace charts, and `kvbe --help` names every key.
    void chartTableIsTheOneList() {
        QStringList all;
        for (const auto& k : chartKinds()) {
            QVERIFY2(!all.contains(k.key), qPrintable(k.key));
            all << k.key;
            auto c = createChart(k.key);
            QVERIFY(c);
            QCOMPARE(c->key(), k.key);
            QVERIFY(!c->title().isEmpty());
            QCOMPARE(chartKindOf(*c), &k);
        }
        QCOMPARE(all.size(), 13);
        auto* tabs = child<QTabWidget>(&*m_window, QStringLiteral("chartTabs"));
        const QStringList scenarioKeys = chartKeys(ChartSource::Scenario);
        for (int i = 0; i < scenarioKeys.size(); ++i) {
            QCOMPARE(tabs->tabText(i), QString::fromUtf8(findChartKind(scenarioKeys[i])->title));
            QVERIFY(chartOf(m_window, scenarioKeys[i]));
        }
        auto* workloadTabs = child<QTabWidget>(&*m_window, QStringLiteral("workloadCharts"));
        const QStringList traceKeys = chartKeys(ChartSource::Trace);
        // One tab a chart, but the links over time share the TTFT distribution's tab.
        QCOMPARE(workloadTabs->count(), traceKeys.size() - 1);
        // Each tab is its chart, or holds it (the Capacity tab holds its field below it, the TTFT
        // tab the links under the distribution).
        for (int i = 0, tab = 0; i < traceKeys.size(); ++i) {
            if (traceKeys[i] == QLatin1String("workload-links")) {
                QWidget* ttft = workloadTabs->widget(tab - 1);
                QVERIFY(ttft->findChild<ChartView*>(QStringLiteral("workload-ttft")));
                QVERIFY(ttft->findChild<ChartView*>(traceKeys[i]));
                continue;
            }
            QWidget* page = workloadTabs->widget(tab++);
            QVERIFY2(page->objectName() == traceKeys[i] ||
                         page->findChild<ChartView*>(traceKeys[i]),
                     qPrintable(traceKeys[i]));
        }
        QProcess help;
        help.start(QStringLiteral(KVBE_GUI_PATH), {"--help"});
        QVERIFY(help.waitForFinished(60000));
        const QString text = QString::fromLocal8Bit(help.readAllStandardOutput()).simplified();
        for (const QString& key : all)
            QVERIFY2(text.contains(key), qPrintable(key));
    }

    // An export is for a slide (issue 40): the nominal note stays, its on-screen hint ("File ▸
    // Built-in scenarios has one fitted to the study") does not; the screen keeps it.
    void exportsLeaveOutOnScreenHints() {
        auto* c = chartOf(m_window, "breakeven");
        QVERIFY2(c->chart()->title().contains(QStringLiteral("Built-in scenarios")),
                 qPrintable(c->chart()->title()));
        const QString path = m_dir.filePath(QStringLiteral("slide.svg"));
        QVERIFY(exportChart(*c, path, QSize(1600, 900)).ok());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString svg = QString::fromUtf8(f.readAll());
        QVERIFY(svg.contains(QStringLiteral("per-hit overhead that dominates short prompts")));
        QVERIFY(!svg.contains(QStringLiteral("Built-in scenarios")));
        QVERIFY(!svg.contains(QStringLiteral("▸")));
    }

    void exportKeepsWhatTheUserDid() {
        auto* c = chartOf(m_window, "breakeven");
        c->setSeriesHidden("bstar", true);
        auto copy = createChart("breakeven");
        copy->copyStateFrom(*c);
        QVERIFY(copy->isSeriesHidden("bstar"));
        QCOMPARE(copy->seriesByKey("bstar")->points(), c->seriesByKey("bstar")->points());
        c->setSeriesHidden("bstar", false);
    }

    void csvHoldsTheDataBehindTheChart() {
        const QString path = m_dir.filePath("breakeven.csv");
        QVERIFY(exportCsv(*chartOf(m_window, "breakeven"), path).ok());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), qsizetype(explorerOf(m_window)->result()->curves.tokens.size() + 1));
        QVERIFY(lines.front().contains("tokens"));
        const QString models = chartOf(m_window, "models")->csv();
        QVERIFY(models.startsWith("model,params_total"));
        QCOMPARE(models.count('\n'), qsizetype(presets().models().size() + 1));
        QVERIFY(chartOf(m_window, "frontier")->csv().count('\n') ==
                qsizetype(kFrontierTokens * kFrontierFractions + 1));
        QVERIFY(!exportCsv(*chartOf(m_window, "ttft"), "/nonexistent-dir/x.csv").ok());
    }

    void copyPutsAnImageOnTheClipboard() {
        QGuiApplication::clipboard()->clear();
        m_window->copyToClipboard();
        QVERIFY(!QGuiApplication::clipboard()->image().isNull());
    }

    void exportRefusesWhatItCannotWrite() {
        auto st =
            exportChart(*chartOf(m_window, "ttft"), m_dir.filePath("chart.jpg"), QSize(400, 300));
        QVERIFY(!st.ok());
        QVERIFY(QString::fromStdString(st.message()).contains(".png, .svg or .pdf"));
        st = exportChart(*chartOf(m_window, "ttft"), "/nonexistent-dir/chart.svg", QSize(400, 300));
        QVERIFY(!st.ok());
        QVERIFY(QString::fromStdString(st.message()).startsWith("cannot write"));
        QCOMPARE(parseExportSize("1600x900"), std::optional<QSize>(QSize(1600, 900)));
        QVERIFY(!parseExportSize("10x10"));
        QVERIFY(!parseExportSize("wide"));
    }

    void headlessExportWithoutADisplay_data() {
        QTest::addColumn<QString>("chart");
        QTest::addColumn<QString>("ext");
        QTest::newRow("breakeven png") << "breakeven"
                                       << "png";
        QTest::newRow("frontier svg") << "frontier"
                                      << "svg";
        QTest::newRow("models pdf") << "models"
                                    << "pdf";
    }
    void headlessExportWithoutADisplay() {
        QFETCH(QString, chart);
        QFETCH(QString, ext);
        const QString out = m_dir.filePath("headless-" + chart + "." + ext);
        const auto r =
            runKvbe({"--scenario", KVBE_SOURCE_DIR "/resources/scenarios/default.kvbe.json",
                     "--chart", chart, "--export", out, "--size", "800x450"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        expectValidFile(out, QSize(800, 450));
    }

    // kvbe --import with --export draws the files as the window does: a py-kvcache v2 file's
    // implied B* on the break-even chart, a node's measured curves on the TTFT chart, named in
    // the legend (the SVG's text). Before, the export silently left them out.
    void headlessExportDrawsImports_data() {
        QTest::addColumn<QString>("chart");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("says");
        QTest::newRow("breakeven, v2 file") << "breakeven"
                                            << "pykvcache-v2-implied.json"
                                            << "pykvcache-v2-implied.json, SSD: measured B*";
        QTest::newRow("ttft, node file") << "ttft"
                                         << "kvbe-node17.json"
                                         << "node17: measured";
    }
    void headlessExportDrawsImports() {
        QFETCH(QString, chart);
        QFETCH(QString, file);
        QFETCH(QString, says);
        const QString out = m_dir.filePath("imported-" + chart + ".svg");
        const auto r = runKvbe({"--import", QStringLiteral(KVBE_FIXTURES "/calibration/") + file,
                                "--chart", chart, "--export", out, "--size", "1600x900"});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile svg(out);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(svg.readAll());
        QVERIFY2(text.contains(says.toHtmlEscaped()), qPrintable(says));
    }

    // --import of a folder reads the calibration files in it, as the window and kvbe-cli do: a
    // notes file beside them is not read as one (it failed the export before).
    void headlessImportOfAFolder() {
        QTemporaryDir dir;
        QVERIFY(QFile::copy(QStringLiteral(KVBE_FIXTURES "/calibration/kvbe-node17.json"),
                            dir.filePath("kvbe-node17.json")));
        QFile notes(dir.filePath("notes.txt"));
        QVERIFY(notes.open(QIODevice::WriteOnly));
        notes.write("node17 was rebooted before the run\n");
        notes.close();
        const QString out = m_dir.filePath("imported-folder.svg");
        const auto r = runKvbe({"--import", dir.path(), "--chart", "ttft", "--export", out});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QFile svg(out);
        QVERIFY(svg.open(QIODevice::ReadOnly));
        QVERIFY(QString::fromUtf8(svg.readAll()).contains(QStringLiteral("node17: measured")));
    }

    void headlessExportFailsWithOneSentence_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("says");
        QTest::addColumn<int>("code"); // 1 bad input, 2 an unknown option (as kvbe-cli)
        const QString ok = m_dir.filePath("never.png");
        QTest::newRow("unknown chart")
            << QStringList{"--chart", "pie", "--export", ok} << "unknown chart 'pie'" << 1;
        QTest::newRow("unknown format")
            << QStringList{"--export", m_dir.filePath("x.jpg")} << ".png, .svg or .pdf" << 1;
        QTest::newRow("bad size") << QStringList{"--export", ok, "--size", "huge"}
                                  << "--size must look like" << 1;
        QTest::newRow("missing scenario")
            << QStringList{"--scenario", "/nonexistent.kvbe.json", "--export", ok}
            << "/nonexistent.kvbe.json" << 1;
        QTest::newRow("unknown option") << QStringList{"--colour", "red"} << "colour" << 2;
        QTest::newRow("unwritable")
            << QStringList{"--export", "/nonexistent-dir/x.png"} << "cannot write" << 1;
        // The workload charts draw no calibration files: refused, not drawn without them.
        QTest::newRow("imports with a trace")
            << QStringList{"--import", QStringLiteral(KVBE_FIXTURES "/calibration"),
                           "--trace",  "t.jsonl",
                           "--chart",  "workload-ttft",
                           "--export", ok}
            << "--import draws on the scenario charts" << 1;
        // What a chart can draw comes from the chart table: imports go on the charts that draw
        // them, --tier on the chart drawn for one tier.
        QTest::newRow("imports on the model size chart")
            << QStringList{"--import",
                           QStringLiteral(KVBE_FIXTURES "/calibration/kvbe-node17.json"),
                           "--chart",
                           "models",
                           "--export",
                           ok}
            << "--import draws on the breakeven, fraction or ttft charts, not on models" << 1;
        QTest::newRow("tier of the break-even chart")
            << QStringList{"--tier", "2", "--chart", "breakeven", "--export", ok}
            << "--tier picks the tier of the frontier chart" << 1;
        QTest::newRow("tier past the scenario's")
            << QStringList{"--tier", "9", "--chart", "frontier", "--export", ok}
            << "--tier 9: the scenario has" << 1;
        QTest::newRow("unreadable import")
            << QStringList{"--import", "/nonexistent-node.json", "--export", ok}
            << "/nonexistent-node.json" << 1;
        QTest::newRow("window without a display")
            << QStringList{} << "no display to open the window on" << 1;
    }

    void versionNeedsNoDisplay() { QCOMPARE(runKvbe({"--version"}).code, 0); }
    void headlessExportFailsWithOneSentence() {
        QFETCH(QStringList, args);
        QFETCH(QString, says);
        QFETCH(int, code);
        const auto r = runKvbe(args);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(says), qPrintable(r.err));
        QCOMPARE(r.err.trimmed().count('\n'), 0);
        QVERIFY(!QFile::exists(m_dir.filePath("never.png")));
    }

  private:
    QTemporaryDir m_dir;
    std::unique_ptr<MainWindow> m_window;
};

QTEST_MAIN(TestUiExport)
#include "tst_ui_export.moc"
