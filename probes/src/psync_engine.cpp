// The portable engine: one thread per queue slot, each doing blocking pread/pwrite of a whole
// block (short transfers and EINTR/EAGAIN continue where they stopped).
#include "io_common.h"

#include "kvbe/probes/stop_signal.h"

#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>
#include <unistd.h>

namespace kvbe::probes {
namespace {

class PsyncEngine : public IoEngine {
  public:
    std::string name() const override { return "psync"; }

    Result<IoMeasurement> run(const IoTarget& target, const IoSetting& s) override {
        using namespace detail;
        if (s.totalBytes % s.blockBytes != 0)
            return Error{"a size-based run needs a whole number of blocks"};
        const int workers = s.queueDepth;
        BufferArena buffers(static_cast<size_t>(workers), s.blockBytes);
        if (!buffers)
            return Error{"cannot allocate " + std::to_string(workers) + " × " +
                         formatBlock(s.blockBytes) + " of I/O buffers"};
        if (s.write)
            for (int i = 0; i < workers; ++i)
                fillPattern(buffers.at(static_cast<size_t>(i)), s.blockBytes, 0);
        SharedCursor cursor;
        const Windows windows(s, nowNs());
        const int windowCount = windows.windowCount();
        std::vector<Tally> tallies(static_cast<size_t>(workers), Tally(windowCount));
        std::mutex errorMutex;
        std::optional<std::string> failure;
        std::atomic<bool> abort{false};

        auto worker = [&](int id) {
            Tally& tally = tallies[static_cast<size_t>(id)];
            Offsets offsets(s, target.size(), static_cast<std::uint64_t>(id) + 1, &cursor);
            std::byte* buf = buffers.at(static_cast<size_t>(id));
            auto fail = [&](std::string message) {
                std::lock_guard lock(errorMutex);
                if (!failure) failure = std::move(message);
                abort = true;
            };
            for (;;) {
                const std::uint64_t start = nowNs();
                if (abort.load(std::memory_order_relaxed) || stopRequested() || windows.over(start))
                    return;
                std::uint64_t offset = 0;
                if (!offsets.next(offset)) return;
                std::uint64_t done = 0;
                while (done < s.blockBytes) {
                    const size_t len = static_cast<size_t>(s.blockBytes - done);
                    const off_t at = static_cast<off_t>(offset + done);
                    const ssize_t n = s.write ? ::pwrite(target.fd(), buf + done, len, at)
                                              : ::pread(target.fd(), buf + done, len, at);
                    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                        if (stopRequested()) return;
                        ++tally.requeued;
                        continue;
                    }
                    if (n < 0) return fail(ioErrorMessage(target, s, offset + done, errno));
                    if (n == 0)
                        return fail(
                            ioErrorMessage(target, s, offset + done, s.write ? ENOSPC : ENODATA) +
                            " (the transfer stopped short)");
                    if (static_cast<std::uint64_t>(n) < len) ++tally.requeued;
                    done += static_cast<std::uint64_t>(n);
                }
                const std::uint64_t end = nowNs();
                const int window = windows.windowOf(end);
                if (!s.write && tally.wantsVerify(s.verify, window)) {
                    const size_t bad = firstPatternMismatch(buf, s.blockBytes, offset);
                    if (bad != s.blockBytes) return fail(mismatchMessage(target, offset, bad));
                    ++tally.verified;
                }
                tally.record(window, s.blockBytes, start, end);
            }
        };

        const std::uint64_t begin = nowNs();
        std::vector<std::thread> threads;
        threads.reserve(static_cast<size_t>(workers));
        for (int i = 0; i < workers; ++i)
            threads.emplace_back(worker, i);
        for (auto& t : threads)
            t.join();
        if (failure) return Error{*failure};

        IoMeasurement m;
        m.windowBytes.assign(static_cast<size_t>(windowCount), 0);
        m.windowOps.assign(static_cast<size_t>(windowCount), 0);
        for (auto& t : tallies)
            detail::mergeTally(m, std::move(t));
        m.windowSeconds =
            s.totalBytes ? static_cast<double>(nowNs() - begin) / 1e9 : windows.windowSeconds();
        m.stopped = stopRequested();
        return m;
    }
};

} // namespace

std::unique_ptr<IoEngine> makePsyncEngine() {
    return std::make_unique<PsyncEngine>();
}

} // namespace kvbe::probes
