// MainWindow's exports: the visible chart or the pin table as PNG, SVG, PDF or CSV, and to the
// clipboard.
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/compare/pin_table.h"
#include "kvbe/ui/window/main_window.h"

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QPainter>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>

namespace kvbe {

bool MainWindow::askPngSize(QSize& size, int& dpi) {
    QDialog d(this);
    d.setWindowTitle(tr("PNG size"));
    auto* form = new QFormLayout(&d);
    auto* w = new QSpinBox(&d);
    auto* h = new QSpinBox(&d);
    auto* r = new QSpinBox(&d);
    w->setRange(16, 16384);
    h->setRange(16, 16384);
    r->setRange(36, 1200);
    w->setValue(size.width());
    h->setValue(size.height());
    r->setValue(dpi);
    w->setSuffix(tr(" px"));
    h->setSuffix(tr(" px"));
    r->setSuffix(tr(" dpi"));
    form->addRow(tr("Width"), w);
    form->addRow(tr("Height"), h);
    form->addRow(tr("Resolution"), r);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &d);
    form->addRow(buttons);
    connect(buttons, &QDialogButtonBox::accepted, &d, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, &d, &QDialog::reject);
    if (d.exec() != QDialog::Accepted) return false;
    size = QSize(w->value(), h->value());
    dpi = r->value();
    return true;
}

void MainWindow::exportImage(const QString& format) {
    // On the Pin table tab, Export acts on the table.
    if (m_tabs->currentWidget() == m_pinTable) {
        exportPinTable(format);
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    QSize size(1600, 900);
    int dpi = 96;
    if (format == QLatin1String("png") && !askPngSize(size, dpi)) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart"), exportFolder().filePath(c->key() + QLatin1Char('.') + format),
        format.toUpper() + QStringLiteral(" (*.") + format + ')');
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = exportChart(*c, path, size, dpi); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::exportCsv() {
    if (m_tabs->currentWidget() == m_pinTable) {
        exportPinTable(QStringLiteral("csv"));
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export chart data"), exportFolder().filePath(c->key() + QStringLiteral(".csv")),
        tr("CSV (*.csv)"));
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = kvbe::exportCsv(*c, path); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::exportPinTable(const QString& format) {
    const PinComparison& t = m_pinTable->comparison();
    if (t.empty()) {
        reportError(tr("There is no pin table to export: the scenario has not been computed."));
        return;
    }
    // A slide's size, like the charts'; the table is fitted into it.
    QSize size(1600, 900);
    int dpi = 96;
    if (format == QLatin1String("png") && !askPngSize(size, dpi)) return;
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export the pin table"),
                                     exportFolder().filePath(QStringLiteral("pin-table.") + format),
                                     format.toUpper() + QStringLiteral(" (*.") + format + ')');
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = kvbe::exportPinTable(t, path, size, dpi, m_style.dark); !st)
        reportError(QString::fromStdString(st.message()));
    else
        statusBar()->showMessage(tr("Wrote %1").arg(path), 4000);
}

void MainWindow::copyToClipboard() {
    if (m_tabs->currentWidget() == m_pinTable) {
        const PinComparison& t = m_pinTable->comparison();
        if (t.empty()) return;
        const QSize size = pinTableNaturalSize(t).toSize();
        QImage img(size, QImage::Format_ARGB32_Premultiplied);
        QPainter p(&img);
        paintPinTable(p, t, size, m_style.dark);
        p.end();
        QApplication::clipboard()->setImage(img);
        statusBar()->showMessage(
            tr("Copied the pin table (%1 × %2)").arg(size.width()).arg(size.height()), 4000);
        return;
    }
    ChartView* c = currentChart();
    if (!c || !c->current()) return;
    const QSize size = c->size().expandedTo(QSize(800, 450));
    QApplication::clipboard()->setImage(renderChartImage(*c, size));
    statusBar()->showMessage(tr("Copied the chart (%1 × %2)").arg(size.width()).arg(size.height()),
                             4000);
}

} // namespace kvbe
