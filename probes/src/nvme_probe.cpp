// nvme-read / nvme-write: validate, open the target, lay out the scratch file, sweep.
#include "kvbe/probes/nvme_probe.h"

#include "kvbe/base/units.h"
#include "kvbe/probes/io_engine.h"
#include "kvbe/probes/io_target.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "kvbe/scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace kvbe::probes {
namespace {

std::string micros(double us) {
    return formatSeconds(us / 1e6);
}

constexpr int kRepeats = 5; // measured windows per setting

// What one run measures, checked before anything touches the disk.
struct NvmePlan {
    std::vector<int> depths;
    std::set<std::uint64_t> sizes;
    std::uint64_t kvBlock = 0; // 0: none asked for
    std::uint64_t maxBlock = 0;
    int maxDepth = 0;
    std::uint64_t scratchBytes = 0;
    double warmupS = 0;
};

ExitResult<NvmePlan> planRun(const ProbeOptions& o, bool write, const std::string& key) {
    const auto usage = [](std::string m) { return ProbeOutcome{ExitCode::Usage, std::move(m)}; };
    const auto bad = [](std::string m) { return ProbeOutcome{ExitCode::BadInput, std::move(m)}; };
    // Conflicts first.
    const int given = !o.dir.empty() + !o.file.empty() + !o.device.empty();
    if (given == 0)
        return usage(key + " needs --dir DIR (or, to read, --file PATH or --device PATH)");
    if (given > 1) return usage("--dir, --file and --device exclude each other; name one");
    if (write && o.dir.empty())
        return usage("nvme-write writes only into its own scratch file: use --dir (--file and "
                     "--device are only ever read)");
    if (o.fileSize && o.dir.empty())
        return usage("--file-size sizes the scratch file of --dir; --file and --device are read "
                     "as they are");
    if (!(o.durationS > 0))
        return bad("--duration: expected a positive time per setting, e.g. 5s or 200ms");
    NvmePlan plan;
    plan.depths = o.queueDepths.empty() ? defaultQueueDepths() : o.queueDepths;
    for (int qd : plan.depths)
        if (qd < 1 || qd > kMaxQueueDepth)
            return bad("--queue-depths " + std::to_string(qd) +
                       ": expected queue depths from 1 to " + std::to_string(kMaxQueueDepth));
    plan.sizes.insert(o.blockSizes.begin(), o.blockSizes.end());
    if (o.blockSizes.empty() || !o.model.empty()) {
        auto kv = kvBlockBytes(o.model);
        if (!kv) return bad(kv.message());
        plan.kvBlock = *kv;
        plan.sizes.insert(plan.kvBlock);
    }
    if (o.blockSizes.empty()) plan.sizes.insert({128 * kKiB, kMiB, 4 * kMiB});
    for (std::uint64_t bs : plan.sizes)
        if (bs < 512 || bs > kMaxBlockBytes)
            return bad("--block-sizes " + std::to_string(bs) +
                       " B: expected block sizes from 512 B to 1 GiB");
    plan.maxBlock = *plan.sizes.rbegin();
    plan.maxDepth = *std::max_element(plan.depths.begin(), plan.depths.end());
    plan.scratchBytes = o.fileSize.value_or(kDefaultScratchBytes);
    if (!o.dir.empty() && plan.scratchBytes < plan.maxBlock)
        return bad("--file-size " + formatBlock(plan.scratchBytes) +
                   " is smaller than the largest block (" + formatBlock(plan.maxBlock) +
                   "); expected at least one whole block");
    plan.warmupS = std::clamp(o.durationS * 0.2, 0.05, 1.0);
    return plan;
}

// Every block size must be whole logical blocks (O_DIRECT) and fit in the target.
ExitStatus checkBlocksFit(const IoTarget& target, const std::set<std::uint64_t>& sizes) {
    for (std::uint64_t bs : sizes) {
        if (target.direct() && bs % target.logicalBlock() != 0)
            return ProbeOutcome{ExitCode::BadInput,
                                "--block-sizes " + std::to_string(bs) +
                                    " B is not a multiple of the logical block size (" +
                                    std::to_string(target.logicalBlock()) + " B) of " +
                                    target.path() + ": O_DIRECT moves whole blocks"};
        if (bs > target.size())
            return ProbeOutcome{ExitCode::BadInput, "--block-sizes " + formatBlock(bs) +
                                                        " is larger than " + target.path() + " (" +
                                                        formatBlock(target.size()) + ")"};
    }
    return Ok{};
}

// The header's params: everything a reader needs to know what was measured, and how.
nlohmann::ordered_json runParams(const ProbeOptions& o, const NvmePlan& plan,
                                 const IoTarget& target, const EngineChoice& engine,
                                 const std::string& op) {
    nlohmann::ordered_json params;
    params["op"] = op;
    params["target"] = target.describe();
    params["target_kind"] = o.dir.empty() ? (o.file.empty() ? "device" : "file") : "scratch";
    params["path"] = target.path();
    params["target_bytes"] = target.size();
    params["io"] = o.buffered ? "buffered" : "O_DIRECT";
    params["buffered"] = o.buffered;
    params["engine"] = engine.engine->name();
    params["engine_reason"] = engine.reason;
    params["block_sizes"] = std::vector<std::uint64_t>(plan.sizes.begin(), plan.sizes.end());
    params["queue_depths"] = plan.depths;
    params["kv_block_bytes"] = plan.kvBlock;
    params["kv_block_tokens"] = kKvBlockTokens;
    params["duration_s"] = o.durationS;
    params["warmup_s"] = plan.warmupS;
    params["windows"] = kRepeats;
    params["pattern"] = o.sequential ? "sequential" : "random block-aligned";
    params["buffer_bytes_max"] = plan.maxBlock * static_cast<std::uint64_t>(plan.maxDepth);
    return params;
}

// One setting measured: its point, its row of the summary and its row of the table.
struct SettingResult {
    ProbePoint point;
    nlohmann::ordered_json row;
    std::vector<std::string> tableRow;
    std::vector<std::string> notes;
};

ExitResult<SettingResult> measureSetting(IoEngine& engine, const std::string& engineName,
                                         const IoTarget& target, const ProbeOptions& o,
                                         const NvmePlan& plan, bool write, std::uint64_t bs,
                                         int qd) {
    IoSetting s;
    s.blockBytes = bs;
    s.queueDepth = qd;
    s.write = write;
    s.sequential = o.sequential;
    s.warmupS = plan.warmupS;
    s.repeatS = o.durationS / kRepeats;
    s.repeats = kRepeats;
    s.verify =
        !write && target.kind() == TargetKind::Scratch ? VerifyMode::Sample : VerifyMode::None;
    auto m = engine.run(target, s);
    if (stopRequested()) return ProbeOutcome{ExitCode::Stopped, stopMessage()};
    if (!m) return ProbeOutcome{ExitCode::Failed, m.message()};
    const IoStats st = summarize(*m);
    SettingResult r;
    r.notes = m->notes;
    if (st.pooled)
        r.notes.push_back(
            formatBlock(bs) + ", QD " + std::to_string(qd) +
            ": a window saw no I/O complete (windows shorter than one I/O); the rate is "
            "over the whole measured time, not a median of windows (use a longer "
            "--duration)");
    ProbePoint& p = r.point;
    p.series = driveSeries(write, o.buffered);
    p.x = static_cast<double>(bs);
    p.meta["block_bytes"] = bs;
    p.meta["queue_depth"] = qd;
    p.meta["iops"] = st.medianIops;
    p.meta["p50_us"] = st.p50Us;
    p.meta["p99_us"] = st.p99Us;
    setWindowedRate(p, st, kRepeats, s.repeatS);
    p.meta["engine"] = engineName;
    p.meta["io"] = o.buffered ? "buffered" : "O_DIRECT";
    p.meta["kv_block"] = bs == plan.kvBlock;
    p.meta["bytes"] = st.bytes;
    p.meta["requeued"] = m->requeued;
    p.meta["verified_blocks"] = m->verifiedBlocks;
    r.row = p.meta;
    r.row["GBps"] = st.medianGBps;
    r.tableRow = {formatBlock(bs) + (bs == plan.kvBlock ? " (KV)" : ""),
                  std::to_string(qd),
                  fixedDecimals(st.medianGBps, 2),
                  formatTokens(st.medianIops),
                  micros(st.p50Us),
                  micros(st.p99Us),
                  fixedDecimals(st.minGBps, 2) + "–" + fixedDecimals(st.maxGBps, 2),
                  o.buffered ? "BUFFERED" : "direct"};
    return r;
}

// The table's footnotes: how the figures were taken.
std::vector<std::string> tableFootnotes(const ProbeOptions& o, const NvmePlan& plan,
                                        const std::string& op) {
    std::vector<std::string> f;
    f.push_back("GB/s = 1e9 bytes/s, median of " + std::to_string(kRepeats) + " windows of " +
                formatSeconds(o.durationS / kRepeats) + " after " + formatSeconds(plan.warmupS) +
                " warm-up; " + (o.sequential ? "sequential" : "random block-aligned") + " offsets");
    f.push_back("p50/p99: submit-to-completion latency of every measured " + op +
                "; I/O buffers: QD × block, at most " +
                formatBlock(plan.maxBlock * static_cast<std::uint64_t>(plan.maxDepth)) +
                ", in huge pages where the kernel grants them");
    if (plan.kvBlock)
        f.push_back("KV block: " + std::to_string(kKvBlockTokens) +
                    " tokens × KV bytes per token = " + formatBlock(plan.kvBlock));
    return f;
}

} // namespace

std::vector<int> defaultQueueDepths() {
    return {1, 4, 16, 32, 64};
}

Result<ProbeOptions> NvmeProbe::configure(const ProbeArgs& a) {
    ProbeOptions o;
    o.dir = a.text("--dir");
    o.file = a.text("--file");
    o.device = a.text("--device");
    o.engine = a.text("--engine");
    o.buffered = a.on("--buffered");
    o.sequential = a.text("--pattern") == "sequential";
    o.model = a.text("--model");
    if (const std::string size = a.text("--file-size"); !size.empty()) {
        auto v = parseWholeBytes(size);
        if (!v) return Error{"--file-size " + v.message()};
        o.fileSize = *v;
    }
    if (const std::string sizes = a.text("--block-sizes"); !sizes.empty()) {
        auto list = parseWholeByteList(sizes);
        if (!list) return Error{"--block-sizes " + list.message()};
        o.blockSizes = *list;
    }
    if (const std::string depths = a.text("--queue-depths"); !depths.empty()) {
        // Whole numbers here; planRun checks them against the probe's range.
        auto list = parseCountList(depths, 0, std::numeric_limits<int>::max());
        if (!list) return Error{"--queue-depths " + list.message()};
        for (auto n : *list)
            o.queueDepths.push_back(static_cast<int>(n));
    }
    auto d = parseSeconds(a.text("--duration"));
    if (!d) return Error{"--duration " + d.message()};
    o.durationS = *d;
    return o;
}

Status NvmeProbe::available() const {
    return Ok{}; // psync runs anywhere with pread/pwrite; io_uring is chosen per run
}

ProbeOutcome NvmeProbe::run(const ProbeOptions& o, ProbeSink& sink) {
    const std::string op = m_write ? "write" : "read";
    auto planned = planRun(o, m_write, key());
    if (!planned) return reportFailure(sink, planned.error().exit, planned.message());
    const NvmePlan& plan = *planned;
    auto engine = chooseEngine(o.engine);
    if (!engine) return reportFailure(sink, ExitCode::CannotRun, engine.message());
    auto opened = openTarget({o.dir, o.file, o.device, plan.scratchBytes, !o.buffered});
    if (!opened) return reportFailure(sink, opened.error().exit, opened.message());
    IoTarget& target = *opened;
    if (auto fit = checkBlocksFit(target, plan.sizes); !fit)
        return reportFailure(sink, fit.error().exit, fit.message());

    sink.begin(key(), runParams(o, plan, target, *engine, op));
    if (o.buffered) sink.note("BUFFERED: --buffered measures the page cache, not the drive");
    sink.note(key() + ": " + target.describe());
    sink.note("engine: " + engine->reason);

    const double layoutShare = target.kind() == TargetKind::Scratch ? 0.1 : 0.0;
    if (target.kind() == TargetKind::Scratch) {
        sink.progress(0, "writing the " + formatBlock(target.size()) +
                             " scratch file with non-zero data before any " + op);
        ExitStatus laid = target.layOut(
            [&](double f) { sink.progress(layoutShare * f, "writing the scratch file"); });
        if (!laid) return reportFailure(sink, laid.error().exit, laid.message());
    }

    // Every setting, block sizes × queue depths.
    TextTable table;
    table.title = std::string(o.buffered ? "BUFFERED (page cache, not the drive) " : "") + key() +
                  " · " + engine->engine->name() + " · " + target.describe();
    table.columns = {"block", "QD", "GB/s", "IOPS", "p50", "p99", "min–max GB/s", "I/O"};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    std::set<std::string> notes;
    double best = 0;
    nlohmann::ordered_json bestRow;
    const size_t total = plan.sizes.size() * plan.depths.size();
    size_t done = 0;
    for (std::uint64_t bs : plan.sizes) {
        for (int qd : plan.depths) {
            const std::string label = formatBlock(bs) + (bs == plan.kvBlock ? " (KV block)" : "") +
                                      ", QD " + std::to_string(qd);
            sink.progress(layoutShare + (1 - layoutShare) * static_cast<double>(done) /
                                            static_cast<double>(total),
                          op + " " + label + (o.buffered ? ", buffered" : ""));
            auto r = measureSetting(*engine->engine, engine->engine->name(), target, o, plan,
                                    m_write, bs, qd);
            if (!r) return reportFailure(sink, r.error().exit, r.message());
            // Each note once, when it first happens (buffers not registered, and why): the window
            // shows it while the run goes on, a table reader sees it before the table.
            for (const auto& n : r->notes)
                if (notes.insert(n).second) sink.note(n);
            sink.point(r->point);
            rows.push_back(r->row);
            if (r->point.y > best) {
                best = r->point.y;
                bestRow = r->row;
            }
            table.rows.push_back(r->tableRow);
            ++done;
        }
    }

    // The summary: the table for people, the result line for the stream.
    table.footnotes = tableFootnotes(o, plan, op);
    sink.table(table);
    nlohmann::ordered_json summary;
    summary["probe"] = key();
    summary["engine"] = engine->engine->name();
    summary["engine_reason"] = engine->reason;
    summary["target"] = target.describe();
    summary["io"] = o.buffered ? "buffered" : "O_DIRECT";
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
