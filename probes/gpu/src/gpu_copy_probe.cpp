// gpu-copy, the nvbandwidth way: for each size, warm up, then per sample hold the stream with a
// spin kernel, queue the copies behind it, release it, and time the copies with events; the
// median of the samples is the figure, and the destination is checked against the source.
//
// Pageable copies get no spin kernel: cudaMemcpyAsync from pageable memory returns only once
// the data is staged, so a host thread queuing it behind a held stream would wait for itself.
#include "cuda_device.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/scenario/scenario.h"
#include "probe_util.h"

#include <cstring>

namespace kvbe::gpu {
using probes::ExitCode;

bool builtWithCuda() {
    return true;
}

Status GpuCopyProbe::available() const {
    return cudaUsable();
}
Status GemmPeakProbe::available() const {
    return cudaUsable();
}
Status PrefillProbe::available() const {
    return cudaUsable();
}

namespace {

enum class Dir { H2D, D2H, Both };
CopyDirection directionOf(Dir d) {
    return d == Dir::H2D   ? CopyDirection::HostToGpu
           : d == Dir::D2H ? CopyDirection::GpuToHost
                           : CopyDirection::Both;
}
const char* dirLabel(Dir d) {
    return d == Dir::H2D ? "H2D" : d == Dir::D2H ? "D2H" : "both ways";
}

constexpr std::uint64_t kSpinTimeoutNs = 20'000'000'000ull;

struct CopyBuffers {
    Buffer devSrc, devDst, pinnedSrc, pinnedDst, pageableSrc, pageableDst, check;
    Buffer flags; // pinned: [0] release, [1] timed out
    cudaStream_t s1 = nullptr, s2 = nullptr;
    ~CopyBuffers() {
        if (s1) cudaStreamDestroy(s1);
        if (s2) cudaStreamDestroy(s2);
    }
};

Status allocateAll(CopyBuffers& b, std::uint64_t maxBytes, bool pageable) {
    const auto take = [](Buffer& into, Result<Buffer> r) -> Status {
        if (!r) return r.error();
        into = std::move(*r);
        return Ok{};
    };
    if (auto st = take(b.devSrc, Buffer::allocate(MemoryKind::Device, maxBytes, "the GPU source"));
        !st)
        return st;
    if (auto st =
            take(b.devDst, Buffer::allocate(MemoryKind::Device, maxBytes, "the GPU destination"));
        !st)
        return st;
    if (auto st = take(b.pinnedSrc,
                       Buffer::allocate(MemoryKind::Pinned, maxBytes, "the pinned host source"));
        !st)
        return st;
    if (auto st = take(b.pinnedDst, Buffer::allocate(MemoryKind::Pinned, maxBytes,
                                                     "the pinned host destination"));
        !st)
        return st;
    if (auto st =
            take(b.check, Buffer::allocate(MemoryKind::Pinned, maxBytes, "the read-back check"));
        !st)
        return st;
    if (pageable) {
        if (auto st = take(b.pageableSrc, Buffer::allocate(MemoryKind::Pageable, maxBytes,
                                                           "the pageable host source"));
            !st)
            return st;
        if (auto st = take(b.pageableDst, Buffer::allocate(MemoryKind::Pageable, maxBytes,
                                                           "the pageable host destination"));
            !st)
            return st;
    }
    if (auto st = take(b.flags, Buffer::allocate(MemoryKind::Pinned, 64, "the spin flags")); !st)
        return st;
    KVBE_CUDA_TRY("creating a stream", cudaStreamCreateWithFlags(&b.s1, cudaStreamNonBlocking));
    KVBE_CUDA_TRY("creating a stream", cudaStreamCreateWithFlags(&b.s2, cudaStreamNonBlocking));
    // A pattern no page of zeros or a stale copy can pass for.
    auto* words = b.pinnedSrc.as<std::uint64_t>();
    for (std::uint64_t i = 0; i < maxBytes / 8; ++i)
        words[i] = (i + 1) * 0x9e3779b97f4a7c15ull;
    if (pageable) std::memcpy(b.pageableSrc.get(), b.pinnedSrc.get(), maxBytes);
    KVBE_CUDA_TRY("uploading the copy pattern",
                  cudaMemcpy(b.devSrc.get(), b.pinnedSrc.get(), maxBytes, cudaMemcpyHostToDevice));
    return Ok{};
}

struct Sample {
    double seconds = 0; // the span of all copies
};

// One sample: `reps` copies of `bytes` in the direction(s) asked, timed with events.
Result<Sample> timeCopies(CopyBuffers& b, Dir dir, bool pinned, std::uint64_t bytes, int reps) {
    void* hostSrc = pinned ? b.pinnedSrc.get() : b.pageableSrc.get();
    void* hostDst = pinned ? b.pinnedDst.get() : b.pageableDst.get();
    volatile int* release = b.flags.as<int>();
    int* timedOut = b.flags.as<int>() + 1;
    *release = 0;
    *timedOut = 0;
    EventTimer t1, t2;
    const bool up = dir != Dir::D2H, down = dir != Dir::H2D;
    cudaStream_t upStream = b.s1, downStream = dir == Dir::Both ? b.s2 : b.s1;
    if (pinned) {
        launchSpin(release, timedOut, kSpinTimeoutNs, b.s1);
        if (dir == Dir::Both) launchSpin(release, timedOut, kSpinTimeoutNs, b.s2);
    }
    if (up) {
        t1.start(upStream);
        for (int r = 0; r < reps; ++r)
            cudaMemcpyAsync(b.devDst.get(), hostSrc, bytes, cudaMemcpyHostToDevice, upStream);
        t1.stop(upStream);
    }
    if (down) {
        t2.start(downStream);
        for (int r = 0; r < reps; ++r)
            cudaMemcpyAsync(hostDst, b.devSrc.get(), bytes, cudaMemcpyDeviceToHost, downStream);
        t2.stop(downStream);
    }
    __atomic_store_n(const_cast<int*>(release), 1, __ATOMIC_SEQ_CST);
    KVBE_CUDA_TRY("the timed copies", cudaStreamSynchronize(b.s1));
    KVBE_CUDA_TRY("the timed copies", cudaStreamSynchronize(b.s2));
    if (*timedOut)
        return Error{
            "the copies did not start within 20 s of being queued (the GPU is busy or hung)"};
    float ms = 0;
    if (up && !down)
        KVBE_CUDA_TRY("reading the event timer",
                      cudaEventElapsedTime(&ms, t1.startEvent(), t1.stopEvent()));
    else if (down && !up)
        KVBE_CUDA_TRY("reading the event timer",
                      cudaEventElapsedTime(&ms, t2.startEvent(), t2.stopEvent()));
    else {
        // Both ways: from the earlier start to the later stop.
        float startB = 0, stopA = 0, stopB = 0;
        KVBE_CUDA_TRY("reading the event timer",
                      cudaEventElapsedTime(&startB, t1.startEvent(), t2.startEvent()));
        KVBE_CUDA_TRY("reading the event timer",
                      cudaEventElapsedTime(&stopA, t1.startEvent(), t1.stopEvent()));
        KVBE_CUDA_TRY("reading the event timer",
                      cudaEventElapsedTime(&stopB, t1.startEvent(), t2.stopEvent()));
        ms = std::max(stopA, stopB) - std::min(0.0f, startB);
    }
    return Sample{ms / 1e3};
}

Status verify(CopyBuffers& b, Dir dir, bool pinned, std::uint64_t bytes) {
    const void* pattern = b.pinnedSrc.get();
    if (dir != Dir::D2H) {
        KVBE_CUDA_TRY("reading back the copied data",
                      cudaMemcpy(b.check.get(), b.devDst.get(), bytes, cudaMemcpyDeviceToHost));
        if (std::memcmp(b.check.get(), pattern, bytes) != 0)
            return Error{"host→GPU copy of " + probes::formatBlock(bytes) +
                         " delivered wrong data"};
    }
    if (dir != Dir::H2D) {
        const void* dst = pinned ? b.pinnedDst.get() : b.pageableDst.get();
        if (std::memcmp(dst, pattern, bytes) != 0)
            return Error{"GPU→host copy of " + probes::formatBlock(bytes) +
                         " delivered wrong data"};
    }
    return Ok{};
}

Status clearDestinations(CopyBuffers& b, bool pinned, std::uint64_t bytes) {
    KVBE_CUDA_TRY("clearing the GPU destination", cudaMemset(b.devDst.get(), 0, bytes));
    // cudaMemset may return early, and the copy streams do not wait for the default stream.
    KVBE_CUDA_TRY("clearing the GPU destination", cudaDeviceSynchronize());
    std::memset(pinned ? b.pinnedDst.get() : b.pageableDst.get(), 0, bytes);
    return Ok{};
}

} // namespace

probes::ProbeOutcome GpuCopyProbe::run(const probes::ProbeOptions& options,
                                       probes::ProbeSink& sink) {
    CopySettings s = m_s;
    if (s.model.empty()) s.model = options.model;
    if (auto st = validate(s); !st) return reportFailure(sink, ExitCode::BadInput, st.message());
    std::uint64_t kvBlock = 0;
    if (s.sizes.empty()) {
        s.sizes = defaultCopySizes();
        auto kv = kvBlockBytes(s.model);
        if (!kv) return reportFailure(sink, ExitCode::BadInput, kv.message());
        kvBlock = *kv;
        if (kvBlock <= kMaxCopyBytes) s.sizes.push_back(kvBlock);
        if (auto st = validate(s); !st)
            return reportFailure(sink, ExitCode::BadInput, st.message());
    }
    auto dev = openDevice(s.device);
    if (!dev) return reportFailure(sink, ExitCode::CannotRun, dev.message());
    NvmlLibrary nvml;

    nlohmann::ordered_json params;
    params["sizes"] = s.sizes;
    params["kv_block_bytes"] = kvBlock;
    params["kv_block_tokens"] = kKvBlockTokens;
    params["model"] = s.model;
    params["pinned"] = s.pinned;
    params["pageable"] = s.pageable;
    params["samples"] = s.samples;
    params["method"] =
        "warm-up, spin kernel holds the stream (pinned), event timing, median, data verified";
    params["gpu"] = deviceJson(*dev, nvml);
    sink.begin(key(), params);

    CopyBuffers b;
    const std::uint64_t maxBytes = s.sizes.back();
    if (auto st = allocateAll(b, maxBytes, s.pageable); !st)
        return reportFailure(sink, ExitCode::CannotRun, st.message());

    std::vector<bool> kinds;
    if (s.pinned) kinds.push_back(true);
    if (s.pageable) kinds.push_back(false);
    const Dir dirs[] = {Dir::H2D, Dir::D2H, Dir::Both};
    const double total = double(kinds.size() * 3 * s.sizes.size());
    double done = 0;

    probes::TextTable table;
    table.title = "Host↔GPU copy bandwidth, GB/s (1e9 bytes/s), median of " +
                  std::to_string(s.samples) + " samples";
    table.columns = {"size"};
    for (bool pinned : kinds)
        for (Dir d : dirs)
            table.columns.push_back(std::string(pinned ? "pinned " : "pageable ") + dirLabel(d));
    std::vector<std::vector<std::string>> cells(s.sizes.size(),
                                                std::vector<std::string>(table.columns.size()));
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    nlohmann::ordered_json best = nlohmann::ordered_json::object();

    size_t column = 1;
    for (bool pinned : kinds) {
        for (Dir dir : dirs) {
            const std::string series = copySeries(directionOf(dir), pinned);
            double bestRate = 0;
            for (size_t si = 0; si < s.sizes.size(); ++si) {
                if (probes::stopRequested())
                    return reportFailure(sink, ExitCode::Stopped, probes::stopMessage());
                const std::uint64_t bytes = s.sizes[si];
                const std::string label = std::string(pinned ? "pinned " : "pageable ") +
                                          dirLabel(dir) + ", " + probes::formatBlock(bytes) +
                                          (bytes == kvBlock ? " (KV block)" : "");
                sink.progress(done / total, label);
                const int reps = int(std::clamp<std::uint64_t>((256ull << 20) / bytes, 1, 64));
                if (auto st = clearDestinations(b, pinned, bytes); !st)
                    return reportFailure(sink, ExitCode::Failed, st.message());
                if (auto w = timeCopies(b, dir, pinned, bytes, reps); !w)
                    return reportFailure(sink, ExitCode::Failed, w.message());
                std::vector<double> rates;
                for (int k = 0; k < s.samples; ++k) {
                    auto sample = timeCopies(b, dir, pinned, bytes, reps);
                    if (!sample) return reportFailure(sink, ExitCode::Failed, sample.message());
                    const double moved = double(bytes) * reps * (dir == Dir::Both ? 2 : 1);
                    rates.push_back(moved / sample->seconds / 1e9);
                }
                if (auto st = verify(b, dir, pinned, bytes); !st)
                    return reportFailure(sink, ExitCode::Failed, st.message());
                const double med = median(rates);
                bestRate = std::max(bestRate, med);
                probes::ProbePoint p;
                p.series = series;
                p.x = double(bytes);
                p.y = med;
                p.unit = "GB/s";
                p.meta["min"] = *std::min_element(rates.begin(), rates.end());
                p.meta["max"] = *std::max_element(rates.begin(), rates.end());
                p.meta["samples"] = rates.size();
                p.meta["copies_per_sample"] = reps;
                p.meta["kv_block"] = bytes == kvBlock;
                p.meta["verified"] = true;
                sink.point(p);
                rows.push_back(
                    {{"series", series}, {"bytes", bytes}, {"GBps", med}, {"samples", rates}});
                cells[si][0] = probes::formatBlock(bytes) + (bytes == kvBlock ? " (KV)" : "");
                cells[si][column] = fixedDecimals(med, 2);
                done += 1;
            }
            best[series] = bestRate;
            ++column;
        }
    }
    table.rows = cells;
    table.footnotes.push_back(
        "both ways: the sum of the two directions, copied at once on two streams");
    if (kvBlock)
        table.footnotes.push_back("KV block: " + std::to_string(kKvBlockTokens) + " tokens of " +
                                  s.model + " = " + probes::formatBlock(kvBlock));
    sink.table(table);

    nlohmann::ordered_json summary;
    summary["best_GBps"] = best;
    summary["kv_block_bytes"] = kvBlock;
    summary["rows"] = rows;
    summary["gpu"] = deviceJson(*dev, nvml);
    sink.result(summary);
    return {};
}

} // namespace kvbe::gpu
