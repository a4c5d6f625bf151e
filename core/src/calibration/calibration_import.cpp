#include "calibration_import.h"
#include "kvbe/files/file_kind.h"

#include "kvbe/base/csv.h"
#include "kvbe/base/json_text.h"
#include "kvbe/base/units.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

namespace kvbe::detail {
using nlohmann::json;

Calibration parseFio(const FieldReader& r) {
    const json& j = r.root();
    Calibration c;
    c.format = toString(CalibrationFormat::Fio);
    c.date = r.string(j, "time", "time").value_or("");
    const auto& jobs = r.array(j, "jobs", "jobs");
    if (jobs.empty()) r.failWith("field 'jobs' is empty; expected at least one fio job");
    struct Sum {
        double read = 0, write = 0;
        std::string options;
    };
    std::map<std::string, Sum> byName;
    std::vector<std::string> order;
    const json globals = j.contains("global options") && j["global options"].is_object()
                             ? j["global options"]
                             : json::object();
    for (size_t i = 0; i < jobs.size(); ++i) {
        const auto& job = jobs[i];
        const std::string at = "jobs[" + std::to_string(i) + "]";
        if (!job.is_object()) r.fail(at, "a fio job object", &job);
        const std::string name =
            r.string(job, "jobname", at + ".jobname").value_or("job" + std::to_string(i));
        // A job that failed reports its errno; its numbers are not a measurement.
        if (job.contains("error") && job["error"].is_number() && job["error"].get<double>() != 0) {
            c.warnings.push_back(r.source() + ": fio job '" + name + "' (" + at +
                                 ") failed with error " + dumpJson(job["error"]) + "; skipped");
            continue;
        }
        if (!byName.count(name)) order.push_back(name);
        auto& s = byName[name];
        for (const char* dir : {"read", "write"}) {
            if (!job.contains(dir)) continue;
            const auto& d = job[dir];
            if (!d.is_object()) r.fail(at + "." + dir, "an object with bw_bytes", &d);
            auto bw = r.number(d, "bw_bytes", at + "." + dir + ".bw_bytes", 0, 1e14,
                               "bytes per second, 0 or more");
            if (!bw && d.contains("bw")) // older fio: KiB/s
                bw = r.number(d, "bw", at + "." + dir + ".bw", 0, 1e11, "KiB per second, 0 or more")
                         .value_or(0) *
                     1024;
            if (!bw) r.fail(at + "." + dir + ".bw_bytes", "bytes per second", nullptr);
            (std::string(dir) == "read" ? s.read : s.write) += *bw;
        }
        json opts = globals;
        if (job.contains("job options") && job["job options"].is_object())
            opts.update(job["job options"]);
        std::string desc;
        for (const char* key : {"rw", "bs", "iodepth", "ioengine", "direct", "numjobs"})
            if (opts.contains(key) && opts[key].is_string())
                desc += (desc.empty() ? "" : ", ") + std::string(key) + "=" +
                        opts[key].get<std::string>();
        s.options = desc;
    }
    for (const auto& name : order) {
        const auto& s = byName[name];
        if (s.read > 1e14 || s.write > 1e14)
            r.failWith("fio job '" + name +
                       "' reports more than 100 TB/s; expected a real measurement");
        TierMeasurement t;
        t.name = "fio " + name + (s.options.empty() ? "" : " (" + s.options + ")");
        if (s.read > 0) t.readBps = s.read;
        if (s.write > 0) t.writeBps = s.write;
        if (!t.readBps && !t.writeBps) {
            c.warnings.push_back(r.source() + ": fio job '" + name + "' moved no data; skipped");
            continue;
        }
        c.tiers.push_back(std::move(t));
    }
    return c;
}

// nvbandwidth --json, as its json_output.cpp writes it (v0.5 to v0.8): matrix cells are numbers
// printed as strings, "N/A" where a pair was not measured; min, max and average only with -v. A
// test is listed with "Waived" when it does not apply (device-to-device on one GPU), "Running"
// then a second entry "Error" when it threw (the message lands in the top-level "error"),
// "ERROR" when asked for by a name that does not exist.
Calibration parseNvbandwidth(const FieldReader& r) {
    const auto& root = r.object(r.root(), "nvbandwidth", "nvbandwidth");
    Calibration c;
    c.format = toString(CalibrationFormat::Nvbandwidth);
    const std::string runError =
        root.contains("error") && root["error"].is_string() ? root["error"].get<std::string>() : "";
    for (const auto& [k, v] : root.items())
        if (v.is_string() && (k.rfind("GPU Device", 0) == 0 || k == "gpu_name") &&
            c.gpuName.empty())
            c.gpuName = v.get<std::string>();
    // v0.8: "GPU Device list": ["0: NVIDIA H100 80GB HBM3 (00000000:19:00): (hostname)", ...]
    if (root.contains("GPU Device list") && root["GPU Device list"].is_array() &&
        !root["GPU Device list"].empty() && root["GPU Device list"][0].is_string() &&
        c.gpuName.empty()) {
        std::string d = root["GPU Device list"][0].get<std::string>();
        if (const auto colon = d.find(": "); colon != std::string::npos && colon < 4)
            d = d.substr(colon + 2);
        if (const auto host = d.rfind(": ("); host != std::string::npos && d.back() == ')') {
            c.host = d.substr(host + 3, d.size() - host - 4);
            d = d.substr(0, host);
        }
        c.gpuName = d;
    }
    if (!root.contains("testcases") || !root["testcases"].is_array()) {
        if (!runError.empty())
            r.failWith("nvbandwidth reported an error and no test results: " + runError);
        r.array(root, "testcases", "nvbandwidth.testcases"); // says what is missing
    }
    const auto& cases = root["testcases"];
    // The copy-engine tests are what cudaMemcpyAsync uses for KV loads; SM copies are a fallback.
    std::optional<double> h2d, d2h, h2dSm, d2hSm;
    std::map<std::string, std::vector<std::string>> notPassed; // status -> test names
    std::vector<std::string> statusOrder;
    std::set<std::string> failedNames;
    for (size_t i = 0; i < cases.size(); ++i) {
        const auto& t = cases[i];
        const std::string at = "nvbandwidth.testcases[" + std::to_string(i) + "]";
        if (!t.is_object()) r.fail(at, "a test case object", &t);
        const std::string name = r.string(t, "name", at + ".name").value_or("");
        const std::string status = r.string(t, "status", at + ".status").value_or("Passed");
        if (status != "Passed") {
            if (!notPassed.count(status)) statusOrder.push_back(status);
            auto& names = notPassed[status];
            if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
            if (status != "Waived" && status != "Running") failedNames.insert(name);
            continue;
        }
        double best = 0;
        if (t.contains("bandwidth_matrix")) {
            const auto& m = t["bandwidth_matrix"];
            if (!m.is_array()) r.fail(at + ".bandwidth_matrix", "a matrix of GB/s values", &m);
            for (const auto& row : m) {
                if (!row.is_array())
                    r.fail(at + ".bandwidth_matrix", "a matrix of GB/s values", &row);
                for (const auto& cell : row) {
                    double v = 0;
                    if (cell.is_number())
                        v = cell.get<double>();
                    else if (cell.is_string()) {
                        const auto s = cell.get<std::string>();
                        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
                        if (ec != std::errc()) v = 0; // "N/A" on the diagonal
                    }
                    if (std::isfinite(v) && v <= 1e5) best = std::max(best, v); // GB/s
                }
            }
        } else if (auto v = r.number(t, "max", at + ".max", 0, 1e6, "GB/s")) {
            best = *v;
        }
        if (best <= 0) continue;
        const double bps = best * 1e9;
        const bool ce = name.find("_ce") != std::string::npos;
        if (name.rfind("host_to_device", 0) == 0)
            (ce ? h2d : h2dSm) = std::max(bps, (ce ? h2d : h2dSm).value_or(0));
        else if (name.rfind("device_to_host", 0) == 0)
            (ce ? d2h : d2hSm) = std::max(bps, (ce ? d2h : d2hSm).value_or(0));
    }
    // One warning per status, naming the tests: a run on one GPU waives a dozen or more.
    for (const auto& status : statusOrder) {
        auto names = notPassed[status];
        // A test that threw is listed twice, "Running" and then "Error": count it once.
        if (status == "Running")
            names.erase(
                std::remove_if(names.begin(), names.end(),
                               [&](const std::string& n) { return failedNames.count(n) > 0; }),
                names.end());
        if (names.empty()) continue;
        std::string w = r.source() + ": " + std::to_string(names.size()) +
                        (names.size() == 1 ? " test " : " tests ") +
                        (status == "Running" ? "started but reported no result"
                                             : "did not pass (" + status + ")") +
                        ", skipped: ";
        for (size_t i = 0; i < names.size() && i < 6; ++i)
            w += (i ? ", " : "") + names[i];
        if (names.size() > 6) w += " and " + std::to_string(names.size() - 6) + " more";
        if (status != "Waived" && !runError.empty()) w += " (nvbandwidth: " + runError + ")";
        c.warnings.push_back(w);
    }
    TierMeasurement link;
    link.name = "Host DRAM (nvbandwidth)";
    link.readBps = h2d ? h2d : h2dSm;
    link.writeBps = d2h ? d2h : d2hSm;
    if (!link.readBps && !link.writeBps)
        r.failWith(
            "no passed host_to_device or device_to_host test; expected nvbandwidth's copy tests" +
            (runError.empty() ? std::string() : " (nvbandwidth: " + runError + ")"));
    c.tiers.push_back(std::move(link));
    return c;
}

Result<Calibration> parseParetoCsv(std::string_view text, const std::string& source) {
    const auto rows = readCsv(text);
    if (rows.empty()) return Error{source + ": the file is empty; expected a pareto-measure CSV"};
    const auto& header = rows[0].cells;
    std::map<std::string, size_t> col;
    for (size_t i = 0; i < header.size(); ++i)
        col[header[i]] = i;
    for (const char* need : {"curve", "doc_size"})
        if (!col.count(need))
            return Error{source + ": line 1: no '" + std::string(need) +
                         "' column; expected a pareto-measure CSV header "
                         "with curve, server_config, doc_size, prefix_len, prefix_frac, "
                         "concurrency, ttft_median_s"};
    if (!col.count("ttft_median_s") && !col.count("ttft_mean_s"))
        return Error{source + ": line 1: no 'ttft_median_s' or 'ttft_mean_s' column"};

    Calibration c;
    c.format = toString(CalibrationFormat::ParetoCsv);
    struct Row {
        std::string curve, config;
        double n, p, conc, t;
        size_t line;
    };
    std::vector<Row> parsed;
    std::vector<std::string>
        failed; // runs with their error column set, as the experiments' reader drops them
    for (size_t i = 1; i < rows.size(); ++i) {
        const auto& r = rows[i].cells;
        const std::string where = source + ": line " + std::to_string(rows[i].line);
        if (r.size() != header.size())
            return Error{where + ": " + std::to_string(r.size()) + " fields; the header has " +
                         std::to_string(header.size())};
        if (col.count("error") && !r[col["error"]].empty()) {
            std::string error =
                isValidUtf8(r[col["error"]]) ? r[col["error"]] : std::string("(not UTF-8 text)");
            for (auto& ch : error)
                if (ch == '\n' || ch == '\r') ch = ' ';
            if (error.size() > 80) error = error.substr(0, 77) + "...";
            std::string what = "line " + std::to_string(rows[i].line);
            for (const char* name :
                 {"curve", "server_config", "doc_size", "prefix_len", "concurrency"})
                if (col.count(name) && !r[col[name]].empty() && isValidUtf8(r[col[name]]))
                    what += std::string(what.find('(') == std::string::npos ? " (" : ", ") + name +
                            " " + r[col[name]];
            if (what.find('(') != std::string::npos) what += ")";
            failed.push_back(what + ": " + error);
            continue;
        }
        auto number = [&](const char* name, bool required, double fallback) -> Result<double> {
            if (!col.count(name) || r[col[name]].empty()) {
                if (required)
                    return Error{where + ": column '" + std::string(name) +
                                 "' is empty; expected a number"};
                return fallback;
            }
            const auto& s = r[col[name]];
            double v = 0;
            auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v) || v < 0)
                return Error{where + ": column '" + std::string(name) + "' is '" + s +
                             "'; expected a number, 0 or more"};
            return v;
        };
        Row row;
        row.curve = r[col["curve"]];
        row.config = col.count("server_config") ? r[col["server_config"]] : "hit";
        for (const char* name : {"curve", "server_config"})
            if (col.count(name) && !isValidUtf8(r[col[name]]))
                return Error{where + ": column '" + std::string(name) +
                             "' is not valid UTF-8 text"};
        row.line = rows[i].line;
        auto n = number("doc_size", true, 0);
        if (!n) return n.error();
        row.n = *n;
        auto t =
            number(col.count("ttft_median_s") && !r[col["ttft_median_s"]].empty() ? "ttft_median_s"
                                                                                  : "ttft_mean_s",
                   true, 0);
        if (!t) return t.error();
        row.t = *t;
        auto conc = number("concurrency", false, 1);
        if (!conc) return conc.error();
        row.conc = *conc;
        auto plen = number("prefix_len", false, -1);
        if (!plen) return plen.error();
        auto pfrac = number("prefix_frac", false, -1);
        if (!pfrac) return pfrac.error();
        row.p = *plen >= 0 ? *plen : (*pfrac >= 0 ? *pfrac * row.n : 0);
        if (row.n <= 0 || row.t <= 0)
            return Error{where + ": doc_size and the TTFT must be positive"};
        if (row.n > 1e9 || row.t > 1e6)
            return Error{where + ": doc_size above 1e9 tokens or a TTFT above 1e6 s"};
        if (row.p > row.n) return Error{where + ": prefix_len is longer than doc_size"};
        if (row.curve != "cold_prefill" && row.curve != "cache_hit") {
            c.warnings.push_back(where + ": curve '" + row.curve +
                                 "' is neither cold_prefill nor cache_hit; skipped");
            continue;
        }
        parsed.push_back(row);
    }
    if (!failed.empty()) {
        std::string w = source + ": " + std::to_string(failed.size()) +
                        (failed.size() == 1 ? " failed run" : " failed runs") +
                        " skipped (error column set): ";
        for (size_t i = 0; i < failed.size() && i < 5; ++i)
            w += (i ? "; " : "") + failed[i];
        if (failed.size() > 5) w += "; and " + std::to_string(failed.size() - 5) + " more";
        c.warnings.push_back(w);
    }
    if (parsed.empty())
        return Error{source + ": no cold_prefill or cache_hit rows" +
                     (failed.empty()
                          ? std::string()
                          : " that ran (" + std::to_string(failed.size()) + " failed runs)")};
    // Calibrate from the least concurrent rows: queueing is not part of the cost model.
    double minConc = parsed[0].conc;
    for (const auto& r : parsed)
        minConc = std::min(minConc, r.conc);
    size_t dropped = 0;
    for (const auto& r : parsed) {
        if (r.conc != minConc) {
            ++dropped;
            continue;
        }
        if (r.curve == "cold_prefill")
            c.prefill.push_back({r.n, r.t});
        else
            c.hits.push_back({r.n, r.p, r.config, r.t});
    }
    if (dropped)
        c.warnings.push_back(source + ": " + std::to_string(dropped) +
                             " rows at concurrency above " + formatTokens(minConc) +
                             " were left out");
    c.source = source;
    return c;
}

} // namespace kvbe::detail
