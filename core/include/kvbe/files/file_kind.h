// What a file is: the one answer for every place that takes files of more than one kind (the
// window's open, drop and imports, `kvbe --import`, `kvbe-cli calibration inspect`) and for the
// readers that say "this is a scenario, not a calibration file". A file is told by its content
// (its first line, its top-level JSON keys); its name only where the content cannot be read
// cheaply (a compressed trace). The readers still check every field: this only picks the reader.
//
// The same table lists each kind's extensions: the window's file dialogs and what a folder import
// reads come from it.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

enum class FileKind {
    Unknown,
    ModelConfig,        // a model's config.json (Hugging Face)
    Scenario,           // a kvbe scenario (.kvbe.json)
    Calibration,        // one node's measurements: kvbe's own, py-kvcache, pareto CSV, fio, ...
    PublishedReference, // published figures (docs/published-reference-format.md)
    Trace,              // a request trace: Mooncake, Bailian, Azure, kvbe CSV
    ProbeStream,        // the JSON Lines of `kvbe-cli probe … --format jsonl`
    PrefillTable,       // tokens and seconds a line: opened where one is asked for, never told
};

struct FileKindInfo {
    FileKind kind;
    std::string_view name;                    // "calibration file": in sentences
    std::string_view label;                   // "Calibrations": a file dialog's filter
    std::vector<std::string_view> extensions; // lower case, with the dot: ".json"
};

// Every kind but Unknown, in the order of FileKind.
const std::vector<FileKindInfo>& fileKinds();
const FileKindInfo& fileKindInfo(FileKind kind);
// Whether the name ends with one of the kind's extensions, case aside.
bool hasExtensionOf(const std::filesystem::path& path, FileKind kind);

struct FileClass {
    FileKind kind = FileKind::Unknown;
    // The reader's name for the format, where the content says it: a calibration's
    // Calibration::format ("kvbe", "py-kvcache-v1", "py-kvcache-v2", "pareto-csv", "fio",
    // "nvbandwidth"), a trace's toString(TraceFormat) ("mooncake", "bailian", "azure", "csv");
    // empty for a compressed trace, whose reader tells.
    std::string format;
    // Unknown: why, a sentence that names the file.
    std::string reason;
};
// The format of an Unknown file that is nvbandwidth's text output: kvbe reads only its JSON, and
// the reason says how to get that.
inline constexpr std::string_view kNvbandwidthText = "nvbandwidth-text";

// A calibration's format (FileClass::format and Calibration::format name it): kvbe's own, each
// py-kvcache schema ("py-kvcache" where the file's schema is neither 1 nor 2), pareto-csv, fio's
// JSON and nvbandwidth's. One parser and one name each, so a typo fails to compile.
enum class CalibrationFormat {
    Kvbe,
    PyKvcacheV1,
    PyKvcacheV2,
    PyKvcache,
    ParetoCsv,
    Fio,
    Nvbandwidth
};
std::optional<CalibrationFormat> parseCalibrationFormat(std::string_view text);
std::string_view toString(CalibrationFormat format);
// py-kvcache's break-even files, any schema.
bool isPyKvcache(CalibrationFormat format);
// The format a Calibration or FileClass names, where it is one of these.
inline std::optional<CalibrationFormat> calibrationFormatOf(const std::string& format) {
    return parseCalibrationFormat(format);
}

// Reads the file's head; a JSON document whose head does not decide is read on, up to
// kMaxJsonFileBytes, without building it.
FileClass classifyFile(const std::filesystem::path& path);
// The same over text in memory; `source` names it in the reason.
FileClass classifyText(std::string_view text, const std::string& source);
// A JSON document a reader has parsed already.
FileClass classifyJson(const nlohmann::json& j, const std::string& source);

// Where the JSON starts in text that may open with lines of something else: fio prints its
// warnings before its JSON. The whole text where it starts with JSON; empty where no line does.
std::string_view jsonAfterPreamble(std::string_view text);

// The files to read for `paths`: each file as given, and for each folder the files directly
// inside it with an extension of `kind`, sorted by name. A folder that holds none is an error
// (a sentence naming it), not a silent nothing.
struct FilesToRead {
    std::vector<std::filesystem::path> files;
    std::vector<std::string> errors;
};
FilesToRead filesToRead(const std::vector<std::filesystem::path>& paths, FileKind kind);

} // namespace kvbe
