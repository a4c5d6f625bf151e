// The scenario fields that lived only in scenario files (parameter count,
// utilisation ramp, host link, measured prefill table) in the panel's Advanced section. Each sets
// the scenario, changes the result as core computes it, undoes, refuses bad text with a message
// naming the field, and shows what a loaded scenario file holds.
#include "ui_test_support.h"

#include "kvbe/base/interpolation.h"
#include "kvbe/ui/charts/ttft_chart.h"
#include "kvbe/ui/scenario/number_field.h"

#include <QFile>
#include <QPushButton>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QToolButton>
#include <QUndoStack>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// As if pasted, then Return: one edit with the whole text, one undo step.
void typeInto(NumberField* f, const QString& text) {
    f->edit()->setText(text);
    emit f->edit()->textEdited(text);
    emit f->edit()->editingFinished();
}

// The recompute curve on the TTFT chart is core's, point for point (ms).
void expectMissCurve(MainWindow* w) {
    const auto ref = reference(explorerOf(w)->scenario());
    const auto pts = chartOf(w, "ttft")->seriesByKey(QStringLiteral("miss"))->points();
    QCOMPARE(size_t(pts.size()), ref.curves.tokens.size());
    for (size_t i = 0; i < ref.curves.tokens.size(); i += 37) {
        QCOMPARE(pts[qsizetype(i)].x(), ref.curves.tokens[i]);
        QVERIFY2(sameValue(pts[qsizetype(i)].y(), ref.curves.tMiss[i] * 1e3),
                 qPrintable(QStringLiteral("at N = %1: chart %2 ms, core %3 ms")
                                .arg(ref.curves.tokens[i])
                                .arg(pts[qsizetype(i)].y())
                                .arg(ref.curves.tMiss[i] * 1e3)));
    }
}

const CostModel& costOf(MainWindow* w) {
    return explorerOf(w)->result()->eval->cost;
}

void setCell(QTableWidget* t, int row, int column, const QString& text) {
    t->model()->setData(t->model()->index(row, column), text, Qt::EditRole);
}

void writeFile(const QString& path, const QByteArray& text) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

} // namespace

class TestPanelFields : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }

    void theAdvancedFieldsStartFoldedAndEmpty() {
        auto w = makeWindow();
        auto p = panelOf(w);
        auto* advanced = p.get<QWidget>("advanced");
        QVERIFY(!advanced->isVisibleTo(p.panel));
        p.get<QToolButton>("advancedToggle")->click();
        QVERIFY(advanced->isVisibleTo(p.panel));
        // Empty fields, their defaults as placeholders: the model's P, the preset's host link.
        auto* params = p.get<NumberField>("paramsOverride");
        QVERIFY(params->edit()->text().isEmpty());
        QVERIFY2(params->edit()->placeholderText().contains(QStringLiteral("model's: 3.21B")),
                 qPrintable(params->edit()->placeholderText()));
        auto* link = p.get<NumberField>("hostLink");
        QVERIFY(link->edit()->text().isEmpty());
        const double presetLink = presets().findGpu("h100-sxm")->hostLinkBps / 1e9;
        QVERIFY2(link->edit()->placeholderText().contains(QString::number(presetLink)),
                 qPrintable(link->edit()->placeholderText()));
        QVERIFY(p.get<NumberField>("rampHalfTokens")->edit()->text().isEmpty());
        QCOMPARE(p.get<QTableWidget>("prefillTable")->rowCount(), 0);
        QVERIFY(p.get<QLabel>("prefillState")->text().startsWith(QStringLiteral("Analytic")));
    }

    void theHostLinkSetsAStagedTiersBandwidth() {
        auto w = makeIllustrativeWindow(); // its NVMe tiers are staged through the host link
        auto* link = panelOf(w).get<NumberField>("hostLink");
        const auto& tiers = explorerOf(w)->scenario().tiers;
        QVERIFY(tiers[1].staging == Staging::Pipelined);
        const double before = explorerOf(w)->result()->eval->tiers[1].bandwidthBps;
        QVERIFY(tiers[1].bandwidthGBps > 5);

        typeInto(link, QStringLiteral("5"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().hostLinkGBps.value(), 5.0);
        // Pipelined through a 5 GB/s link: min(tier, link), as core stages it.
        const auto& staged = explorerOf(w)->result()->eval->tiers[1];
        QCOMPARE(staged.bandwidthBps,
                 stagedBandwidth(tiers[1].bandwidthGBps * 1e9, 5e9, Staging::Pipelined));
        QCOMPARE(staged.bandwidthBps, 5e9);
        const auto ref = reference(explorerOf(w)->scenario());
        const auto hit = chartOf(w, "ttft")->seriesByKey(QStringLiteral("tier/1/hit"))->points();
        QVERIFY(!hit.isEmpty());
        QVERIFY(sameValue(hit.back().y(), ref.curves.tiers[1].tHit.back() * 1e3));

        explorerOf(w)->undoStack()->undo();
        w->refreshNow();
        QVERIFY(!explorerOf(w)->scenario().hostLinkGBps);
        QVERIFY(link->edit()->text().isEmpty());
        QCOMPARE(explorerOf(w)->result()->eval->tiers[1].bandwidthBps, before);

        // Not a bandwidth: refused with the field's name and what it takes; nothing changes.
        typeInto(link, QStringLiteral("fast"));
        QVERIFY2(panelOf(w).messageText().contains(QStringLiteral("Host link must be a number "
                                                                  "of GB/s")),
                 qPrintable(panelOf(w).messageText()));
        QVERIFY(!explorerOf(w)->scenario().hostLinkGBps);
        typeInto(link, QStringLiteral("40"));
        QVERIFY(panelOf(w).messageText().isEmpty());
        QCOMPARE(explorerOf(w)->scenario().hostLinkGBps.value(), 40.0);
        // Emptied, the preset's link applies again.
        typeInto(link, QString());
        QVERIFY(!explorerOf(w)->scenario().hostLinkGBps);
    }

    void theParameterCountScalesTheLinearTerm() {
        auto w = makeWindow();
        QVERIFY(explorerOf(w)->scenario().flopModel == FlopModel::Simple);
        auto* params = panelOf(w).get<NumberField>("paramsOverride");
        const double n = 8192;
        const double p0 = costOf(w.get()).simpleParams();
        const double t0 = costOf(w.get()).tMiss(n);

        typeInto(params, QStringLiteral("70B"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().paramsOverride.value(), 70e9);
        QCOMPARE(costOf(w.get()).simpleParams(), 70e9);
        // t_miss = (2·P·N + attention) / (peak · u): only the 2·P·N term moves, in proportion.
        const auto& in = costOf(w.get()).inputs();
        const double rate = in.peakFlops * in.utilisation * in.tensorParallel;
        QVERIFY(sameValue(costOf(w.get()).tMiss(n) - t0, 2 * (70e9 - p0) * n / rate, 1e-9));
        expectMissCurve(w.get());

        // "3.21e9" as --params takes it.
        typeInto(params, QStringLiteral("3.21e9"));
        QCOMPARE(explorerOf(w)->scenario().paramsOverride.value(), 3.21e9);

        // A count no model has is refused too ("7" on the way to "70B").
        typeInto(params, QStringLiteral("7"));
        QVERIFY2(panelOf(w).messageText().contains(QStringLiteral("under a million")),
                 qPrintable(panelOf(w).messageText()));
        QCOMPARE(explorerOf(w)->scenario().paramsOverride.value(), 3.21e9);
        typeInto(params, QStringLiteral("70Q"));
        QVERIFY2(panelOf(w).messageText().startsWith(QStringLiteral("Parameters: ")) &&
                     panelOf(w).messageText().contains(QStringLiteral("B (×1e9)")),
                 qPrintable(panelOf(w).messageText()));
        QCOMPARE(explorerOf(w)->scenario().paramsOverride.value(), 3.21e9);

        explorerOf(w)->undoStack()->undo();
        QCOMPARE(explorerOf(w)->scenario().paramsOverride.value(), 70e9);
        QCOMPARE(params->edit()->text(), QStringLiteral("70B"));
        explorerOf(w)->undoStack()->undo();
        w->refreshNow();
        QVERIFY(!explorerOf(w)->scenario().paramsOverride);
        QVERIFY(params->edit()->text().isEmpty());
        QCOMPARE(costOf(w.get()).tMiss(n), t0);
    }

    void theUtilisationRampSlowsShortPrompts() {
        auto w = makeWindow();
        auto* ramp = panelOf(w).get<NumberField>("rampHalfTokens");
        const double n = 2048;
        const double t0 = costOf(w.get()).tMiss(n);
        typeInto(ramp, QStringLiteral("8k"));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().rampHalfTokens.value(), 8192.0);
        // u(N) = u · N / (N + n½): the cold time grows by (N + n½) / N.
        QVERIFY(sameValue(costOf(w.get()).tMiss(n), t0 * (n + 8192) / n, 1e-9));
        expectMissCurve(w.get());

        typeInto(ramp, QStringLiteral("soon"));
        QVERIFY2(panelOf(w).messageText().startsWith(QStringLiteral("Utilisation ramp n½: ")) &&
                     panelOf(w).messageText().contains(QStringLiteral("token count")),
                 qPrintable(panelOf(w).messageText()));
        QCOMPARE(explorerOf(w)->scenario().rampHalfTokens.value(), 8192.0);

        explorerOf(w)->undoStack()->undo();
        w->refreshNow();
        QVERIFY(!explorerOf(w)->scenario().rampHalfTokens);
        QCOMPARE(costOf(w.get()).tMiss(n), t0);
    }

    void aMeasuredTableDrivesTheRecomputeTime() {
        auto w = makeWindow();
        auto p = panelOf(w);
        auto* table = p.get<QTableWidget>("prefillTable");
        auto* add = p.get<QPushButton>("addPrefillRow");
        const double t0 = costOf(w.get()).tMiss(4096);
        add->click();
        add->click();
        QCOMPARE(table->rowCount(), 2);
        // Each new row has its cells, the first ready for typing.
        QVERIFY(table->item(1, 0) && table->item(1, 1));
        QCOMPARE(table->currentRow(), 1);
        setCell(table, 0, 0, QStringLiteral("1k"));
        setCell(table, 0, 1, QStringLiteral("100ms"));
        // One row is no table yet: the message says what it takes, the model stays analytic.
        QVERIFY2(p.messageText().contains(QStringLiteral("at least 2")),
                 qPrintable(p.messageText()));
        QVERIFY(explorerOf(w)->scenario().measuredPrefill.empty());
        setCell(table, 1, 0, QStringLiteral("32768"));
        setCell(table, 1, 1, QStringLiteral("4"));
        w->refreshNow();
        QVERIFY(p.messageText().isEmpty());
        const std::vector<std::pair<double, double>> points{{1024, 0.1}, {32768, 4}};
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);
        // The recompute time goes through the table's points, and between them as core says.
        QVERIFY(!costOf(w.get()).analytic());
        QVERIFY(sameValue(costOf(w.get()).tMiss(1024), 0.1));
        QVERIFY(sameValue(costOf(w.get()).tMiss(32768), 4));
        QVERIFY(sameValue(costOf(w.get()).tMiss(4096), (*PrefillTable::create(points))(4096)));
        expectMissCurve(w.get());
        QVERIFY(p.get<QLabel>("prefillState")->text().startsWith(QStringLiteral("Measured: 2")));

        // A bad cell is refused by row and column; the table in force stays.
        setCell(table, 1, 1, QStringLiteral("fast"));
        QVERIFY2(p.messageText().startsWith(QStringLiteral("Measured prefill, row 2, seconds: ")),
                 qPrintable(p.messageText()));
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);
        setCell(table, 1, 1, QStringLiteral("0.05"));
        QVERIFY2(p.messageText().contains(QStringLiteral("grow with length")),
                 qPrintable(p.messageText()));
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);

        // Back to analytic with one click; undo brings the table back.
        p.get<QPushButton>("analyticPrefill")->click();
        w->refreshNow();
        QVERIFY(explorerOf(w)->scenario().measuredPrefill.empty());
        QCOMPARE(table->rowCount(), 0);
        QVERIFY(costOf(w.get()).analytic());
        QCOMPARE(costOf(w.get()).tMiss(4096), t0);
        explorerOf(w)->undoStack()->undo();
        w->refreshNow();
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);
        QCOMPARE(table->rowCount(), 2);
        explorerOf(w)->undoStack()->undo();
        QVERIFY(explorerOf(w)->scenario().measuredPrefill.empty());
    }

    void aCsvFileImportsAMeasuredTable() {
        QTemporaryDir dir;
        auto w = makeWindow();
        auto p = panelOf(w);
        const QString good = dir.filePath(QStringLiteral("prefill.csv"));
        writeFile(good, "tokens,seconds\n1024,0.1\n8k,800ms\n\n32768,4\n");
        QVERIFY(p.panel->importPrefillTable(good));
        w->refreshNow();
        const std::vector<std::pair<double, double>> points{{1024, 0.1}, {8192, 0.8}, {32768, 4}};
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);
        QCOMPARE(p.get<QTableWidget>("prefillTable")->rowCount(), 3);
        QVERIFY(p.get<QWidget>("advanced")->isVisibleTo(p.panel));
        QVERIFY(sameValue(costOf(w.get()).tMiss(8192), 0.8));

        const QString bad = dir.filePath(QStringLiteral("bad.csv"));
        writeFile(bad, "1024,0.1\n2048,fast\n");
        QVERIFY(!p.panel->importPrefillTable(bad));
        QVERIFY2(p.messageText().contains(QStringLiteral("bad.csv, line 2, seconds")),
                 qPrintable(p.messageText()));
        writeFile(bad, "1024,0.5\n2048,0.4\n");
        QVERIFY(!p.panel->importPrefillTable(bad));
        QVERIFY2(p.messageText().contains(QStringLiteral("expected it to grow with length")),
                 qPrintable(p.messageText()));
        QCOMPARE(explorerOf(w)->scenario().measuredPrefill, points);
        QVERIFY(!p.panel->importPrefillTable(dir.filePath(QStringLiteral("missing.csv"))));
        QVERIFY(p.messageText().contains(QStringLiteral("cannot read missing.csv")));
    }

    void aLoadedScenarioShowsItsAdvancedFields() {
        QTemporaryDir dir;
        auto s = defaultScenario(presets());
        QVERIFY(s.ok());
        s->paramsOverride = 70e9;
        s->rampHalfTokens = 4096;
        s->hostLinkGBps = 20;
        s->measuredPrefill = {{1024, 0.1}, {8192, 0.9}, {32768, 4.5}};
        const QString path = dir.filePath(QStringLiteral("advanced.kvbe.json"));
        QVERIFY(saveScenario(path.toStdString(), *s).ok());

        auto w = makeWindow();
        QVERIFY(w->openFile(path).ok());
        w->refreshNow();
        auto p = panelOf(w);
        QVERIFY(p.get<QWidget>("advanced")->isVisibleTo(p.panel));
        QCOMPARE(p.get<NumberField>("paramsOverride")->edit()->text(), QStringLiteral("70B"));
        QCOMPARE(p.get<NumberField>("rampHalfTokens")->edit()->text(), QStringLiteral("4096"));
        QCOMPARE(p.get<NumberField>("hostLink")->edit()->text(), QStringLiteral("20"));
        auto* table = p.get<QTableWidget>("prefillTable");
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->item(1, 0)->text(), QStringLiteral("8192"));
        QCOMPARE(table->item(1, 1)->text(), QStringLiteral("0.9"));
        QVERIFY(p.get<QLabel>("prefillState")->text().startsWith(QStringLiteral("Measured: 3")));
        QCOMPARE(explorerOf(w)->result()->eval->hostLinkBps, 20e9);
    }
};

QTEST_MAIN(TestPanelFields)
#include "tst_ui_panel_fields.moc"
