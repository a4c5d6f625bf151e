// kvbe-cli trace plan: what to buy for a trace (kvbe/plan/plan.h): the grid replayed, the
// Pareto fronts, the recommended configuration, and with --emit the serving stack's settings.
// The plan itself is core's; this reads the flags, loads what every trace command loads
// (trace_options.h) and prints.
#include "trace_plan.h"

#include "commands.h"

#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"
#include "kvbe/plan/plan.h"
#include "kvbe/plan/plan_report.h"
#include "kvbe/plan/plan_sample.h"
#include "kvbe/plan/plan_setup.h"
#include "kvbe/plan/plan_shard.h"
#include "kvbe/plan/serving_settings.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kvbe::cli {

namespace {
std::vector<std::string>& commandLineStore() {
    static std::vector<std::string> args;
    return args;
}
// While `trace plan merge` re-reads the shards' command: the parts it merges.
const std::vector<PlanPart>* g_merging = nullptr;
} // namespace

void setCommandLine(int argc, char** argv) {
    commandLineStore().assign(argv + (argc > 0 ? 1 : 0), argv + argc);
}

namespace {

// The plan's own flags besides those of the shared request (trace_plan.h): the output, the
// shards and the serving stack's settings.
struct PlanOptions {
    PlanFlags flags;
    std::string output = "table", emitFile;
    std::optional<ServingStack> emit;
    std::string emitName;
    std::string servedModel;        // --served-model: model_name of --emit pykvcache
    std::string shard, out;         // --shard I/N, --out FILE
    std::vector<std::string> parts; // trace plan merge PART...
};

// "3/16": shard 3 of 16.
Result<std::pair<int, int>> parseShard(const std::string& text) {
    const auto slash = text.find('/');
    const auto i = parseCountList(text.substr(0, slash), 0, 1 << 20);
    const auto n =
        slash == std::string::npos ? i : parseCountList(text.substr(slash + 1), 1, 1 << 20);
    if (slash == std::string::npos || !i || !n || i->size() != 1 || n->size() != 1 ||
        i->front() >= n->front())
        return Error{"--shard '" + text + "': expected I/N with 0 <= I < N, e.g. 3/16"};
    return std::pair<int, int>(int(i->front()), int(n->front()));
}

// The shard's command for its part file: the arguments less --shard and --out.
std::vector<std::string> partCommand() {
    std::vector<std::string> out;
    const auto& a = commandLineStore();
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--shard" || a[i] == "--out") {
            ++i;
            continue;
        }
        if (a[i].rfind("--shard=", 0) == 0 || a[i].rfind("--out=", 0) == 0) continue;
        out.push_back(a[i]);
    }
    return out;
}

// "0,256GiB,1TiB": core's sizes, and 0 for no DRAM tier.
Result<std::vector<double>> parseDramList(const std::string& text) {
    std::vector<double> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) {
        if (item == "0") {
            out.push_back(0);
            continue;
        }
        auto b = parseBytes(item);
        if (!b) return Error{"'" + item + "': " + b.message() + ", or 0 for no DRAM tier"};
        out.push_back(*b);
    }
    if (out.empty()) return Error{"expected sizes such as 0,256GiB,1TiB"};
    return out;
}

// A list of whole numbers (core's count parser); core checks their range.
Result<std::vector<std::int64_t>> parseCounts(const std::string& text, const char* what) {
    auto v = parseCountList(text, std::int64_t(-1) << 40, std::int64_t(1) << 40);
    if (!v) return Error{"'" + text + "': " + v.message() + " (" + what + ")"};
    return v;
}

// --routers "round-robin,sglang:cache_threshold=0.5,balance_abs_threshold=32": the routers,
// a comma before a key=value going on with the router before it.
std::vector<std::string> routerList(const std::vector<std::string>& items) {
    std::vector<std::string> out;
    for (const auto& item : items) {
        std::stringstream in(item);
        for (std::string part; std::getline(in, part, ',');) {
            const bool keyValue =
                part.find('=') != std::string::npos && part.find(':') == std::string::npos;
            if (keyValue && !out.empty())
                out.back() += "," + part;
            else
                out.push_back(part);
        }
    }
    return out;
}

} // namespace

Result<PlanRequest> planRequest(const TraceOptions& o, const PlanFlags& p) {
    if (!p.routers.empty() && !o.replay.fleet)
        return Error{"--routers: a plan compares routers on a fleet; give --servers N and the "
                     "fleet's --router"};
    PlanRequest req;
    req.otherRouters = routerList(p.routers);
    req.replay = o.replay;
    req.limits = p.limits;
    req.grid = p.grid;
    req.prices = p.prices;
    req.drives = p.driveKeys;
    req.placeLocal = p.placeLocal;
    req.placePooled = p.placePooled;
    req.links = p.links;
    req.rule = o.admission;
    req.threads = p.threads;
    return req;
}

PlanSampleOptions planSampling(const PlanFlags& p) {
    PlanSampleOptions sampling;
    static_cast<SampleMode&>(sampling) = sampleMode(p.sampling);
    return sampling;
}

void addPlanFlags(CLI::App* plan, PlanFlags& o, FlagErrors& errors) {
    addParsed(
        plan, "--life", o.limits.lifeYears, errors,
        [](const std::string& t) -> Result<double> {
            auto v = parseNumber(t);
            if (!v)
                return Error{"'" + t + "': expected the years the drives must last, more than 0 " +
                             "and at most 100"};
            return *v;
        },
        "Years every drive must last at the trace's write rate, and the horizon over which "
        "savings are weighed against cost (default 5)");
    addParsed(plan, "--slo-p99", o.limits.sloP99S, errors, parseSeconds,
              "The p99 TTFT a configuration must meet, e.g. 2s");
    addParsed(
        plan, "--budget", o.limits.budgetUsd, errors,
        [](const std::string& t) -> Result<double> {
            auto v = parseNumber(t);
            if (!v) return Error{"'" + t + "': expected US dollars, 0 or more, e.g. 20000"};
            return *v;
        },
        "The most a configuration may cost up front, in USD");
    addParsed(plan, "--prices", o.prices, errors, loadPriceTable,
              "A price table (the layout of resources/prices.json; default: its example prices)");
    addParsed(plan, "--dram", o.grid.dramBytes, errors, parseDramList,
              "DRAM sizes to try (default 0,128GiB,...,2TiB; 0: none)");
    plan->add_option_function<std::string>(
        "--drives",
        [&o, &errors](const std::string& t) {
            auto v = parseCounts(t, "drive counts");
            if (!v) return errors.add("--drives " + v.message());
            o.grid.drives = *v;
            o.grid.extendDrives = false; // the counts asked for, and no more
        },
        "Drive counts to try (default 0,1,2,4,8, and more up to what bandwidth and endurance "
        "need; 0: none)");
    plan->add_option("--drive", o.driveKeys,
                     "A drive preset to try (repeat; default: every rated, priced NVMe preset)");
    plan->add_option_function<std::string>(
        "--store-after",
        [&o, &errors](const std::string& t) {
            auto v = parseCounts(t, "sightings; 1 stores every block");
            if (!v) return errors.add("--store-after " + v.message());
            o.grid.storeAfter.clear();
            for (auto k : *v) // core checks the range (checkPlanRequest)
                o.grid.storeAfter.push_back(int(std::clamp<std::int64_t>(k, -1, 1 << 20)));
        },
        "Store-after K values to try (default 1,2,3)");
    plan->add_option_function<std::string>(
        "--placements",
        [&o, &errors](const std::string& t) {
            o.placeLocal = o.placePooled = false;
            std::stringstream in(t);
            for (std::string item; std::getline(in, item, ',');)
                if (item == "local")
                    o.placeLocal = true;
                else if (item == "pooled")
                    o.placePooled = true;
                else
                    return errors.add("--placements '" + t + "': '" + item +
                                      "' is not a placement; expected local, pooled or both, "
                                      "e.g. local,pooled");
        },
        "A fleet's tiers on each node (local), the last of them in one pool for the fleet over "
        "a link on each node (pooled), or both (default local)");
    plan->add_option_function<std::string>(
        "--links",
        [&o](const std::string& t) {
            std::stringstream in(t);
            for (std::string item; std::getline(in, item, ',');)
                o.links.push_back(item);
        },
        "The network tier presets a pooled placement's nodes reach the pool by, each priced "
        "by link_usd in --prices (default net-400g)");
    plan->add_option("--routers", o.routers,
                     "Other routers, each a row of GPU-only caching on the same fleet, valued by "
                     "the GPU-hours it saves against --router's (comma-separated or repeated; "
                     "all: every router)");
    plan->add_option("--threads", o.threads, "Replays at once (default: one per hardware thread)")
        ->check(CLI::Range(0, 1024));
    addSampleFlags(plan, o.sampling,
                   "Replay every configuration in full (default on large traces: the grid on two "
                   "samples, the shortlist in full)",
                   "planned");
}

namespace {

void addPlanOptions(CLI::App* plan, PlanOptions& o, FlagErrors& errors) {
    addPlanFlags(plan, o.flags, errors);
    plan->add_option("--shard", o.shard,
                     "I/N: replay the I-th of N slices of the grid (exact) into --out; merge the "
                     "parts with `trace plan merge`");
    plan->add_option("--out", o.out, "The shard's part file (JSON)");
    plan->add_option("--output", o.output, "Output format")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    plan->add_option_function<std::string>(
            "--emit",
            [&o](const std::string& t) {
                o.emit = parseServingStack(t);
                o.emitName = t;
            },
            "The serving stack's settings for the recommended configuration, instead of the "
            "report (or into --emit-file); for a fleet, its router's (sglang, llm-d, dynamo, "
            "production-stack)")
        ->check(CLI::IsMember(servingStackNames()));
    plan->add_option("--emit-file", o.emitFile, "Write the --emit settings to this file");
    plan->add_option("--served-model", o.servedModel,
                     "The model's name as the server serves it, for --emit pykvcache's "
                     "model_name and --emit llm-d's tokenizer (default: the scenario's --model)");
}

// --shard, --out and --sample-rate together, before the trace is read.
Status checkShardOptions(const PlanOptions& o) {
    if (!o.shard.empty()) {
        if (auto sh = parseShard(o.shard); !sh) return sh.error();
        if (o.out.empty()) return Error{"--shard: give --out FILE for the shard's part"};
        if (o.flags.sampling.sampleRate > 0)
            return Error{"--shard: shards are exact; drop --sample-rate"};
    } else if (!o.out.empty())
        return Error{"--out: only with --shard I/N"};
    return Ok{};
}

ExitCode runTracePlan(const PlanOptions& o, const std::string& file, const Trace& trace,
                      const Evaluation& e, const Presets& presets, const PlanRequest& req) {
    auto setup = planSetup(e, presets, trace, req);
    if (!setup) return fail(flagMessage(setup.error()));
    if (!o.shard.empty()) { // one shard of an exact plan, into its part file
        const auto [i, n] = *parseShard(o.shard);
        auto part = planShard(*setup, i, n);
        if (!part) return fail(part.message());
        part->command = partCommand();
        if (auto w = writeFileAtomically(o.out, dumpJson(planPartJson(*part), 1) + "\n"); !w)
            return fail("--out: " + w.message());
        std::cerr << "kvbe-cli: shard " << i << "/" << n << ": " << part->points.size() << " of "
                  << part->configurations << " configurations in " << o.out << "\n";
        return ExitCode::Ok;
    }
    auto plan = g_merging ? mergePlanParts(*setup, *g_merging)
                          : planTraceSampled(*setup, planSampling(o.flags));
    if (!plan) return fail(flagMessage(plan.error()));
    const PlanReport report{&trace, file, e.scenario.name, &*setup, &*plan};
    if (o.emit) {
        if (!plan->recommended) return fail("--emit " + o.emitName + ": " + plan->unmet);
        auto text = servingSettings(*o.emit, plan->points[*plan->recommended], *setup, e, presets,
                                    trace.summary.blockTokens, trace.distinctBlocks, o.servedModel);
        if (!text) return fail("--emit " + o.emitName + ": " + text.message());
        if (o.emitFile.empty()) {
            std::cout << *text;
            return ExitCode::Ok;
        }
        if (auto w = writeFileAtomically(o.emitFile, *text); !w)
            return fail("--emit-file: " + w.message());
    }
    if (o.output == "json")
        std::cout << dumpJson(planJson(report), 2) << "\n";
    else if (o.output == "csv")
        std::cout << planCsv(report);
    else
        std::cout << planTable(report);
    return ExitCode::Ok;
}

ExitCode runPlan(const TraceOptions& o, const PlanOptions& p) {
    if (!o.errors.first.empty()) return fail(o.errors.first);
    if (!p.emitFile.empty() && !p.emit)
        return fail("--emit-file: give --emit too (vllm, lmcache, pykvcache, sglang, llm-d, "
                    "dynamo or production-stack)");
    if (auto ok = checkShardOptions(p); !ok) return fail(ok.message());
    // With --router, the servers are a fleet, as in trace capacity: a GPU cache each, each tier
    // on every node.
    auto fleet = plannedFleet(o, "a plan takes one router");
    if (!fleet) return fail(fleet.message());
    auto planned = planRequest(*fleet, p.flags);
    if (!planned) return fail(planned.message());
    PlanRequest req = std::move(*planned);
    // The limits and the grid are checked before the trace is read.
    if (auto ok = checkPlanRequest(req); !ok) return fail(flagMessage(ok.error()));
    auto ro = readOptions(o);
    if (!ro) return fail(ro.message());
    auto loaded = loadAll(o, o.scenario, *ro);
    if (!loaded) return fail(loaded.message());
    if (!loaded->trace.summary.hasBlocks())
        return fail(o.file + ": a " + std::string(toString(loaded->trace.summary.format)) +
                    " trace has no block ids, so there is nothing to plan a cache for");
    applyLoadOptions(o, loaded->trace);
    // The scenario's --tier capacities are the plan's to choose: the request does not carry them.
    return runTracePlan(p, o.file, loaded->trace, loaded->setup.eval, loaded->setup.presets, req);
}

// `trace plan merge PART...`: the parts read, the shards' command read again with them to merge.
ExitCode runMerge(const std::vector<std::string>& files, const std::string& output) {
    std::vector<PlanPart> parts;
    for (const auto& f : files) {
        std::ifstream in(f, std::ios::binary);
        if (!in) return fail(f + ": cannot be read (a part file of `trace plan --shard I/N`)");
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(in);
        } catch (const std::exception& e) {
            return fail(f + ": not valid JSON (" + e.what() + ")");
        }
        auto part = parsePlanPart(j, f);
        if (!part) return fail(part.message());
        parts.push_back(std::move(*part));
    }
    std::vector<std::string> args;
    try {
        args = parts.front().command.get<std::vector<std::string>>();
    } catch (const std::exception&) {
        return fail(files.front() + ": field 'command': expected the shard's arguments");
    }
    if (args.size() < 2 || args[0] != "trace" || args[1] != "plan")
        return fail(files.front() + ": field 'command': expected a `trace plan` command");
    if (!output.empty()) args.insert(args.end(), {"--output", output});
    CLI::App app;
    Command run;
    addTraceCommands(app, run);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        return fail(files.front() + ": its command does not parse: " + e.what());
    }
    if (!run) return fail(files.front() + ": its command is not a plan");
    g_merging = &parts;
    const ExitCode rc = run();
    g_merging = nullptr;
    return rc;
}

} // namespace

void addTracePlanCommand(CLI::App* trace, const std::shared_ptr<TraceOptions>& o, Command& run) {
    auto* plan = trace->add_subcommand(
        "plan", "What to buy: DRAM, drives and store-after K against cost, TTFT and drive life");
    auto p = std::make_shared<PlanOptions>();
    addCommon(plan, *o);
    addCapacityOptions(plan, *o);
    addWriteBufferOption(plan, *o, "As for trace replay (default 8GiB)");
    addWriteQueueFlag(plan, *o, "Writes always keep up");
    addLoadOptions(plan, *o);
    addInstancesOption(plan, *o,
                       "Prefill servers (default 0: no queueing); with --router a fleet, a GPU "
                       "cache each and every tier on each node, its sizes a node's and its costs "
                       "every node's");
    addFleetOptions(plan, *o);
    addAdmissionOption(plan, *o, "The rule the plan's TTFT is taken under");
    addPlanOptions(plan, *p, o->errors);
    auto* merge = plan->add_subcommand(
        "merge", "Merge the part files of `trace plan FILE --shard I/N --out PART` (every shard "
                 "once) into the plan one run gives: the same front and recommendation");
    auto mergeOutput = std::make_shared<std::string>();
    merge->add_option("parts", p->parts, "The part files")->required();
    merge->add_option("--output", *mergeOutput, "Output format (default: the shards' command's)")
        ->check(CLI::IsMember({"table", "json", "csv"}));
    plan->get_option("file")->required(false); // not with merge
    plan->callback([o, p, merge, mergeOutput, &run] {
        if (merge->parsed())
            run = [p, mergeOutput] { return runMerge(p->parts, *mergeOutput); };
        else if (o->file.empty())
            run = [] {
                return fail("trace plan: give the trace FILE (or `trace plan merge PART...`)");
            };
        else
            run = [o, p] { return runPlan(*o, *p); };
    });
}

} // namespace kvbe::cli
