// Drive-probe targets: the scratch file is written fully with non-zero data, has no name while
// the probe holds it, and every refusal comes with its sentence and exit category.
#include "kvbe/probes/buffer_arena.h"
#include "kvbe/probes/data_pattern.h"
#include "kvbe/probes/errno_text.h"
#include "kvbe/probes/io_target.h"

#include "probe_test_util.h"

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

using namespace kvbe::probes;
using kvbe::test::driveDir;
using kvbe::test::entries;

Q_DECLARE_METATYPE(kvbe::probes::ExitCode)

namespace {

QString firstBlockDevice() {
    for (const char* p : {"/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda", "/dev/loop0"}) {
        struct stat st {};
        if (::stat(p, &st) == 0 && S_ISBLK(st.st_mode)) return p;
    }
    return {};
}

bool isTmpfs(const char* path) {
    struct statfs fs {};
    return ::statfs(path, &fs) == 0 && static_cast<unsigned long>(fs.f_type) == TMPFS_MAGIC;
}

} // namespace

class ProbeScratchTest : public QObject {
    Q_OBJECT

  private slots:
    void patternIsNonZeroAndDependsOnTheOffset_data() {
        QTest::addColumn<qulonglong>("offset");
        QTest::addColumn<int>("length");
        QTest::newRow("start") << 0ull << 4096;
        QTest::newRow("unaligned start and end") << 3ull << 1001;
        QTest::newRow("past 4 GiB") << (1ull << 33) + 5 << 8192;
    }
    void patternIsNonZeroAndDependsOnTheOffset() {
        QFETCH(qulonglong, offset);
        QFETCH(int, length);
        std::vector<std::byte> a(static_cast<size_t>(length)), b(static_cast<size_t>(length));
        fillPattern(a.data(), a.size(), offset);
        for (std::byte v : a)
            QVERIFY(v != std::byte{0});
        QCOMPARE(firstPatternMismatch(a.data(), a.size(), offset), a.size());
        // The same bytes one block further on are different data.
        fillPattern(b.data(), b.size(), offset + 4096);
        QVERIFY(a != b);
        a[static_cast<size_t>(length / 2)] ^= std::byte{0x40};
        QCOMPARE(firstPatternMismatch(a.data(), a.size(), offset), static_cast<size_t>(length / 2));
    }

    void scratchFileIsWrittenFullyAndHasNoName_data() {
        QTest::addColumn<bool>("tmpfile");
        QTest::newRow("O_TMPFILE") << true;
        QTest::newRow("named, unlinked after open") << false;
    }
    void scratchFileIsWrittenFullyAndHasNoName() {
        QFETCH(bool, tmpfile);
        auto dir = driveDir();
        QVERIFY(dir->isValid());
        TargetRequest request;
        request.dir = dir->path().toStdString();
        request.scratchBytes = 4 * kMiB;
        request.allowTmpfile = tmpfile;
        auto target = openTarget(request);
        QVERIFY2(target.ok(), target.ok() ? "" : target.message().c_str());
        QVERIFY(entries(dir->path()).isEmpty()); // already nameless
        if (!tmpfile) QVERIFY(!target->anonymous());
        QVERIFY(target->direct());
        QVERIFY(target->layOut({}).ok());
        QVERIFY(target->laidOut());
        // Every byte on the disk is the non-zero pattern of its offset.
        const size_t size = target->size();
        BufferArena buf(1, size);
        QCOMPARE(::pread(target->fd(), buf.at(0), size, 0), static_cast<ssize_t>(4 * kMiB));
        for (size_t i = 0; i < size; i += 509)
            QVERIFY(buf.at(0)[i] != std::byte{0});
        QCOMPARE(firstPatternMismatch(buf.at(0), size, 0), size);
        QVERIFY(entries(dir->path()).isEmpty());
    }

    void odirectOnTmpfsFailsWithASentence() {
        if (!isTmpfs("/dev/shm")) QSKIP("/dev/shm is not tmpfs here");
        QTemporaryDir dir(QStringLiteral("/dev/shm/kvbe-probe-test-XXXXXX"));
        QVERIFY(dir.isValid());
        TargetRequest request;
        request.dir = dir.path().toStdString();
        request.scratchBytes = kMiB;
        auto target = openTarget(request);
        QVERIFY(!target.ok());
        QCOMPARE(target.error().exit, ExitCode::CannotRun);
        QVERIFY2(target.message().starts_with("O_DIRECT is not supported on tmpfs"),
                 target.message().c_str());
        QVERIFY(target.message().find("--buffered") != std::string::npos);

        request.direct = false; // --buffered
        auto buffered = openTarget(request);
        QVERIFY(buffered.ok());
        QVERIFY(buffered->describe().find("BUFFERED") != std::string::npos);
        QVERIFY(entries(dir.path()).isEmpty());
    }

    void refusals_data() {
        QTest::addColumn<QString>("dir");
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("device");
        QTest::addColumn<ExitCode>("exit");
        QTest::addColumn<QString>("sentence");
        const QString here = QStringLiteral(KVBE_TEST_SCRATCH);
        QTest::newRow("folder as --file")
            << "" << here << "" << ExitCode::BadInput << "is a folder";
        QTest::newRow("character device as --file")
            << ""
            << "/dev/null"
            << "" << ExitCode::BadInput
            << "character device: devices are read only when named with --device";
        const QString block = firstBlockDevice();
        if (!block.isEmpty())
            QTest::newRow("block device as --file")
                << "" << block << "" << ExitCode::BadInput
                << "block device: devices are read only when named with --device";
        QTest::newRow("character device as --device")
            << ""
            << ""
            << "/dev/null" << ExitCode::BadInput << "is not a block device";
        QTest::newRow("missing --dir") << here + "/no-such-folder"
                                       << ""
                                       << "" << ExitCode::BadInput << "expected an existing folder";
        QTest::newRow("missing --file") << "" << here + "/no-such-file"
                                        << "" << ExitCode::BadInput << "expected an existing file";
        QTest::newRow("two targets") << here << "/dev/null"
                                     << "" << ExitCode::Usage << "exactly one";
    }
    void refusals() {
        QFETCH(QString, dir);
        QFETCH(QString, file);
        QFETCH(QString, device);
        QFETCH(ExitCode, exit);
        QFETCH(QString, sentence);
        auto target = openTarget(
            {dir.toStdString(), file.toStdString(), device.toStdString(), kMiB, true, true});
        QVERIFY(!target.ok());
        QCOMPARE(target.error().exit, exit);
        QVERIFY2(QString::fromStdString(target.message()).contains(sentence),
                 target.message().c_str());
    }

    void tooLittleSpaceIsRefusedBeforeWriting() {
        auto dir = driveDir();
        auto target = openTarget(
            {dir->path().toStdString(), "", "", 1024 * 1024 * kGiB, true, true}); // 1 PiB
        QVERIFY(!target.ok());
        QCOMPARE(target.error().exit, ExitCode::CannotRun);
        QVERIFY2(target.message().starts_with("too little space in "), target.message().c_str());
        QVERIFY(entries(dir->path()).isEmpty());
    }

    void fileSizeLimitIsRefusedBeforeWriting() {
        auto dir = driveDir();
        rlimit saved{};
        QCOMPARE(getrlimit(RLIMIT_FSIZE, &saved), 0);
        rlimit small = saved;
        small.rlim_cur = kMiB;
        QCOMPARE(setrlimit(RLIMIT_FSIZE, &small), 0);
        auto target = openTarget({dir->path().toStdString(), "", "", 4 * kMiB, true, true});
        setrlimit(RLIMIT_FSIZE, &saved);
        QVERIFY(!target.ok());
        QCOMPARE(target.error().exit, ExitCode::CannotRun);
        QVERIFY2(target.message().find("file-size limit (ulimit -f)") != std::string::npos,
                 target.message().c_str());
    }

    // Two probes cannot have scratch files in one folder at once; the lock goes with the first.
    void oneProbeAtATimePerFolder() {
        auto dir = driveDir();
        const TargetRequest request{dir->path().toStdString(), "", "", 4 * kMiB, false, true};
        {
            auto first = openTarget(request);
            QVERIFY2(first.ok(), first.ok() ? "" : first.message().c_str());
            auto second = openTarget(request);
            QVERIFY(!second.ok());
            QCOMPARE(second.error().exit, ExitCode::CannotRun);
            QVERIFY2(second.message().starts_with("another kvbe probe is measuring in "),
                     second.message().c_str());
        }
        auto third = openTarget(request);
        QVERIFY2(third.ok(), third.ok() ? "" : third.message().c_str());
        QVERIFY(entries(dir->path()).isEmpty());
    }

    // The disk fills up while the scratch file is written (another process took the space after
    // the free-space check): the probe stops with a sentence, and the scratch file is gone.
    void noSpaceInTheMiddleOfTheWrite() {
        QTemporaryDir mountPoint;
        const QByteArray where = mountPoint.path().toUtf8();
        if (::geteuid() != 0 || QProcess::execute("mount", {"-t", "tmpfs", "-o", "size=40m",
                                                            "tmpfs", mountPoint.path()}) != 0)
            QSKIP("needs root to mount a small tmpfs");
        struct Unmount {
            QString path;
            ~Unmount() { QProcess::execute("umount", {path}); }
        } unmount{mountPoint.path()};
        auto target = openTarget({where.toStdString(), "", "", 16 * kMiB, false, true});
        QVERIFY2(target.ok(), target.ok() ? "" : target.message().c_str());
        {
            QFile filler(mountPoint.filePath("filler"));
            QVERIFY(filler.open(QIODevice::WriteOnly));
            const QByteArray mib(int(kMiB), 'x');
            for (int i = 0; i < 32; ++i)
                filler.write(mib);
        }
        auto st = target->layOut(nullptr);
        QVERIFY(!st.ok());
        QCOMPARE(st.error().exit, ExitCode::CannotRun);
        QVERIFY2(st.message().find("writing the scratch file in ") == 0, st.message().c_str());
        QVERIFY2(st.message().find("No space left on device") != std::string::npos,
                 st.message().c_str());
        target = ExitResult<IoTarget>(ProbeOutcome{ExitCode::Failed, "closed"});
        QCOMPARE(entries(mountPoint.path()), QStringList{"filler"});
    }
};

QTEST_GUILESS_MAIN(ProbeScratchTest)
#include "tst_probe_scratch.moc"
