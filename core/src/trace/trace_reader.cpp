// Streaming trace readers: the file's bytes (trace_sources.h) in chunks, split into lines, each
// line through its format's parser (formats/trace_format_entry.h); and the compact in-memory trace a
// replay reads.
#include "kvbe/trace/trace.h"

#include "kvbe/base/csv.h"

#include "formats/trace_format_entry.h"
#include "trace_sources.h"

#include <algorithm>
#include <memory>

namespace kvbe {

std::uint64_t chainPrefixId(std::uint64_t parentPrefix, std::uint64_t contentId) {
    // splitmix64 finaliser over a combination that is not symmetric in its two inputs.
    std::uint64_t z = parentPrefix * 0x9e3779b97f4a7c15ULL + contentId + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

namespace {

using detail::kTraceChunk;
using detail::LineParser;
using detail::TraceSource;

constexpr std::size_t kMaxSkippedExamples = 5;

Result<TraceReadSummary> readFrom(TraceSource& src, const std::string& source,
                                  const TraceReadOptions& opt,
                                  const std::function<void(const TraceRecord&)>& sink) {
    TraceReadSummary sum;
    const auto inMemory = src.whole();
    std::vector<char> buf(inMemory ? 0 : src.chunkBytes());
    std::string carry; // a line cut by the chunk boundary
    std::unique_ptr<LineParser> parser;
    std::uint64_t lineNo = 0;
    TraceRecord rec;
    bool eof = false;

    auto handle = [&](std::string_view line) -> std::optional<Error> {
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (trimCell(line).empty()) return std::nullopt;
        if (!parser) {
            TraceFormat f = opt.format;
            if (f == TraceFormat::Auto) {
                auto d = detectTraceFormat(line, source);
                if (!d) return d.error();
                f = *d;
            }
            sum.format = f;
            sum.blockTokens = f == TraceFormat::Mooncake ? 512 : f == TraceFormat::Bailian ? 16 : 0;
            if (opt.blockTokens && sum.blockTokens) sum.blockTokens = *opt.blockTokens;
            sum.secondsPerUnit = f == TraceFormat::Mooncake ? 1e-3 : 1.0;
            if (opt.secondsPerUnit) sum.secondsPerUnit = *opt.secondsPerUnit;
            parser =
                f == TraceFormat::Azure || f == TraceFormat::Csv
                    ? detail::makeCsvLineParser(source, f, sum.secondsPerUnit)
                    : detail::makeJsonLineParser(source, f, sum.blockTokens, sum.secondsPerUnit);
        }
        bool isRecord = false;
        rec.line = lineNo;
        std::string err = parser->parse(line, lineNo, rec, isRecord);
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
        if (opt.progress && !opt.progress(fraction)) {
            sum.cancelled = true;
            return sum;
        }
    }
    if (!carry.empty())
        if (auto e = handle(carry)) return *e;
    if (!parser) return Error{source + ": the file is empty; expected a request trace"};
    if (opt.progress) opt.progress(1.0);
    return sum;
}

} // namespace

Result<TraceReadSummary> readTrace(const std::filesystem::path& path,
                                   const TraceReadOptions& options,
                                   const std::function<void(const TraceRecord&)>& sink) {
    auto src = detail::openTraceFile(path);
    if (!src) return src.error();
    auto r = readFrom(**src, path.string(), options, sink);
    // A source that knows why its read failed (a zstd stream cut inside a frame) says so.
    if (!r && !(*src)->error().empty()) return Error{path.string() + ": " + (*src)->error()};
    return r;
}

Result<TraceReadSummary> readTraceText(std::string_view text, const std::string& source,
                                       const TraceReadOptions& options,
                                       const std::function<void(const TraceRecord&)>& sink) {
    return readFrom(*detail::memoryTraceSource(text), source, options, sink);
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
    t.blockOffset.push_back(0);
    auto sum = read([&](const TraceRecord& r) {
        t.arrivalS.push_back(r.arrivalS);
        t.inputTokens.push_back(r.inputTokens);
        t.outputTokens.push_back(r.outputTokens);
        for (auto id : r.blockIds)
            t.blocks.push_back(ids.intern(id));
        t.blockOffset.push_back(t.blocks.size());
    });
    if (!sum) return sum.error();
    t.summary = *sum;
    t.distinctBlocks = ids.size();
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
