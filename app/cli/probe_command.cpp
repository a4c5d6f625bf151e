// kvbe-cli probe <key> | list: one subcommand per registered probe, built from its entry in the
// probe catalog (kvbe/probe/probe_catalog.h): its flags with their checks and help, the --help
// footer, and --format (jsonl stream or a table). The probe reads its settings from the flags
// (Probe::configure) and runs with a stop on SIGINT/SIGTERM.
#include "commands.h"
#include "probe_registry.h"
#include "probe_watchdog.h"

#include "kvbe/probes/io_engine.h"
#include "kvbe/probes/stream.h"

#include <iostream>
#include <map>
#include <memory>

namespace kvbe::cli {
namespace {

using namespace kvbe::probes;

// What one subcommand's flags hold while CLI11 parses them, and the ProbeArgs made of them.
struct ProbeFlags {
    explicit ProbeFlags(const ProbeDescription& d) : args(d) {}
    std::map<std::string, std::string, std::less<>> values;
    std::map<std::string, std::vector<std::string>, std::less<>> lists;
    std::map<std::string, bool, std::less<>> flags;
    std::map<std::string, CLI::Option*, std::less<>> options;
    std::string format = "table";
    ProbeArgs args;
};

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : ",") + item;
    return out;
}

// The option as CLI11 knows it: a value checked at parse time where the kind allows (a choice,
// a whole number, a number), a list of values, or a flag.
CLI::Option* addOption(CLI::App* sub, const ProbeOption& o, ProbeFlags& f) {
    const std::string flag(o.flag), help(o.help);
    if (o.kind == ProbeOptionKind::Flag) return sub->add_flag(flag, f.flags[flag], help);
    if (o.list) {
        CLI::Option* opt = sub->add_option(flag, f.lists[flag], help);
        if (o.required) opt->required();
        return opt;
    }
    // A positional one is named as CLI11 names positionals, e.g. "--trace,trace".
    CLI::Option* opt =
        sub->add_option(o.positional ? flag + "," + flag.substr(2) : flag, f.values[flag], help);
    if (o.kind == ProbeOptionKind::Choice)
        opt->check(CLI::IsMember(std::vector<std::string>(o.choices.begin(), o.choices.end())));
    else if (o.kind == ProbeOptionKind::Count)
        opt->check(CLI::TypeValidator<int>(""))->type_name("INT");
    else if (o.kind == ProbeOptionKind::Number)
        opt->check(CLI::TypeValidator<double>(""))->type_name("FLOAT");
    if (o.required) opt->required();
    return opt;
}

// The flags that were given, as the probe reads them.
void collectArgs(ProbeFlags& f) {
    for (const auto& o : f.args.probe().options) {
        const auto flag = std::string(o.flag);
        if (f.options[flag]->count() == 0) continue;
        if (o.kind == ProbeOptionKind::Flag)
            f.args.set(flag, "true");
        else
            f.args.set(flag, o.list ? joined(f.lists[flag]) : f.values[flag]);
    }
}

// --format: "table" for people, "jsonl" for the probe protocol's stream (the window and scripts
// read it). Every probe subcommand has it.
CLI::Option* addProbeFormatOption(CLI::App* probe, std::string& format) {
    return probe->add_option("--format", format, "table for people, jsonl for the GUI and scripts")
        ->check(CLI::IsMember({"table", "jsonl"}));
}

ExitCode runProbe(Probe& probe, const ProbeFlags& flags) {
    auto options = probe.configure(flags.args);
    if (!options) {
        std::cerr << "kvbe-cli: " << options.message() << "\n";
        if (flags.format == "jsonl") JsonlSink(std::cout, probe.key()).error(options.message());
        return ExitCode::BadInput;
    }
    auto sink = makeProbeSink(flags.format, probe.key());
    return runProbeWithWatchdog(probe, *options, *sink, probe.stopGrace());
}

void addProbeSubcommand(CLI::App& parent, std::shared_ptr<Probe> probe, Command& run) {
    const ProbeDescription& d = probe->catalogEntry();
    auto f = std::make_shared<ProbeFlags>(d);
    auto* sub = parent.add_subcommand(std::string(d.key), std::string(d.description));
    std::map<std::string_view, std::vector<CLI::Option*>> groups;
    for (const auto& o : d.options) {
        CLI::Option* opt = addOption(sub, o, *f);
        f->options[std::string(o.flag)] = opt;
        if (!o.group.empty()) {
            for (CLI::Option* other : groups[o.group])
                other->excludes(opt);
            groups[o.group].push_back(opt);
        }
    }
    addProbeFormatOption(sub, f->format);
    sub->footer("\n" + std::string(d.footer) + "\n" + exitCodeHelp());
    sub->callback([f, probe, &run] {
        collectArgs(*f);
        run = [f, probe] { return runProbe(*probe, *f); };
    });
}

ExitCode runList(const std::string& format) {
    std::string why;
    const bool uring = makeUringEngine(why) != nullptr;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& p : registeredProbes()) {
        const Status a = p->available();
        list.push_back({{"key", p->key()},
                        {"title", p->catalogEntry().title},
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

} // namespace

void addProbeCommands(CLI::App& app, Command& run) {
    auto* probe =
        app.add_subcommand("probe", "Measure this machine: drive read/write bandwidth, host "
                                    "memcpy, the GPU, and a serving stack end to end");
    probe->require_subcommand(1);
    for (auto& p : registeredProbes())
        addProbeSubcommand(*probe, std::shared_ptr<Probe>(std::move(p)), run);

    auto listFormat = std::make_shared<std::string>("table");
    auto* list = probe->add_subcommand("list", "List the probes and whether they can run here");
    list->add_option("--format", *listFormat, "table or json")
        ->check(CLI::IsMember({"table", "json"}));
    list->callback([listFormat, &run] { run = [listFormat] { return runList(*listFormat); }; });
}

} // namespace kvbe::cli
