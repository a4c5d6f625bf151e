// The io_uring engine: one ring, the file and the queue-depth buffers registered with it, the
// ring kept full. Negative results are errnos: -EAGAIN and -EINTR are sent again as they were,
// short transfers are sent again for the rest, anything else is an error with its offset.
#include "io_common.h"

#include "kvbe/probes/stop_signal.h"

#include <cerrno>
#include <fstream>
#include <liburing.h>
#include <optional>
#include <sys/resource.h>

namespace kvbe::probes {
namespace {

struct Ring {
    io_uring ring{};
    bool ready = false;
    ~Ring() {
        if (ready) io_uring_queue_exit(&ring);
    }
};

std::string disabledSysctl() {
    std::ifstream in("/proc/sys/kernel/io_uring_disabled");
    int v = 0;
    if (in >> v && v != 0) return "; kernel.io_uring_disabled = " + std::to_string(v);
    return "";
}

class UringEngine : public IoEngine {
  public:
    std::string name() const override { return "io_uring"; }

    Result<IoMeasurement> run(const IoTarget& target, const IoSetting& s) override {
        using namespace detail;
        if (s.totalBytes % s.blockBytes != 0)
            return Error{"a size-based run needs a whole number of blocks"};
        const unsigned qd = static_cast<unsigned>(s.queueDepth);
        BufferArena buffers(qd, s.blockBytes);
        if (!buffers)
            return Error{"cannot allocate " + std::to_string(qd) + " × " +
                         formatBlock(s.blockBytes) + " of I/O buffers"};
        std::vector<iovec> iov;
        for (unsigned i = 0; i < qd; ++i) {
            if (s.write) fillPattern(buffers.at(i), s.blockBytes, 0);
            iov.push_back({buffers.at(i), s.blockBytes});
        }
        // Declared after the buffers: the ring goes first, then the memory it pointed into.
        Ring ring;
        int ret = io_uring_queue_init(qd, &ring.ring, 0);
        if (ret < 0)
            return Error{"io_uring_queue_init(" + std::to_string(qd) +
                         ") failed: " + errnoText(-ret)};
        ring.ready = true;

        IoMeasurement m;
        int fd = target.fd();
        const bool fixedFile = io_uring_register_files(&ring.ring, &fd, 1) == 0;
        if (!fixedFile) m.notes.push_back("file not registered with io_uring");
        ret = io_uring_register_buffers(&ring.ring, iov.data(), qd);
        const bool fixedBuffers = ret == 0;
        if (!fixedBuffers) {
            rlimit lock{};
            getrlimit(RLIMIT_MEMLOCK, &lock);
            m.notes.push_back(
                "buffers not registered (" + errnoText(-ret) +
                "; QD × block = " + formatBlock(s.blockBytes * qd) + ", RLIMIT_MEMLOCK " +
                (lock.rlim_cur == RLIM_INFINITY ? "unlimited" : formatBlock(lock.rlim_cur)) +
                "): plain reads and writes instead");
        }

        struct Slot {
            std::uint64_t offset = 0, done = 0, start = 0;
        };
        std::vector<Slot> slots(qd);
        SharedCursor cursor;
        Offsets offsets(s, target.size(), 1, &cursor);
        const Windows windows(s, nowNs());
        Tally tally(windows.windowCount());
        const std::uint64_t begin = nowNs();

        auto prep = [&](unsigned i) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring.ring);
            if (!sqe) {
                io_uring_submit(&ring.ring);
                sqe = io_uring_get_sqe(&ring.ring);
            }
            Slot& sl = slots[i];
            std::byte* buf = buffers.at(i) + sl.done;
            const unsigned len = static_cast<unsigned>(s.blockBytes - sl.done);
            const std::uint64_t at = sl.offset + sl.done;
            const int file = fixedFile ? 0 : fd;
            if (fixedBuffers) {
                if (s.write)
                    io_uring_prep_write_fixed(sqe, file, buf, len, at, static_cast<int>(i));
                else
                    io_uring_prep_read_fixed(sqe, file, buf, len, at, static_cast<int>(i));
            } else {
                if (s.write)
                    io_uring_prep_write(sqe, file, buf, len, at);
                else
                    io_uring_prep_read(sqe, file, buf, len, at);
            }
            if (fixedFile) sqe->flags |= IOSQE_FIXED_FILE;
            io_uring_sqe_set_data(sqe, reinterpret_cast<void*>(static_cast<std::uintptr_t>(i)));
        };
        auto startNew = [&](unsigned i, std::uint64_t now) {
            if (windows.over(now) || stopRequested()) return false;
            std::uint64_t offset = 0;
            if (!offsets.next(offset)) return false;
            slots[i] = Slot{offset, 0, now};
            prep(i);
            return true;
        };

        unsigned inflight = 0;
        for (unsigned i = 0; i < qd; ++i)
            if (startNew(i, nowNs())) ++inflight;
        std::optional<std::string> failure;
        bool draining = false;
        __kernel_timespec wait{0, 100'000'000}; // poll the stop flag every 100 ms on a hung drive
        std::uint64_t drainDeadline = 0;

        while (inflight > 0) {
            if (!draining && (failure || stopRequested())) {
                draining = true;
                drainDeadline = nowNs() + 200'000'000;
            }
            if (draining && nowNs() > drainDeadline) break;
            io_uring_cqe* first = nullptr;
            ret = io_uring_submit_and_wait_timeout(&ring.ring, &first, 1, &wait, nullptr);
            if (ret < 0 && ret != -ETIME && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
                failure = "io_uring_submit_and_wait failed: " + errnoText(-ret);
                break;
            }
            unsigned head = 0, seen = 0;
            io_uring_cqe* cqe = nullptr;
            io_uring_for_each_cqe(&ring.ring, head, cqe) {
                ++seen;
                const unsigned i = static_cast<unsigned>(
                    reinterpret_cast<std::uintptr_t>(io_uring_cqe_get_data(cqe)));
                const int res = cqe->res;
                Slot& sl = slots[i];
                if (draining) {
                    --inflight;
                    continue;
                }
                if (res == -EAGAIN || res == -EINTR) {
                    ++tally.requeued;
                    prep(i);
                    continue;
                }
                if (res <= 0) {
                    failure = ioErrorMessage(target, s, sl.offset + sl.done,
                                             res < 0 ? -res : (s.write ? ENOSPC : ENODATA));
                    if (res == 0) *failure += " (the transfer stopped short)";
                    --inflight;
                    continue;
                }
                sl.done += static_cast<std::uint64_t>(res);
                if (sl.done < s.blockBytes) {
                    ++tally.requeued;
                    prep(i);
                    continue;
                }
                const std::uint64_t end = nowNs();
                const int window = windows.windowOf(end);
                if (!s.write && tally.wantsVerify(s.verify, window)) {
                    const size_t bad = firstPatternMismatch(buffers.at(i), s.blockBytes, sl.offset);
                    if (bad != s.blockBytes && !failure)
                        failure = mismatchMessage(target, sl.offset, bad);
                    else
                        ++tally.verified;
                }
                tally.record(window, s.blockBytes, sl.start, end);
                if (failure || !startNew(i, end)) --inflight;
            }
            io_uring_cq_advance(&ring.ring, seen);
        }
        if (inflight > 0) {
            // A request did not come back within the drain time (a hung drive, most likely). The
            // kernel may still write into these buffers, so they must outlive the ring: keep them
            // until the process ends, which a stop or failure is about to do.
            buffers.release();
        }
        if (failure) return Error{*failure};
        m.windowBytes.assign(static_cast<size_t>(windows.windowCount()), 0);
        m.windowOps.assign(static_cast<size_t>(windows.windowCount()), 0);
        detail::mergeTally(m, std::move(tally));
        m.windowSeconds =
            s.totalBytes ? static_cast<double>(nowNs() - begin) / 1e9 : windows.windowSeconds();
        m.stopped = stopRequested();
        return m;
    }
};

} // namespace

std::unique_ptr<IoEngine> makeUringEngine(std::string& why) {
    io_uring ring{};
    const int ret = io_uring_queue_init(2, &ring, 0);
    if (ret < 0) {
        why = "io_uring_setup failed: " + errnoText(-ret) + disabledSysctl();
        return nullptr;
    }
    io_uring_queue_exit(&ring);
    return std::make_unique<UringEngine>();
}

} // namespace kvbe::probes
