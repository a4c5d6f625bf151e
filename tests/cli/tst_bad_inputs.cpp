// The bad-input catalogue (tests/bad-inputs/): every case through kvbe-cli exits 1 with its
// expected message, never with a signal.
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class TestBadInputs : public QObject {
    Q_OBJECT
  private:
    static void runCase(const QString& flag, const QString& file, const QString& fragment) {
        QProcess p;
        QStringList args = flag == "inspect" ? QStringList{"calibration", "inspect", file}
                           : flag == "trace" ? QStringList{"trace", "inspect", file}
                                             : QStringList{"calc", flag, file, "--lengths", "1k"};
        if (flag == "args") {
            // calc/ cases are the arguments of one `kvbe-cli calc` call, one line, split at blanks.
            QFile f(file);
            if (!f.open(QIODevice::ReadOnly)) QFAIL(qPrintable("cannot read " + file));
            args = QStringList{"calc"} + QString::fromUtf8(f.readAll()).simplified().split(' ');
        }
        p.start(QStringLiteral(KVBE_CLI_PATH), args);
        QVERIFY2(p.waitForFinished(60000), "kvbe-cli hung");
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        const QString err = QString::fromUtf8(p.readAllStandardError());
        QVERIFY2(p.exitCode() == 1, qPrintable(QString("exit %1: %2").arg(p.exitCode()).arg(err)));
        QVERIFY2(err.contains(fragment),
                 qPrintable(QString("expected '%1' in: %2").arg(fragment, err)));
        QVERIFY2(p.readAllStandardOutput().isEmpty(), "printed a result for bad input");
    }

  private slots:
    void catalogue_data() {
        QTest::addColumn<QString>("flag");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("fragment");
        const QDir root(QStringLiteral(KVBE_SOURCE_DIR "/tests/bad-inputs"));
        int cases = 0;
        for (const auto& [dir, flag] : {std::pair{"config", "--model"},
                                        {"scenario", "--scenario"},
                                        {"calibration", "inspect"},
                                        {"trace", "trace"},
                                        {"calc", "args"}}) {
            const QDir d(root.filePath(dir));
            for (const auto& expect : d.entryList({"*.expect"}, QDir::Files)) {
                const QString stem = expect.chopped(7);
                const auto inputs = d.entryList({stem + ".json", stem + ".kvbe.json", stem + ".csv",
                                                 stem + ".jsonl", stem + ".args", stem + ".txt"},
                                                QDir::Files);
                QVERIFY2(inputs.size() == 1, qPrintable("no input for " + expect));
                QFile f(d.filePath(expect));
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QString fragment = QString::fromUtf8(f.readAll()).trimmed();
                QTest::newRow(qPrintable(QString(dir) + "/" + stem))
                    << flag << d.filePath(inputs[0]) << fragment;
                ++cases;
            }
        }
        QVERIFY(cases >= 92);
    }
    void catalogue() {
        QFETCH(QString, flag);
        QFETCH(QString, file);
        QFETCH(QString, fragment);
        runCase(flag, file, fragment);
        // The message names the file.
    }

    // A 100 MB file is refused by size before it is parsed.
    void hundredMegabyteFile_data() {
        QTest::addColumn<QString>("flag");
        QTest::newRow("config") << "--model";
        QTest::newRow("scenario") << "--scenario";
        QTest::newRow("calibration") << "inspect";
    }
    void hundredMegabyteFile() {
        QFETCH(QString, flag);
        QTemporaryDir tmp;
        QFile f(tmp.filePath("big.json"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        QByteArray chunk(1 << 20, ' ');
        chunk[0] = '{';
        for (int i = 0; i < 100; ++i)
            f.write(chunk);
        f.close();
        runCase(flag, f.fileName(), "expected at most 64 MiB");
    }

    void messagesNameTheFile() {
        const QString file =
            QStringLiteral(KVBE_SOURCE_DIR "/tests/bad-inputs/config/zero-heads.json");
        runCase("--model", file, file);
    }
};

QTEST_GUILESS_MAIN(TestBadInputs)
#include "tst_bad_inputs.moc"
