// The sign-off report put together: the summary, the sections of the other files, the risks and
// how to reproduce it.
#include "kvbe/report/report.h"

#include "report_text.h"

#include "kvbe/base/text.h"
#include "kvbe/base/units.h"
#include "kvbe/trace/trace_endurance.h"

#include <cctype>

namespace kvbe {

using report_detail::sig;

namespace {

ReportSection reproduction(const ReportInputs& in) {
    ReportSection sec{"How to reproduce it", {}};
    if (in.command.empty()) {
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "Made by kvbe " + in.version + " on " + in.date +
                                  " in the window (File, Export report). The scenario it shows "
                                  "is at the end of this section: saved as a .kvbe.json file, "
                                  "kvbe-cli report --scenario FILE gives its figures again.",
                              {},
                              {},
                              {}});
    } else {
        sec.blocks.push_back(
            {ReportBlock::Kind::Text,
             "Made by kvbe " + in.version + " on " + in.date + ", with this command line:",
             {},
             {},
             {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, shellCommandLines(in.command), {}, {}, {}});
    }
    if (!in.calcCommand.empty()) {
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "The break-even figures alone (B*, p*, f* at each length):",
                              {},
                              {},
                              {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, in.calcCommand, {}, {}, {}});
    }
    if (!in.replayCommand.empty()) {
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "The trace's replay, with the settings the Workload view had (the "
                              "HBM for KV, the tiers' capacities, the rules, the servers); "
                              "scenario.kvbe.json is the scenario at the end of this section:",
                              {},
                              {},
                              {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, in.replayCommand, {}, {}, {}});
    }
    if (!in.planCommand.empty()) {
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "The plan alone (its front and recommended configuration as JSON):",
                              {},
                              {},
                              {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, in.planCommand, {}, {}, {}});
    }
    if (in.files.empty()) {
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "No input files: the built-in default scenario and presets.",
                              {},
                              {},
                              {}});
    } else {
        ReportTable files{{"Input file", "What it is"}, {}};
        std::string sums;
        for (const auto& f : in.files) {
            files.rows.push_back({f.path, f.role});
            sums += (sums.empty() ? "" : "\n") + f.sha256 + "  " + f.path;
        }
        sec.blocks.push_back({ReportBlock::Kind::Table, {}, files, {}, {}});
        sec.blocks.push_back({ReportBlock::Kind::Text,
                              "Their SHA-256, as sha256sum writes them (check the files with "
                              "sha256sum -c):",
                              {},
                              {},
                              {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, sums, {}, {}, {}});
    }
    if (!in.scenarioJson.empty()) {
        sec.blocks.push_back(
            {ReportBlock::Kind::Text, "The scenario, as a .kvbe.json file holds it:", {}, {}, {}});
        sec.blocks.push_back({ReportBlock::Kind::Code, in.scenarioJson, {}, {}, {}});
    }
    sec.blocks.push_back({ReportBlock::Kind::Text,
                          "Presets, model configs and example prices are built into kvbe " +
                              in.version + " (resources/ of its source).",
                          {},
                          {},
                          {}});
    return sec;
}

// The GPU's model in a name, "H100" of "NVIDIA H100 80GB HBM3" and "NVIDIA H100 SXM5 80GB":
// the first word of 1 to 3 letters, then 2 to 4 digits and at most one letter; "" for none.
std::string gpuModel(const std::string& name) {
    std::string word;
    for (std::size_t i = 0; i <= name.size(); ++i) {
        if (i < name.size() && name[i] != ' ') {
            word += name[i];
            continue;
        }
        std::size_t letters = 0;
        while (letters < word.size() && std::isalpha(static_cast<unsigned char>(word[letters])))
            ++letters;
        std::size_t digits = letters;
        while (digits < word.size() && std::isdigit(static_cast<unsigned char>(word[digits])))
            ++digits;
        if (letters >= 1 && letters <= 3 && digits - letters >= 2 && digits - letters <= 4 &&
            word.size() - digits <= 1)
            return lower(word);
        word.clear();
    }
    return {};
}

// Whether a calibration's GPU is the scenario's, as far as their names tell (unknown: yes).
bool sameGpu(const std::string& measured, const std::string& scenario) {
    const std::string a = gpuModel(measured), b = gpuModel(scenario);
    return a.empty() || b.empty() || a == b;
}

} // namespace

std::string shellWord(const std::string& w) {
    if (!w.empty() && w.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;#~!") == std::string::npos)
        return w;
    std::string q = "'";
    for (char c : w)
        q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string shellCommandLines(const std::vector<std::string>& words) {
    std::string cmd;
    for (const auto& w : words) {
        if (!cmd.empty()) cmd += w.rfind("--", 0) == 0 ? " \\\n  " : " ";
        cmd += shellWord(w);
    }
    return cmd;
}

std::vector<const ReportBlock*> Report::figures() const {
    std::vector<const ReportBlock*> out;
    for (const auto& s : sections)
        for (const auto& b : s.blocks)
            if (b.kind == ReportBlock::Kind::Figure) out.push_back(&b);
    return out;
}

std::vector<std::string> reportRisks(const ReportInputs& in) {
    std::vector<std::string> risks;
    const Evaluation& e = *in.eval;
    if (in.plan && in.plan->recommended) {
        const PlanPoint& p = in.plan->points[*in.plan->recommended];
        for (const auto& t : p.tiers) {
            const TierEndurance& en = t.endurance;
            if (en.yearsToRatedEndurance && en.drive.warrantyYears &&
                *en.yearsToRatedEndurance < *en.drive.warrantyYears)
                risks.push_back("Drive wear: the recommended " + t.name + "'s drives reach their " +
                                "rated endurance in " + formatLife(*en.yearsToRatedEndurance) +
                                ", within their " + sig(*en.drive.warrantyYears) +
                                "-year warranty.");
        }
        if (p.bandwidthBound)
            risks.push_back("Saturated tier: in the recommended configuration " + p.saturation);
        if (p.lifeIfEveryBlockStored && p.storeAfter > 1)
            risks.push_back("Store admission: a serving stack that stores every block instead of "
                            "from the " +
                            sightingText(p.storeAfter) + " wears these drives out in " +
                            formatLife(*p.lifeIfEveryBlockStored) + ".");
    }
    if (in.plan) {
        std::size_t shortLived = 0;
        for (std::size_t i : in.plan->front) {
            const PlanPoint& p = in.plan->points[i];
            for (const auto& t : p.tiers)
                if (t.endurance.yearsToRatedEndurance && t.endurance.drive.warrantyYears &&
                    *t.endurance.yearsToRatedEndurance < *t.endurance.drive.warrantyYears) {
                    ++shortLived;
                    break;
                }
        }
        if (shortLived)
            risks.push_back("Drive wear: " + std::to_string(shortLived) + " configuration(s) on " +
                            "the front wear their drives out within the warranty.");
        if (in.planSetup && in.planSetup->prices.example)
            risks.push_back("Example prices: the costs, payback and net value use kvbe's example "
                            "prices (" +
                            in.planSetup->prices.origin +
                            "); replace them with quotes (--prices FILE) before ordering.");
        if (in.plan->sampling.sampled)
            risks.push_back("Sampled plan: the grid was estimated on samples; the shortlist was "
                            "replayed in full (largest hit-ratio difference between the two "
                            "samples " +
                            sig(in.plan->sampling.hitsError * 100) + " points).");
    }
    if (in.saturated)
        risks.push_back("Saturated tier in the Workload view's replay: " + in.saturation);
    for (const Calibration& c : in.calibrations) {
        for (const auto& w : mismatchWarnings(c, e.model, e.cost.inputs().kvDtype))
            risks.push_back("Measured elsewhere: " + w);
        if (e.gpu && !sameGpu(c.gpuName, e.gpu->name))
            risks.push_back("Measured on another GPU: " + c.source + " was measured on " +
                            c.gpuName + ", the scenario is " + e.gpu->name + ".");
        auto fit = reportFit(c, e);
        if (fit && fit->params.rmsRelativeResidual > kReliableRmsResidual)
            risks.push_back("Poor fit: " + c.source + "'s fit leaves an rms relative residual of " +
                            sig(fit->params.rmsRelativeResidual * 100) + " % (more than " +
                            sig(kReliableRmsResidual * 100) + " %).");
        if (fit)
            for (const auto& u : fit->unreliable)
                risks.push_back("Unreliable fit: " + c.source + ": " + u);
        for (const auto& w : c.warnings)
            if (lower(w).find("drift") != std::string::npos)
                risks.push_back("Drift: " + c.source + ": " + w);
    }
    for (const auto& f : e.scenario.fittedOn)
        if (!f.model.empty() && lower(f.model) != lower(e.model.id))
            risks.push_back("Fixed costs carried over: the scenario's tiers were fitted on " +
                            f.model + ", not on " + e.model.id + ".");
    for (std::size_t i = 0; i < e.scenario.tiers.size(); ++i)
        if (e.scenario.tiers[i].measured.empty() && e.scenario.tiers[i].preset.empty())
            risks.push_back("Unmeasured tier: " + e.scenario.tiers[i].name +
                            "'s bandwidth and fixed cost are set by hand, neither a preset nor "
                            "a measurement.");
    if (risks.empty())
        risks.push_back("None found among: drive wear within warranty, saturated tiers, "
                        "measurements on another model or GPU, poor fits, example prices.");
    return risks;
}

Report buildReport(const ReportInputs& in) {
    const Evaluation& e = *in.eval;
    Report r;
    r.title = in.title.empty() ? "KV offload sign-off" : in.title;
    r.subtitle = e.scenario.name.empty() ? e.model.id : e.scenario.name;
    if (in.trace) r.subtitle += ", trace " + in.traceFile;
    r.date = in.date;

    ReportSection summary{"Summary", {}};
    const double n = e.scenario.sweepTokens > 0 ? e.scenario.sweepTokens : 32768;
    const auto b = e.cost.breakevenBandwidth(n);
    summary.blocks.push_back({ReportBlock::Kind::Answer,
                              "B* at " + formatTokens(n) +
                                  " tokens: " + (b ? formatBandwidth(*b) : std::string("none")) +
                                  " for " + e.model.id + " on " +
                                  (e.gpu ? e.gpu->name : std::string("a custom GPU")) +
                                  " at u = " + sig(e.scenario.utilisation) + ".",
                              {},
                              {},
                              {}});
    if (in.plan && in.plan->recommended) {
        const PlanPoint& p = in.plan->points[*in.plan->recommended];
        std::string s = "Recommended: " + planPurchaseText(p);
        if (p.capexUsd > 0)
            s += " for " + formatUsd(p.capexUsd) + ", paying back in " +
                 (p.paybackMonths ? sig(*p.paybackMonths) + " months" : "never") + ".";
        else
            s += ": nothing to buy.";
        summary.blocks.push_back({ReportBlock::Kind::Answer, s, {}, {}, {}});
    } else if (in.plan) {
        summary.blocks.push_back({ReportBlock::Kind::Answer,
                                  "No configuration meets the limits: " + in.plan->unmet,
                                  {},
                                  {},
                                  {}});
    }
    if (!in.answer.empty())
        summary.blocks.push_back({ReportBlock::Kind::Text, in.answer, {}, {}, {}});
    r.sections.push_back(std::move(summary));
    r.sections.push_back(reportScenarioSection(in));
    r.sections.push_back(reportBreakevenSection(in));
    if (auto m = reportMeasurementsSection(in)) r.sections.push_back(std::move(*m));
    if (in.trace) {
        r.sections.push_back(reportTraceSection(in));
        r.sections.push_back(reportPlanSection(in));
    }
    ReportSection risks{"Risks", {}};
    risks.blocks.push_back({ReportBlock::Kind::Items, {}, {}, reportRisks(in), {}});
    r.sections.push_back(std::move(risks));
    r.sections.push_back(reproduction(in));
    return r;
}

} // namespace kvbe
