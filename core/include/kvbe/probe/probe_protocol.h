// The probe protocol, all of it (docs/architecture.md, "The probe protocol"): the JSON Lines a
// probe writes on stdout (`kvbe-cli probe … --format jsonl`), read live from QProcess by the
// window or from a cluster job's file, the series names in it, and the one rule that turns its
// points into measurements. The exit codes of the process that writes it are every command's
// (kvbe/base/exit_code.h).
//
//   {"kvbe_probe":2,"probe":"nvme-read","host":"…","started":"…","params":{…}}   first line
//   {"type":"progress","fraction":0.42,"message":"QD 32, 1 MiB blocks"}
//   {"type":"note","message":"engine: io_uring: available here; …"}
//   {"type":"point","series":"read_GBps","x":1048576,"y":12.7,"unit":"GB/s","meta":{…}}
//   {"type":"result","summary":{…}}                                              last line, or
//   {"type":"error","message":"O_DIRECT is not supported on tmpfs: …"}           last line
//
// A note is a sentence a person must see while the probe runs (a fallback it took, a warning),
// not a measurement. Version 2 added notes; a reader reads every version up to its own, so a
// version 1 stream (no notes) still reads, and refuses a newer one by name.
//
// It lives in core, so the window reads streams without linking the probes; the probes' sinks
// (kvbe/probes/stream.h) write their lines with the functions here.
#pragma once

#include "kvbe/base/exit_code.h"
#include "kvbe/base/result.h"
#include "kvbe/calibration/calibration.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace kvbe {

inline constexpr int kProbeProtocolVersion = 2;

// ---- series names -----------------------------------------------------------------------------

// The "series" of point lines. A series names what y is, with its unit at the end.
namespace series {
inline constexpr std::string_view kDriveRead = "read_GBps";      // nvme-read, x = block bytes
inline constexpr std::string_view kDriveWrite = "write_GBps";    // nvme-write, x = block bytes
inline constexpr std::string_view kBufferedSuffix = "_buffered"; // drive series with --buffered
inline constexpr std::string_view kHostMemcpy = "memcpy_GBps";   // host-memcpy, x = threads
inline constexpr std::string_view kHostToGpuPinned = "h2d_pinned_GBps"; // gpu-copy, x = bytes
inline constexpr std::string_view kHostToGpuPageable = "h2d_pageable_GBps";
inline constexpr std::string_view kGemm = "gemm_TFLOPs";    // gpu-gemm-peak, x = n of n³
inline constexpr std::string_view kPrefill = "t_prefill_s"; // gpu-prefill, x = tokens
inline constexpr std::string_view kPrefillFlops = "prefill_TFLOPs";
inline constexpr std::string_view kUtilVsPreset = "util_vs_preset";
inline constexpr std::string_view kUtilVsGemmPeak = "util_vs_gemm_peak";
inline constexpr std::string_view kColdTtft = "ttft_cold_s"; // serving, x = tokens
inline constexpr std::string_view kHitTtft = "ttft_hit_s";   // serving, x = tokens
} // namespace series

// "read_GBps", "write_GBps_buffered".
std::string driveSeries(bool write, bool buffered);
// gpu-copy's series: "h2d_pinned_GBps", "d2h_pageable_GBps", "both_pinned_GBps".
enum class CopyDirection { HostToGpu, GpuToHost, Both };
std::string copySeries(CopyDirection direction, bool pinned);

// What a series measures, by one rule (seriesRole), for the CLI's calibrate and the window alike.
enum class SeriesRole {
    Other,      // writes, GPU-to-host copies, GEMM and utilisation figures
    DriveRead,  // a read from the drive: read_GBps, read_GBps_buffered
    HostLink,   // a host-to-GPU copy from pinned memory, the path an offload engine loads by
    HostMemory, // a host memory copy: memcpy_GBps
    Prefill,    // a cold prefill's kernel time on the GPU, no scheduling overhead
    ColdTtft,   // a served cold TTFT, with the server's scheduling overhead
};
SeriesRole seriesRole(std::string_view series);
// Whether the series measures what a tier load is (drive read, host link, host memory).
bool isTierLoad(SeriesRole role);

// ---- events -----------------------------------------------------------------------------------

struct ProbeHeader {
    int version = kProbeProtocolVersion;
    std::string probe; // "nvme-read"
    std::string host;
    std::string started; // ISO 8601, UTC
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
};

struct ProbeProgress {
    double fraction = 0;
    std::string message;
};

struct ProbeNote {
    std::string message; // a sentence for people: "… refused token-id prompts (…): …"
};

struct ProbePoint {
    std::string series; // series::kDriveRead, …
    double x = 0;       // what the series is over (block bytes, threads, tokens)
    double y = 0;
    std::string unit; // unit of y: "GB/s"
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
};

struct ProbeResult {
    nlohmann::ordered_json summary = nlohmann::ordered_json::object();
};

struct ProbeError {
    std::string message;
};

// One line of the stream, classified, with its typed payload.
struct ProbeEvent {
    enum class Kind { Header, Progress, Note, Point, Result, Error };
    using Payload =
        std::variant<ProbeHeader, ProbeProgress, ProbeNote, ProbePoint, ProbeResult, ProbeError>;
    Kind kind = Kind::Header;
    Payload payload;

    const ProbeHeader* header() const { return std::get_if<ProbeHeader>(&payload); }
    const ProbeProgress* progress() const { return std::get_if<ProbeProgress>(&payload); }
    const ProbeNote* note() const { return std::get_if<ProbeNote>(&payload); }
    const ProbePoint* point() const { return std::get_if<ProbePoint>(&payload); }
    const ProbeResult* result() const { return std::get_if<ProbeResult>(&payload); }
    const ProbeError* error() const { return std::get_if<ProbeError>(&payload); }
};

// ---- writing ----------------------------------------------------------------------------------

// One line of the stream, without its newline. Invalid UTF-8 (a path with odd bytes) is
// replaced rather than thrown on halfway through a run.
std::string probeLine(const ProbeHeader& header);
std::string probeLine(const ProbeProgress& progress);
std::string probeLine(const ProbeNote& note);
std::string probeLine(const ProbePoint& point);
std::string probeLine(const ProbeResult& result);
std::string probeLine(const ProbeError& error);

// ---- reading ----------------------------------------------------------------------------------

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

// ---- measurements -----------------------------------------------------------------------------

// What the points of probe runs measure, by seriesRole. A tier's reads are its single loads:
// points at queue depth 1 (a point whose meta has no "queue_depth" is a single load), as
// (bytes = x, seconds = x / y); its bandwidth is the best y of all its points, at any depth.
struct ProbeMeasurements {
    std::optional<TierMeasurement> drive;    // "nvme", from DriveRead points
    std::optional<TierMeasurement> hostLink; // "dram", from HostLink points
    std::vector<PrefillSample> prefill;      // Prefill points: (tokens, seconds)
    std::vector<PrefillSample> coldTtft;     // ColdTtft points: (tokens, seconds)
};
ProbeMeasurements measurementsFromPoints(const std::vector<ProbePoint>& points);

} // namespace kvbe
