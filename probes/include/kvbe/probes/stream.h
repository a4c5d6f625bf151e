// The writers (sinks) of the probe protocol. The protocol itself, the lines, series names, exit
// codes and the reader, lives in core: kvbe/probe/probe_protocol.h. Both are Qt-free.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/base/text_table.h"
#include "kvbe/probe/probe_protocol.h"

#include <iosfwd>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe::probes {

inline constexpr int kProtocolVersion = kProbeProtocolVersion;
using kvbe::parseProbeLine;
using kvbe::ProbeEvent;
using kvbe::ProbePoint;
using kvbe::ProbeStreamReader;
// A table for people (kvbe/base/text_table.h); the JSON stream carries the same numbers in points
// and the result.
using kvbe::renderTable;
using kvbe::TextTable;

class ProbeSink {
  public:
    virtual ~ProbeSink() = default;
    // The header. Sinks write one before any other line even if begin() is never reached.
    virtual void begin(const std::string& probe, const nlohmann::ordered_json& params) = 0;
    virtual void progress(double fraction, const std::string& message) = 0;
    virtual void point(const ProbePoint& point) = 0;
    // A sentence a person must see while the probe runs (a fallback taken, a warning): a note
    // line in JSONL, a line of its own before the table for people.
    virtual void note(const std::string& line) = 0;
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
    // `last`: the result or error line, after which nothing more is written.
    void writeLine(const std::string& line, bool last = false);
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
