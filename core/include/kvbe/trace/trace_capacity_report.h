// The `kvbe-cli trace capacity` report: the servers each rule needs and the load each holds at a
// latency target, as JSON (the scripting contract), CSV and a table for people, and the
// one-sentence answers the table and the window end with.
#pragma once

#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_capacity.h"
#include "kvbe/trace/trace_sampled.h"
#include "kvbe/trace/trace_sim.h"

#include <nlohmann/json.hpp>
#include <string>

namespace kvbe {

struct TraceCapacityReport {
    const Trace* trace = nullptr; // as searched (after any prefix)
    std::string file;
    std::string scenario;
    const ReplayConfig* config = nullptr;
    int gpusPerServer = 1;   // the scenario's tensor-parallel degree
    double durationCapS = 0; // the prefix taken (0: the whole trace)
    const CapacityResult* result = nullptr;
    // Which mode ran, its rate, the samples' answers and error (kvbe/trace/trace_sampled.h);
    // null: not said.
    const CapacityRun* run = nullptr;
};

nlohmann::json traceCapacityJson(const TraceCapacityReport& r);
// One row per rule: the servers search's, then (after a blank line) the load search's.
std::string traceCapacityCsv(const TraceCapacityReport& r);
std::string traceCapacityTable(const TraceCapacityReport& r);

// "To hold p99 ≤ 4 s at 3.40 requests/s (the trace's own rate), GPU-only caching needs 4 servers
// and optimal 3 (always 3, breakeven 3): offload saves 1 of 4." Empty where not searched.
std::string capacityServersSentence(const CapacityResult& r);
// "On 8 servers GPU-only caching holds p99 ≤ 2 s up to S = 1.27 (4.32 requests/s), optimal up
// to S = 1.66 (5.66 requests/s): offload carries 1.31× the load." Empty where not searched.
std::string capacityLoadSentence(const CapacityResult& r);

} // namespace kvbe
