// The Pin table tab: B* at chosen lengths and p* per tier for the current scenario and
// every pin, with differences against the current one; CSV and image exports. Every number is
// held to core's, computed here for each scenario on its own.
#include "ui_test_support.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QPushButton>
#include <QTemporaryDir>

#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/compare/pin_table.h"

#include <cmath>

using namespace kvbe;
using namespace kvbe::test;

namespace {

using State = CompareValue::State;

PinTableView* pinTableOf(MainWindow* w) {
    return child<PinTableView>(w, QStringLiteral("pinTable"));
}
QAbstractItemModel* tableModelOf(MainWindow* w) {
    return child<QTableView>(w, QStringLiteral("pinTableView"))->model();
}
QVariant cell(MainWindow* w, int row, int column, int role = Qt::DisplayRole) {
    auto* m = tableModelOf(w);
    return m->data(m->index(row, column), role);
}
QString header(MainWindow* w, int column) {
    return tableModelOf(w)->headerData(column, Qt::Horizontal, Qt::DisplayRole).toString();
}
// The table's column of a tier, by its title.
int tierColumn(MainWindow* w, const QString& tier) {
    for (int c = 1; c < tableModelOf(w)->columnCount(); ++c)
        if (header(w, c).replace(QLatin1Char('\n'), QLatin1Char(' ')) ==
            QStringLiteral("p*, tokens ") + tier)
            return c;
    return -1;
}

void pickGpu(MainWindow* w, const QString& key) {
    panelOf(w).pickGpu(key);
    w->refreshNow();
}

// Core's B* (GB/s) and p* (tokens, whole up) for a scenario, without the window.
double coreBstar(const Scenario& s, double n) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("%s", e.message().c_str());
    return *e->cost.breakevenBandwidth(n) / 1e9;
}
std::optional<double> corePstar(const Scenario& s, size_t tier) {
    auto e = evaluate(s, presets());
    if (!e) qFatal("%s", e.message().c_str());
    const auto p = e->cost.breakevenPrefix(e->tiers[tier]);
    if (!p) return std::nullopt;
    return std::ceil(*p);
}

// RFC 4180 fields of one line: quoted fields may hold commas and doubled quotes.
QStringList csvFields(const QString& line) {
    QStringList out;
    QString field;
    bool quoted = false;
    for (int i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out << field;
            field.clear();
        } else {
            field += c;
        }
    }
    out << field;
    return out;
}

} // namespace

class TestUiPinTable : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() { isolateSettings(); }
    void init() { QSettings().clear(); }
    void cleanup() { QTRY_VERIFY(QApplication::topLevelWidgets().isEmpty()); }

    void valuesAndDifferencesAreCores() {
        auto w = makeIllustrativeWindow(); // three tiers, u = 50 %
        auto* model = tableModelOf(w.get());
        QAbstractItemModelTester tester(model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 1); // the current scenario alone
        const Scenario small = explorerOf(w)->scenario();
        QVERIFY(w->pinCurrent(QStringLiteral("3B on H100")));
        QCOMPARE(model->rowCount(), 2); // live: the pin joined

        QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        pickGpu(w.get(), QStringLiteral("h200"));
        const Scenario big = explorerOf(w)->scenario();
        QCOMPARE(QString::fromStdString(big.gpu), QStringLiteral("h200"));
        QVERIFY(w->pinCurrent(QStringLiteral("70B on H200")));
        QCOMPARE(model->rowCount(), 3);
        QCOMPARE(model->headerData(0, Qt::Vertical).toString(), QStringLiteral("Current"));
        QCOMPARE(model->headerData(2, Qt::Vertical).toString(), QStringLiteral("Pin 2"));
        QCOMPARE(cell(w.get(), 1, 0).toString(), QStringLiteral("3B on H100"));
        QCOMPARE(cell(w.get(), 0, 0).toString(), explorerOf(w)->labelFor(big));

        // Scenario, B* at 4k, 32k and 128k, p* of the default's three tiers.
        QCOMPARE(model->columnCount(), 7);
        QCOMPARE(header(w.get(), 1), QStringLiteral("B*, GB/s\nat 4k"));
        QCOMPARE(header(w.get(), 3), QStringLiteral("B*, GB/s\nat 128k"));
        QCOMPARE(header(w.get(), 4), QStringLiteral("p*, tokens\nHost DRAM\n(PCIe 5.0)"));
        const double lengths[] = {4096, 32768, 131072};
        for (int j = 0; j < 3; ++j) {
            const double b3 = coreBstar(small, lengths[j]);
            const double b70 = coreBstar(big, lengths[j]);
            QVERIFY(sameValue(cell(w.get(), 0, j + 1, PinTableModel::ValueRole).toDouble(), b70));
            QVERIFY(sameValue(cell(w.get(), 1, j + 1, PinTableModel::ValueRole).toDouble(), b3));
            // A 3B model needs more bandwidth than a 70B one: the pin's Δ is positive.
            const double d = cell(w.get(), 1, j + 1, PinTableModel::DeltaRole).toDouble();
            QVERIFY(d > 0);
            QVERIFY(sameValue(d, b3 - b70));
            QVERIFY(sameValue(cell(w.get(), 1, j + 1, PinTableModel::DeltaPercentRole).toDouble(),
                              (b3 - b70) / b70 * 100));
            // The pin equal to the current scenario differs by nothing.
            QCOMPARE(cell(w.get(), 2, j + 1, PinTableModel::DeltaRole).toDouble(), 0.0);
        }
        // On screen: the value with its unit; a pin's Δ under it, with its sign and %.
        const QString current = cell(w.get(), 0, 1).toString();
        QVERIFY2(current.endsWith(QStringLiteral(" GB/s")) && !current.contains('\n'),
                 qPrintable(current));
        const QString pinned = cell(w.get(), 1, 1).toString();
        const QStringList lines = pinned.split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[1].startsWith(QLatin1Char('+')) &&
                     lines[1].endsWith(QStringLiteral(" GB/s")),
                 qPrintable(pinned));
        QVERIFY2(lines[2].startsWith(QLatin1Char('+')) && lines[2].endsWith(QStringLiteral(" %")),
                 qPrintable(pinned));
        // Unpinned, the row goes.
        explorerOf(w)->pins()->unpin(1);
        QCOMPARE(model->rowCount(), 2);

        // p* per tier, matched by preset, against core's break-even prefix.
        const QStringList tiers{QStringLiteral("Host DRAM (PCIe 5.0)"),
                                QStringLiteral("NVMe (PCIe 5.0)"),
                                QStringLiteral("NVMe (PCIe 4.0)")};
        for (int i = 0; i < 3; ++i) {
            const int c = tierColumn(w.get(), tiers[i]);
            QVERIFY2(c > 0, qPrintable(tiers[i]));
            const auto p3 = corePstar(small, size_t(i));
            const auto p70 = corePstar(big, size_t(i));
            QVERIFY(p3 && p70);
            QCOMPARE(cell(w.get(), 0, c, PinTableModel::ValueRole).toDouble(), *p70);
            QCOMPARE(cell(w.get(), 1, c, PinTableModel::ValueRole).toDouble(), *p3);
            QCOMPARE(cell(w.get(), 1, c, PinTableModel::DeltaRole).toDouble(), *p3 - *p70);
            QVERIFY(cell(w.get(), 0, c).toString().endsWith(QStringLiteral(" tokens")));
        }

        // Live: the scenario changes, the current row follows; the pin keeps its numbers.
        pickGpu(w.get(), QStringLiteral("h100-sxm"));
        QVERIFY(sameValue(cell(w.get(), 0, 2, PinTableModel::ValueRole).toDouble(),
                          coreBstar(explorerOf(w)->scenario(), 32768)));
        QVERIFY(sameValue(cell(w.get(), 1, 2, PinTableModel::ValueRole).toDouble(),
                          coreBstar(small, 32768)));
        explorerOf(w)->pins()->clear();
        QCOMPARE(model->rowCount(), 1);
    }

    void aTierAScenarioLacksShowsADashAndNeverIsSaid() {
        auto w = makeIllustrativeWindow(); // three tiers, u = 50 %
        QVERIFY(w->pinCurrent(QStringLiteral("three tiers")));
        // The current scenario drops the PCIe 4.0 drive and gets a tier too slow to pay off.
        Scenario s = explorerOf(w)->scenario();
        s.tiers.pop_back();
        TierConfig slow;
        slow.name = "Tape, slowly";
        slow.bandwidthGBps = 0.001;
        slow.tFixedMs = 1000;
        s.tiers.push_back(slow);
        explorerOf(w)->edit(s, QStringLiteral("tiers"));
        w->refreshNow();
        auto* model = tableModelOf(w.get());
        QCOMPARE(model->columnCount(), 1 + 3 + 4);
        const int gen4 = tierColumn(w.get(), QStringLiteral("NVMe (PCIe 4.0)"));
        const int tape = tierColumn(w.get(), QStringLiteral("Tape, slowly"));
        QVERIFY(gen4 > 0 && tape > 0);
        QCOMPARE(cell(w.get(), 0, gen4).toString(), QStringLiteral("—"));
        QCOMPARE(cell(w.get(), 0, gen4, PinTableModel::StateRole).toInt(), int(State::NoTier));
        QVERIFY(!cell(w.get(), 0, gen4, PinTableModel::ValueRole).isValid());
        // The pin has the drive, but there is nothing to take a difference from.
        QCOMPARE(cell(w.get(), 1, gen4, PinTableModel::ValueRole).toDouble(),
                 *corePstar(explorerOf(w)->pins()->pins()[0]->scenario, 2));
        QVERIFY(!cell(w.get(), 1, gen4, PinTableModel::DeltaRole).isValid());
        QVERIFY(cell(w.get(), 1, gen4).toString().endsWith(QStringLiteral("\n—")));
        QCOMPARE(cell(w.get(), 0, tape).toString(), QStringLiteral("never"));
        QVERIFY(!corePstar(explorerOf(w)->scenario(), 2));
        QCOMPARE(cell(w.get(), 1, tape).toString(), QStringLiteral("—\n—"));
        // The drive kept by both still compares: 0 difference.
        const int gen5 = tierColumn(w.get(), QStringLiteral("NVMe (PCIe 5.0)"));
        QCOMPARE(cell(w.get(), 1, gen5, PinTableModel::DeltaRole).toDouble(), 0.0);
    }

    void lengthsAreEditableAndThoseAContextLacksAreNoted() {
        auto w = makeWindow();
        auto* view = pinTableOf(w.get());
        QCOMPARE(view->lengths(), defaultCompareLengths());
        QVERIFY(w->pinCurrent(QStringLiteral("Llama 3B")));
        QVERIFY(panelOf(w).selectModel(QStringLiteral("mistralai/Mistral-7B-Instruct-v0.3")));
        w->refreshNow();
        QCOMPARE(explorerOf(w)->result()->model().contextLimit, 32768.0);

        // Typed in the field, sorted, repeats dropped, written back as read.
        auto* edit = child<QLineEdit>(w.get(), QStringLiteral("pinTableLengths"));
        edit->setText(QStringLiteral("64k; 8k 8192"));
        emit edit->editingFinished();
        QCOMPARE(view->lengths(), (std::vector<double>{8192, 65536}));
        QCOMPARE(edit->text(), QStringLiteral("8k, 64k"));
        QCOMPARE(header(w.get(), 2), QStringLiteral("B*, GB/s\nat 64k"));
        // 64k is past Mistral's 32k context: not computed, and said under the table.
        QCOMPARE(cell(w.get(), 0, 2).toString(), QStringLiteral("past context"));
        QCOMPARE(cell(w.get(), 0, 2, PinTableModel::StateRole).toInt(), int(State::PastContext));
        QVERIFY(sameValue(cell(w.get(), 1, 2, PinTableModel::ValueRole).toDouble(),
                          coreBstar(explorerOf(w)->pins()->pins()[0]->scenario, 65536)));
        QVERIFY(!cell(w.get(), 1, 2, PinTableModel::DeltaRole).isValid());
        const QString notes = child<QLabel>(w.get(), QStringLiteral("pinTableNotes"))->text();
        QVERIFY2(notes.contains(QStringLiteral("64k is past the context of "
                                               "Mistral-7B-Instruct-v0.3 (32,768 tokens)")),
                 qPrintable(notes));
        QVERIFY(sameValue(cell(w.get(), 0, 1, PinTableModel::ValueRole).toDouble(),
                          coreBstar(explorerOf(w)->scenario(), 8192)));

        // Refused with a sentence; the table keeps its lengths.
        auto* message = child<QLabel>(w.get(), QStringLiteral("pinTableMessage"));
        for (const QString& bad :
             {QStringLiteral("lots"), QStringLiteral(""), QStringLiteral("0, 4k"),
              QStringLiteral("1k,2k,3k,4k,5k,6k,7k,8k,9k")}) {
            QVERIFY2(!view->setLengthsText(bad), qPrintable(bad));
            QVERIFY2(message->text().startsWith(QStringLiteral("Prompt lengths:")),
                     qPrintable(message->text()));
            QCOMPARE(view->lengths(), (std::vector<double>{8192, 65536}));
        }
        QVERIFY(view->setLengthsText(QStringLiteral("4k")));
        QVERIFY(message->text().isEmpty());
        // Kept for the next window.
        QCOMPARE(QSettings().value(QStringLiteral("pinTable/lengths")).toString(),
                 QStringLiteral("4k"));
    }

    void theCsvReadsBack() {
        auto w = makeIllustrativeWindow(); // three tiers, u = 50 %
        const Scenario small = explorerOf(w)->scenario();
        QVERIFY(w->pinCurrent(QStringLiteral("3B, on an \"H100\"")));
        QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        w->refreshNow();
        const Scenario big = explorerOf(w)->scenario();
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("pins.csv"));
        const auto st = exportPinTable(pinTableOf(w.get())->comparison(), path, QSize(800, 450));
        QVERIFY2(st.ok(), st.ok() ? "" : st.message().c_str());
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines =
            QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3); // the header, the current scenario, the pin
        const QStringList head = csvFields(lines[0]);
        QCOMPARE(head.size(), 4 + 3 * 3 + 3 * 3);
        auto col = [&](const QString& name) {
            const int i = int(head.indexOf(name));
            if (i < 0) qFatal("no CSV column %s", qPrintable(name));
            return i;
        };
        const QStringList cur = csvFields(lines[1]), pin = csvFields(lines[2]);
        QCOMPARE(pin.size(), head.size());
        QCOMPARE(pin[col(QStringLiteral("scenario"))], QStringLiteral("3B, on an \"H100\""));
        QCOMPARE(cur[col(QStringLiteral("current"))], QStringLiteral("true"));
        QCOMPARE(pin[col(QStringLiteral("context_tokens"))], QStringLiteral("131072"));
        for (double n : {4096.0, 32768.0, 131072.0}) {
            const QString at = QStringLiteral("@%1").arg(n, 0, 'f', 0);
            bool ok = false;
            const double b3 =
                pin[col(QStringLiteral("breakeven_bandwidth_GBps") + at)].toDouble(&ok);
            QVERIFY(ok);
            QVERIFY(sameValue(b3, coreBstar(small, n)));
            const double b70 =
                cur[col(QStringLiteral("breakeven_bandwidth_GBps") + at)].toDouble(&ok);
            QVERIFY(ok && sameValue(b70, coreBstar(big, n)));
            QVERIFY(sameValue(
                pin[col(QStringLiteral("delta_breakeven_bandwidth_GBps") + at)].toDouble(),
                b3 - b70));
            QVERIFY(
                sameValue(pin[col(QStringLiteral("delta_breakeven_bandwidth_pct") + at)].toDouble(),
                          (b3 - b70) / b70 * 100));
            QCOMPARE(cur[col(QStringLiteral("delta_breakeven_bandwidth_pct") + at)].toDouble(),
                     0.0);
        }
        const QString gen5 = QStringLiteral("NVMe (PCIe 5.0):");
        QCOMPARE(pin[col(gen5 + QStringLiteral("breakeven_prefix_tokens"))].toDouble(),
                 *corePstar(small, 1));
        QCOMPARE(pin[col(gen5 + QStringLiteral("delta_breakeven_prefix_tokens"))].toDouble(),
                 *corePstar(small, 1) - *corePstar(big, 1));
    }

    void theImageIsWrittenAtItsSize() {
        auto w = makeWindow();
        QVERIFY(w->pinCurrent(QStringLiteral("3B")));
        QVERIFY(panelOf(w).selectModel(QStringLiteral("meta-llama/Llama-3.3-70B-Instruct")));
        w->refreshNow();
        const PinComparison& t = pinTableOf(w.get())->comparison();
        QTemporaryDir dir;
        const QString png = dir.filePath(QStringLiteral("pins.png"));
        QVERIFY(exportPinTable(t, png, QSize(1600, 900)).ok());
        const QImage img(png);
        QCOMPARE(img.size(), QSize(1600, 900));
        // Drawn on: dark text on the white page.
        int dark = 0;
        for (int y = 0; y < img.height(); y += 3)
            for (int x = 0; x < img.width(); x += 3)
                if (qGray(img.pixel(x, y)) < 100) ++dark;
        QVERIFY2(dark > 500, qPrintable(QString::number(dark)));

        const QString svg = dir.filePath(QStringLiteral("pins.svg"));
        QVERIFY(exportPinTable(t, svg, QSize(1200, 500)).ok());
        QFile f(svg);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray text = f.readAll();
        QVERIFY(text.size() > 1000);
        QVERIFY(text.contains("viewBox=\"0 0 1200 500\""));

        const auto bad = exportPinTable(t, dir.filePath(QStringLiteral("pins.txt")), QSize(10, 10));
        QVERIFY(!bad.ok());
        QVERIFY(QString::fromStdString(bad.message()).contains(QStringLiteral(".png, .svg")));
        // The size the table has on its own holds it without scaling.
        const QSizeF natural = pinTableNaturalSize(t);
        QVERIFY(natural.width() > 400 && natural.height() > 150);
    }

    void theMenuAndThePinsDockOpenTheTable() {
        auto w = makeWindow();
        auto* table = pinTableOf(w.get());
        auto* action = menuAction(w.get(), QStringLiteral("Pin table"));
        QVERIFY(action);
        action->trigger();
        QCOMPARE(tabsOf(w)->currentWidget(), static_cast<QWidget*>(table));
        tabsOf(w)->setCurrentIndex(0);
        child<QPushButton>(w.get(), QStringLiteral("pinTableButton"))->click();
        QCOMPARE(tabsOf(w)->currentWidget(), static_cast<QWidget*>(table));
        QVERIFY(menuAction(w.get(), QStringLiteral("Export pin table as CSV")));
        QVERIFY(menuAction(w.get(), QStringLiteral("Export pin table as PNG")));
        QVERIFY(menuAction(w.get(), QStringLiteral("Export pin table as SVG")));
    }
};

QTEST_MAIN(TestUiPinTable)
#include "tst_ui_pin_table.moc"
