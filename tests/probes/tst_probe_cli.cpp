// kvbe-cli probe as a child process, the way the GUI and scripts run it: the stream, the exit
// codes and their sentences, --file left untouched, and no scratch file after SIGTERM/SIGINT.
#include "kvbe/probes/probe.h"

#include "probe_test_util.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QtTest>

#include <csignal>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <utime.h>

using namespace kvbe::probes;
using kvbe::test::driveDir;
using kvbe::test::entries;
using kvbe::test::parseStream;
using kvbe::test::runCli;

namespace {

const QStringList kQuick = {"--block-sizes", "128KiB,1MiB", "--queue-depths",
                            "1,4",           "--duration",  "0.2s"};

bool isTmpfs(const char* path) {
    struct statfs fs {};
    return ::statfs(path, &fs) == 0 && static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
}

QByteArray sha256(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(f.readAll(), QCryptographicHash::Sha256);
}

} // namespace

class ProbeCliTest : public QObject {
    Q_OBJECT

  private slots:
    void jsonlStreamParses_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("series");
        QTest::addColumn<int>("points");
        QTest::newRow("nvme-read psync")
            << (QStringList{"nvme-read", "--engine", "psync"} + kQuick) << "read_GBps" << 4;
        QTest::newRow("nvme-read io_uring")
            << (QStringList{"nvme-read", "--engine", "io_uring"} + kQuick) << "read_GBps" << 4;
        QTest::newRow("nvme-write psync")
            << (QStringList{"nvme-write", "--engine", "psync"} + kQuick) << "write_GBps" << 4;
        QTest::newRow("nvme-write io_uring")
            << (QStringList{"nvme-write", "--engine", "io_uring"} + kQuick) << "write_GBps" << 4;
        QTest::newRow("host-memcpy")
            << QStringList{"host-memcpy", "--buffer-size", "16MiB", "--threads",
                           "1,2",         "--duration",    "0.2s"}
            << "memcpy_GBps" << 2;
    }
    void jsonlStreamParses() {
        QFETCH(QStringList, args);
        QFETCH(QString, series);
        QFETCH(int, points);
        auto dir = driveDir();
        const bool drive = args.front() != "host-memcpy";
        if (drive)
            args << "--dir" << dir->path() << "--file-size"
                 << "8MiB";
        const auto run = runCli(QStringList{"probe"} + args + QStringList{"--format", "jsonl"});
        if (run.exitCode == 3 && run.err.contains("io_uring cannot run here"))
            QSKIP("io_uring cannot run here");
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QString problem;
        const auto events = parseStream(run.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.front().kind, ProbeEvent::Kind::Header);
        QCOMPARE(QString::fromStdString(events.front().header()->probe), args.front());
        QCOMPARE(events.back().kind, ProbeEvent::Kind::Result);
        if (drive) {
            const auto& params = events.front().header()->params;
            QCOMPARE(QString::fromStdString(params["engine"].get<std::string>()), args[2]);
            QCOMPARE(QString::fromStdString(params["io"].get<std::string>()), QString("O_DIRECT"));
        }
        int seen = 0;
        for (const auto& e : events) {
            if (e.kind != ProbeEvent::Kind::Point) continue;
            ++seen;
            const auto* p = e.point();
            QCOMPARE(QString::fromStdString(p->series), series);
            QVERIFY(p->y > 0);
            QCOMPARE(QString::fromStdString(p->unit), QString("GB/s"));
            if (drive) QVERIFY(p->meta["p99_us"].get<double>() >= p->meta["p50_us"].get<double>());
        }
        QCOMPARE(seen, points);
        // Notes are lines of the stream, so the window shows them while the probe runs: the
        // engine and why, and each of the summary's notes (buffers not registered, and why).
        QStringList notes;
        for (const auto& e : events)
            if (const auto* n = e.note()) notes << QString::fromStdString(n->message);
        if (drive) {
            const auto& summary = events.back().result()->summary;
            const QString engine =
                QString::fromStdString("engine: " + summary["engine_reason"].get<std::string>());
            QVERIFY2(notes.contains(engine), qPrintable(notes.join('\n')));
            for (const auto& n : summary["notes"])
                QVERIFY2(notes.contains(QString::fromStdString(n.get<std::string>())),
                         qPrintable(notes.join('\n')));
        } else {
            QVERIFY2(!notes.isEmpty() && notes.front().startsWith("host-memcpy: two"),
                     qPrintable(notes.join('\n')));
        }
        QVERIFY(entries(dir->path()).isEmpty());
    }

    void errorsGiveTheirSentenceAndExitCode_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exit");
        QTest::addColumn<QString>("sentence");
        const QString here = QStringLiteral(KVBE_TEST_SCRATCH);
        const QStringList read = {"nvme-read", "--file-size", "8MiB", "--duration", "0.2s"};
        QTest::newRow("queue depth 0")
            << read + QStringList{"--dir", "@", "--queue-depths", "0"} << 1
            << "--queue-depths 0: expected queue depths from 1 to 1024";
        QTest::newRow("block not a multiple of the logical block")
            << read + QStringList{"--dir", "@", "--block-sizes", "1000"} << 1
            << "is not a multiple of the logical block size";
        QTest::newRow("folder as --file")
            << QStringList{"nvme-read", "--file", here} << 1 << "is a folder";
        QTest::newRow("device as --file")
            << QStringList{"nvme-read", "--file", "/dev/null"} << 1 << "named with --device";
        for (const char* block :
             {"/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda", "/dev/loop0"}) {
            struct stat st {};
            if (::stat(block, &st) == 0 && S_ISBLK(st.st_mode)) {
                QTest::newRow("block device as --file")
                    << QStringList{"nvme-read", "--file", block} << 1 << "is a block device";
                break;
            }
        }
        QTest::newRow("--device not a block device")
            << QStringList{"nvme-read", "--device", "/dev/null"} << 1 << "not a block device";
        QTest::newRow("too little space")
            << QStringList{"nvme-read", "--dir", "@", "--file-size", "1024TiB"} << 3
            << "too little space";
        QTest::newRow("no target") << QStringList{"nvme-read"} << 2 << "needs --dir";
        QTest::newRow("--dir and --file")
            << QStringList{"nvme-read", "--dir", "@", "--file", "/dev/null"} << 2 << "excludes";
        QTest::newRow("--file-size with --file")
            << QStringList{"nvme-read", "--file", "/dev/null", "--file-size", "1MiB"} << 2
            << "--file-size sizes the scratch file";
        QTest::newRow("nvme-write --file")
            << QStringList{"nvme-write", "--file", "/dev/null"} << 2 << "--file";
        QTest::newRow("unknown engine")
            << read + QStringList{"--dir", "@", "--engine", "spdk"} << 2 << "spdk";
        QTest::newRow("bad duration")
            << QStringList{"nvme-read", "--dir", "@", "--duration", "soon"} << 1 << "--duration";
        QTest::newRow("bad block size")
            << read + QStringList{"--dir", "@", "--block-sizes", "1MiB,big"} << 1
            << "--block-sizes";
        QTest::newRow("memcpy threads 0")
            << QStringList{"host-memcpy", "--threads", "0"} << 1 << "--threads 0";
        if (isTmpfs("/dev/shm"))
            QTest::newRow("tmpfs without --buffered")
                << QStringList{"nvme-read", "--dir", "/dev/shm"} << 3
                << "O_DIRECT is not supported on tmpfs";
    }
    void errorsGiveTheirSentenceAndExitCode() {
        QFETCH(QStringList, args);
        QFETCH(int, exit);
        QFETCH(QString, sentence);
        auto dir = driveDir();
        args.replaceInStrings(QRegularExpression("^@$"), dir->path());
        const auto run = runCli(QStringList{"probe"} + args);
        QCOMPARE(run.status, QProcess::NormalExit);
        QCOMPARE(run.exitCode, exit);
        QVERIFY2(QString::fromUtf8(run.err).contains(sentence), run.err.constData());
        QVERIFY(entries(dir->path()).isEmpty());
        // The same failure as a stream: a header, then the error line, and the same exit code.
        if (exit != 2) {
            const auto jsonl =
                runCli(QStringList{"probe"} + args + QStringList{"--format", "jsonl"});
            QCOMPARE(jsonl.exitCode, exit);
            QString problem;
            const auto events = parseStream(jsonl.out, &problem);
            QVERIFY2(problem.isEmpty(), qPrintable(problem));
            QCOMPARE(events.size(), size_t(2));
            QCOMPARE(events.back().kind, ProbeEvent::Kind::Error);
            QVERIFY(QString::fromStdString(events.back().error()->message).contains(sentence));
        }
    }

    void unwritableFolderIsRefused() {
        auto dir = driveDir();
        QVERIFY(::chmod(dir->path().toLocal8Bit().constData(), 0555) == 0);
        // Root writes anywhere; run the child as nobody so the folder's mode counts.
        const bool root = ::geteuid() == 0;
        if (root && ::access(KVBE_CLI_PATH, X_OK) != 0)
            QSKIP("kvbe-cli is not executable by others");
        const auto run = runCli(
            QStringList{"probe", "nvme-read", "--dir", dir->path(), "--file-size", "8MiB"} + kQuick,
            [root] {
                if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(99);
            });
        ::chmod(dir->path().toLocal8Bit().constData(), 0755);
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.contains("is not writable"), run.err.constData());
        QVERIFY(entries(dir->path()).isEmpty());
    }

    void fileSizeLimitIsRefused() {
        auto dir = driveDir();
        const auto run = runCli(
            QStringList{"probe", "nvme-read", "--dir", dir->path(), "--file-size", "8MiB"} + kQuick,
            [] {
                rlimit small{4 * 1024 * 1024, RLIM_INFINITY};
                ::setrlimit(RLIMIT_FSIZE, &small);
            });
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.contains("file-size limit (ulimit -f)"), run.err.constData());
        QVERIFY(entries(dir->path()).isEmpty());
    }

    void bufferedOnTmpfsWorksAndIsLabelled() {
        if (!isTmpfs("/dev/shm")) QSKIP("/dev/shm is not tmpfs here");
        QTemporaryDir dir(QStringLiteral("/dev/shm/kvbe-probe-test-XXXXXX"));
        const QStringList args = QStringList{"probe",       "nvme-read", "--dir",     dir.path(),
                                             "--file-size", "8MiB",      "--buffered"} +
                                 kQuick;
        const auto jsonl = runCli(args + QStringList{"--format", "jsonl"});
        QVERIFY2(jsonl.exitCode == 0, jsonl.err.constData());
        QString problem;
        const auto events = parseStream(jsonl.out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(QString::fromStdString(events.front().header()->params["io"].get<std::string>()),
                 QString("buffered"));
        QVERIFY(events.front().header()->params["buffered"].get<bool>());
        for (const auto& e : events)
            if (e.kind == ProbeEvent::Kind::Point) {
                QCOMPARE(QString::fromStdString(e.point()->series), QString("read_GBps_buffered"));
                QCOMPARE(QString::fromStdString(e.point()->meta["io"].get<std::string>()),
                         QString("buffered"));
            }
        QVERIFY(events.back().result()->summary["buffered"].get<bool>());
        const auto table = runCli(args);
        QCOMPARE(table.exitCode, 0);
        const QString text = QString::fromUtf8(table.out);
        QVERIFY2(text.contains("BUFFERED (page cache, not the drive)"), qPrintable(text));
        QCOMPARE(text.count(" BUFFERED\n"), 4); // every row says so
        QVERIFY(entries(dir.path()).isEmpty());
    }

    void fileIsNeverWritten_data() {
        QTest::addColumn<QString>("engine");
        QTest::newRow("psync") << "psync";
        QTest::newRow("io_uring") << "io_uring";
    }
    void fileIsNeverWritten() {
        QFETCH(QString, engine);
        auto dir = driveDir();
        const QString path = dir->path() + "/existing.bin";
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            QByteArray data(4 * 1024 * 1024, '\0');
            for (int i = 0; i < data.size(); ++i)
                data[i] = static_cast<char>((static_cast<unsigned>(i) * 7919u) % 251u + 1u);
            f.write(data);
        }
        utimbuf old{1'000'000'000, 1'000'000'000}; // 2001: any write would move it
        QCOMPARE(::utime(path.toLocal8Bit().constData(), &old), 0);
        const QByteArray before = sha256(path);
        const auto run =
            runCli(QStringList{"probe", "nvme-read", "--file", path, "--engine", engine} + kQuick);
        if (run.exitCode == 3 && run.err.contains("io_uring cannot run here"))
            QSKIP("io_uring cannot run here");
        QVERIFY2(run.exitCode == 0, run.err.constData());
        QVERIFY(run.out.contains("read-only"));
        QCOMPARE(sha256(path), before);
        QCOMPARE(QFileInfo(path).lastModified().toSecsSinceEpoch(), qint64(1'000'000'000));
        QCOMPARE(entries(dir->path()), QStringList{"existing.bin"});
    }

    void stopLeavesNoScratchFile_data() {
        QTest::addColumn<int>("signal");
        QTest::addColumn<QString>("when");
        QTest::newRow("SIGTERM while measuring") << SIGTERM << "read 128 KiB";
        QTest::newRow("SIGINT while measuring") << SIGINT << "read 128 KiB";
        QTest::newRow("SIGTERM while writing the scratch file") << SIGTERM << "writing the";
    }
    void stopLeavesNoScratchFile() {
        QFETCH(int, signal);
        QFETCH(QString, when);
        auto dir = driveDir();
        QProcess p;
        p.start(KVBE_CLI_PATH, {"probe", "nvme-read", "--dir", dir->path(), "--file-size", "256MiB",
                                "--block-sizes", "128KiB", "--queue-depths", "1", "--duration",
                                "60s", "--format", "jsonl"});
        QVERIFY(p.waitForStarted(10000));
        QByteArray out;
        while (!out.contains(when.toUtf8()) && p.state() == QProcess::Running) {
            p.waitForReadyRead(10000);
            out += p.readAllStandardOutput();
        }
        QVERIFY2(out.contains(when.toUtf8()), out.constData());
        // The probe holds a scratch file that has no name: /proc shows it as deleted.
        bool holdsDeleted = false;
        const QString fds = QString("/proc/%1/fd").arg(p.processId());
        for (const QString& fd :
             QDir(fds).entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
            char target[4096] = {};
            const ssize_t n = ::readlink(QString(fds + "/" + fd).toLocal8Bit().constData(), target,
                                         sizeof target - 1);
            const QString link = QString::fromLocal8Bit(target, n > 0 ? static_cast<int>(n) : 0);
            if (link.startsWith(dir->path()) && link.endsWith("(deleted)")) holdsDeleted = true;
        }
        QVERIFY(holdsDeleted);
        QVERIFY(entries(dir->path()).isEmpty());
        QCOMPARE(::kill(static_cast<pid_t>(p.processId()), signal), 0);
        QVERIFY(p.waitForFinished(10000));
        out += p.readAllStandardOutput();
        QCOMPARE(p.exitStatus(), QProcess::NormalExit);
        QCOMPARE(p.exitCode(), 130);
        QString problem;
        const auto events = parseStream(out, &problem);
        QVERIFY2(problem.isEmpty(), qPrintable(problem));
        QCOMPARE(events.back().kind, ProbeEvent::Kind::Error);
        const QString name = signal == SIGTERM ? "SIGTERM" : "SIGINT";
        QVERIFY(QString::fromStdString(events.back().error()->message)
                    .startsWith("stopped by " + name));
        QVERIFY(entries(dir->path()).isEmpty());
    }

    // The subcommands are the catalog's: `probe list` has every probe in its order, and each
    // subcommand's --help has its description, every option with its help, and its footer.
    void listHasEveryCatalogProbe() {
        const auto run = runCli({"probe", "list", "--format", "json"});
        QCOMPARE(run.exitCode, 0);
        const auto list = nlohmann::json::parse(run.out.toStdString());
        QStringList keys, catalog;
        for (const auto& p : list["probes"])
            keys << QString::fromStdString(p["key"].get<std::string>());
        for (const auto& p : kvbe::probeCatalog())
            catalog << QString::fromUtf8(p.key.data(), int(p.key.size()));
        QCOMPARE(keys, catalog);
        QVERIFY(keys.contains("gpu-gemm-peak"));
    }
    void helpHasEveryCatalogOption_data() {
        QTest::addColumn<QString>("key");
        for (const auto& p : kvbe::probeCatalog())
            QTest::newRow(p.key.data()) << QString::fromUtf8(p.key.data(), int(p.key.size()));
    }
    void helpHasEveryCatalogOption() {
        QFETCH(QString, key);
        const auto* probe = kvbe::findProbe(key.toStdString());
        QVERIFY(probe);
        const auto run = runCli({"probe", key, "--help"});
        QCOMPARE(run.exitCode, 0);
        const std::string text = run.out.toStdString();
        const auto has = [&text](std::string_view s) {
            return text.find(std::string(s)) != std::string::npos;
        };
        QVERIFY2(has(probe->description), text.c_str());
        QVERIFY2(has(probe->footer.substr(0, probe->footer.find('\n'))), text.c_str());
        QVERIFY2(has("--format"), text.c_str());
        for (const auto& o : probe->options) {
            QVERIFY2(has(std::string(o.flag) + " "), o.flag.data());
            QVERIFY2(has(o.help), o.help.data());
        }
    }

    void helpDocumentsExitCodesAndMemory() {
        const auto run = runCli({"probe", "nvme-read", "--help"});
        QCOMPARE(run.exitCode, 0);
        const QString text = QString::fromUtf8(run.out);
        for (int code : {0, 1, 2, 3, 4, 130})
            QVERIFY2(text.contains(QString("%1  ").arg(code, 3)), qPrintable(text));
        QVERIFY(text.contains("Memory: queue depth × block size"));
    }
};

QTEST_GUILESS_MAIN(ProbeCliTest)
#include "tst_probe_cli.moc"
