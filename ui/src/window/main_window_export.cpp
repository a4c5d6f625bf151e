// MainWindow's exports: the visible chart or the pin table as PNG, SVG, PDF or CSV, and to the
// clipboard; the sign-off report of what is open.
#include "kvbe/ui/charts/chart_export.h"
#include "kvbe/ui/compare/pin_table.h"
#include "kvbe/ui/fleet/fleet_model.h"
#include "kvbe/ui/fleet/fleet_panel.h"
#include "kvbe/ui/report/report_writer.h"
#include "kvbe/ui/widgets/qt_error.h"
#include "kvbe/ui/window/main_window.h"
#include "kvbe/ui/workload/plan_section.h"
#include "kvbe/ui/workload/workload_view.h"

#include <QApplication>
#include <QClipboard>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFileInfo>
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

Status MainWindow::exportReportTo(const QString& path) {
    if (!m_explorer.result())
        return fail(tr("There is nothing to report: the scenario has not been computed."));
    ReportJob job;
    job.out = path.toStdString();
    job.presets = m_explorer.presets();
    job.scenario = m_explorer.scenario();
    job.version = QCoreApplication::applicationVersion().toStdString();
    if (!m_file.isEmpty() && !hasUnsavedChanges()) {
        job.scenarioFile = m_file.toStdString();
        job.inputs.emplace_back(job.scenarioFile, "scenario");
    } else if (!m_file.isEmpty()) {
        job.scenarioFile = m_file.toStdString();
        job.scenarioFlags = "changes made in the window since it was saved";
    } else {
        job.scenarioFlags = "changes made in the window";
    }
    // The Fleet's files (a probe's streamed rows are no file to read again or hash).
    for (const auto& row : m_fleetPanel->model()->rows())
        if (QFileInfo(QString::fromStdString(row.calibration.source)).isFile())
            job.imports.push_back(row.calibration.source);
    if (const WorkloadPtr& w = m_workload->result(); w && w->trace && w->error.isEmpty()) {
        job.trace = w->trace;
        job.traceFile = w->file.toStdString();
        job.eval = w->eval;
        job.workload = w->settings; // the figures the view shows, and the report with them
        job.inputs.emplace_back(job.traceFile, "trace");
        const auto* section = findChild<PlanSection*>();
        const PlanPtr plan = section ? section->plan() : nullptr;
        if (plan && plan->workload == w && plan->setup && plan->result) {
            job.planSetup = plan->setup;
            job.plan = plan->result;
        } else {
            job.planError = "the Plan section has no plan of this trace (open the Plan tab and "
                            "let it finish)";
        }
    }
    QApplication::setOverrideCursor(Qt::WaitCursor);
    const Status st = writeReport(job);
    QApplication::restoreOverrideCursor();
    return st;
}

void MainWindow::exportReport() {
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Export report"), exportFolder().filePath(QStringLiteral("report.pdf")),
        tr("PDF (*.pdf);;HTML (*.html)"));
    if (path.isEmpty()) return;
    rememberExportFolder(path);
    if (auto st = exportReportTo(path); !st)
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
