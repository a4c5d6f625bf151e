// Streaming trace readers. JSON lines are parsed by a small scanner that knows the few fields a
// trace has (nlohmann_json builds a DOM per line and stays well under the 100 MB/s target).
#include "kvbe/trace/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#ifdef KVBE_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef KVBE_HAVE_ZSTD
#include <zstd.h>
#endif

namespace kvbe {

std::string_view toString(TraceFormat f) {
    switch (f) {
    case TraceFormat::Auto:
        return "auto";
    case TraceFormat::Mooncake:
        return "mooncake";
    case TraceFormat::Bailian:
        return "bailian";
    case TraceFormat::Azure:
        return "azure";
    case TraceFormat::Csv:
        return "csv";
    }
    return "auto";
}

std::optional<TraceFormat> parseTraceFormat(std::string_view t) {
    for (auto f : {TraceFormat::Auto, TraceFormat::Mooncake, TraceFormat::Bailian,
                   TraceFormat::Azure, TraceFormat::Csv})
        if (t == toString(f)) return f;
    return std::nullopt;
}

std::uint64_t chainPrefixId(std::uint64_t parentPrefix, std::uint64_t contentId) {
    // splitmix64 finaliser over a combination that is not symmetric in its two inputs.
    std::uint64_t z = parentPrefix * 0x9e3779b97f4a7c15ULL + contentId + 0x632be59bd9b4e019ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

namespace {

constexpr std::size_t kChunk = 4u << 20;
constexpr std::size_t kMaxSkippedExamples = 5;

bool contains(std::string_view s, std::string_view needle) {
    return s.find(needle) != std::string_view::npos;
}

// ---------------------------------------------------------------- JSON line scanner

class Scanner {
  public:
    explicit Scanner(std::string_view s) : m_p(s.data()), m_end(s.data() + s.size()) {}
    void ws() {
        while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\r' || *m_p == '\n'))
            ++m_p;
    }
    bool eat(char c) {
        ws();
        if (m_p < m_end && *m_p == c) {
            ++m_p;
            return true;
        }
        return false;
    }
    bool atEnd() {
        ws();
        return m_p >= m_end;
    }
    char peek() {
        ws();
        return m_p < m_end ? *m_p : '\0';
    }
    // A string's raw text (escapes left as they are: trace keys have none).
    bool string(std::string_view& out) {
        if (!eat('"')) return false;
        const char* start = m_p;
        while (m_p < m_end && *m_p != '"') {
            if (*m_p == '\\') ++m_p;
            ++m_p;
        }
        if (m_p >= m_end) return false;
        out = std::string_view(start, static_cast<std::size_t>(m_p - start));
        ++m_p;
        return true;
    }
    bool number(double& v) {
        ws();
        const char* p = m_p;
        if (p < m_end && *p == '+') return false;
        auto r = std::from_chars(p, m_end, v);
        if (r.ec != std::errc() || !std::isfinite(v)) return false;
        m_p = r.ptr;
        return true;
    }
    bool integer(std::int64_t& v) {
        ws();
        auto r = std::from_chars(m_p, m_end, v);
        if (r.ec != std::errc()) return false;
        if (r.ptr < m_end && (*r.ptr == '.' || *r.ptr == 'e' || *r.ptr == 'E')) {
            // 12.0 is still an integer; 12.5 is not.
            double d = 0;
            auto rd = std::from_chars(m_p, m_end, d);
            if (rd.ec != std::errc() || d != std::floor(d) || std::abs(d) > 9.0e15) return false;
            v = static_cast<std::int64_t>(d);
            m_p = rd.ptr;
            return true;
        }
        m_p = r.ptr;
        return true;
    }
    bool unsignedInt(std::uint64_t& v) {
        ws();
        auto r = std::from_chars(m_p, m_end, v);
        if (r.ec != std::errc()) return false;
        if (r.ptr < m_end && (*r.ptr == '.' || *r.ptr == 'e' || *r.ptr == 'E')) return false;
        m_p = r.ptr;
        return true;
    }
    // Skips any JSON value (nesting and strings respected).
    bool skipValue() {
        ws();
        if (m_p >= m_end) return false;
        const char c = *m_p;
        if (c == '"') {
            std::string_view s;
            return string(s);
        }
        if (c == '{' || c == '[') {
            int depth = 0;
            while (m_p < m_end) {
                const char d = *m_p;
                if (d == '"') {
                    std::string_view s;
                    if (!string(s)) return false;
                    continue;
                }
                if (d == '{' || d == '[')
                    ++depth;
                else if (d == '}' || d == ']') {
                    if (--depth == 0) {
                        ++m_p;
                        return true;
                    }
                }
                ++m_p;
            }
            return false;
        }
        const char* start = m_p;
        while (m_p < m_end && *m_p != ',' && *m_p != '}' && *m_p != ']' && *m_p != ' ')
            ++m_p;
        const std::string_view lit(start, static_cast<std::size_t>(m_p - start));
        if (lit == "true" || lit == "false" || lit == "null") return true;
        double d = 0;
        auto r = std::from_chars(start, m_p, d);
        return r.ec == std::errc() && r.ptr == m_p;
    }

  private:
    const char* m_p;
    const char* m_end;
};

// ---------------------------------------------------------------- CSV helpers

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
    return s;
}

void splitCsv(std::string_view line, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t start = 0;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted) {
            out.push_back(trim(line.substr(start, i - start)));
            start = i + 1;
        }
    }
    out.push_back(trim(line.substr(start)));
}

bool parseUnsigned(std::string_view s, std::uint64_t& v) {
    if (s.empty()) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    if (r.ec == std::errc() && r.ptr == s.data() + s.size()) return true;
    double d = 0;
    auto rd = std::from_chars(s.data(), s.data() + s.size(), d);
    if (rd.ec != std::errc() || rd.ptr != s.data() + s.size() || d < 0 || d != std::floor(d) ||
        d > 4e9)
        return false;
    v = static_cast<std::uint64_t>(d);
    return true;
}

bool parseDouble(std::string_view s, double& v) {
    if (s.empty()) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), v);
    return r.ec == std::errc() && r.ptr == s.data() + s.size() && std::isfinite(v);
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const unsigned yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// "2023-11-16 18:15:46.6805900" (also with 'T', a trailing 'Z' or a +HH:MM offset): seconds
// since the epoch, UTC.
bool parseDateTime(std::string_view s, double& out) {
    auto num = [&](std::size_t pos, std::size_t len, int& v) {
        if (pos + len > s.size()) return false;
        auto r = std::from_chars(s.data() + pos, s.data() + pos + len, v);
        return r.ec == std::errc() && r.ptr == s.data() + pos + len;
    };
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
        s[13] != ':' || s[16] != ':')
        return false;
    if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
        !num(17, 2, sec))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
    double frac = 0;
    std::size_t p = 19;
    if (p < s.size() && s[p] == '.') {
        std::size_t q = p + 1;
        double scale = 0.1;
        while (q < s.size() && s[q] >= '0' && s[q] <= '9') {
            frac += (s[q] - '0') * scale;
            scale /= 10;
            ++q;
        }
        if (q == p + 1) return false;
        p = q;
    }
    double offset = 0;
    if (p < s.size()) {
        if (s[p] == 'Z' && p + 1 == s.size()) {
        } else if ((s[p] == '+' || s[p] == '-') && s.size() == p + 6 && s[p + 3] == ':') {
            int oh = 0, om = 0;
            if (!num(p + 1, 2, oh) || !num(p + 4, 2, om)) return false;
            offset = (s[p] == '+' ? 1 : -1) * (oh * 3600.0 + om * 60.0);
        } else {
            return false;
        }
    }
    out =
        static_cast<double>(daysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d))) *
            86400.0 +
        h * 3600.0 + mi * 60.0 + sec + frac - offset;
    return true;
}

// ---------------------------------------------------------------- input sources

class Source {
  public:
    virtual ~Source() = default;
    // Reads up to n bytes; returns 0 at the end, -1 on error.
    virtual long read(char* buf, std::size_t n) = 0;
    virtual double fraction() const = 0;
    // Text already in memory: read in place, without a chunk buffer.
    virtual std::optional<std::string_view> whole() const { return std::nullopt; }
    // The read size: a small file needs no 4 MiB buffer.
    virtual std::size_t chunkBytes() const { return kChunk; }
};

class PlainFile final : public Source {
  public:
    PlainFile(std::FILE* f, std::uint64_t size) : m_f(f), m_size(size) {}
    ~PlainFile() override { std::fclose(m_f); }
    long read(char* buf, std::size_t n) override {
        const std::size_t got = std::fread(buf, 1, n, m_f);
        if (got == 0 && std::ferror(m_f)) return -1;
        m_read += got;
        return static_cast<long>(got);
    }
    double fraction() const override {
        return m_size ? std::min(1.0, double(m_read) / double(m_size)) : 1.0;
    }
    std::size_t chunkBytes() const override {
        return static_cast<std::size_t>(std::clamp<std::uint64_t>(m_size + 1, 64u << 10, kChunk));
    }

  private:
    std::FILE* m_f;
    std::uint64_t m_size, m_read = 0;
};

#ifdef KVBE_HAVE_ZLIB
class GzFile final : public Source {
  public:
    GzFile(gzFile f, std::uint64_t size) : m_f(f), m_size(size) {}
    ~GzFile() override { gzclose(m_f); }
    long read(char* buf, std::size_t n) override {
        const int got = gzread(m_f, buf, static_cast<unsigned>(n));
        return got < 0 ? -1 : got;
    }
    double fraction() const override {
        const auto off = gzoffset(m_f);
        return m_size && off > 0 ? std::min(1.0, double(off) / double(m_size)) : 0.0;
    }

  private:
    gzFile m_f;
    std::uint64_t m_size;
};
#endif

#ifdef KVBE_HAVE_ZSTD
// A .zst file decompressed as it is read (ZSTD_decompressStream; concatenated frames too).
class ZstdFile final : public Source {
  public:
    ZstdFile(std::FILE* f, std::uint64_t size)
        : m_f(f), m_size(size), m_ctx(ZSTD_createDStream()), m_in(ZSTD_DStreamInSize()) {}
    ~ZstdFile() override {
        ZSTD_freeDStream(m_ctx);
        std::fclose(m_f);
    }
    bool ok() const { return m_ctx != nullptr; }
    const std::string& error() const { return m_error; }
    long read(char* buf, std::size_t n) override {
        ZSTD_outBuffer out{buf, n, 0};
        while (out.pos == 0) {
            if (m_inBuf.pos == m_inBuf.size) {
                const std::size_t got = std::fread(m_in.data(), 1, m_in.size(), m_f);
                if (got == 0) {
                    if (std::ferror(m_f)) return -1;
                    if (!m_frameDone) {
                        m_error = "the zstd stream ends inside a frame (is the file cut short?)";
                        return -1;
                    }
                    return 0;
                }
                m_read += got;
                m_inBuf = ZSTD_inBuffer{m_in.data(), got, 0};
            }
            const std::size_t r = ZSTD_decompressStream(m_ctx, &out, &m_inBuf);
            if (ZSTD_isError(r)) {
                m_error = std::string("not a valid zstd stream (") + ZSTD_getErrorName(r) + ")";
                return -1;
            }
            m_frameDone = r == 0;
        }
        return static_cast<long>(out.pos);
    }
    double fraction() const override {
        return m_size ? std::min(1.0, double(m_read) / double(m_size)) : 1.0;
    }

  private:
    std::FILE* m_f;
    std::uint64_t m_size, m_read = 0;
    ZSTD_DStream* m_ctx;
    std::vector<char> m_in;
    ZSTD_inBuffer m_inBuf{nullptr, 0, 0};
    bool m_frameDone = true;
    std::string m_error;
};
#endif

class MemorySource final : public Source {
  public:
    explicit MemorySource(std::string_view t) : m_t(t) {}
    long read(char* buf, std::size_t n) override {
        const std::size_t k = std::min(n, m_t.size() - m_pos);
        std::memcpy(buf, m_t.data() + m_pos, k);
        m_pos += k;
        return static_cast<long>(k);
    }
    double fraction() const override {
        return m_t.empty() ? 1.0 : double(m_pos) / double(m_t.size());
    }
    std::optional<std::string_view> whole() const override { return m_t; }

  private:
    std::string_view m_t;
    std::size_t m_pos = 0;
};

// ---------------------------------------------------------------- the line parser

class LineParser {
  public:
    LineParser(const std::string& source, TraceFormat format, std::uint32_t blockTokens,
               double secondsPerUnit)
        : m_source(source), m_format(format), m_block(blockTokens), m_scale(secondsPerUnit) {}

    // Parses one non-empty line; on success fills rec (blockIds point into an internal buffer).
    // Returns an empty string on success, the message otherwise; "header" lines set m_header.
    std::string parse(std::string_view line, std::uint64_t lineNo, TraceRecord& rec,
                      bool& isRecord) {
        isRecord = false;
        switch (m_format) {
        case TraceFormat::Mooncake:
        case TraceFormat::Bailian:
            isRecord = true;
            return parseJson(line, lineNo, rec);
        case TraceFormat::Azure:
        case TraceFormat::Csv:
            if (!m_haveHeader) return parseHeader(line, lineNo);
            isRecord = true;
            return parseCsv(line, lineNo, rec);
        case TraceFormat::Auto:
            break;
        }
        return where(lineNo) + "the trace format is not known";
    }

  private:
    std::string where(std::uint64_t lineNo) const {
        return m_source + ":" + std::to_string(lineNo) + ": ";
    }
    std::string fieldError(std::uint64_t lineNo, std::string_view field,
                           std::string_view expected) const {
        return where(lineNo) + "field '" + std::string(field) + "': expected " +
               std::string(expected);
    }

    std::string checkBlocks(std::uint64_t lineNo, const TraceRecord& rec) const {
        const std::uint64_t n = rec.inputTokens, len = m_ids.size(), b = m_block;
        if (len == 0 || (len - 1) * b >= n || n > len * b) {
            const std::uint64_t want = (n + b - 1) / b;
            return where(lineNo) + "field 'hash_ids': " + std::to_string(len) + " blocks of " +
                   std::to_string(b) + " tokens for input_length " + std::to_string(n) +
                   "; expected (len-1)*" + std::to_string(b) + " < input_length <= len*" +
                   std::to_string(b) + ", that is " + std::to_string(want) +
                   " blocks (set the block size with --block-tokens if the trace uses another)";
        }
        return {};
    }

    std::string parseJson(std::string_view line, std::uint64_t lineNo, TraceRecord& rec) {
        Scanner s(line);
        if (!s.eat('{')) return where(lineNo) + "expected a JSON object, one request per line";
        bool haveTs = false, haveIn = false, haveIds = false;
        rec.outputTokens = 0;
        rec.cachedTokens.reset();
        m_ids.clear();
        if (s.peek() != '}') {
            do {
                std::string_view key;
                if (!s.string(key)) return where(lineNo) + "expected a quoted field name";
                if (!s.eat(':'))
                    return where(lineNo) + "field '" + std::string(key) + "': expected ':'";
                if (key == "timestamp") {
                    double t = 0;
                    if (!s.number(t) || t < 0)
                        return fieldError(lineNo, key,
                                          m_format == TraceFormat::Bailian
                                              ? "an arrival time in seconds, 0 or more"
                                              : "an arrival time in milliseconds, 0 or more");
                    rec.arrivalS = t * m_scale;
                    haveTs = true;
                } else if (key == "input_length" || key == "output_length") {
                    std::int64_t v = 0;
                    if (!s.integer(v) || v < 0 || v > 0xffffffffLL)
                        return fieldError(lineNo, key, "a whole number of tokens, 0 or more");
                    if (key == "input_length") {
                        rec.inputTokens = static_cast<std::uint32_t>(v);
                        haveIn = true;
                    } else
                        rec.outputTokens = static_cast<std::uint32_t>(v);
                } else if (key == "hash_ids") {
                    if (!s.eat('[')) return fieldError(lineNo, key, "an array of block ids");
                    if (!s.eat(']')) {
                        std::uint64_t prefix = 0;
                        do {
                            std::uint64_t id = 0;
                            if (!s.unsignedInt(id))
                                return fieldError(lineNo, key,
                                                  "an array of non-negative integer block ids");
                            if (m_format == TraceFormat::Bailian) {
                                prefix = chainPrefixId(prefix, id);
                                m_ids.push_back(prefix);
                            } else {
                                m_ids.push_back(id);
                            }
                        } while (s.eat(','));
                        if (!s.eat(']'))
                            return fieldError(lineNo, key, "',' or ']' in the array of block ids");
                    }
                    haveIds = true;
                } else {
                    if (!s.skipValue())
                        return where(lineNo) + "field '" + std::string(key) +
                               "': not a valid JSON value";
                }
            } while (s.eat(','));
        }
        if (!s.eat('}')) return where(lineNo) + "expected ',' or '}' (is the line cut short?)";
        if (!s.atEnd()) return where(lineNo) + "unexpected text after the JSON object";
        if (!haveTs)
            return where(lineNo) + "field 'timestamp' is missing; expected the arrival time";
        if (!haveIn)
            return where(lineNo) +
                   "field 'input_length' is missing; expected the prompt length in tokens";
        if (!haveIds)
            return where(lineNo) + "field 'hash_ids' is missing; expected the prompt's block ids";
        if (rec.inputTokens == 0) return fieldError(lineNo, "input_length", "at least 1 token");
        if (auto e = checkBlocks(lineNo, rec); !e.empty()) return e;
        rec.blockIds = std::span<const std::uint64_t>(m_ids.data(), m_ids.size());
        return {};
    }

    std::string parseHeader(std::string_view line, std::uint64_t lineNo) {
        splitCsv(line, m_cells);
        auto find = [&](std::string_view name) -> int {
            for (std::size_t i = 0; i < m_cells.size(); ++i)
                if (m_cells[i] == name) return static_cast<int>(i);
            return -1;
        };
        if (m_format == TraceFormat::Azure) {
            m_colTime = find("TIMESTAMP");
            m_colIn = find("ContextTokens");
            m_colOut = find("GeneratedTokens");
            if (m_colTime < 0 || m_colIn < 0 || m_colOut < 0)
                return where(lineNo) + "expected the Azure header with TIMESTAMP, ContextTokens "
                                       "and GeneratedTokens";
        } else {
            m_colTime = find("timestamp_s");
            m_colIn = find("input_tokens");
            m_colOut = find("output_tokens");
            m_colCached = find("cached_tokens");
            if (m_colTime < 0 || m_colIn < 0 || m_colOut < 0)
                return where(lineNo) +
                       "expected the header timestamp_s,input_tokens,output_tokens[,cached_tokens]";
        }
        m_columns = m_cells.size();
        m_haveHeader = true;
        return {};
    }

    std::string parseCsv(std::string_view line, std::uint64_t lineNo, TraceRecord& rec) {
        splitCsv(line, m_cells);
        const bool azure = m_format == TraceFormat::Azure;
        if (m_cells.size() != m_columns)
            return where(lineNo) + std::to_string(m_cells.size()) + " columns; expected " +
                   std::to_string(m_columns) + " as in the header";
        const std::string_view tName = azure ? "TIMESTAMP" : "timestamp_s";
        const std::string_view inName = azure ? "ContextTokens" : "input_tokens";
        const std::string_view outName = azure ? "GeneratedTokens" : "output_tokens";
        double t = 0;
        const auto tCell = m_cells[static_cast<std::size_t>(m_colTime)];
        if (azure) {
            if (!parseDateTime(tCell, t) && !parseDouble(tCell, t))
                return fieldError(lineNo, tName,
                                  "a date and time such as 2023-11-16 18:15:46.6805900");
        } else if (!parseDouble(tCell, t) || t < 0) {
            return fieldError(lineNo, tName, "an arrival time in seconds, 0 or more");
        }
        rec.arrivalS = azure ? t : t * m_scale; // Azure's date-times are seconds already
        std::uint64_t in = 0, out = 0;
        if (!parseUnsigned(m_cells[static_cast<std::size_t>(m_colIn)], in) || in == 0 ||
            in > 0xffffffffULL)
            return fieldError(lineNo, inName, "a whole number of prompt tokens, at least 1");
        if (!parseUnsigned(m_cells[static_cast<std::size_t>(m_colOut)], out) || out > 0xffffffffULL)
            return fieldError(lineNo, outName, "a whole number of generated tokens, 0 or more");
        rec.inputTokens = static_cast<std::uint32_t>(in);
        rec.outputTokens = static_cast<std::uint32_t>(out);
        rec.cachedTokens.reset();
        if (m_colCached >= 0) {
            const auto c = m_cells[static_cast<std::size_t>(m_colCached)];
            std::uint64_t cached = 0;
            if (!c.empty()) {
                if (!parseUnsigned(c, cached) || cached > in)
                    return fieldError(lineNo, "cached_tokens",
                                      "a whole number of tokens, at most input_tokens");
                rec.cachedTokens = static_cast<std::uint32_t>(cached);
            }
        }
        rec.blockIds = {};
        return {};
    }

    const std::string& m_source;
    TraceFormat m_format;
    std::uint32_t m_block;
    double m_scale;
    std::vector<std::uint64_t> m_ids;
    std::vector<std::string_view> m_cells;
    bool m_haveHeader = false;
    int m_colTime = -1, m_colIn = -1, m_colOut = -1, m_colCached = -1;
    std::size_t m_columns = 0;
};

Result<TraceReadSummary> readFrom(Source& src, const std::string& source,
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
        if (trim(line).empty()) return std::nullopt;
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
            parser = std::make_unique<LineParser>(source, f, sum.blockTokens, sum.secondsPerUnit);
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
            // In kChunk steps all the same, so progress and cancelling work as for files.
            if (memPos >= inMemory->size()) break;
            chunk = inMemory->substr(memPos, kChunk);
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

Result<TraceFormat> detectTraceFormat(std::string_view line, const std::string& source) {
    line = trim(line);
    if (!line.empty() && line.front() == '{') {
        if (contains(line, "\"chat_id\"") || contains(line, "\"parent_chat_id\""))
            return TraceFormat::Bailian;
        if (contains(line, "\"hash_ids\"")) return TraceFormat::Mooncake;
        return Error{source +
                     ":1: a JSON line without 'hash_ids' or 'chat_id'; expected a Mooncake "
                     "(timestamp, input_length, output_length, hash_ids) or Bailian (chat_id, "
                     "parent_chat_id, timestamp, ..., hash_ids) request"};
    }
    if (contains(line, "ContextTokens") && contains(line, "TIMESTAMP")) return TraceFormat::Azure;
    if (contains(line, "input_tokens") && contains(line, "timestamp_s")) return TraceFormat::Csv;
    return Error{source +
                 ":1: not a known trace format; expected JSON lines (Mooncake, Bailian) or a CSV "
                 "header (Azure: TIMESTAMP,ContextTokens,GeneratedTokens; kvbe: "
                 "timestamp_s,input_tokens,output_tokens[,cached_tokens])"};
}

Result<TraceReadSummary> readTrace(const std::filesystem::path& path,
                                   const TraceReadOptions& options,
                                   const std::function<void(const TraceRecord&)>& sink) {
    const std::string source = path.string();
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    if (ec) return Error{source + ": cannot read the trace (" + ec.message() + ")"};
    const auto ext = path.extension().string();
    std::unique_ptr<Source> src;
    if (ext == ".zst") {
#ifdef KVBE_HAVE_ZSTD
        std::FILE* f = std::fopen(source.c_str(), "rb");
        if (!f)
            return Error{source + ": cannot open the trace (" + std::string(std::strerror(errno)) +
                         ")"};
        auto z = std::make_unique<ZstdFile>(f, size);
        if (!z->ok()) return Error{source + ": cannot start the zstd decoder"};
        ZstdFile* zp = z.get();
        auto r = readFrom(*z, source, options, sink);
        if (!r && !zp->error().empty()) return Error{source + ": " + zp->error()};
        return r;
#else
        return Error{source +
                     ": zstd traces need libzstd, which this build does not have; decompress it "
                     "first (zstd -d) or use gzip"};
#endif
    }
    if (ext == ".gz") {
#ifdef KVBE_HAVE_ZLIB
        gzFile f = gzopen(source.c_str(), "rb");
        if (!f) return Error{source + ": cannot open the gzip file"};
        gzbuffer(f, 1u << 20);
        src = std::make_unique<GzFile>(f, size);
#else
        return Error{source +
                     ": gzip traces need zlib, which this build does not have; gunzip it first"};
#endif
    } else {
        std::FILE* f = std::fopen(source.c_str(), "rb");
        if (!f)
            return Error{source + ": cannot open the trace (" + std::string(std::strerror(errno)) +
                         ")"};
        src = std::make_unique<PlainFile>(f, size);
    }
    return readFrom(*src, source, options, sink);
}

Result<TraceReadSummary> readTraceText(std::string_view text, const std::string& source,
                                       const TraceReadOptions& options,
                                       const std::function<void(const TraceRecord&)>& sink) {
    MemorySource src(text);
    return readFrom(src, source, options, sink);
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
