#include "kvbe/ui/workload/background_job.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace kvbe {

void yieldToTheWindow() {
#if defined(__linux__)
    // Linux keeps a nice value and a policy per thread: this one's, not the process's, and the
    // threads it starts inherit both. Raising one's own nice value and moving from SCHED_OTHER to
    // SCHED_BATCH need no privilege (sched(7)).
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    const int now = getpriority(PRIO_PROCESS, tid);
    setpriority(PRIO_PROCESS, tid, std::min(19, now + kWorkerNiceIncrement));
    sched_param none{};
    sched_setscheduler(0, SCHED_BATCH, &none);
#endif
}

namespace {
// The threads deleteWhenReturned is still looking at. When the application ends before one has
// returned (its event loop gone), the last of Qt's clean-up waits for it and deletes it, so no
// QThread outlives the application (LeakSanitizer caught one at exit).
std::vector<QThread*>& pendingThreads() {
    static std::vector<QThread*> pending;
    return pending;
}
void deletePendingThreads() {
    for (QThread* t : pendingThreads()) {
        t->wait();
        delete t;
    }
    pendingThreads().clear();
}
} // namespace

void deleteWhenReturned(QThread* thread) {
    // QThread's destructor waits for a thread still in its finishing code (it emits finished()
    // before it is done), and a worker at a low priority on a busy machine may not get a core to
    // finish for hundreds of milliseconds: so look again, from the event loop, until it has.
    auto& pending = pendingThreads();
    if (thread->wait(QDeadlineTimer(0))) {
        pending.erase(std::remove(pending.begin(), pending.end(), thread), pending.end());
        thread->deleteLater(); // returned: its destructor has nothing to wait for
        return;
    }
    if (std::find(pending.begin(), pending.end(), thread) == pending.end()) {
        static const bool registered = [] {
            qAddPostRoutine(deletePendingThreads);
            return true;
        }();
        (void)registered;
        pending.push_back(thread);
    }
    QTimer::singleShot(10, thread, [thread] { deleteWhenReturned(thread); });
}

BackgroundJob::BackgroundJob(QProgressBar* progress, QPushButton* cancel, QLabel* status,
                             QObject* parent)
    : QObject(parent), m_progress(progress), m_cancel(cancel), m_status(status),
      m_progressTimer(new QTimer(this)) {
    m_progressTimer->setInterval(50);
    connect(m_progressTimer, &QTimer::timeout, this, [this] {
        if (m_fraction) m_progress->setValue(int(m_fraction->load() * 1000));
        if (m_liveText)
            if (const QString t = m_liveText(); !t.isEmpty() && t != m_status->text())
                m_status->setText(t);
    });
}

BackgroundJob::~BackgroundJob() {
    if (m_thread) {
        m_stop->store(true);
        m_thread->disconnect(this);
        m_thread->wait();
        delete m_thread;
    }
}

void BackgroundJob::run(Work work, std::function<void()> done, const QString& startText,
                        std::function<QString()> liveText) {
    Run r{std::move(work), std::move(done), startText, std::move(liveText)};
    if (m_thread) {
        // The running one is out of date: stop it, and run the latest when it returns.
        m_stop->store(true);
        m_next = std::make_unique<Run>(std::move(r));
        return;
    }
    start(std::move(r));
}

void BackgroundJob::start(Run r) {
    m_userCancelled = false;
    m_stop = std::make_shared<std::atomic<bool>>(false);
    m_fraction = std::make_shared<std::atomic<double>>(0.0);
    auto stop = m_stop;
    auto fraction = m_fraction;
    m_thread = QThread::create([work = std::move(r.work), stop, fraction] {
        yieldToTheWindow();
        work([stop, fraction](double f) {
            fraction->store(f);
            return !stop->load();
        });
    });
    connect(m_thread, &QThread::finished, this, [this, done = std::move(r.done), stop] {
        deleteWhenReturned(m_thread);
        m_thread = nullptr;
        if (!stop->load()) {
            done();
        } else if (m_userCancelled && !m_next) {
            emit cancelled();
        }
        if (m_next) {
            auto next = std::move(m_next);
            start(std::move(*next));
            return;
        }
        m_progressTimer->stop();
        m_liveText = nullptr;
        m_progress->setVisible(false);
        m_cancel->setVisible(false);
    });
    m_progress->setValue(0);
    m_progress->setVisible(true);
    m_cancel->setVisible(true);
    m_status->setText(r.startText);
    m_liveText = std::move(r.liveText);
    m_progressTimer->start();
    m_thread->start();
}

void BackgroundJob::cancel() {
    if (!m_thread) return;
    m_stop->store(true);
    m_next.reset();
    m_userCancelled = true;
}

} // namespace kvbe
