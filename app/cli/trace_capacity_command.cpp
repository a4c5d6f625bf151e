// kvbe-cli trace capacity: the prefill servers a trace needs at a latency target under each
// caching rule, or the largest load each rule holds on N servers; and the load options
// (--rate-scale, --duration-cap) it shares with trace replay.
#include "commands.h"
#include "trace_options.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_capacity_report.h"
#include "kvbe/trace/trace_sampled.h"

#include <cmath>
#include <iostream>

namespace kvbe::cli {
namespace {

// A number of servers, 1 or more (core's count parser).
Result<int> serverCount(const std::string& text) {
    auto n = parseCount(text, 1, 1 << 20);
    if (!n)
        return Error{"'" + text + "': expected a whole number of servers, 1 or more (" +
                     n.message() + ")"};
    return static_cast<int>(*n);
}

ExitCode runCapacity(const TraceOptions& o) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    CapacityRequest q;
    q.target = *o.slo; // --slo is required
    if (o.servers) {
        q.instances = *o.servers;
        q.serversNeeded = false;
    }
    q.maxInstances = o.maxInstances;
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    Trace& trace = loaded->trace;
    if (!trace.summary.hasBlocks())
        return fail(o.file + ": a " + std::string(toString(trace.summary.format)) +
                    " trace has no block ids, so it cannot be replayed; use trace inspect for "
                    "its lengths");
    // With --router, the servers are a fleet: a GPU cache each, behind the router.
    auto fleet = oneRouterFleet(o, "trace capacity takes one router");
    if (!fleet) return fail(fleet.message());
    auto cfg = replayConfig(*fleet, loaded->setup, trace.summary.blockTokens);
    if (!cfg) return fail(cfg.message());
    applyLoadOptions(o, trace);
    q.rateScale = cfg->rateScale;
    if (auto ok = checkArrivals(trace, o.file); !ok) return fail(ok.message());
    auto run = traceCapacityRun(trace, loaded->setup.eval.cost, *cfg, q, sampleMode(o.sampling));
    if (!run) return fail(run.message());
    const CapacityResult* r = &run->result;

    const double cap = o.durationCapS.value_or(0);
    const TraceCapacityReport report{&trace,
                                     o.file,
                                     loaded->setup.eval.scenario.name,
                                     &*cfg,
                                     loaded->setup.eval.scenario.tensorParallel,
                                     cap,
                                     r,
                                     &*run};
    if (o.output == "json")
        std::cout << dumpJson(traceCapacityJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << traceCapacityCsv(report);
    else
        std::cout << traceCapacityTable(report);
    return ExitCode::Ok;
}

} // namespace

void addTraceCapacityCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o,
                             Command& run) {
    auto* sub = trace->add_subcommand(
        "capacity", "Prefill servers needed at a TTFT target per caching rule, or the largest "
                    "load each rule holds on N servers");
    addCommon(sub, *o);
    addCapacityOptions(sub, *o);
    addReplayTierOptions(sub, *o);
    addParsed(sub, "--slo", o->slo, o->errors, parseLatencyTarget,
              "The latency target: p50, p90, p99 (any pNN) or mean, with a unit, e.g. "
              "p99=2s, p90=500ms")
        ->required();
    auto* servers = addParsed(
        sub, "--instances", o->servers, o->errors, serverCount,
        "N servers: find the largest load (S) each rule holds on them, instead of the servers "
        "each rule needs at --rate-scale");
    addLoadOptions(sub, *o);
    addFleetOptions(sub, *o);
    sub->get_option("--rate-scale")->excludes(servers);
    addSampleFlags(sub, o->sampling,
                   "Search on the whole trace from the start (default on large traces: two "
                   "samples guide both searches, whose answers are then confirmed on the whole "
                   "trace)",
                   "searched");
    addParsed(sub, "--max-instances", o->maxInstances, o->errors, serverCount,
              "The most servers the search tries (default 1024)");
    sub->add_option("--output", o->output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    sub->callback([o, &run] { run = [o] { return runCapacity(*o); }; });
}

} // namespace kvbe::cli
