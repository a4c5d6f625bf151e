#include "kvbe/files/file_kind.h"

#include "kvbe/base/text.h"

#include "kvbe/base/json_text.h"
#include "kvbe/files/trace_format.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <optional>

namespace kvbe {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Enough for every kind's telling line or keys but a large JSON document's.
constexpr std::size_t kHeadBytes = 64 * 1024;

// A JSON document's top-level keys, each with its value's type (and the value, for integers).
struct KeyValue {
    json::value_t type = json::value_t::null;
    std::optional<long long> integer;
};
using Keys = std::map<std::string, KeyValue, std::less<>>;

// The top-level keys of the JSON document text starts with, without building it: one pass that
// skips strings and counts brackets (the readers check the JSON; this only looks for keys). It
// stops at the end of the top-level object, and at kvbe_calibration, which decides whatever
// follows (kvbe writes its keys sorted, so in a node file it comes after the hits).
struct KeyScan {
    Keys keys;
    bool decided = false; // the keys seen decide: the object ended, or a deciding key was seen
    bool topArray = false;
};

// The end of the string whose opening quote is at `i` (the index after its closing quote).
std::size_t stringEnd(std::string_view t, std::size_t i) {
    for (++i; i < t.size(); ++i) {
        if (t[i] == '\\')
            ++i;
        else if (t[i] == '"')
            return i + 1;
    }
    return t.size();
}

std::size_t skipSpace(std::string_view t, std::size_t i) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n'))
        ++i;
    return i;
}

KeyValue valueAt(std::string_view t, std::size_t i) {
    if (i >= t.size()) return {};
    switch (t[i]) {
    case '{':
        return {json::value_t::object, std::nullopt};
    case '[':
        return {json::value_t::array, std::nullopt};
    case '"':
        return {json::value_t::string, std::nullopt};
    case 't':
    case 'f':
        return {json::value_t::boolean, std::nullopt};
    case 'n':
        return {json::value_t::null, std::nullopt};
    default:
        break;
    }
    long long v = 0;
    const auto r = std::from_chars(t.data() + i, t.data() + t.size(), v);
    const bool integer = r.ec == std::errc() && (r.ptr == t.data() + t.size() ||
                                                 (*r.ptr != '.' && *r.ptr != 'e' && *r.ptr != 'E'));
    return integer ? KeyValue{json::value_t::number_integer, v}
                   : KeyValue{json::value_t::number_float, std::nullopt};
}

KeyScan scanKeys(std::string_view t) {
    KeyScan scan;
    std::size_t i = skipSpace(t, 0);
    if (i < t.size() && t[i] == '[') {
        scan.topArray = scan.decided = true;
        return scan;
    }
    int depth = 0;
    bool expectKey = false;
    while (i < t.size()) {
        const char c = t[i];
        if (c == '"') {
            const std::size_t end = stringEnd(t, i);
            if (depth == 1 && expectKey && end <= t.size() && end >= i + 2) {
                const std::string key(t.substr(i + 1, end - i - 2));
                std::size_t v = skipSpace(t, end);
                if (v >= t.size()) break;
                if (t[v] == ':') {
                    v = skipSpace(t, v + 1);
                    if (v >= t.size()) break;
                    scan.keys[key] = valueAt(t, v);
                    if (key == "kvbe_calibration") {
                        scan.decided = true;
                        return scan;
                    }
                }
                expectKey = false;
                i = v;
                continue;
            }
            i = end;
            continue;
        }
        if (c == '{' || c == '[') {
            ++depth;
            expectKey = depth == 1;
        } else if (c == '}' || c == ']') {
            if (--depth <= 0) {
                scan.decided = true;
                return scan;
            }
        } else if (c == ',' && depth == 1) {
            expectKey = true;
        }
        ++i;
    }
    return scan;
}

Keys keysOf(const json& j) {
    Keys keys;
    for (const auto& [k, v] : j.items())
        keys[k] = {v.type(), v.is_number_integer() ? std::optional<long long>(v.get<long long>())
                                                   : std::nullopt};
    return keys;
}

std::string unknownReason(const std::string& source) {
    return source +
           ": not a file kvbe knows; expected a model's config.json, a kvbe scenario, a "
           "calibration file (kvbe, py-kvcache, pareto-measure CSV, fio or nvbandwidth "
           "JSON), published figures, a request trace (" +
           traceFormatsSentence() + ") or probe output (JSON Lines)";
}

// py-kvcache's schema: its schema_version where it gives one (a version the reader does not
// know keeps the bare name: the reader refuses it), else 2 where it has curves.
std::string pyKvcacheFormat(const Keys& k) {
    auto name = [](CalibrationFormat f) { return std::string(toString(f)); };
    const auto v = k.find("schema_version");
    if (v == k.end())
        return name(k.count("curves") ? CalibrationFormat::PyKvcacheV2
                                      : CalibrationFormat::PyKvcacheV1);
    if (v->second.integer == 1) return name(CalibrationFormat::PyKvcacheV1);
    if (v->second.integer == 2) return name(CalibrationFormat::PyKvcacheV2);
    return name(CalibrationFormat::PyKvcache);
}

// The rule, over a JSON document's top-level keys. kvbe's own files carry their marker; the
// others are told by the keys their writers always write, in this order.
FileClass classifyKeys(const Keys& k, const std::string& source) {
    auto has = [&](std::string_view key) { return k.find(key) != k.end(); };
    auto hasAny = [&](std::initializer_list<std::string_view> keys) {
        return std::any_of(keys.begin(), keys.end(), has);
    };
    auto calibration = [](CalibrationFormat f) {
        return FileClass{FileKind::Calibration, std::string(toString(f)), ""};
    };
    if (has("kvbe_calibration")) return calibration(CalibrationFormat::Kvbe);
    if (has("kvbe_scenario")) return {FileKind::Scenario, "", ""};
    if (has("kvbe_published")) return {FileKind::PublishedReference, "", ""};
    if (has("kvbe_probe")) return {FileKind::ProbeStream, "", ""};
    if (hasAny({"num_hidden_layers", "hidden_size", "text_config", "model_type", "architectures"}))
        return {FileKind::ModelConfig, "", ""};
    if (hasAny({"break_even_ssd_tokens", "break_even_mem_tokens", "safety_margin_tokens",
                "schema_version", "curves", "model_name", "kv_dtype"}))
        return {FileKind::Calibration, pyKvcacheFormat(k), ""};
    const auto jobs = k.find("jobs");
    if (has("fio version") || (jobs != k.end() && jobs->second.type == json::value_t::array))
        return calibration(CalibrationFormat::Fio);
    if (has("nvbandwidth")) return calibration(CalibrationFormat::Nvbandwidth);
    return {FileKind::Unknown, "", unknownReason(source)};
}

FileClass classifyDocument(const KeyScan& scan, const std::string& source) {
    if (scan.topArray)
        return {FileKind::Unknown, "",
                source + ": the file holds a JSON array; kvbe's files are JSON objects"};
    return classifyKeys(scan.keys, source);
}

std::string_view firstLine(std::string_view text) {
    return text.substr(0, text.find('\n'));
}

bool isParetoHeader(std::string_view header) {
    return header.find("curve") != std::string_view::npos &&
           header.find("ttft_") != std::string_view::npos &&
           header.find(',') != std::string_view::npos;
}

// A JSON Lines file tells itself by its first line: a probe stream's header or a trace's
// request; a trace that is one JSON document by its first line too, which the head may cut short
// (a document on one line). Anything else starting with an object is a JSON document.
std::optional<FileClass> classifyJsonLine(std::string_view line, const std::string& source) {
    const bool whole = json::accept(line);
    if (whole && scanKeys(line).keys.count("kvbe_probe"))
        return FileClass{FileKind::ProbeStream, "", ""};
    if (auto f = detectTraceFormat(line, source)) {
        const auto* info = traceFormatInfo(*f);
        if (whole || (info && info->layout == TraceLayout::JsonDocument))
            return FileClass{FileKind::Trace, std::string(toString(*f)), ""};
    }
    return std::nullopt;
}

// `text` is the file's start; `more` reads the rest where a JSON document needs it (null: the
// text is all there is).
template <class More>
FileClass classifyStart(std::string_view text, const std::string& source, More&& more) {
    const auto first = text.find_first_not_of(" \t\r\n\xef\xbb\xbf");
    if (first == std::string_view::npos)
        return {FileKind::Unknown, "", source + ": the file is empty"};
    const std::string_view line = firstLine(text.substr(first));
    if (text[first] == '{')
        if (auto c = classifyJsonLine(line, source)) return *c;
    if (text[first] != '{' && text[first] != '[') {
        if (auto f = detectTraceFormat(line, source))
            return {FileKind::Trace, std::string(toString(*f)), ""};
        if (isParetoHeader(line))
            return {FileKind::Calibration, std::string(toString(CalibrationFormat::ParetoCsv)), ""};
    }
    const std::string_view rest = jsonAfterPreamble(text);
    if (rest.empty()) {
        if (text.find("nvbandwidth Version") != std::string_view::npos ||
            text.find("Running host_to_device") != std::string_view::npos)
            return {FileKind::Unknown, std::string(kNvbandwidthText),
                    source + ": this is nvbandwidth's text output; kvbe reads its JSON: run "
                             "nvbandwidth with --json (-j) and import what it prints"};
        return {FileKind::Unknown, "", unknownReason(source)};
    }
    KeyScan scan = scanKeys(rest);
    if (!scan.decided) {
        const std::size_t offset = static_cast<std::size_t>(rest.data() - text.data());
        if (auto whole = more(); whole && whole->size() > text.size())
            scan = scanKeys(std::string_view(*whole).substr(offset));
    }
    return classifyDocument(scan, source);
}

// Every trace format's extensions, and the compressed files the trace reader opens.
std::vector<std::string_view> traceFileExtensions() {
    auto exts = traceExtensions();
    exts.insert(exts.end(), {".gz", ".zst"});
    return exts;
}

} // namespace

const std::vector<FileKindInfo>& fileKinds() {
    static const std::vector<FileKindInfo> kinds = {
        {FileKind::ModelConfig, "model config.json", "Model configs", {".json"}},
        {FileKind::Scenario, "kvbe scenario", "Scenarios", {".kvbe.json"}},
        {FileKind::Calibration, "calibration file", "Calibrations", {".json", ".csv"}},
        {FileKind::PublishedReference, "published-figures file", "Published figures", {".json"}},
        {FileKind::Trace, "request trace", "Traces", traceFileExtensions()},
        {FileKind::ProbeStream, "probe output", "Probe output", {".jsonl", ".json"}},
        {FileKind::PrefillTable, "prefill table", "Prefill tables", {".csv", ".txt"}},
    };
    return kinds;
}

const FileKindInfo& fileKindInfo(FileKind kind) {
    static const FileKindInfo unknown{FileKind::Unknown, "file", "All files", {}};
    for (const auto& k : fileKinds())
        if (k.kind == kind) return k;
    return unknown;
}

bool hasExtensionOf(const fs::path& path, FileKind kind) {
    const std::string name = lower(path.filename().string());
    for (std::string_view ext : fileKindInfo(kind).extensions)
        if (name.size() > ext.size() &&
            name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
            return true;
    return false;
}

std::string_view jsonAfterPreamble(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n\xef\xbb\xbf");
    if (first == std::string_view::npos) return {};
    if (text[first] == '{' || text[first] == '[') return text;
    size_t pos = 0;
    while (pos < text.size() && text[pos] != '{') {
        const auto nl = text.find('\n', pos);
        if (nl == std::string_view::npos) return {};
        pos = nl + 1;
    }
    return text.substr(pos);
}

FileClass classifyText(std::string_view text, const std::string& source) {
    return classifyStart(text, source, [] { return std::optional<std::string>(); });
}

FileClass classifyJson(const json& j, const std::string& source) {
    if (!j.is_object())
        return {FileKind::Unknown, "",
                source + ": the file holds " + jsonTypeName(j) + "; kvbe's files are JSON objects"};
    return classifyKeys(keysOf(j), source);
}

FileClass classifyFile(const fs::path& path) {
    const std::string source = path.string();
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return {FileKind::Unknown, "", source + ": a folder, not a file"};
    // Compressed traces are read by their name (the trace reader's rule) and told apart by it.
    const std::string ext = lower(path.extension().string());
    if (ext == ".gz" || ext == ".zst") return {FileKind::Trace, "", ""};
    std::ifstream in(path, std::ios::binary);
    if (!in) return {FileKind::Unknown, "", source + ": cannot read the file"};
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    const bool whole = in.gcount() < static_cast<std::streamsize>(kHeadBytes);
    return classifyStart(head, source, [&]() -> std::optional<std::string> {
        // The rest, as far as a reader would read a JSON file.
        const auto size = fs::file_size(path, ec);
        if (whole || ec || size > kMaxJsonFileBytes) return std::nullopt;
        std::string text(static_cast<std::size_t>(size), '\0');
        in.clear();
        in.seekg(0);
        in.read(text.data(), static_cast<std::streamsize>(text.size()));
        text.resize(static_cast<std::size_t>(in.gcount()));
        return text;
    });
}

FilesToRead filesToRead(const std::vector<fs::path>& paths, FileKind kind) {
    FilesToRead out;
    for (const auto& p : paths) {
        std::error_code ec;
        if (!fs::is_directory(p, ec)) {
            out.files.push_back(p);
            continue;
        }
        std::vector<fs::path> inside;
        for (const auto& e : fs::directory_iterator(p, ec))
            if (e.is_regular_file(ec) && hasExtensionOf(e.path(), kind)) inside.push_back(e.path());
        std::sort(inside.begin(), inside.end());
        if (inside.empty()) {
            std::string exts;
            const auto& list = fileKindInfo(kind).extensions;
            for (size_t i = 0; i < list.size(); ++i)
                exts += std::string(i == 0                 ? ""
                                    : i + 1 == list.size() ? " or "
                                                           : ", ") +
                        std::string(list[i]);
            out.errors.push_back(p.string() + ": the folder holds no " + exts + " files");
        }
        out.files.insert(out.files.end(), inside.begin(), inside.end());
    }
    return out;
}

namespace {

struct FormatName {
    CalibrationFormat format;
    std::string_view name;
};
constexpr FormatName kCalibrationFormats[] = {
    {CalibrationFormat::Kvbe, "kvbe"},
    {CalibrationFormat::PyKvcacheV1, "py-kvcache-v1"},
    {CalibrationFormat::PyKvcacheV2, "py-kvcache-v2"},
    {CalibrationFormat::PyKvcache, "py-kvcache"},
    {CalibrationFormat::ParetoCsv, "pareto-csv"},
    {CalibrationFormat::Fio, "fio"},
    {CalibrationFormat::Nvbandwidth, "nvbandwidth"},
};

} // namespace

std::optional<CalibrationFormat> parseCalibrationFormat(std::string_view text) {
    for (const auto& f : kCalibrationFormats)
        if (f.name == text) return f.format;
    return std::nullopt;
}

std::string_view toString(CalibrationFormat format) {
    for (const auto& f : kCalibrationFormats)
        if (f.format == format) return f.name;
    return "kvbe";
}

bool isPyKvcache(CalibrationFormat format) {
    return format == CalibrationFormat::PyKvcacheV1 || format == CalibrationFormat::PyKvcacheV2 ||
           format == CalibrationFormat::PyKvcache;
}

} // namespace kvbe
