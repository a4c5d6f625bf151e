// The probe protocol (docs/architecture.md, "Probes run out of process"): JSON Lines on stdout.
//
//   {"kvbe_probe":1,"probe":"nvme-read","host":"…","started":"…","params":{…}}   first line
//   {"type":"progress","fraction":0.42,"message":"QD 32, 1 MiB blocks"}
//   {"type":"point","series":"read_GBps","x":1048576,"y":12.7,"unit":"GB/s","meta":{…}}
//   {"type":"result","summary":{…}}                                              last line, or
//   {"type":"error","message":"O_DIRECT is not supported on tmpfs: …"}           last line
//
// The writers (sinks) live here; the reader is in core, kvbe/probe_stream.h. Both are Qt-free.
#pragma once

#include "kvbe/probe_stream.h"
#include "kvbe/result.h"

#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe::probes {

inline constexpr int kProtocolVersion = kProbeProtocolVersion;
// The reader lives in core (kvbe/probe_stream.h) so the GUI reads streams without the probes.
using kvbe::parseProbeLine;
using kvbe::ProbeEvent;
using kvbe::ProbeStreamReader;

struct ProbePoint {
    std::string series; // "read_GBps"
    double x = 0;       // what the series is over (block bytes, threads)
    double y = 0;
    std::string unit; // unit of y: "GB/s"
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
};

// A table for people; the JSON stream carries the same numbers in points and the result.
struct TextTable {
    std::string title;
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> footnotes;
};
std::string renderTable(const TextTable& table);

class ProbeSink {
  public:
    virtual ~ProbeSink() = default;
    // The header. Sinks write one before any other line even if begin() is never reached.
    virtual void begin(const std::string& probe, const nlohmann::ordered_json& params) = 0;
    virtual void progress(double fraction, const std::string& message) = 0;
    virtual void point(const ProbePoint& point) = 0;
    virtual void note(const std::string& line) = 0; // for people; JSONL carries it in params
    virtual void table(const TextTable& table) = 0; // for people; JSONL has points and result
    virtual void result(const nlohmann::ordered_json& summary) = 0;
    virtual void error(const std::string& message) = 0;
};

// Writes the protocol, one flushed line per event. Thread-safe: a watchdog may report a stop
// while the probe is writing.
class JsonlSink : public ProbeSink {
  public:
    JsonlSink(std::ostream& out, std::string probe);
    void begin(const std::string& probe, const nlohmann::ordered_json& params) override;
    void progress(double fraction, const std::string& message) override;
    void point(const ProbePoint& point) override;
    void note(const std::string& line) override;
    void table(const TextTable& table) override;
    void result(const nlohmann::ordered_json& summary) override;
    void error(const std::string& message) override;

  private:
    void ensureHeader();
    void writeLine(const nlohmann::ordered_json& line);
    std::ostream& m_out;
    std::string m_probe;
    bool m_headerWritten = false;
    bool m_ended = false;
    std::recursive_mutex m_mutex;
};

// For people: notes and the table on `out`, progress on `progress` (nullptr: none).
class TableSink : public ProbeSink {
  public:
    TableSink(std::ostream& out, std::ostream* progress);
    void begin(const std::string& probe, const nlohmann::ordered_json& params) override;
    void progress(double fraction, const std::string& message) override;
    void point(const ProbePoint& point) override;
    void note(const std::string& line) override;
    void table(const TextTable& table) override;
    void result(const nlohmann::ordered_json& summary) override;
    void error(const std::string& message) override;

  private:
    std::ostream& m_out;
    std::ostream* m_progress;
    std::mutex m_mutex;
};

} // namespace kvbe::probes
