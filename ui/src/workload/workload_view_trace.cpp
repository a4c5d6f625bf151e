// The Workload view's trace file: asked for, read on a worker thread with progress and Cancel,
// and described in the line beside the Open button.
#include "kvbe/ui/workload/workload_view.h"

#include "kvbe/ui/workload/background_job.h"
#include "kvbe/ui/workload/plan_section.h"

#include "kvbe/ui/widgets/file_dialogs.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QTimer>

#include <optional>

namespace kvbe {

void WorkloadView::chooseTraceFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open a request trace"), QString(),
                                                      fileDialogFilter({FileKind::Trace}));
    if (!path.isEmpty()) openTrace(path);
}

bool WorkloadView::openTrace(const QString& path) {
    if (m_loadThread) return false;
    m_error->setVisible(false);
    m_loadCancel = std::make_shared<std::atomic<bool>>(false);
    m_loadFraction = std::make_shared<std::atomic<double>>(0.0);
    m_progress->setValue(0);
    m_progress->setFormat(tr("Reading %1: %p%").arg(QFileInfo(path).fileName()));
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    m_progressTimer->start();
    // The plan's first stage: the trace read, then replayed, before it starts.
    if (auto* plan = findChild<PlanSection*>())
        plan->showWaiting(tr("Reading %1; the plan starts once it is read and replayed")
                              .arg(QFileInfo(path).fileName()));
    struct Outcome {
        std::optional<Trace> trace;
        QString error;
        bool cancelled = false;
    };
    auto out = std::make_shared<Outcome>();
    auto cancel = m_loadCancel;
    auto fraction = m_loadFraction;
    m_loadThread = QThread::create([path, out, cancel, fraction] {
        yieldToTheWindow();
        TraceReadOptions o;
        o.progress = [cancel, fraction](double f) {
            fraction->store(f);
            return !cancel->load();
        };
        auto t = loadTrace(path.toStdString(), o);
        if (!t)
            out->error = QString::fromStdString(t.message());
        else if (t->summary.cancelled)
            out->cancelled = true;
        else
            out->trace = std::move(*t);
    });
    connect(m_loadThread, &QThread::finished, this, [this, out, cancel, path] {
        deleteWhenReturned(m_loadThread);
        m_loadThread = nullptr;
        m_progressTimer->stop();
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
        if (!out->trace || cancel->load())
            if (auto* plan = findChild<PlanSection*>()) plan->showWaiting(QString());
        // A cancel wins even over a read that had just finished: nothing of it is kept.
        if (cancel->load() || out->cancelled) {
            emit loadCancelled();
            return;
        }
        if (!out->error.isEmpty()) {
            showError(out->error);
            emit loadFailed(out->error);
            return;
        }
        m_trace = std::make_shared<const Trace>(std::move(*out->trace));
        m_file = path;
        m_result.reset();
        const auto& s = m_trace->summary;
        QString text = tr("%1: %2 requests, %3")
                           .arg(QFileInfo(path).fileName())
                           .arg(m_trace->size())
                           .arg(QString::fromStdString(std::string(toString(s.format))));
        if (s.hasBlocks())
            text += tr(", %1-token blocks, %2 distinct")
                        .arg(s.blockTokens)
                        .arg(m_trace->distinctBlocks);
        else
            text += tr(", no block ids (lengths and arrivals only)");
        if (s.skippedLines) text += tr(", %1 bad lines skipped").arg(s.skippedLines);
        m_fileLabel->setText(text);
        m_fileLabel->setToolTip(path);
        syncControls();
        emit traceLoaded(path);
        requestReplay();
    });
    m_loadThread->start();
    return true;
}

void WorkloadView::cancelLoad() {
    if (m_loadCancel) m_loadCancel->store(true);
}

} // namespace kvbe
