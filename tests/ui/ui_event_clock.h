// How long the UI thread spends handling one event, measured inside the event loop: the
// QApplication of a test that includes this header times every outermost notify() on the UI
// thread with that thread's own CPU clock. Waiting in the event loop costs nothing, and neither
// does another process running on the machine: the number is the work the window did in one
// piece, which is what keeps it responsive or not. Use KVBE_UI_EVENT_CLOCK_MAIN(TestClass) instead
// of QTEST_MAIN, then UiEventClock::reset() and UiEventClock::longest() around the work.
#pragma once

#include "sanitizer_build.h"

#include <QApplication>
#include <QEvent>
#include <QMetaEnum>
#include <QTest>
#include <QThread>

#include <ctime>

namespace kvbe::test {

// Sanitizers multiply the CPU cost of the same code; a bound on one event's work is stated for
// the optimised build and scaled by this factor in a sanitizer build.
inline constexpr double kSanitizerSlowdown = kAddressSanitizer ? 10.0 : 1.0;

struct LongestEvent {
    double ms = 0;
    QString what; // event type and receiver class
};

class UiEventClock : public QApplication {
  public:
    using QApplication::QApplication;
    using Longest = LongestEvent;

    static void reset() { s_longest = Longest(); }
    static Longest longest() { return s_longest; }

    bool notify(QObject* receiver, QEvent* event) override {
        if (s_depth > 0 || QThread::currentThread() != thread())
            return QApplication::notify(receiver, event);
        ++s_depth;
        const double start = threadCpuMs();
        const int type = int(event->type());
        // Named before delivery: the receiver may be deleted by its own event (DeferredDelete).
        const char* receiverClass = receiver ? receiver->metaObject()->className() : "nothing";
        const bool r = QApplication::notify(receiver, event);
        const double spent = threadCpuMs() - start;
        --s_depth;
        if (spent > s_longest.ms) {
            const char* typeName =
                QEvent::staticMetaObject
                    .enumerator(QEvent::staticMetaObject.indexOfEnumerator("Type"))
                    .valueToKey(type);
            s_longest.ms = spent;
            s_longest.what = QStringLiteral("%1 to %2")
                                 .arg(QLatin1String(typeName ? typeName : "event"),
                                      QLatin1String(receiverClass));
        }
        return r;
    }

  private:
    static double threadCpuMs() {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
    }
    static inline int s_depth = 0;
    static inline Longest s_longest{};
};

} // namespace kvbe::test

// QTEST_MAIN with the timing application.
#define KVBE_UI_EVENT_CLOCK_MAIN(TestObject)                                                       \
    int main(int argc, char* argv[]) {                                                             \
        kvbe::test::UiEventClock app(argc, argv);                                                  \
        app.setAttribute(Qt::AA_Use96Dpi, true);                                                   \
        TestObject tc;                                                                             \
        QTEST_SET_MAIN_SOURCE_PATH                                                                 \
        return QTest::qExec(&tc, argc, argv);                                                      \
    }
