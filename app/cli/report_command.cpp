// kvbe-cli report: the sign-off report in one file (PDF or HTML): the scenario and where each of
// its values came from, the break-even figures and charts, with --trace the workload and the
// plan (the same plan `trace plan` makes, from the same flags), the risks and how to reproduce
// it. The content is core's (kvbe/report/report.h), the layout and the charts ui's
// (kvbe/ui/report/report_writer.h), so the command exists where kvbe-cli is built with the GUI
// (KVBE_HAVE_GUI); a headless build says so.
#include "commands.h"

#ifdef KVBE_HAVE_GUI
#include "trace_options.h"
#include "trace_plan.h"

#include "kvbe/report/report.h"
#include "kvbe/scenario/builtin_scenarios.h"
#include "kvbe/scenario/scenario_flags.h"
#include "kvbe/ui/report/report_writer.h"

#include <filesystem>
#endif

#include <memory>
#include <string>
#include <vector>

namespace kvbe::cli {

namespace {

std::vector<std::string>& reportArgs() {
    static std::vector<std::string> args;
    return args;
}

#ifdef KVBE_HAVE_GUI

struct ReportOptions {
    TraceOptions trace; // --trace FILE, its reading options, the replay and the scenario flags
    PlanFlags plan;
    std::vector<std::string> imports;
    std::string out, title;
};

// The report's arguments less those only the report takes (--trace, --out, --import, --title):
// what `trace plan` takes as they are.
std::vector<std::string> planArgs(const std::vector<std::string>& args) {
    static const std::vector<std::string> own = {"--trace", "--out", "--import", "--title"};
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        bool skip = false;
        for (const auto& f : own) {
            if (args[i] == f) {
                ++i;
                skip = true;
            } else if (args[i].rfind(f + "=", 0) == 0) {
                skip = true;
            }
        }
        if (!skip) out.push_back(args[i]);
    }
    return out;
}

// The program, its command and those of `args` that are scenario flags (with their values).
std::vector<std::string> scenarioArgs(const std::vector<std::string>& args) {
    std::vector<std::string> out(args.begin(), args.begin() + 2);
    for (std::size_t i = 2; i < args.size(); ++i)
        for (const auto& spec : scenarioFlagSpecs()) {
            const std::string flag(spec.flag);
            if (args[i] == flag) {
                out.push_back(args[i]);
                if (!spec.on && i + 1 < args.size()) out.push_back(args[++i]);
                break;
            }
            if (args[i].rfind(flag + "=", 0) == 0) {
                out.push_back(args[i]);
                break;
            }
        }
    return out;
}

// Every file the report reads, for its hash: the scenario, the trace, the price table, a model
// named by its config file. Calibration imports are hashed as they are read (one per file of a
// folder).
std::vector<std::pair<std::string, std::string>> inputFiles(const ReportOptions& o) {
    std::vector<std::pair<std::string, std::string>> files;
    const ScenarioFlags& f = o.trace.scenario;
    std::error_code ec;
    if (!f.scenario.empty() && !namesBuiltinScenario(f.scenario))
        files.emplace_back(f.scenario, "scenario (--scenario)");
    if (!f.model.empty() && std::filesystem::is_regular_file(f.model, ec))
        files.emplace_back(f.model, "model config (--model)");
    if (!o.trace.file.empty()) files.emplace_back(o.trace.file, "trace (--trace)");
    for (std::size_t i = 0; i + 1 < reportArgs().size(); ++i)
        if (reportArgs()[i] == "--prices")
            files.emplace_back(reportArgs()[i + 1], "prices (--prices)");
    for (const auto& a : reportArgs())
        if (a.rfind("--prices=", 0) == 0) files.emplace_back(a.substr(9), "prices (--prices)");
    return files;
}

ExitCode runReport(const ReportOptions& o) {
    if (!o.trace.errors.first.empty()) return fail(o.trace.errors.first);
    if (auto st = checkReportPath(o.out); !st) return fail(st.message());
    ReportJob job;
    job.out = o.out;
    job.title = o.title;
    job.imports = o.imports;
    job.version = KVBE_VERSION;
    job.command = {"kvbe-cli", "report"};
    job.command.insert(job.command.end(), reportArgs().begin(), reportArgs().end());
    job.scenarioFile = o.trace.scenario.scenario;
    if (!job.scenarioFile.empty() && namesBuiltinScenario(job.scenarioFile))
        job.scenarioFile = "kvbe's built-in scenario '" + job.scenarioFile + "'";
    job.scenarioFlags = scenarioFlagsCommandLine(o.trace.scenario);
    if (!job.scenarioFile.empty()) {
        // The flags besides --scenario: what changed the file's scenario.
        ScenarioFlags others = o.trace.scenario;
        others.scenario.clear();
        job.scenarioFlags = scenarioFlagsCommandLine(others);
    }
    job.inputs = inputFiles(o);

    if (o.trace.file.empty()) {
        auto flagged = scenarioFromFlags(o.trace.scenario);
        if (!flagged) return fail(flagged.message());
        job.presets = std::move(flagged->presets);
        job.scenario = std::move(flagged->scenario);
    } else {
        // With --router, the servers are a fleet, as in trace plan.
        auto fleet = plannedFleet(o.trace, "a report plans for one router");
        if (!fleet) return fail(fleet.message());
        auto planned = planRequest(*fleet, o.plan);
        if (!planned) return fail(planned.message());
        const PlanRequest req = std::move(*planned);
        if (auto ok = checkPlanRequest(req); !ok) return fail(flagMessage(ok.error()));
        auto ro = readOptions(o.trace);
        if (!ro) return fail(ro.message());
        auto loaded = loadAll(o.trace, o.trace.scenario, *ro);
        if (!loaded) return fail(loaded.message());
        if (!loaded->trace.summary.hasBlocks())
            return fail(o.trace.file + ": a " +
                        std::string(toString(loaded->trace.summary.format)) +
                        " trace has no block ids, so there is nothing to plan a cache for");
        job.presets = loaded->setup.presets;
        job.scenario = loaded->setup.eval.scenario;
        auto eval = std::make_shared<const Evaluation>(std::move(loaded->setup.eval));
        auto trace = std::make_shared<const Trace>(std::move(loaded->trace));
        job.eval = eval;
        job.trace = trace;
        job.traceFile = o.trace.file;
        // The trace's replay is the fleet the report plans (--servers N --router NAME), as the
        // window's Workload tab replays it; otherwise the tab's defaults.
        if (fleet->replay.fleet) {
            WorkloadSettings ws;
            ws.instances = fleet->replay.instances;
            if (!fleet->replay.router.empty()) ws.router = fleet->replay.router;
            ws.nodeServers = fleet->replay.nodeServers;
            ws.writeQueue = fleet->replay.writeQueue;
            ws.admission = fleet->admission;
            job.workload = ws;
        }
        auto setup = planSetup(*eval, job.presets, *trace, req);
        if (!setup) return fail(flagMessage(setup.error()));
        auto plan = planTraceSampled(*setup, planSampling(o.plan));
        if (!plan)
            job.planError = flagMessage(plan.error());
        else
            job.plan = std::move(*plan);
        job.planSetup = std::move(*setup);
        std::vector<std::string> words = {"kvbe-cli", "trace", "plan", o.trace.file};
        for (const auto& a : planArgs(reportArgs()))
            words.push_back(a);
        words.insert(words.end(), {"--output", "json"});
        job.planCommand = shellCommandLines(words);
    }
    // calc takes the scenario flags only: those of the report's arguments.
    std::vector<std::string> calc = {"kvbe-cli", "calc"};
    for (const auto& a : planArgs(reportArgs()))
        calc.push_back(a);
    calc = scenarioArgs(calc);
    std::string lengths;
    for (double n : reportLengths(job.scenario))
        lengths += (lengths.empty() ? "" : ",") + std::to_string(std::int64_t(n));
    calc.insert(calc.end(), {"--lengths", lengths, "--format", "json"});
    job.calcCommand = shellCommandLines(calc);
    if (auto st = writeReport(job); !st) return fail(st.message());
    std::cerr << "kvbe-cli: report written to " << o.out << "\n";
    return ExitCode::Ok;
}

#endif

} // namespace

void addReportCommand(CLI::App& app, Command& run, int argc, char** argv) {
    reportArgs().clear();
    for (int i = 2; i < argc; ++i) // after `kvbe-cli report`
        reportArgs().emplace_back(argv[i]);
    auto* sub = app.add_subcommand(
        "report", "The sign-off report in one file (.pdf or .html): the scenario and where each "
                  "value came from, the break-even charts, with --trace the workload and what to "
                  "buy, the risks, and how to reproduce it");
#ifdef KVBE_HAVE_GUI
    auto o = std::make_shared<ReportOptions>();
    addCommon(sub, o->trace);
    sub->remove_option(sub->get_option("file"));
    sub->add_option("--trace", o->trace.file, "A request trace: adds the workload and the plan");
    sub->add_option("--import", o->imports,
                    "Calibration files, or folders of them (repeatable): fitted to the scenario, "
                    "drawn on the break-even charts")
        ->allow_extra_args(false); // one path a flag: the plan command leaves each out whole
    sub->add_option("--out", o->out, "The report: .pdf or .html")->required();
    sub->add_option("--title", o->title, "The report's title (default: KV offload sign-off)");
    addCapacityOptions(sub, o->trace);
    addWriteBufferOption(sub, o->trace, "As for trace plan (default 8GiB)");
    addWriteQueueFlag(sub, o->trace, "Writes always keep up");
    addInstancesOption(sub, o->trace, "Prefill servers (default 0: no queueing)");
    addFleetOptions(sub, o->trace);
    addAdmissionOption(sub, o->trace, "The rule the plan's TTFT is taken under");
    addPlanFlags(sub, o->plan, o->trace.errors);
    sub->callback([o, &run] { run = [o] { return runReport(*o); }; });
#else
    sub->allow_extras();
    sub->callback([&run] {
        run = [] {
            std::cerr << "kvbe-cli: report needs the Qt build: this kvbe-cli was built without "
                         "the GUI (KVBE_BUILD_GUI=OFF, the headless preset); build with the GUI "
                         "to write reports\n";
            return ExitCode::CannotRun;
        };
    });
#endif
}

} // namespace kvbe::cli
