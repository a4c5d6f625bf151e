// Azure LLM inference CSV and kvbe's own CSV: a header naming the columns, then one request a row.
#include "trace_format_entry.h"

#include "kvbe/base/csv.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace kvbe::detail {

namespace {

void splitCsv(std::string_view line, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t start = 0;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] == '"')
            quoted = !quoted;
        else if (line[i] == ',' && !quoted) {
            out.push_back(trimCell(line.substr(start, i - start)));
            start = i + 1;
        }
    }
    out.push_back(trimCell(line.substr(start)));
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

class CsvLineParser final : public LineParser {
  public:
    CsvLineParser(const std::string& source, TraceFormat format, double secondsPerUnit)
        : LineParser(source), m_format(format), m_scale(secondsPerUnit) {}

    std::string parse(std::string_view line, std::uint64_t lineNo, TraceRecord& rec,
                      bool& isRecord) override {
        isRecord = false;
        if (!m_haveHeader) return parseHeader(line, lineNo);
        isRecord = true;
        return parseCsv(line, lineNo, rec);
    }

  private:
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

    TraceFormat m_format;
    double m_scale;
    std::vector<std::string_view> m_cells;
    bool m_haveHeader = false;
    int m_colTime = -1, m_colIn = -1, m_colOut = -1, m_colCached = -1;
    std::size_t m_columns = 0;
};

bool csvHeaderWith(std::string_view line, std::string_view a, std::string_view b) {
    return !line.empty() && line.front() != '{' && line.find(a) != std::string_view::npos &&
           line.find(b) != std::string_view::npos;
}

std::unique_ptr<LineParser> makeParser(const std::string& source, const ParserSettings& s) {
    return std::make_unique<CsvLineParser>(source, s.format, s.secondsPerUnit);
}

} // namespace

TraceFormatEntry azureFormat() {
    return {{.name = "azure",
             .title = "Azure",
             .layout = TraceLayout::Csv,
             .telling = "TIMESTAMP,ContextTokens,GeneratedTokens",
             .shape = "(date-time, prompt and generated tokens)",
             .extensions = {".csv"},
             .blockTokens = 0,
             .secondsPerUnit = 1,
             .detect =
                 [](std::string_view line) {
                     return csvHeaderWith(line, "ContextTokens", "TIMESTAMP");
                 }},
            makeParser};
}

TraceFormatEntry kvbeCsvFormat() {
    return {{.name = "csv",
             .title = "kvbe",
             .layout = TraceLayout::Csv,
             .telling = "timestamp_s,input_tokens,output_tokens[,cached_tokens]",
             .shape = "(seconds, prompt, generated and cached tokens)",
             .extensions = {".csv"},
             .blockTokens = 0,
             .secondsPerUnit = 1,
             .detect =
                 [](std::string_view line) {
                     return csvHeaderWith(line, "input_tokens", "timestamp_s");
                 }},
            makeParser};
}

} // namespace kvbe::detail
