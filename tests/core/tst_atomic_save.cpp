// Saving is atomic: a save killed half-way leaves the old file as it was.
#include "kvbe/base/json_text.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <thread>

class TestAtomicSave : public QObject {
    Q_OBJECT
  private slots:
    void killedSaveLeavesTheOldFile() {
        QTemporaryDir tmp;
        const QString target = tmp.filePath("scenario.kvbe.json");
        QVERIFY(kvbe::writeFileAtomically(target.toStdString(), "{\"old\": true}\n").ok());

        QProcess saver;
        saver.start(QStringLiteral(KVBE_SAVE_HELPER), {target, "768"});
        QVERIFY(saver.waitForStarted());
        // Wait until the new contents are on their way into the temporary file, then kill.
        bool writing = false;
        QElapsedTimer waited;
        waited.start();
        while (!writing && saver.state() == QProcess::Running && waited.elapsed() < 60000) {
            for (const auto& f : QDir(tmp.path()).entryInfoList(QDir::Files | QDir::Hidden))
                if (f.fileName().startsWith(".scenario.kvbe.json.") && f.size() > 0) writing = true;
            if (!writing) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        saver.kill();
        saver.waitForFinished();
        if (!writing) QSKIP("the save finished before it could be caught half-way");
        QCOMPARE(saver.exitStatus(), QProcess::CrashExit);
        QFile f(target);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), QByteArray("{\"old\": true}\n"));
    }

    void completedSaveReplacesTheFile() {
        QTemporaryDir tmp;
        const QString target = tmp.filePath("a.json");
        QVERIFY(kvbe::writeFileAtomically(target.toStdString(), "one").ok());
        QProcess saver;
        saver.start(QStringLiteral(KVBE_SAVE_HELPER), {target, "1"});
        QVERIFY(saver.waitForFinished(60000));
        QCOMPARE(saver.exitCode(), 0);
        QCOMPARE(QFileInfo(target).size(), qint64(1024 * 1024));
        QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestAtomicSave)
#include "tst_atomic_save.moc"
