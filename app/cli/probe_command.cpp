// kvbe-cli probe nvme-read | nvme-write | host-memcpy | list: the probes of kvbe_probes, with
// the JSON Lines stream (--format jsonl) or a table for people, and a stop on SIGINT/SIGTERM.
#include "commands.h"
#include "probe_watchdog.h"

#include "kvbe/base/units.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probes/io_engine.h"
#include "kvbe/probes/memcpy_probe.h"
#include "kvbe/probes/nvme_probe.h"
#include "kvbe/probes/probe.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "kvbe/serving/serving_probe.h"

#include <chrono>
#include <iostream>
#include <limits>
#include <memory>
#include <unistd.h>

namespace kvbe::cli {
namespace {

using namespace kvbe::probes;

struct ProbeFlags {
    std::string dir, file, device, fileSize, blockSizes, queueDepths, duration = "5s",
                                                                      engine = "auto";
    std::string model, pattern = "random", bufferSize = "1GiB", threads, format = "table";
    bool buffered = false;
};

// A list of counts for an int field: the probe checks them against its own limits.
Result<std::vector<int>> intList(const std::string& text, const std::string& flag) {
    auto list = parseCountList(text, 0, std::numeric_limits<int>::max());
    if (!list) return Error{flag + " " + list.message()};
    return std::vector<int>(list->begin(), list->end());
}

Result<ProbeOptions> toOptions(const ProbeFlags& f) {
    ProbeOptions o;
    o.dir = f.dir;
    o.file = f.file;
    o.device = f.device;
    o.engine = f.engine;
    o.buffered = f.buffered;
    o.sequential = f.pattern == "sequential";
    o.model = f.model;
    if (!f.fileSize.empty()) {
        auto v = parseWholeBytes(f.fileSize);
        if (!v) return Error{"--file-size " + v.message()};
        o.fileSize = *v;
    }
    if (!f.blockSizes.empty()) {
        auto list = parseWholeByteList(f.blockSizes);
        if (!list) return Error{"--block-sizes " + list.message()};
        o.blockSizes = *list;
    }
    if (!f.queueDepths.empty()) {
        auto list = intList(f.queueDepths, "--queue-depths");
        if (!list) return list.error();
        o.queueDepths = *list;
    }
    auto d = parseSeconds(f.duration);
    if (!d) return Error{"--duration " + d.message()};
    o.durationS = *d;
    auto b = parseWholeBytes(f.bufferSize);
    if (!b) return Error{"--buffer-size " + b.message()};
    o.bufferBytes = *b;
    if (!f.threads.empty()) {
        auto list = intList(f.threads, "--threads");
        if (!list) return list.error();
        o.threads = *list;
    }
    return o;
}

ExitCode runProbe(const std::string& key, const ProbeFlags& flags) {
    auto options = toOptions(flags);
    if (!options) {
        std::cerr << "kvbe-cli: " << options.message() << "\n";
        if (flags.format == "jsonl") JsonlSink(std::cout, key).error(options.message());
        return ExitCode::BadInput;
    }
    auto probe = makeProbe(key);
    auto sink = makeProbeSink(flags.format, key);
    // An I/O can hang on a failing drive: half a second after a stop the process ends anyway.
    return runProbeWithWatchdog(*probe, *options, *sink, std::chrono::milliseconds(400));
}

ExitCode runList(const std::string& format) {
    std::string why;
    const bool uring = makeUringEngine(why) != nullptr;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    auto known = makeProbes();
    for (auto& p : gpu::makeGpuProbes())
        known.push_back(std::move(p));
    known.push_back(std::make_unique<serving::ServingProbe>(serving::ServingSettings{}));
    for (const auto& p : known) {
        const Status a = p->available();
        list.push_back({{"key", p->key()},
                        {"description", p->description()},
                        {"available", a.ok()},
                        {"why_not", a.ok() ? "" : a.message()}});
    }
    if (format == "json") {
        std::cout << nlohmann::ordered_json{{"probes", list},
                                            {"io_uring", uring},
                                            {"io_uring_why_not", why}}
                         .dump(2)
                  << "\n";
        return ExitCode::Ok;
    }
    for (const auto& p : list)
        std::cout << p["key"].get<std::string>() << "  " << p["description"].get<std::string>()
                  << (p["available"].get<bool>()
                          ? ""
                          : "  (unavailable: " + p["why_not"].get<std::string>() + ")")
                  << "\n";
    std::cout << "io_uring: "
              << (uring ? "available" : "unavailable, " + why + "; the drive probes use psync")
              << "\n";
    return ExitCode::Ok;
}

const char* const kDriveMemory =
    "queue depth × block size of I/O buffers (rounded up to whole 2 MiB pages), at most 64 × "
    "28 MiB = 1.75 GiB with the defaults; plus 8 MiB while the scratch file is written";

std::string footer(const std::string& memory) {
    return "\nMemory: " + memory + "\n" + exitCodeHelp();
}

void addDriveOptions(CLI::App* sub, ProbeFlags& f, bool readable) {
    CLI::Option* dir = sub->add_option(
        "--dir", f.dir,
        "Make a scratch file in DIR (written fully with non-zero data first, removed on exit)");
    if (readable) {
        CLI::Option* file =
            sub->add_option("--file", f.file, "Read an existing file, read-only, never written");
        CLI::Option* device = sub->add_option(
            "--device", f.device, "Read a block device, read-only (devices are refused elsewhere)");
        dir->excludes(file)->excludes(device);
        file->excludes(device);
    }
    sub->add_option("--file-size", f.fileSize,
                    "Scratch file size, e.g. 4GiB (default 4GiB; --dir only)");
    sub->add_option("--block-sizes", f.blockSizes,
                    "Block sizes, e.g. 128KiB,1MiB,28MiB (default 128KiB,1MiB,4MiB and the KV "
                    "block of --model)");
    sub->add_option("--queue-depths", f.queueDepths,
                    "Queue depths, e.g. 1,32 (default 1,4,16,32,64)");
    sub->add_option(
        "--duration", f.duration,
        "Measured time per setting, split into 5 windows, after a warm-up of 20% (at most 1 s)");
    sub->add_option(
           "--engine", f.engine,
           "io_uring or psync (default: io_uring when it can run here, else psync, and says why)")
        ->check(CLI::IsMember({"auto", "io_uring", "psync"}));
    sub->add_flag(
        "--buffered", f.buffered,
        "Go through the page cache instead of O_DIRECT (labelled BUFFERED wherever shown)");
    sub->add_option("--pattern", f.pattern, "Offsets: random whole blocks (default) or sequential")
        ->check(CLI::IsMember({"random", "sequential"}));
    sub->add_option("--model", f.model,
                    "Model whose KV block (256 tokens × KV bytes per token) joins the block sizes "
                    "(default: the default scenario's, meta-llama/Llama-3.2-3B = 28 MiB)");
    addProbeFormatOption(sub, f.format);
}

} // namespace

CLI::Option* addProbeFormatOption(CLI::App* probe, std::string& format) {
    return probe->add_option("--format", format, "table for people, jsonl for the GUI and scripts")
        ->check(CLI::IsMember({"table", "jsonl"}));
}

void addProbeCommands(CLI::App& app, Command& run) {
    auto* probe =
        app.add_subcommand("probe", "Measure this machine: drive read/write bandwidth, host "
                                    "memcpy, the GPU, and a serving stack end to end");
    probe->require_subcommand(1);

    auto read = std::make_shared<ProbeFlags>();
    auto* nvmeRead = probe->add_subcommand("nvme-read", NvmeProbe(false).description());
    addDriveOptions(nvmeRead, *read, true);
    nvmeRead->footer(footer(kDriveMemory));
    nvmeRead->callback([read, &run] { run = [read] { return runProbe("nvme-read", *read); }; });

    auto write = std::make_shared<ProbeFlags>();
    auto* nvmeWrite = probe->add_subcommand("nvme-write", NvmeProbe(true).description());
    addDriveOptions(nvmeWrite, *write, false);
    nvmeWrite->footer(footer(kDriveMemory));
    nvmeWrite->callback(
        [write, &run] { run = [write] { return runProbe("nvme-write", *write); }; });

    auto mem = std::make_shared<ProbeFlags>();
    auto* memcpyCmd = probe->add_subcommand("host-memcpy", MemcpyProbe().description());
    memcpyCmd->add_option("--buffer-size", mem->bufferSize,
                          "Size of each of the two buffers (default 1GiB)");
    memcpyCmd->add_option("--threads", mem->threads,
                          "Thread counts, e.g. 1,8 (default 1 and every core)");
    memcpyCmd->add_option("--duration", mem->duration,
                          "Measured time per setting, split into 5 windows, after a warm-up");
    addProbeFormatOption(memcpyCmd, mem->format);
    memcpyCmd->footer(footer("two buffers of --buffer-size (2 GiB with the default)"));
    memcpyCmd->callback([mem, &run] { run = [mem] { return runProbe("host-memcpy", *mem); }; });

    auto listFormat = std::make_shared<std::string>("table");
    auto* list = probe->add_subcommand("list", "List the probes and whether they can run here");
    list->add_option("--format", *listFormat, "table or json")
        ->check(CLI::IsMember({"table", "json"}));
    list->callback([listFormat, &run] { run = [listFormat] { return runList(*listFormat); }; });
    addGpuProbeCommands(*probe, run);
    addServingProbeCommand(*probe, run);
}

} // namespace kvbe::cli
