// The trace formats' names, how a file's first line tells its format, and the help texts' words,
// all read from the table traceFormats() (trace_format.h).
#include "kvbe/files/trace_format.h"

#include "kvbe/base/csv.h"

#include <algorithm>

namespace kvbe {

namespace {

// "a, b or c"
std::string joined(const std::vector<std::string>& items, std::string_view last) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += i + 1 == items.size() ? std::string(last) : std::string(", ");
        out += items[i];
    }
    return out;
}

std::vector<const TraceFormatInfo*> ofLayout(TraceLayout layout) {
    std::vector<const TraceFormatInfo*> out;
    for (const auto& f : traceFormats())
        if (f.layout == layout) out.push_back(&f);
    return out;
}

std::string unitName(double secondsPerUnit) {
    if (secondsPerUnit == 1e-3) return "ms";
    if (secondsPerUnit == 1e-6) return "us";
    if (secondsPerUnit == 1) return "s";
    return std::to_string(secondsPerUnit) + " s";
}

// ", or a kv-cache-tester session (...)": the whole-document formats, which no line tells.
std::string documentsPart() {
    std::vector<std::string> docs;
    for (const auto* f : ofLayout(TraceLayout::JsonDocument))
        docs.push_back("a " + std::string(f->title) + " " + std::string(f->shape));
    return docs.empty() ? std::string() : ", or " + joined(docs, " or ");
}

} // namespace

const TraceFormatInfo* traceFormatInfo(TraceFormat f) {
    if (f.name.empty()) return nullptr;
    for (const auto& info : traceFormats())
        if (info.name == f.name) return &info;
    return nullptr;
}

std::string_view toString(TraceFormat f) {
    const auto* info = traceFormatInfo(f);
    return info ? info->name : std::string_view("auto");
}

std::optional<TraceFormat> parseTraceFormat(std::string_view t) {
    if (t == "auto") return TraceFormat::Auto;
    for (const auto& info : traceFormats())
        if (t == info.name) return TraceFormat{info.name};
    return std::nullopt;
}

Result<TraceFormat> detectTraceFormat(std::string_view line, const std::string& source) {
    line = trimCell(line);
    // A whole document's first line holds its requests' fields too: those formats go first.
    for (bool documents : {true, false})
        for (const auto& f : traceFormats())
            if ((f.layout == TraceLayout::JsonDocument) == documents && f.detect && f.detect(line))
                return TraceFormat{f.name};
    if (!line.empty() && line.front() == '{') {
        std::vector<std::string> telling, shapes;
        for (const auto* f : ofLayout(TraceLayout::JsonLines)) {
            telling.emplace_back(f->telling);
            shapes.push_back(std::string(f->title) + " " + std::string(f->shape));
        }
        return Error{source + ":1: a JSON line without " + joined(telling, " or ") +
                     "; expected a " + joined(shapes, " or ") + " request" + documentsPart()};
    }
    std::vector<std::string> lines, headers;
    for (const auto* f : ofLayout(TraceLayout::JsonLines))
        lines.emplace_back(f->title);
    for (const auto* f : ofLayout(TraceLayout::Csv))
        headers.push_back(std::string(f->title) + ": " + std::string(f->telling));
    return Error{source + ":1: not a known trace format; expected JSON lines (" +
                 joined(lines, ", ") + ") or a CSV header (" + joined(headers, "; ") + ")" +
                 documentsPart()};
}

std::string traceFormatChoices() {
    std::vector<std::string> names{"auto"};
    for (const auto& f : traceFormats())
        names.emplace_back(f.name);
    return joined(names, " or ");
}

std::string traceFormatsSentence() {
    std::vector<std::string> groups;
    for (auto layout : {TraceLayout::JsonLines, TraceLayout::Csv, TraceLayout::JsonDocument}) {
        std::vector<std::string> titles;
        bool folder = false;
        for (const auto* f : ofLayout(layout)) {
            titles.emplace_back(f->title);
            folder = folder || f->folder;
        }
        if (titles.empty()) continue;
        const std::string_view kind = layout == TraceLayout::JsonLines ? " JSON Lines"
                                      : layout == TraceLayout::Csv     ? " CSV"
                                                                       : " JSON";
        groups.push_back(joined(titles, " or ") + std::string(kind) +
                         (folder ? " (a file, or a folder of them)" : ""));
    }
    return joined(groups, ", ");
}

std::string traceBlockDefaults() {
    std::vector<std::string> items;
    for (const auto& f : traceFormats())
        if (f.blockTokens > 0)
            items.push_back(std::to_string(f.blockTokens) + " " + std::string(f.title));
    return joined(items, ", ");
}

std::string traceTimeUnitDefaults() {
    std::vector<std::string> items;
    for (const auto& f : traceFormats())
        if (f.secondsPerUnit != 1)
            items.push_back(unitName(f.secondsPerUnit) + " " + std::string(f.title));
    items.emplace_back(items.empty() ? "s" : "s otherwise");
    return joined(items, ", ");
}

std::vector<std::string_view> traceExtensions() {
    std::vector<std::string_view> out;
    for (const auto& f : traceFormats())
        for (auto ext : f.extensions)
            if (std::find(out.begin(), out.end(), ext) == out.end()) out.push_back(ext);
    return out;
}

std::string traceFileHelp() {
    std::string exts, folders;
    for (auto ext : traceExtensions())
        exts += (exts.empty() ? "" : ", ") + std::string(ext);
    for (const auto& f : traceFormats())
        if (f.folder) folders += (folders.empty() ? "" : " or ") + std::string(f.title);
    return "Trace file (" + exts + "; .gz and .zst read directly)" +
           (folders.empty() ? "" : ", or a folder of " + folders + " files");
}

} // namespace kvbe
