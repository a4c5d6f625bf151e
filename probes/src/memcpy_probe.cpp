// host-memcpy: each thread copies its slice of a large source buffer into a destination buffer,
// chunk by chunk, for a warm-up and five equal windows; then the copy is checked byte for byte.
#include "kvbe/probes/memcpy_probe.h"

#include "io_common.h"
#include "kvbe/base/units.h"
#include "kvbe/probes/buffer_arena.h"
#include "kvbe/probes/data_pattern.h"
#include "kvbe/probes/errno_text.h"
#include "kvbe/probes/io_target.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>
#include <unistd.h>

namespace kvbe::probes {
namespace {

std::uint64_t availableMemory() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kb = 0;
    std::string unit;
    while (in >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024;
    return static_cast<std::uint64_t>(sysconf(_SC_AVPHYS_PAGES)) *
           static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

// Runs fn(thread, begin, end) over [0, bytes) split into `threads` page-aligned slices.
template <class Fn> void forSlices(int threads, std::uint64_t bytes, Fn fn) {
    const std::uint64_t slice = bytes / static_cast<std::uint64_t>(threads) / 4096 * 4096;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        const std::uint64_t begin = slice * static_cast<std::uint64_t>(t);
        const std::uint64_t end = t + 1 == threads ? bytes : begin + slice;
        pool.emplace_back(fn, t, begin, end);
    }
    for (auto& th : pool)
        th.join();
}

constexpr std::uint64_t kChunk = 8 * kMiB;

} // namespace

std::vector<int> defaultMemcpyThreads() {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return cores > 1 ? std::vector<int>{1, cores} : std::vector<int>{1};
}

Result<ProbeOptions> MemcpyProbe::configure(const ProbeArgs& a) {
    ProbeOptions o;
    auto d = parseSeconds(a.text("--duration"));
    if (!d) return Error{"--duration " + d.message()};
    o.durationS = *d;
    auto b = parseWholeBytes(a.text("--buffer-size"));
    if (!b) return Error{"--buffer-size " + b.message()};
    o.bufferBytes = *b;
    if (const std::string threads = a.text("--threads"); !threads.empty()) {
        // Whole numbers here; run() checks them against the probe's range.
        auto list = parseCountList(threads, 0, std::numeric_limits<int>::max());
        if (!list) return Error{"--threads " + list.message()};
        for (auto n : *list)
            o.threads.push_back(static_cast<int>(n));
    }
    return o;
}

ProbeOutcome MemcpyProbe::run(const ProbeOptions& o, ProbeSink& sink) {
    if (!o.dir.empty() || !o.file.empty() || !o.device.empty())
        return reportFailure(sink, ExitCode::Usage,
                             "host-memcpy copies memory: --dir, --file and --device do not apply");
    if (!(o.durationS > 0))
        return reportFailure(sink, ExitCode::BadInput,
                             "--duration: expected a positive time per setting, e.g. 5s or 200ms");
    if (o.bufferBytes < kMiB)
        return reportFailure(sink, ExitCode::BadInput,
                             "--buffer-size: expected at least 1 MiB per buffer");
    std::vector<int> threads = o.threads.empty() ? defaultMemcpyThreads() : o.threads;
    for (int t : threads)
        if (t < 1 || t > 1024)
            return reportFailure(sink, ExitCode::BadInput,
                                 "--threads " + std::to_string(t) + ": expected 1 to 1024 threads");
    const std::uint64_t bytes = o.bufferBytes / 4096 * 4096;
    const std::uint64_t need = 2 * bytes + 256 * kMiB;
    if (const std::uint64_t avail = availableMemory(); avail < need)
        return reportFailure(sink, ExitCode::CannotRun,
                             "host-memcpy needs two " + formatBlock(bytes) + " buffers and " +
                                 formatBlock(avail) +
                                 " of memory is available; pass a smaller --buffer-size");
    const double warmupS = std::clamp(o.durationS * 0.2, 0.05, 1.0);
    const int repeats = 5;
    nlohmann::ordered_json params;
    params["buffer_bytes"] = bytes;
    params["threads"] = threads;
    params["duration_s"] = o.durationS;
    params["warmup_s"] = warmupS;
    params["windows"] = repeats;
    params["memory_bytes"] = 2 * bytes;
    sink.begin(key(), params);
    sink.note("host-memcpy: two " + formatBlock(bytes) +
              " buffers, copy bandwidth counts each byte once");

    BufferArena srcArena(1, bytes),
        dstArena(1, bytes); // touched, huge pages where the kernel grants them
    if (!srcArena || !dstArena)
        return reportFailure(sink, ExitCode::CannotRun,
                             "cannot allocate two " + formatBlock(bytes) + " buffers");
    std::byte* const src = srcArena.at(0);
    std::byte* const dst = dstArena.at(0);
    const int maxThreads = *std::max_element(threads.begin(), threads.end());
    sink.progress(0, "touching the buffers");
    // The source gets the non-zero pattern, the destination zeros: a copy that never happened
    // shows.
    forSlices(maxThreads, bytes, [&](int, std::uint64_t b, std::uint64_t e) {
        fillPattern(src + b, e - b, b);
        std::memset(dst + b, 0, e - b);
    });

    TextTable table;
    table.title = "host-memcpy · two " + formatBlock(bytes) + " buffers";
    table.columns = {"threads", "GB/s", "min–max GB/s"};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    double best = 0;
    for (size_t k = 0; k < threads.size(); ++k) {
        const int n = threads[k];
        sink.progress(static_cast<double>(k) / static_cast<double>(threads.size()),
                      "memcpy, " + std::to_string(n) + " thread" + (n > 1 ? "s" : ""));
        if (k > 0)
            forSlices(n, bytes, [&](int, std::uint64_t b, std::uint64_t e) {
                std::memset(dst + b, 0, e - b);
            });
        IoSetting timing;
        timing.warmupS = warmupS;
        timing.repeatS = o.durationS / repeats;
        timing.repeats = repeats;
        const detail::Windows windows(timing, detail::nowNs());
        std::vector<detail::Tally> tallies(static_cast<size_t>(n), detail::Tally(repeats));
        forSlices(n, bytes, [&](int t, std::uint64_t b, std::uint64_t e) {
            auto& tally = tallies[static_cast<size_t>(t)];
            // At least one whole pass, so the check below sees every byte copied.
            bool fullPass = false;
            for (;;) {
                for (std::uint64_t at = b; at < e; at += kChunk) {
                    const std::uint64_t len = std::min(kChunk, e - at);
                    const std::uint64_t start = detail::nowNs();
                    std::memcpy(dst + at, src + at, len);
                    const std::uint64_t end = detail::nowNs();
                    tally.record(windows.windowOf(end), len, start, end);
                    if (fullPass && (windows.over(end) || stopRequested())) return;
                }
                fullPass = true;
                if (windows.over(detail::nowNs()) || stopRequested()) return;
            }
        });
        if (stopRequested()) return reportFailure(sink, ExitCode::Stopped, stopMessage());
        if (std::memcmp(src, dst, bytes) != 0)
            return reportFailure(
                sink, ExitCode::Failed,
                "host-memcpy: the destination buffer differs from the source after the copy");
        IoMeasurement m;
        m.windowBytes.assign(static_cast<size_t>(repeats), 0);
        m.windowOps.assign(static_cast<size_t>(repeats), 0);
        for (auto& t : tallies)
            detail::mergeTally(m, std::move(t));
        m.windowSeconds = windows.windowSeconds();
        const IoStats st = summarize(m);
        ProbePoint p;
        p.series = series::kHostMemcpy;
        p.x = n;
        p.meta["threads"] = n;
        p.meta["buffer_bytes"] = bytes;
        setWindowedRate(p, st, repeats, timing.repeatS);
        sink.point(p);
        nlohmann::ordered_json row = p.meta;
        row["GBps"] = st.medianGBps;
        rows.push_back(row);
        best = std::max(best, st.medianGBps);
        table.rows.push_back({std::to_string(n), fixedDecimals(st.medianGBps, 2),
                              fixedDecimals(st.minGBps, 2) + "–" + fixedDecimals(st.maxGBps, 2)});
    }
    table.footnotes.push_back(
        "GB/s = 1e9 bytes copied per second (memory traffic is about twice that: read + write), "
        "median of " +
        std::to_string(repeats) + " windows of " + formatSeconds(o.durationS / repeats) +
        " after " + formatSeconds(warmupS) + " warm-up; the copy is verified byte for byte");
    sink.table(table);
    nlohmann::ordered_json summary;
    summary["probe"] = key();
    summary["metrics"] = nlohmann::ordered_json::array(
        {{{"name", "best host memcpy bandwidth"}, {"unit", "GB/s"}, {"value", best}}});
    summary["settings"] = rows;
    sink.progress(1, "done");
    sink.result(summary);
    return {};
}

} // namespace kvbe::probes
