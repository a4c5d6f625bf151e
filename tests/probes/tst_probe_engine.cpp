// The I/O engines on small scratch files: a size-based pass reads every byte exactly once and
// finds the pattern; a time-based run gives sane numbers; corruption and stops are noticed.
#include "kvbe/probes/io_engine.h"
#include "kvbe/probes/nvme_probe.h"
#include "kvbe/probes/stop_signal.h"

#include "probe_test_util.h"

#include <QtTest>

#include <csignal>
#include <fcntl.h>
#include <unistd.h>

using namespace kvbe::probes;
using kvbe::test::driveDir;

namespace {

std::unique_ptr<IoEngine> engineNamed(const QString& name) {
    if (name == "psync") return makePsyncEngine();
    std::string why;
    return makeUringEngine(why);
}

IoTarget laidOutScratch(const QString& dir, std::uint64_t bytes) {
    auto target = openTarget({dir.toStdString(), "", "", bytes, true, true});
    if (!target) qFatal("cannot open a scratch file: %s", target.message().c_str());
    if (!target->layOut({})) qFatal("cannot write the scratch file");
    return std::move(*target);
}

void engineRows() {
    QTest::addColumn<QString>("engine");
    for (const char* e : {"psync", "io_uring"})
        QTest::newRow(e) << QString(e);
}

} // namespace

class ProbeEngineTest : public QObject {
    Q_OBJECT

  private slots:
    void init() { clearStop(); }

    void sizeBasedPassReadsEveryByteOnce_data() {
        QTest::addColumn<QString>("engine");
        QTest::addColumn<qulonglong>("block");
        QTest::addColumn<int>("depth");
        for (const char* e : {"psync", "io_uring"}) {
            QTest::addRow("%s 128 KiB QD 1", e) << QString(e) << qulonglong(128 * kKiB) << 1;
            QTest::addRow("%s 128 KiB QD 4", e) << QString(e) << qulonglong(128 * kKiB) << 4;
            QTest::addRow("%s 1 MiB QD 16", e) << QString(e) << qulonglong(kMiB) << 16;
        }
    }
    void sizeBasedPassReadsEveryByteOnce() {
        QFETCH(QString, engine);
        QFETCH(qulonglong, block);
        QFETCH(int, depth);
        auto e = engineNamed(engine);
        if (!e) QSKIP("io_uring cannot run here");
        auto dir = driveDir();
        const std::uint64_t size = 8 * kMiB;
        IoTarget target = laidOutScratch(dir->path(), size);
        IoSetting s;
        s.blockBytes = block;
        s.queueDepth = depth;
        s.totalBytes = size;
        s.verify = VerifyMode::All;
        auto m = e->run(target, s);
        QVERIFY2(m.ok(), m.ok() ? "" : m.message().c_str());
        QCOMPARE(m->windowBytes.size(), size_t(1));
        QCOMPARE(m->windowBytes[0], size);
        QCOMPARE(m->windowOps[0], size / block);
        QCOMPARE(m->verifiedBlocks, size / block); // every block matched the pattern of its offset
        QCOMPARE(m->latencyUs.size(), static_cast<size_t>(size / block));
    }

    void timeBasedRunGivesSaneNumbers_data() {
        QTest::addColumn<QString>("engine");
        QTest::addColumn<bool>("write");
        for (const char* e : {"psync", "io_uring"}) {
            QTest::addRow("%s read", e) << QString(e) << false;
            QTest::addRow("%s write", e) << QString(e) << true;
        }
    }
    void timeBasedRunGivesSaneNumbers() {
        QFETCH(QString, engine);
        QFETCH(bool, write);
        auto e = engineNamed(engine);
        if (!e) QSKIP("io_uring cannot run here");
        auto dir = driveDir();
        IoTarget target = laidOutScratch(dir->path(), 8 * kMiB);
        IoSetting s;
        s.blockBytes = 256 * kKiB;
        s.queueDepth = 4;
        s.write = write;
        s.warmupS = 0.05;
        s.repeatS = 0.04;
        s.repeats = 5;
        s.verify = write ? VerifyMode::None : VerifyMode::Sample;
        auto m = e->run(target, s);
        QVERIFY2(m.ok(), m.ok() ? "" : m.message().c_str());
        QCOMPARE(m->windowBytes.size(), size_t(5));
        const IoStats st = summarize(*m);
        QVERIFY(st.ops > 0);
        QCOMPARE(st.bytes, st.ops * s.blockBytes);
        QVERIFY(st.medianGBps > 0);
        QVERIFY(st.minGBps <= st.medianGBps && st.medianGBps <= st.maxGBps);
        QVERIFY(st.p50Us > 0 && st.p99Us >= st.p50Us);
        QCOMPARE(m->latencyUs.size(), static_cast<size_t>(st.ops));
        if (!write) QVERIFY(m->verifiedBlocks >= 1);
    }

    void corruptedDataIsReported_data() { engineRows(); }
    void corruptedDataIsReported() {
        QFETCH(QString, engine);
        auto e = engineNamed(engine);
        if (!e) QSKIP("io_uring cannot run here");
        auto dir = driveDir();
        IoTarget target = laidOutScratch(dir->path(), 2 * kMiB);
        // Overwrite one 4 KiB page in the middle, buffered, behind the probe's back.
        std::vector<char> junk(4096, 'x');
        const int fd = ::open(("/proc/self/fd/" + std::to_string(target.fd())).c_str(), O_RDWR);
        QVERIFY(fd >= 0);
        QCOMPARE(::pwrite(fd, junk.data(), junk.size(), static_cast<off_t>(kMiB + 4096)),
                 ssize_t(4096));
        QCOMPARE(::fsync(fd), 0);
        ::close(fd);
        IoSetting s;
        s.blockBytes = 512 * kKiB;
        s.queueDepth = 2;
        s.totalBytes = 2 * kMiB;
        s.verify = VerifyMode::All;
        auto m = e->run(target, s);
        QVERIFY(!m.ok());
        QVERIFY2(m.message().find("byte " + std::to_string(kMiB + 4096)) != std::string::npos,
                 m.message().c_str());
        QVERIFY(m.message().find("is not what was written") != std::string::npos);
    }

    void aStopEndsTheRun_data() { engineRows(); }
    void aStopEndsTheRun() {
        QFETCH(QString, engine);
        auto e = engineNamed(engine);
        if (!e) QSKIP("io_uring cannot run here");
        auto dir = driveDir();
        IoTarget target = laidOutScratch(dir->path(), 2 * kMiB);
        IoSetting s;
        s.blockBytes = 128 * kKiB;
        s.queueDepth = 4;
        s.warmupS = 60; // would run for minutes without the stop
        s.repeatS = 60;
        requestStop(SIGTERM);
        auto m = e->run(target, s);
        QVERIFY(m.ok());
        QVERIFY(m->stopped);
        QCOMPARE(
            QString::fromStdString(stopMessage()),
            QString(
                "stopped by SIGTERM before the probe finished; no scratch file is left behind"));
        clearStop();
    }

    void statistics() {
        QCOMPARE(median({4, 1, 3, 2}), 2.5);
        QCOMPARE(median({5, 1, 3}), 3.0);
        // Quantiles interpolate between order statistics at rank q·(n − 1): of 1 … 100, the
        // median sits halfway between 50 and 51, p99 at rank 98.01, a hundredth of the way from
        // 99 to 100.
        std::vector<double> v;
        for (int i = 1; i <= 100; ++i)
            v.push_back(i);
        QCOMPARE(quantile(v, 0.5), 50.5);
        QCOMPARE(quantile(v, 0.99), 99.01);
        QCOMPARE(quantile(v, 0), 1.0);
        QCOMPARE(quantile(v, 1), 100.0);
        QCOMPARE(quantile({7}, 0.99), 7.0);
        QCOMPARE(quantile({}, 0.5), 0.0);
    }
};

QTEST_GUILESS_MAIN(ProbeEngineTest)
#include "tst_probe_engine.moc"
