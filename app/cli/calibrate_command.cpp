// kvbe-cli calibrate: runs the drive and GPU probes headless and writes one calibration file
// (docs/calibration-format.md) with the fitted values and break-even prefixes. One node, one
// file; many nodes are a scheduler's job (README: a Slurm srun line or an ssh loop).
#include "commands.h"

#include "kvbe/base/host_info.h"
#include "kvbe/base/units.h"
#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/gpu/gpu_probes.h"
#include "kvbe/probe/probe_protocol.h"
#include "kvbe/probes/nvme_probe.h"
#include "kvbe/probes/stop_signal.h"
#include "kvbe/probes/stream.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"

#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace kvbe::cli {
namespace {

struct CalibrateOptions {
    std::string model, dir, out, scenario, fileSize = "4GiB", duration = "2s", lengths;
    bool skipGpu = false, skipDrive = false;
};

// Keeps the points and the header of one probe run; progress goes to stderr for people.
class CollectingSink : public probes::ProbeSink {
  public:
    explicit CollectingSink(std::string label) : m_label(std::move(label)) {}
    void begin(const std::string&, const nlohmann::ordered_json& params) override {
        header = params;
    }
    void progress(double fraction, const std::string& message) override {
        std::cerr << "kvbe-cli calibrate: " << m_label << " " << static_cast<int>(fraction * 100)
                  << " %  " << message << "\n";
    }
    void point(const ProbePoint& p) override { points.push_back(p); }
    void note(const std::string& line) override {
        std::cerr << "kvbe-cli calibrate: " << m_label << ": " << line << "\n";
    }
    void table(const probes::TextTable&) override {}
    void result(const nlohmann::ordered_json& s) override { summary = s; }
    void error(const std::string& message) override { errorMessage = message; }

    nlohmann::ordered_json header, summary;
    std::vector<ProbePoint> points;
    std::string errorMessage;

  private:
    std::string m_label;
};

void takeGpuName(Calibration& c, const nlohmann::ordered_json& header) {
    if (!c.gpuName.empty() || !header.contains("gpu") || !header["gpu"].is_object()) return;
    const auto& g = header["gpu"];
    if (g.contains("name") && g["name"].is_string()) c.gpuName = g["name"].get<std::string>();
    for (const char* clock : {"sm_clock_MHz", "mem_clock_MHz"})
        if (g.contains(clock) && g[clock].is_number())
            c.gpuClocksMHz[clock] = g[clock].get<double>();
}

// A probe that ran and measured no point still leaves its tier in the file, empty.
// A measured tier, or an empty one named for its kind ("nvme", "dram").
TierMeasurement tierOrEmpty(std::optional<TierMeasurement> tier, TierKind kind) {
    if (tier) return std::move(*tier);
    TierMeasurement empty;
    empty.name = toString(kind);
    return empty;
}

// One probe run of calibrate: the probe, what the file says when it cannot run here, and what
// its points add to the calibration.
struct CalibrateStep {
    std::string label;     // "nvme-read"
    std::string skippedAs; // "drive": the line under "not measured"
    std::unique_ptr<probes::Probe> probe;
    probes::ProbeOptions options;
    std::function<void(Calibration&, const CollectingSink&)> apply;
};

// The drive: single loads at queue depth 1 over sizes around the KV block give (bytes, seconds)
// for t_fixed + bytes / B; queue depth 32 gives the sustained bandwidth.
CalibrateStep driveStep(const CalibrateOptions& o, double fileBytes, double durationS) {
    CalibrateStep step{"nvme-read", "drive", std::make_unique<probes::NvmeProbe>(false), {}, {}};
    auto& po = step.options;
    po.dir = o.dir;
    po.fileSize = static_cast<std::uint64_t>(fileBytes);
    po.durationS = durationS;
    po.blockSizes = {probes::kMiB, 4 * probes::kMiB};
    if (auto kvBlock = kvBlockBytes(o.model)) po.blockSizes.push_back(*kvBlock);
    po.queueDepths = {1, 32};
    po.model = o.model;
    step.apply = [](Calibration& c, const CollectingSink& sink) {
        c.tiers.push_back(tierOrEmpty(measurementsFromPoints(sink.points).drive, TierKind::Nvme));
    };
    return step;
}

// Host DRAM to the GPU: pinned copies, the path an offload engine loads by.
CalibrateStep hostLinkStep(const CalibrateOptions& o) {
    gpu::CopySettings cs;
    cs.model = o.model;
    cs.pageable = false;
    cs.sizes = {probes::kMiB, 4 * probes::kMiB, 64 * probes::kMiB, 256 * probes::kMiB};
    CalibrateStep step{
        "gpu-copy", "host DRAM to GPU", std::make_unique<gpu::GpuCopyProbe>(cs), {}, {}};
    step.apply = [](Calibration& c, const CollectingSink& sink) {
        takeGpuName(c, sink.header);
        c.tiers.push_back(
            tierOrEmpty(measurementsFromPoints(sink.points).hostLink, TierKind::Dram));
    };
    return step;
}

// Cold prefill times on the GPU, for the utilisation (and ramp) fit.
CalibrateStep prefillStep(gpu::PrefillSettings ps) {
    CalibrateStep step{
        "gpu-prefill", "prefill", std::make_unique<gpu::PrefillProbe>(std::move(ps)), {}, {}};
    step.apply = [](Calibration& c, const CollectingSink& sink) {
        takeGpuName(c, sink.header);
        const auto samples = measurementsFromPoints(sink.points).prefill;
        c.prefill.insert(c.prefill.end(), samples.begin(), samples.end());
    };
    return step;
}

ExitCode runCalibrate(const CalibrateOptions& o) {
    auto presets = Presets::loadBuiltin();
    if (!presets) {
        std::cerr << "kvbe-cli: " << presets.message() << "\n";
        return ExitCode::BadInput;
    }
    auto scenario =
        o.scenario.empty() ? defaultScenario(*presets) : loadScenario(o.scenario, *presets);
    if (!scenario) {
        std::cerr << "kvbe-cli: " << scenario.message() << "\n";
        return ExitCode::BadInput;
    }
    if (!o.model.empty()) scenario->model = o.model;
    auto eval = evaluate(*scenario, *presets);
    if (!eval) {
        std::cerr << "kvbe-cli: " << eval.message() << "\n";
        return ExitCode::BadInput;
    }
    if (o.dir.empty() && !o.skipDrive) {
        std::cerr
            << "kvbe-cli: calibrate needs --dir DIR on the drive to measure (or --skip-drive)\n";
        return ExitCode::Usage;
    }
    auto size = parseBytes(o.fileSize);
    auto duration = parseSeconds(o.duration);
    if (!size || !duration) {
        std::cerr << "kvbe-cli: " << (size ? duration.message() : size.message()) << "\n";
        return ExitCode::BadInput;
    }
    gpu::PrefillSettings ps;
    ps.model = eval->model.source.empty() ? eval->model.id : scenario->model;
    if (!o.lengths.empty()) {
        auto l = parseTokenList(o.lengths);
        if (!l) {
            std::cerr << "kvbe-cli: --lengths: " << l.message() << "\n";
            return ExitCode::BadInput;
        }
        for (double n : *l)
            ps.lengths.push_back(static_cast<std::int64_t>(n));
    }
    if (!scenario->gpu.empty()) ps.gpuPreset = scenario->gpu;

    std::vector<CalibrateStep> steps;
    if (!o.skipDrive) steps.push_back(driveStep(o, *size, *duration));
    if (!o.skipGpu) {
        steps.push_back(hostLinkStep(o));
        steps.push_back(prefillStep(std::move(ps)));
    }
    probes::installStopHandlers();

    Calibration c;
    c.format = "kvbe";
    c.host = hostName();
    c.date = utcNow();
    c.model = eval->model.id;
    c.kvDtype = eval->cost.inputs().kvDtype;
    c.kvBytesPerToken = eval->cost.kvBytesPerToken();
    int measured = 0;
    std::vector<std::string> skipped;
    for (auto& step : steps) {
        CollectingSink sink(step.label);
        const auto outcome = step.probe->run(step.options, sink);
        if (outcome.exit == ExitCode::Stopped) {
            std::cerr << "kvbe-cli: " << outcome.message << "\n";
            return ExitCode::Stopped;
        }
        if (!outcome.ok()) {
            std::cerr << "kvbe-cli: " << step.label << ": " << outcome.message << "\n";
            skipped.push_back(step.skippedAs + ": " + outcome.message);
            continue;
        }
        step.apply(c, sink);
        ++measured;
    }
    if (measured == 0) {
        std::cerr << "kvbe-cli: calibrate measured nothing on this machine";
        for (const auto& s : skipped)
            std::cerr << "; " << s;
        std::cerr << "\n";
        return ExitCode::CannotRun;
    }

    // The GPU probe's prefill times carry no scheduling overhead, so no overhead is fitted.
    FitOptions fo;
    fo.fitOverhead = false;
    fo.fitRamp = c.prefill.size() >= 4;
    auto fit = fitCalibration(c, eval->cost.inputs(), eval->tiers, fo);
    if (fit) {
        c.fitted = fit->params;
        for (const auto& [name, p] : fit->breakevenPrefix)
            if (p) c.breakevenPrefix[name] = *wholeBreakevenPrefix(p);
        for (const auto& n : fit->notes)
            std::cerr << "kvbe-cli calibrate: fit: " << n << "\n";
    } else {
        std::cerr << "kvbe-cli calibrate: fit: " << fit.message() << "\n";
    }
    if (auto st = saveCalibration(o.out, c); !st) {
        std::cerr << "kvbe-cli: " << st.message() << "\n";
        return ExitCode::BadInput;
    }
    std::cerr << "kvbe-cli calibrate: wrote " << o.out;
    for (const auto& s : skipped)
        std::cerr << "\n  not measured: " << s;
    std::cerr << "\n";
    return ExitCode::Ok;
}

} // namespace

void addCalibrateCommand(CLI::App& app, Command& run) {
    auto o = std::make_shared<CalibrateOptions>();
    auto* cal = app.add_subcommand(
        "calibrate", "Run the drive and GPU probes and write this node's calibration file");
    cal->add_option("--model", o->model,
                    "Model (preset id, config.json, folder); default: the scenario's");
    cal->add_option("--dir", o->dir,
                    "Folder on the drive to measure; a scratch file is made there and removed");
    cal->add_option("--out", o->out, "Calibration file to write (e.g. $(hostname).json)")
        ->required();
    cal->add_option("--scenario", o->scenario,
                    "Scenario for the GPU, FLOP model and nominal tiers (default scenario)");
    cal->add_option("--file-size", o->fileSize, "Scratch file size (default 4GiB)");
    cal->add_option("--duration", o->duration, "Measured time per drive setting (default 2s)");
    cal->add_option("--lengths", o->lengths,
                    "Prefill lengths for the GPU probe (default 1k,8k,32k,80k)");
    cal->add_flag("--skip-gpu", o->skipGpu, "Do not run the GPU probes");
    cal->add_flag("--skip-drive", o->skipDrive, "Do not run the drive probe");
    cal->footer("\nExit codes: 0 written; 1 bad input; 2 usage; 3 nothing could be measured here; "
                "130 stopped.\n"
                "A probe that cannot run here (no GPU, tmpfs) is named on stderr and left out of "
                "the file.");
    cal->callback([o, &run] { run = [o] { return runCalibrate(*o); }; });
}

} // namespace kvbe::cli
