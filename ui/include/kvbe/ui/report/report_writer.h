// The sign-off report written to a file (`kvbe-cli report`, the window's File ▸ Export
// report…): core's content (kvbe/report/report.h) with its figures drawn by the charts of the
// chart table, laid out as a PDF (Qt's text layout on QPdfWriter, the charts as vectors: title
// page, contents with page numbers, numbered figures with captions, page numbers) or as one
// self-contained HTML file (the charts as inline SVG). Works without a display: where none is
// set and no application exists yet, it starts one on the offscreen platform.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/plan/plan.h"
#include "kvbe/scenario/presets.h"
#include "kvbe/scenario/scenario.h"
#include "kvbe/trace/trace.h"
#include "kvbe/ui/results/workload_result.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvbe {

struct ReportJob {
    std::string out; // .pdf or .html
    std::string title;
    Presets presets;
    Scenario scenario;
    std::string scenarioFile;  // "" for the built-in default
    std::string scenarioFlags; // the flags that changed it
    // A trace and its plan, computed by the caller with core (planSetup, planTraceSampled): the
    // setup points into `trace` and `eval`, which the job keeps alive.
    std::shared_ptr<const Trace> trace;
    std::string traceFile;
    std::shared_ptr<const Evaluation> eval; // the scenario evaluated (with a trace)
    // The Workload view's settings the trace is replayed with (none: its defaults, as kvbe-cli
    // report replays it).
    std::optional<WorkloadSettings> workload;
    std::optional<PlanSetup> planSetup;
    std::optional<PlanResult> plan;
    std::string planError;
    std::vector<std::string> imports; // calibration files or folders
    // Every input file, hashed into the report: (path, what it is).
    std::vector<std::pair<std::string, std::string>> inputs;
    std::string version;
    std::vector<std::string> command;
    std::string planCommand, calcCommand;
};

// Refuses an output whose extension is neither .pdf nor .html.
Status checkReportPath(const std::string& out);

// Writes the report; the file is replaced only once complete. Fails with one sentence (a file
// that cannot be read, a scenario that does not evaluate, an output that cannot be written).
Status writeReport(const ReportJob& job);

} // namespace kvbe
