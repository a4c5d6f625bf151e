// The sign-off report (`kvbe-cli report`, the window's File ▸ Export report…): one document that
// says what was assumed and where each figure came from, what the break-even is, what a trace's
// plan recommends, what could go wrong, and how to compute it all again. This is its content,
// Qt-free: sections of paragraphs, tables, lists and figures (by chart key and caption), built
// from core's own results. ui/src/report lays it out as PDF or HTML and draws the figures.
#pragma once

#include "kvbe/calibration/calibration.h"
#include "kvbe/calibration/fit.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"

#include <optional>
#include <string>
#include <vector>

namespace kvbe {

struct ReportTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
};

struct ReportBlock {
    enum class Kind {
        Text,   // a paragraph
        Answer, // a paragraph set off: the sentence a reader takes away
        Table,
        Items,  // a bulleted list
        Code,   // a command line or hashes, in a fixed-width font
        Figure, // a chart of the chart table (ui's chart_catalog.cpp) by key, with a caption
    };
    Kind kind = Kind::Text;
    std::string text; // Text, Answer, Code; the Figure's caption
    ReportTable table;
    std::vector<std::string> items;
    std::string chart; // Figure: the chart's key ("breakeven", "plan", ...)
};

struct ReportSection {
    std::string title;
    std::vector<ReportBlock> blocks;
};

struct Report {
    std::string title, subtitle, date;
    std::vector<ReportSection> sections;
    // The figures in order of appearance (their number is their place here + 1).
    std::vector<const ReportBlock*> figures() const;
};

// One input file: what it is to the report, and its SHA-256 (hex), computed by the caller.
struct ReportFile {
    std::string path, role, sha256;
};

// What the report is built from. Pointers are borrowed for the call.
struct ReportInputs {
    const Evaluation* eval = nullptr;
    const Presets* presets = nullptr;
    std::string scenarioFile;  // --scenario; "" for the built-in default scenario
    std::string scenarioFlags; // the flags that changed it ("--gpu h200"), or ""
    // Imported calibration files (--import): read, fitted to the scenario here, drawn on the
    // break-even charts by the caller.
    std::vector<Calibration> calibrations;
    // A trace and its plan (none: a scenario report).
    const Trace* trace = nullptr;
    std::string traceFile;
    std::string answer;     // the Workload view's one-sentence answer (its replay's settings)
    std::string saturation; // its saturation sentence (which tier is the bottleneck, if any)
    bool saturated = false; // a tier of that replay is saturated
    const PlanSetup* planSetup = nullptr;
    const PlanResult* plan = nullptr;
    std::string planError;      // why there is no plan
    bool capacityChart = false; // the capacity chart (servers at a latency target) is drawn
    std::string version;
    std::vector<std::string> command; // the command line as given, program first; empty: the window
    std::string scenarioJson;         // the scenario as a .kvbe.json file holds it
    std::string planCommand; // the `kvbe-cli trace plan … --output json` that gives the same plan
    std::string calcCommand; // the `kvbe-cli calc …` that gives the same break-even figures
    // The `kvbe-cli trace replay …` that gives the trace section's replay (the window's settings
    // as flags; kvbe/trace/replay_command.h), and the scenario file it names.
    std::string replayCommand;
    std::string replaySettings; // replaySettingsSentence of that replay
    std::vector<ReportFile> files;
    std::string date;  // ISO 8601, when the report was made
    std::string title; // default: "KV offload sign-off: <scenario name>"
};

// The lengths whose B* the report tabulates: 4k to 128k, with the scenario's sweep length.
std::vector<double> reportLengths(const Scenario& s);

Report buildReport(const ReportInputs& in);

// The parts, one file each: the scenario and its provenance (report_scenario.cpp), the
// break-even figures and the measurements (report_breakeven.cpp), the trace and its plan
// (report_plan.cpp), the risks and the reproduction (report.cpp).
ReportSection reportScenarioSection(const ReportInputs& in);
ReportSection reportBreakevenSection(const ReportInputs& in);
std::optional<ReportSection> reportMeasurementsSection(const ReportInputs& in);
ReportSection reportTraceSection(const ReportInputs& in);
ReportSection reportPlanSection(const ReportInputs& in);
// Each risk one sentence, stated as a risk.
std::vector<std::string> reportRisks(const ReportInputs& in);

// The fit of one imported calibration to the scenario, as `kvbe-cli calibration fit` makes it.
Result<FitResult> reportFit(const Calibration& c, const Evaluation& e);

// A word of a command line quoted for a POSIX shell where it needs it.
std::string shellWord(const std::string& word);
// A whole command of such words, one flag (a word starting with --) a line, continued with a
// backslash: a long command that reads and copies whole.
std::string shellCommandLines(const std::vector<std::string>& words);

// "$12,345"
std::string formatUsd(double usd);

} // namespace kvbe
