// kvbe-cli calibrate on this machine's drive: a calibration file that reads back and fits, and
// no scratch file left behind.
#include "cli_run.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class TestCliCalibrate : public QObject {
    Q_OBJECT
  private:
    static int run(const QStringList& args, QByteArray* err = nullptr) {
        auto env = QProcessEnvironment::systemEnvironment();
        env.insert("CUDA_VISIBLE_DEVICES", ""); // the GPU probes, if any GPU, stay out of this test
        const auto r = kvbe::test::runCli(args, env);
        if (err) *err = r.err;
        return r.exitCode;
    }

  private slots:
    void driveOnly() {
        QTemporaryDir scratch(QDir::currentPath() + "/kvbe-calibrate-XXXXXX");
        QTemporaryDir out;
        const QString file = out.filePath("node.json");
        QByteArray err;
        const int code = run({"calibrate", "--dir", scratch.path(), "--file-size", "64MiB",
                              "--duration", "0.2s", "--skip-gpu", "--out", file},
                             &err);
        if (code == 3 && err.contains("O_DIRECT"))
            QSKIP("this folder's filesystem refuses O_DIRECT");
        QVERIFY2(code == 0, err.constData());
        QVERIFY(QDir(scratch.path())
                    .entryList(QDir::NoDotAndDotDot | QDir::AllEntries | QDir::Hidden)
                    .isEmpty());
        QProcess inspect;
        inspect.start(QStringLiteral(KVBE_CLI_PATH),
                      {"calibration", "inspect", file, "--format", "json"});
        QVERIFY(inspect.waitForFinished(60000));
        QCOMPARE(inspect.exitCode(), 0);
        const auto c = QJsonDocument::fromJson(inspect.readAllStandardOutput())
                           .object()["calibrations"]
                           .toArray()[0]
                           .toObject();
        QCOMPARE(c["format"].toString(), QString("kvbe"));
        QCOMPARE(c["model"].toString(), QString("meta-llama/Llama-3.2-3B"));
        QCOMPARE(c["kv_bytes_per_token"].toDouble(), 114688.0);
        const auto tier = c["tiers"].toArray()[0].toObject();
        QCOMPARE(tier["name"].toString(), QString("nvme"));
        QCOMPARE(tier["read_samples"].toInt(), 3); // 1 MiB, 4 MiB and the KV block at QD 1
        QVERIFY(tier["read_Bps"].toDouble() > 0);
        const auto fitted = c["fitted"].toObject()["tiers"].toObject()["nvme"].toObject();
        QVERIFY(fitted["bandwidth_Bps"].toDouble() > 0);
        QVERIFY(fitted["t_fixed_s"].toDouble() >= 0);
    }

    void nothingToMeasure() {
        QTemporaryDir out;
        QByteArray err;
        QCOMPARE(run({"calibrate", "--skip-drive", "--out", out.filePath("n.json")}, &err), 3);
        QVERIFY2(err.contains("measured nothing"), err.constData());
        QVERIFY(!QFile::exists(out.filePath("n.json")));
    }

    void needsADirectory() {
        QTemporaryDir out;
        QByteArray err;
        QCOMPARE(run({"calibrate", "--out", out.filePath("n.json")}, &err), 2);
        QVERIFY(err.contains("--dir"));
    }
};

QTEST_GUILESS_MAIN(TestCliCalibrate)
#include "tst_cli_calibrate.moc"
