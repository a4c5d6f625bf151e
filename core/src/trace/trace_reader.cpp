// Streaming trace readers: the file's bytes (trace_sources.h) in chunks, split into lines, each
// line through its format's parser (formats/trace_format_entry.h); and the compact in-memory trace
// a replay reads.
#include "kvbe/trace/trace.h"

#include "kvbe/base/chunked_column.h"
#include "kvbe/base/csv.h"

#include "formats/trace_format_entry.h"
#include "trace_sources.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

namespace kvbe {

std::uint64_t chainPrefixId(std::uint64_t parentPrefix, std::uint64_t contentId) {
    // splitmix64 finaliser over a combination that is not symmetric in its two inputs.
    std::uint64_t z = parentPrefix * 0x9e3779b97f4a7c15ULL + contentId + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

namespace {

namespace fs = std::filesystem;
using detail::kTraceChunk;
using detail::LineParser;
using detail::TraceFormatEntry;
using detail::TraceSource;
using Sink = std::function<void(const TraceRecord&)>;

constexpr std::size_t kMaxSkippedExamples = 5;

// One read: a file, or every file of a folder in turn through the same parser.
struct ReadState {
    explicit ReadState(const TraceReadOptions& o) : opt(o) {}
    const TraceReadOptions& opt;
    TraceReadSummary sum;
    const TraceFormatEntry* entry = nullptr;
    std::unique_ptr<LineParser> parser;
    std::string source; // the file being read; the parser names it in its messages
};

// The format of the read, from the options or the first line, and its parser.
std::optional<Error> startParser(ReadState& st, std::string_view line) {
    TraceFormat f = st.opt.format;
    if (f == TraceFormat::Auto) {
        auto d = detectTraceFormat(line, st.source);
        if (!d) return d.error();
        f = *d;
    }
    st.entry = detail::traceFormatEntry(f);
    if (!st.entry)
        return Error{st.source + ": no trace format is named '" + std::string(f.name) +
                     "'; expected " + traceFormatChoices()};
    const TraceFormatInfo& info = st.entry->info;
    st.sum.format = TraceFormat{info.name};
    st.sum.blockTokens = info.blockTokens;
    if (st.opt.blockTokens && st.sum.blockTokens) st.sum.blockTokens = *st.opt.blockTokens;
    st.sum.secondsPerUnit = info.secondsPerUnit;
    if (st.opt.secondsPerUnit) st.sum.secondsPerUnit = *st.opt.secondsPerUnit;
    st.parser =
        st.entry->makeParser(st.source, {st.sum.format, st.sum.blockTokens, st.sum.secondsPerUnit});
    return std::nullopt;
}

// Reads one file's lines into the read's parser; `fractionOf` maps the file's fraction read to
// the read's (a folder's files share the progress).
Result<bool> readFrom(TraceSource& src, ReadState& st, const Sink& sink,
                      const std::function<double(double)>& fractionOf) {
    const TraceReadOptions& opt = st.opt;
    TraceReadSummary& sum = st.sum;
    const std::string& source = st.source;
    const auto inMemory = src.whole();
    std::vector<char> buf(inMemory ? 0 : src.chunkBytes());
    std::string carry; // a line cut by the chunk boundary
    std::uint64_t lineNo = 0;
    TraceRecord rec;
    bool eof = false;

    auto handle = [&](std::string_view line) -> std::optional<Error> {
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trimCell(line).empty()) return std::nullopt;
        if (!st.parser)
            if (auto e = startParser(st, line)) return e;
        bool isRecord = false;
        rec.line = lineNo;
        std::string err = st.parser->parse(line, lineNo, rec, isRecord);
        if (!err.empty()) {
            if (!opt.skipBad || !isRecord) return Error{err};
            ++sum.skippedLines;
            if (sum.skippedExamples.size() < kMaxSkippedExamples)
                sum.skippedExamples.push_back(err);
            return std::nullopt;
        }
        if (isRecord) {
            ++sum.requests;
            sink(rec);
        }
        return std::nullopt;
    };

    std::size_t memPos = 0;
    while (!eof) {
        std::string_view chunk;
        if (inMemory) {
            // In kTraceChunk steps all the same, so progress and cancelling work as for files.
            if (memPos >= inMemory->size()) break;
            chunk = inMemory->substr(memPos, kTraceChunk);
            memPos += chunk.size();
        } else {
            const long got = src.read(buf.data(), buf.size());
            if (got < 0)
                return Error{source + ": read failed after line " + std::to_string(lineNo)};
            if (got == 0) {
                eof = true;
                break;
            }
            chunk = std::string_view(buf.data(), static_cast<std::size_t>(got));
        }
        sum.bytes += chunk.size();
        std::size_t nl = chunk.find('\n');
        if (nl == std::string_view::npos) {
            carry.append(chunk);
            continue;
        }
        if (!carry.empty()) {
            carry.append(chunk.substr(0, nl));
            if (auto e = handle(carry)) return *e;
            carry.clear();
        } else if (auto e = handle(chunk.substr(0, nl))) {
            return *e;
        }
        std::size_t start = nl + 1;
        while ((nl = chunk.find('\n', start)) != std::string_view::npos) {
            if (auto e = handle(chunk.substr(start, nl - start))) return *e;
            start = nl + 1;
        }
        carry.assign(chunk.substr(start));
        const double fraction =
            inMemory ? (inMemory->empty() ? 1.0 : double(memPos) / double(inMemory->size()))
                     : src.fraction();
        if (opt.progress && !opt.progress(fractionOf(fraction))) {
            sum.cancelled = true;
            return false;
        }
    }
    if (!carry.empty())
        if (auto e = handle(carry)) return *e;
    if (!st.parser) return Error{source + ": the file is empty; expected a request trace"};
    std::string err = st.parser->finish([&](const TraceRecord& r) {
        ++sum.requests;
        sink(r);
    });
    if (!err.empty()) return Error{err};
    return true;
}

Result<TraceReadSummary> readOne(TraceSource& src, const std::string& source,
                                 const TraceReadOptions& opt, const Sink& sink) {
    ReadState st(opt);
    st.source = source;
    auto r = readFrom(src, st, sink, [](double f) { return f; });
    if (!r) return r.error();
    if (*r && opt.progress) opt.progress(1.0);
    return st.sum;
}

bool hasExtension(const fs::path& p, const std::vector<std::string_view>& exts) {
    std::string name = p.filename().string();
    for (auto& ch : name)
        ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return std::any_of(exts.begin(), exts.end(), [&](std::string_view e) {
        return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
    });
}

// A folder is one trace where its format says so (TraceFormatInfo::folder): the files directly
// inside it with that format's extensions, in the order of their names, through one parser, and
// their requests merged in the order of their arrivals (ties in the order of the files).
Result<TraceReadSummary> readFolder(const fs::path& dir, const TraceReadOptions& opt,
                                    const Sink& sink) {
    const std::string where = dir.string();
    std::vector<std::string_view> exts;
    std::vector<std::string> folderFormats;
    for (const auto& e : detail::traceFormatEntries())
        if (e.info.folder && (opt.format == TraceFormat::Auto || opt.format.name == e.info.name)) {
            exts.insert(exts.end(), e.info.extensions.begin(), e.info.extensions.end());
            folderFormats.emplace_back(e.info.title);
        }
    if (folderFormats.empty())
        return Error{
            where + ": a folder; a " +
            std::string(opt.format == TraceFormat::Auto ? "request" : toString(opt.format)) +
            " trace is one file (" + traceFormatsSentence() + "): give the file"};
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file(ec) && hasExtension(e.path(), exts)) files.push_back(e.path());
    if (ec) return Error{where + ": cannot list the folder: " + ec.message()};
    std::sort(files.begin(), files.end());
    if (files.empty()) {
        std::string list;
        for (std::size_t i = 0; i < exts.size(); ++i)
            list += (i ? " or " : "") + std::string(exts[i]);
        return Error{where + ": the folder holds no " + list + " files; expected the files of a " +
                     folderFormats.front() + " trace"};
    }

    // Held records: the folder's requests in file order, sorted by arrival at the end.
    struct Held {
        TraceRecord rec;
        std::size_t from = 0, to = 0;
    };
    std::vector<Held> held;
    std::vector<std::uint64_t> ids;
    const Sink hold = [&](const TraceRecord& r) {
        Held h{r, ids.size(), ids.size() + r.blockIds.size()};
        h.rec.blockIds = {};
        ids.insert(ids.end(), r.blockIds.begin(), r.blockIds.end());
        held.push_back(h);
    };

    ReadState st(opt);
    for (std::size_t i = 0; i < files.size(); ++i) {
        st.source = files[i].string();
        auto src = detail::openTraceFile(files[i]);
        if (!src) return src.error();
        const bool first = !st.parser;
        auto r = readFrom(**src, st, hold, [&](double f) {
            return (static_cast<double>(i) + f) / static_cast<double>(files.size());
        });
        if (!r && !(*src)->error().empty()) return Error{st.source + ": " + (*src)->error()};
        if (!r) return r.error();
        if (!*r) return st.sum; // cancelled
        if (first && !st.entry->info.folder)
            return Error{where + ": a folder of " + std::string(st.entry->info.title) +
                         " files; a " + std::string(st.entry->info.title) +
                         " trace is one file: give the file"};
    }
    std::vector<std::size_t> order(held.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return held[a].rec.arrivalS < held[b].rec.arrivalS;
    });
    for (std::size_t i : order) {
        TraceRecord r = held[i].rec;
        r.blockIds =
            std::span<const std::uint64_t>(ids.data() + held[i].from, held[i].to - held[i].from);
        sink(r);
    }
    if (opt.progress) opt.progress(1.0);
    return st.sum;
}

} // namespace

Result<TraceReadSummary> readTrace(const std::filesystem::path& path,
                                   const TraceReadOptions& options,
                                   const std::function<void(const TraceRecord&)>& sink) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return readFolder(path, options, sink);
    auto src = detail::openTraceFile(path);
    if (!src) return src.error();
    auto r = readOne(**src, path.string(), options, sink);
    // A source that knows why its read failed (a zstd stream cut inside a frame) says so.
    if (!r && !(*src)->error().empty()) return Error{path.string() + ": " + (*src)->error()};
    return r;
}

Result<TraceReadSummary> readTraceText(std::string_view text, const std::string& source,
                                       const TraceReadOptions& options,
                                       const std::function<void(const TraceRecord&)>& sink) {
    return readOne(*detail::memoryTraceSource(text), source, options, sink);
}

// ---------------------------------------------------------------- the in-memory trace

namespace {

// 64-bit prefix id -> dense 32-bit index, in order of first appearance. Ids below D sit in a
// direct table (Mooncake's ids are small integers handed out in order, so this is the common
// case and its writes are nearly sequential); D grows while the table stays at least a quarter
// full, and the ids it then covers move over from the hash table. Other ids go to an open
// addressing table with linear probing (key and value in one 16-byte slot: one line a probe).
class IdMap {
  public:
    // The dense index of id, assigning the next one when id is new.
    std::uint32_t intern(std::uint64_t id) {
        if (id < m_direct.size()) {
            std::uint32_t& v = m_direct[static_cast<std::size_t>(id)];
            if (v == 0) v = ++m_count;
            return v - 1;
        }
        if (growDirect(id)) return intern(id);
        if (m_slots.empty() || (m_hashCount + 1) * 10 > m_slots.size() * 7)
            rehash(m_slots.empty() ? 1024 : m_slots.size() * 2);
        std::size_t i = slot(id);
        while (m_slots[i].val != 0) {
            if (m_slots[i].key == id) return m_slots[i].val - 1;
            i = (i + 1) & m_mask;
        }
        m_slots[i] = {id, ++m_count};
        ++m_hashCount;
        return m_count - 1;
    }
    std::uint32_t size() const { return m_count; }

  private:
    struct Slot {
        std::uint64_t key = 0;
        std::uint32_t val = 0; // dense index + 1; 0 = empty
    };
    // Extends the direct table to cover id when it stays a quarter full or more.
    bool growDirect(std::uint64_t id) {
        const std::uint64_t want =
            std::max<std::uint64_t>(std::max<std::uint64_t>(m_direct.size() * 2, id + 1), 1024);
        if (want > 4 * (static_cast<std::uint64_t>(m_count) + 1) + 1024 ||
            want > (std::uint64_t(1) << 32))
            return false;
        m_direct.resize(static_cast<std::size_t>(want), 0);
        if (m_hashCount) {
            std::vector<Slot> old;
            old.swap(m_slots);
            m_hashCount = 0;
            rehash(old.size());
            for (const Slot& e : old) {
                if (!e.val) continue;
                if (e.key < m_direct.size())
                    m_direct[static_cast<std::size_t>(e.key)] = e.val;
                else
                    place(e);
            }
        }
        return true;
    }
    std::size_t slot(std::uint64_t id) const {
        std::uint64_t z = id + 0x9e3779b97f4a7c15ULL;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return static_cast<std::size_t>(z ^ (z >> 31)) & m_mask;
    }
    void place(const Slot& e) {
        std::size_t j = slot(e.key);
        while (m_slots[j].val != 0)
            j = (j + 1) & m_mask;
        m_slots[j] = e;
        ++m_hashCount;
    }
    void rehash(std::size_t n) {
        std::vector<Slot> old(n);
        old.swap(m_slots);
        m_mask = n - 1;
        m_hashCount = 0;
        for (const Slot& e : old)
            if (e.val) place(e);
    }
    std::vector<std::uint32_t> m_direct; // dense index + 1; 0 = not seen
    std::vector<Slot> m_slots;
    std::size_t m_mask = 0, m_hashCount = 0;
    std::uint32_t m_count = 0;
};

Result<Trace> buildTrace(
    const std::function<Result<TraceReadSummary>(const std::function<void(const TraceRecord&)>&)>&
        read) {
    Trace t;
    IdMap ids;
    ChunkedColumn<double> arrival;
    ChunkedColumn<std::uint32_t> input, output, blocks;
    ChunkedColumn<std::uint64_t> offset;
    offset.push_back(0);
    auto sum = read([&](const TraceRecord& r) {
        arrival.push_back(r.arrivalS);
        input.push_back(r.inputTokens);
        output.push_back(r.outputTokens);
        for (auto id : r.blockIds)
            blocks.push_back(ids.intern(id));
        offset.push_back(blocks.size());
    });
    if (!sum) return sum.error();
    t.summary = *sum;
    t.distinctBlocks = ids.size();
    ids = IdMap{}; // freed before the columns are joined
    t.arrivalS = arrival.join();
    t.inputTokens = input.join();
    t.outputTokens = output.join();
    t.blockOffset = offset.join();
    t.blocks = blocks.join();
    if (!t.arrivalS.empty()) {
        const double t0 = *std::min_element(t.arrivalS.begin(), t.arrivalS.end());
        for (auto& a : t.arrivalS)
            a -= t0;
    }
    return t;
}

} // namespace

Result<Trace> loadTrace(const std::filesystem::path& path, const TraceReadOptions& options) {
    return buildTrace([&](const auto& sink) { return readTrace(path, options, sink); });
}

Result<Trace> loadTraceText(std::string_view text, const std::string& source,
                            const TraceReadOptions& options) {
    return buildTrace([&](const auto& sink) { return readTraceText(text, source, options, sink); });
}

} // namespace kvbe
