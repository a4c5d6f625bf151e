// nvme-read / nvme-write: validate, open the target, lay out the scratch file, sweep.
#include "kvbe/probes/nvme_probe.h"

#include "kvbe/presets.h"
#include "kvbe/probes/io_engine.h"
#include "kvbe/probes/scratch_file.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "kvbe/scenario.h"
#include "kvbe/units.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kvbe::probes {
namespace {

std::string thousands(double v) {
    std::string digits = fixedDecimals(v, 0);
    std::string out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

std::string micros(double us) {
    return formatSeconds(us / 1e6);
}

} // namespace

std::vector<int> defaultQueueDepths() {
    return {1, 4, 16, 32, 64};
}

Result<std::uint64_t> kvBlockBytes(const std::string& modelRef) {
    auto presets = Presets::loadBuiltin();
    if (!presets) return presets.error();
    std::string ref = modelRef;
    std::optional<KvDtype> dtype;
    if (ref.empty()) {
        auto scenario = defaultScenario(*presets);
        if (!scenario) return scenario.error();
        ref = scenario->model;
        dtype = scenario->kvDtype;
    }
    auto model = resolveModel(ref, *presets);
    if (!model) return Error{"--model " + ref + ": " + model.message()};
    const double perToken = model->kvBytesPerToken(dtype.value_or(model->weightDtype));
    if (!(perToken > 0))
        return Error{"--model " + ref + ": the model has no KV cache bytes per token"};
    const auto bytes = static_cast<std::uint64_t>(perToken * kKvBlockTokens);
    return (bytes + 4095) / 4096 * 4096;
}

std::string NvmeProbe::description() const {
    return m_write ? "Write bandwidth, IOPS and latency of a drive, into a scratch file (O_DIRECT)"
                   : "Read bandwidth, IOPS and latency of a drive over block sizes × queue depths "
                     "(O_DIRECT)";
}

Status NvmeProbe::available() const {
    return Ok{}; // psync runs anywhere with pread/pwrite; io_uring is chosen per run
}

ProbeOutcome NvmeProbe::run(const ProbeOptions& o, ProbeSink& sink) {
    const std::string op = m_write ? "write" : "read";
    // Conflicts first, before anything touches the disk.
    const int given = !o.dir.empty() + !o.file.empty() + !o.device.empty();
    if (given == 0)
        return failWith(sink, ProbeExit::Usage,
                        key() + " needs --dir DIR (or, to read, --file PATH or --device PATH)");
    if (given > 1)
        return failWith(sink, ProbeExit::Usage,
                        "--dir, --file and --device exclude each other; name one");
    if (m_write && o.dir.empty())
        return failWith(sink, ProbeExit::Usage,
                        "nvme-write writes only into its own scratch file: use --dir (--file and "
                        "--device are only ever read)");
    if (o.fileSize && o.dir.empty())
        return failWith(sink, ProbeExit::Usage,
                        "--file-size sizes the scratch file of --dir; --file and --device are read "
                        "as they are");
    if (!(o.durationS > 0))
        return failWith(sink, ProbeExit::BadInput,
                        "--duration: expected a positive time per setting, e.g. 5s or 200ms");
    std::vector<int> depths = o.queueDepths.empty() ? defaultQueueDepths() : o.queueDepths;
    for (int qd : depths)
        if (qd < 1 || qd > kMaxQueueDepth)
            return failWith(sink, ProbeExit::BadInput,
                            "--queue-depths " + std::to_string(qd) +
                                ": expected queue depths from 1 to " +
                                std::to_string(kMaxQueueDepth));
    std::set<std::uint64_t> sizes(o.blockSizes.begin(), o.blockSizes.end());
    std::uint64_t kvBlock = 0;
    if (o.blockSizes.empty() || !o.model.empty()) {
        auto kv = kvBlockBytes(o.model);
        if (!kv) return failWith(sink, ProbeExit::BadInput, kv.message());
        kvBlock = *kv;
        sizes.insert(kvBlock);
    }
    if (o.blockSizes.empty()) sizes.insert({128 * kKiB, kMiB, 4 * kMiB});
    for (std::uint64_t bs : sizes)
        if (bs < 512 || bs > kMaxBlockBytes)
            return failWith(sink, ProbeExit::BadInput,
                            "--block-sizes " + std::to_string(bs) +
                                " B: expected block sizes from 512 B to 1 GiB");
    const std::uint64_t maxBlock = *sizes.rbegin();
    const int maxDepth = *std::max_element(depths.begin(), depths.end());
    const std::uint64_t scratchBytes = o.fileSize.value_or(kDefaultScratchBytes);
    if (!o.dir.empty() && scratchBytes < maxBlock)
        return failWith(sink, ProbeExit::BadInput,
                        "--file-size " + formatBlock(scratchBytes) +
                            " is smaller than the largest block (" + formatBlock(maxBlock) +
                            "); expected at least one whole block");

    auto engine = chooseEngine(o.engine);
    if (!engine) return failWith(sink, ProbeExit::CannotRun, engine.message());

    ProbeExit failure = ProbeExit::Ok;
    auto opened = openTarget({o.dir, o.file, o.device, scratchBytes, !o.buffered}, failure);
    if (!opened) return failWith(sink, failure, opened.message());
    IoTarget& target = *opened;
    for (std::uint64_t bs : sizes) {
        if (target.direct() && bs % target.logicalBlock() != 0)
            return failWith(sink, ProbeExit::BadInput,
                            "--block-sizes " + std::to_string(bs) +
                                " B is not a multiple of the logical block size (" +
                                std::to_string(target.logicalBlock()) + " B) of " + target.path() +
                                ": O_DIRECT moves whole blocks");
        if (bs > target.size())
            return failWith(sink, ProbeExit::BadInput,
                            "--block-sizes " + formatBlock(bs) + " is larger than " +
                                target.path() + " (" + formatBlock(target.size()) + ")");
    }

    const double warmupS = std::clamp(o.durationS * 0.2, 0.05, 1.0);
    const int repeats = 5;
    const std::string io = o.buffered ? "buffered" : "O_DIRECT";
    const std::string series = op + "_GBps" + (o.buffered ? "_buffered" : "");
    nlohmann::ordered_json params;
    params["op"] = op;
    params["target"] = target.describe();
    params["target_kind"] = o.dir.empty() ? (o.file.empty() ? "device" : "file") : "scratch";
    params["path"] = target.path();
    params["target_bytes"] = target.size();
    params["io"] = io;
    params["buffered"] = o.buffered;
    params["engine"] = engine->engine->name();
    params["engine_reason"] = engine->reason;
    params["block_sizes"] = std::vector<std::uint64_t>(sizes.begin(), sizes.end());
    params["queue_depths"] = depths;
    params["kv_block_bytes"] = kvBlock;
    params["kv_block_tokens"] = kKvBlockTokens;
    params["duration_s"] = o.durationS;
    params["warmup_s"] = warmupS;
    params["windows"] = repeats;
    params["pattern"] = o.sequential ? "sequential" : "random block-aligned";
    params["buffer_bytes_max"] = maxBlock * static_cast<std::uint64_t>(maxDepth);
    sink.begin(key(), params);
    if (o.buffered) sink.note("BUFFERED: --buffered measures the page cache, not the drive");
    sink.note(key() + ": " + target.describe());
    sink.note("engine: " + engine->reason);

    const double layoutShare = target.kind() == TargetKind::Scratch ? 0.1 : 0.0;
    if (target.kind() == TargetKind::Scratch) {
        sink.progress(0, "writing the " + formatBlock(target.size()) +
                             " scratch file with non-zero data before any " + op);
        Status laid = target.layOut(
            [&](double f) { sink.progress(layoutShare * f, "writing the scratch file"); }, failure);
        if (!laid) return failWith(sink, failure, laid.message());
    }

    TextTable table;
    table.title = std::string(o.buffered ? "BUFFERED (page cache, not the drive) " : "") + key() +
                  " · " + engine->engine->name() + " · " + target.describe();
    table.columns = {"block", "QD", "GB/s", "IOPS", "p50", "p99", "min–max GB/s", "I/O"};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    std::set<std::string> notes;
    double best = 0;
    nlohmann::ordered_json bestRow;
    const size_t total = sizes.size() * depths.size();
    size_t done = 0;
    for (std::uint64_t bs : sizes) {
        for (int qd : depths) {
            const std::string label = formatBlock(bs) + (bs == kvBlock ? " (KV block)" : "") +
                                      ", QD " + std::to_string(qd);
            sink.progress(layoutShare + (1 - layoutShare) * static_cast<double>(done) /
                                            static_cast<double>(total),
                          op + " " + label + (o.buffered ? ", buffered" : ""));
            IoSetting s;
            s.blockBytes = bs;
            s.queueDepth = qd;
            s.write = m_write;
            s.sequential = o.sequential;
            s.warmupS = warmupS;
            s.repeatS = o.durationS / repeats;
            s.repeats = repeats;
            s.verify = !m_write && target.kind() == TargetKind::Scratch ? VerifyMode::Sample
                                                                        : VerifyMode::None;
            auto m = engine->engine->run(target, s);
            if (stopRequested()) return failWith(sink, ProbeExit::Stopped, stopMessage());
            if (!m) return failWith(sink, ProbeExit::Failed, m.message());
            for (auto& n : m->notes)
                notes.insert(n);
            const IoStats st = summarize(*m);
            ProbePoint p;
            p.series = series;
            p.x = static_cast<double>(bs);
            p.y = st.medianGBps;
            p.unit = "GB/s";
            p.meta["block_bytes"] = bs;
            p.meta["queue_depth"] = qd;
            p.meta["iops"] = st.medianIops;
            p.meta["p50_us"] = st.p50Us;
            p.meta["p99_us"] = st.p99Us;
            p.meta["min_GBps"] = st.minGBps;
            p.meta["max_GBps"] = st.maxGBps;
            p.meta["windows"] = repeats;
            p.meta["window_s"] = s.repeatS;
            p.meta["engine"] = engine->engine->name();
            p.meta["io"] = io;
            p.meta["kv_block"] = bs == kvBlock;
            p.meta["bytes"] = st.bytes;
            p.meta["requeued"] = m->requeued;
            p.meta["verified_blocks"] = m->verifiedBlocks;
            sink.point(p);
            nlohmann::ordered_json row = p.meta;
            row["GBps"] = st.medianGBps;
            rows.push_back(row);
            if (st.medianGBps > best) {
                best = st.medianGBps;
                bestRow = row;
            }
            table.rows.push_back({formatBlock(bs) + (bs == kvBlock ? " (KV)" : ""),
                                  std::to_string(qd), fixedDecimals(st.medianGBps, 2),
                                  thousands(st.medianIops), micros(st.p50Us), micros(st.p99Us),
                                  fixedDecimals(st.minGBps, 2) + "–" + fixedDecimals(st.maxGBps, 2),
                                  o.buffered ? "BUFFERED" : "direct"});
            ++done;
        }
    }
    table.footnotes.push_back("GB/s = 1e9 bytes/s, median of " + std::to_string(repeats) +
                              " windows of " + formatSeconds(o.durationS / repeats) + " after " +
                              formatSeconds(warmupS) + " warm-up; " +
                              (o.sequential ? "sequential" : "random block-aligned") + " offsets");
    table.footnotes.push_back("p50/p99: submit-to-completion latency of every measured " + op +
                              "; I/O buffers: QD × block, at most " +
                              formatBlock(maxBlock * static_cast<std::uint64_t>(maxDepth)) +
                              ", in huge pages where the kernel grants them");
    if (kvBlock)
        table.footnotes.push_back("KV block: " + std::to_string(kKvBlockTokens) +
                                  " tokens × KV bytes per token = " + formatBlock(kvBlock));
    for (const auto& n : notes)
        table.footnotes.push_back("note: " + n);
    sink.table(table);

    nlohmann::ordered_json summary;
    summary["probe"] = key();
    summary["engine"] = engine->engine->name();
    summary["engine_reason"] = engine->reason;
    summary["target"] = target.describe();
    summary["io"] = io;
    summary["buffered"] = o.buffered;
    summary["metrics"] = nlohmann::ordered_json::array(
        {{{"name", std::string("best ") + op + " bandwidth" + (o.buffered ? " (buffered)" : "")},
          {"unit", "GB/s"},
          {"value", best}}});
    summary["best"] = bestRow;
    summary["settings"] = rows;
    summary["notes"] = std::vector<std::string>(notes.begin(), notes.end());
    sink.progress(1, "done");
    sink.result(summary);
    return {};
}

} // namespace kvbe::probes
