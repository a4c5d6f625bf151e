// The file dialogs (widgets/file_dialogs): an export dialog opens in the folder of the last
// export, also in a window opened later.
#include "ui_test_support.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QTemporaryDir>
#include <QTimer>

#include <functional>

using namespace kvbe;
using namespace kvbe::test;

namespace {

// Answers the next file dialog once it is open: the static QFileDialog functions run their own
// event loop, so the answer comes from a timer that looks for the modal dialog, a bounded number
// of times (the dialog is up after the first few events; no wall-clock wait).
void answerNextFileDialog(std::function<void(QFileDialog*)> answer, int tries = 1000) {
    QTimer::singleShot(0, qApp, [answer = std::move(answer), tries]() mutable {
        if (auto* d = qobject_cast<QFileDialog*>(QApplication::activeModalWidget()))
            answer(d);
        else if (tries > 0)
            answerNextFileDialog(std::move(answer), tries - 1);
    });
}

} // namespace

class TestUiFileDialogs : public QObject {
    Q_OBJECT
  private slots:
    void initTestCase() {
        isolateSettings();
        // Qt's own file dialog, which a test can find and answer, on every platform.
        QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
    }
    void init() { QSettings().clear(); }

    // Export dialogs open in the folder of the last export, also in a window opened later.
    void exportDialogsRememberTheirFolder() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString folder = QFileInfo(dir.path()).canonicalFilePath();
        {
            auto w = makeWindow();
            QString startedIn;
            answerNextFileDialog([&](QFileDialog* d) {
                startedIn = d->directory().canonicalPath();
                d->selectFile(QDir(folder).filePath(QStringLiteral("breakeven.svg")));
                static_cast<QDialog*>(d)->accept(); // QFileDialog::accept is protected
            });
            auto* svg = menuAction(w.get(), QStringLiteral("Chart as SVG"));
            QVERIFY(svg);
            svg->trigger();
            QVERIFY2(!startedIn.isEmpty(), "no file dialog opened");
            // A fresh settings store has no folder yet: not the one chosen now.
            QVERIFY(startedIn != folder);
            QVERIFY(QFile::exists(QDir(folder).filePath(QStringLiteral("breakeven.svg"))));
        }
        // A new window, as after a restart: the image and the data dialogs start there.
        auto w = makeWindow();
        for (const char* action : {"Chart data as CSV", "Chart as SVG"}) {
            QString startedIn, proposed;
            answerNextFileDialog([&](QFileDialog* d) {
                startedIn = d->directory().canonicalPath();
                proposed = d->selectedFiles().value(0);
                d->reject();
            });
            auto* a = menuAction(w.get(), QLatin1String(action));
            QVERIFY(a);
            a->trigger();
            QVERIFY2(!startedIn.isEmpty(), action);
            QCOMPARE(startedIn, folder);
            QVERIFY2(QFileInfo(proposed).canonicalPath() == folder || proposed.startsWith(folder),
                     qPrintable(proposed));
        }
    }
};

QTEST_MAIN(TestUiFileDialogs)
#include "tst_ui_file_dialogs.moc"
