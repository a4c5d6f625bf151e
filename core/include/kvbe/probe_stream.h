// Reading the probe protocol (docs/architecture.md, "Probes run out of process"): JSON Lines
// from `kvbe-cli probe … --format jsonl`, live from QProcess or from a cluster job's file.
//
//   {"kvbe_probe":1,"probe":"nvme-read","host":"…","started":"…","params":{…}}   first line
//   {"type":"progress","fraction":0.42,"message":"QD 32, 1 MiB blocks"}
//   {"type":"point","series":"read_GBps","x":1048576,"y":12.7,"unit":"GB/s","meta":{…}}
//   {"type":"result","summary":{…}}                                              last line, or
//   {"type":"error","message":"O_DIRECT is not supported on tmpfs: …"}           last line
//
// The writers live in kvbe_probes (kvbe/probes/stream.h); the reader is here, in core, so that
// the GUI can read streams without linking the probes.
#pragma once

#include "kvbe/result.h"

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

inline constexpr int kProbeProtocolVersion = 1;

// One line of the stream, classified.
struct ProbeEvent {
    enum class Kind { Header, Progress, Point, Result, Error };
    Kind kind = Kind::Header;
    nlohmann::json json;
};

// Parses one line (without its newline). A header must carry "kvbe_probe"; other lines "type".
Result<ProbeEvent> parseProbeLine(std::string_view line);

// Reads a whole stream in chunks as they arrive (QProcess::readyRead) and checks its shape: the
// header first and of a version this reader knows, nothing after the result or error line.
class ProbeStreamReader {
  public:
    Result<std::vector<ProbeEvent>> feed(std::string_view bytes);
    // At end of stream: fails if a line was cut off or no result/error line came.
    Status finish();
    bool sawHeader() const { return m_sawHeader; }
    bool finished() const { return m_sawEnd; }

  private:
    Result<ProbeEvent> accept(std::string_view line);
    std::string m_pending;
    int m_line = 0;
    bool m_sawHeader = false;
    bool m_sawEnd = false;
};

} // namespace kvbe
