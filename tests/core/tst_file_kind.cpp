// What a file is (classifyFile): every fixture and shipped file by its content, the formats
// core's readers know, JSON Lines against JSON documents, a node file whose marker comes after a
// large hits array, and which files a folder import reads.
#include "kvbe/calibration/calibration.h"
#include "kvbe/files/file_kind.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>

using namespace kvbe;

namespace {

const QString kSource = QStringLiteral(KVBE_SOURCE_DIR "/");

void write(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size())
        qFatal("cannot write %s", qPrintable(path));
}

std::vector<std::string> names(const std::vector<std::filesystem::path>& paths) {
    std::vector<std::string> out;
    for (const auto& p : paths)
        out.push_back(p.filename().string());
    return out;
}

} // namespace

Q_DECLARE_METATYPE(FileKind)

class TestFileKind : public QObject {
    Q_OBJECT
  private slots:
    void filesByTheirContent_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<FileKind>("kind");
        QTest::addColumn<QString>("format");
        const QString cal = QStringLiteral("tests/fixtures/calibration/");
        QTest::newRow("kvbe node") << cal + "kvbe-node17.json" << FileKind::Calibration << "kvbe";
        QTest::newRow("py-kvcache v1") << cal + "pykvcache-v1-llama-3.2-3b-h100.json"
                                       << FileKind::Calibration << "py-kvcache-v1";
        QTest::newRow("py-kvcache v1, one line") << cal + "pykvcache-v1-thresholds-only.json"
                                                 << FileKind::Calibration << "py-kvcache-v1";
        QTest::newRow("py-kvcache v2")
            << cal + "pykvcache-v2.json" << FileKind::Calibration << "py-kvcache-v2";
        QTest::newRow("pareto CSV")
            << cal + "pareto-measure.csv" << FileKind::Calibration << "pareto-csv";
        QTest::newRow("fio") << cal + "fio-jsonplus-two-jobs.json" << FileKind::Calibration
                             << "fio";
        QTest::newRow("nvbandwidth")
            << cal + "nvbandwidth-v0.5-verbose-dcgm.json" << FileKind::Calibration << "nvbandwidth";
        QTest::newRow("scenario") << "resources/scenarios/default.kvbe.json" << FileKind::Scenario
                                  << "";
        QTest::newRow("config.json")
            << "resources/models/meta-llama__Llama-3.2-3B.json" << FileKind::ModelConfig << "";
        QTest::newRow("published figures")
            << "resources/published/py-kvcache-h100.json" << FileKind::PublishedReference << "";
        QTest::newRow("Mooncake trace")
            << "tests/fixtures/traces/hand.jsonl" << FileKind::Trace << "mooncake";
        QTest::newRow("Bailian trace")
            << "tests/fixtures/traces/bailian-chain.jsonl" << FileKind::Trace << "bailian";
        QTest::newRow("Azure trace")
            << "tests/fixtures/traces/azure.csv" << FileKind::Trace << "azure";
        QTest::newRow("kvbe trace") << "tests/fixtures/traces/kvbe.csv" << FileKind::Trace << "csv";
        QTest::newRow("a markdown file")
            << "tests/fixtures/calibration-sources.md" << FileKind::Unknown << "";
    }
    void filesByTheirContent() {
        QFETCH(QString, file);
        QFETCH(FileKind, kind);
        QFETCH(QString, format);
        const FileClass c = classifyFile((kSource + file).toStdString());
        QCOMPARE(c.kind, kind);
        QCOMPARE(QString::fromStdString(c.format), format);
        QCOMPARE(c.reason.empty(), kind != FileKind::Unknown);
    }

    void textByItsContent_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<FileKind>("kind");
        QTest::addColumn<QString>("format");
        QTest::newRow("probe stream")
            << "{\"kvbe_probe\":2,\"probe\":\"prefill\",\"host\":\"n\",\"started\":\"\","
               "\"params\":{}}\n{\"type\":\"point\",\"series\":\"t_prefill_s\",\"x\":1,\"y\":2}\n"
            << FileKind::ProbeStream << "";
        QTest::newRow("fio after its warnings")
            << "fio: note: both iodepth >= 1 and synchronous I/O engine are selected\n"
               "{\"fio version\": \"fio-3.35\", \"jobs\": []}\n"
            << FileKind::Calibration << "fio";
        QTest::newRow("py-kvcache schema 2 without curves")
            << "{\"schema_version\": 2, \"model_name\": \"m\"}" << FileKind::Calibration
            << "py-kvcache-v2";
        QTest::newRow("py-kvcache of an unknown schema")
            << "{\"schema_version\": 7}" << FileKind::Calibration << "py-kvcache";
        QTest::newRow("kvbe calibration, keys sorted")
            << "{\"hits\": [], \"kv_dtype\": \"bf16\", \"kvbe_calibration\": 1}"
            << FileKind::Calibration << "kvbe";
        QTest::newRow("nvbandwidth's text")
            << "nvbandwidth Version: v0.5\nRunning host_to_device_memcpy_ce.\n"
            << FileKind::Unknown << QString::fromUtf8(kNvbandwidthText.data());
        QTest::newRow("a JSON array") << "[1, 2]" << FileKind::Unknown << "";
        QTest::newRow("an object of nothing known") << "{\"a\": 1}" << FileKind::Unknown << "";
        QTest::newRow("empty") << " \n" << FileKind::Unknown << "";
    }
    void textByItsContent() {
        QFETCH(QString, text);
        QFETCH(FileKind, kind);
        QFETCH(QString, format);
        const FileClass c = classifyText(text.toStdString(), "t");
        QCOMPARE(c.kind, kind);
        QCOMPARE(QString::fromStdString(c.format), format);
        if (kind == FileKind::Unknown) QVERIFY(c.reason.rfind("t: ", 0) == 0);
    }

    // kvbe writes a calibration's keys sorted: in a node file the marker comes after the hits,
    // far past the head the classifier reads first. It reads on, and agrees with the reader.
    void nodeFileWithItsMarkerPastTheHead() {
        QTemporaryDir dir;
        QByteArray text = "{\"hits\": [";
        for (int i = 0; i < 4000; ++i)
            text += QByteArray(i ? "," : "") +
                    "{\"tokens\": 8192, \"prefix\": 4096, \"tier\": \"nvme\", \"seconds\": 0.12}";
        text += "], \"kv_dtype\": \"bf16\", \"kvbe_calibration\": 1}";
        QVERIFY(text.size() > 128 * 1024);
        const QString path = dir.filePath(QStringLiteral("node.json"));
        write(path, text);
        const FileClass c = classifyFile(path.toStdString());
        QCOMPARE(c.kind, FileKind::Calibration);
        QCOMPARE(QString::fromStdString(c.format), QStringLiteral("kvbe"));
        auto cal = readCalibration(path.toStdString());
        QVERIFY2(cal.ok(), cal.ok() ? "" : cal.message().c_str());
        QCOMPARE(QString::fromStdString(cal->format), QStringLiteral("kvbe"));
        QCOMPARE(cal->hits.size(), size_t(4000));
    }

    // The readers say what a file of another kind is, by the same rule.
    void readersSayWhatAFileIs() {
        const std::string scenario =
            (kSource + "resources/scenarios/default.kvbe.json").toStdString();
        const std::string config =
            (kSource + "resources/models/meta-llama__Llama-3.2-3B.json").toStdString();
        const std::string trace = (kSource + "tests/fixtures/traces/kvbe.csv").toStdString();
        QVERIFY(readCalibration(scenario).message().find("this is a kvbe scenario") !=
                std::string::npos);
        QVERIFY(readCalibration(config).message().find("this is a model config.json") !=
                std::string::npos);
        QVERIFY(readCalibration(trace).message().find("this is a request trace") !=
                std::string::npos);
    }

    // A folder import reads the files of the kind's extensions directly inside, sorted; a folder
    // without any is an error; a file given by name is read whatever its name.
    void filesToReadOfAFolder() {
        QTemporaryDir dir;
        write(dir.filePath("b.json"), "{}");
        write(dir.filePath("a.CSV"), "x");
        write(dir.filePath("notes.txt"), "x");
        write(dir.filePath("README.md"), "x");
        QVERIFY(QDir(dir.path()).mkdir("sub"));
        write(dir.filePath("sub/c.json"), "{}");
        QTemporaryDir empty;
        write(empty.filePath("notes.txt"), "x");
        const auto list = filesToRead(
            {dir.path().toStdString(), empty.path().toStdString(), "/somewhere/given.txt"},
            FileKind::Calibration);
        QCOMPARE(names(list.files), (std::vector<std::string>{"a.CSV", "b.json", "given.txt"}));
        QCOMPARE(list.errors.size(), size_t(1));
        QCOMPARE(QString::fromStdString(list.errors[0]),
                 empty.path() + ": the folder holds no .json or .csv files");
    }

    void extensionsFromTheTable() {
        QVERIFY(hasExtensionOf("x/run.kvbe.json", FileKind::Scenario));
        QVERIFY(!hasExtensionOf("x/config.json", FileKind::Scenario));
        QVERIFY(hasExtensionOf("x/t.JSONL.gz", FileKind::Trace));
        QVERIFY(!hasExtensionOf("x/.json", FileKind::Calibration));
        for (const auto& k : fileKinds())
            QVERIFY(!k.extensions.empty());
    }
};

QTEST_GUILESS_MAIN(TestFileKind)
#include "tst_file_kind.moc"
