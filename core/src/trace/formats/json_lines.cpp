// Mooncake and Bailian lines through simdjson's On-Demand parser, one line at a time: a line is
// copied into a padded buffer (simdjson reads a few bytes past the end) and its fields are read
// in the order they come, the others skipped. simdjson says what kind of error a line has; the
// messages name the field it was in.
#include "trace_format_entry.h"

#include <simdjson.h>

#include <cmath>
#include <vector>

namespace kvbe::detail {
namespace {

namespace od = simdjson::ondemand;

class JsonLineParser final : public LineParser {
  public:
    JsonLineParser(const std::string& source, TraceFormat format, std::uint32_t blockTokens,
                   double secondsPerUnit)
        : LineParser(source), m_format(format), m_block(blockTokens), m_scale(secondsPerUnit) {}

    std::string parse(std::string_view line, std::uint64_t lineNo, TraceRecord& rec,
                      bool& isRecord) override {
        isRecord = true;
        if (m_padded.size() < line.size() + simdjson::SIMDJSON_PADDING)
            m_padded.resize(line.size() + simdjson::SIMDJSON_PADDING);
        std::copy(line.begin(), line.end(), m_padded.begin());
        od::document doc;
        const auto err = m_parser
                             .iterate(simdjson::padded_string_view(m_padded.data(), line.size(),
                                                                   m_padded.size()))
                             .get(doc);
        if (err == simdjson::UTF8_ERROR)
            return where(lineNo) + "not valid UTF-8 text; expected a JSON object";
        if (err == simdjson::UNCLOSED_STRING)
            return where(lineNo) + "a quoted string is not closed (is the line cut short?)";
        if (err) return where(lineNo) + "expected a JSON object, one request per line";
        od::object obj;
        if (const auto e = doc.get_object().get(obj)) {
            if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) return unbalanced(line, lineNo);
            return where(lineNo) + "expected a JSON object, one request per line";
        }
        if (auto e = fields(obj, lineNo, rec); !e.empty()) return e;
        // Whatever follows the object on the line (a second object, a stray brace).
        if (!doc.current_location().error())
            return where(lineNo) + "unexpected text after the JSON object";
        return checkRecord(lineNo, rec);
    }

  private:
    // The fields a request needs; the others are skipped.
    std::string fields(od::object& obj, std::uint64_t lineNo, TraceRecord& rec) {
        m_haveTs = m_haveIn = m_haveIds = false;
        rec.outputTokens = 0;
        rec.cachedTokens.reset();
        m_ids.clear();
        std::string_view previous;
        for (auto field : obj) {
            std::string_view key;
            if (field.unescaped_key().get(key)) {
                if (previous.empty()) return where(lineNo) + "expected a quoted field name and ':'";
                return where(lineNo) + "expected ',' or '}' after field '" + std::string(previous) +
                       "'";
            }
            previous = key;
            od::value v;
            if (field.value().get(v))
                return where(lineNo) + "field '" + std::string(key) + "': expected ':' and a value";
            if (key == "timestamp") {
                double t = 0;
                if (v.get_double().get(t) || t < 0)
                    return fieldError(lineNo, key,
                                      m_format == TraceFormat::Bailian
                                          ? "an arrival time in seconds, 0 or more"
                                          : "an arrival time in milliseconds, 0 or more");
                rec.arrivalS = t * m_scale;
                m_haveTs = true;
            } else if (key == "input_length" || key == "output_length") {
                std::int64_t n = 0;
                if (!wholeNumber(v, n) || n < 0 || n > 0xffffffffLL)
                    return fieldError(lineNo, key, "a whole number of tokens, 0 or more");
                if (key == "input_length") {
                    rec.inputTokens = static_cast<std::uint32_t>(n);
                    m_haveIn = true;
                } else {
                    rec.outputTokens = static_cast<std::uint32_t>(n);
                }
            } else if (key == "hash_ids") {
                if (auto e = blockIds(v, lineNo, key); !e.empty()) return e;
                m_haveIds = true;
            }
        }
        return {};
    }

    // 12 and 12.0 are whole numbers; 12.5 is not.
    static bool wholeNumber(od::value& v, std::int64_t& out) {
        od::number n;
        if (v.get_number().get(n)) return false;
        if (n.is_int64()) {
            out = n.get_int64();
            return true;
        }
        if (!n.is_double()) return false; // above the int64 range
        const double d = n.get_double();
        if (d != std::floor(d) || std::abs(d) > 9.0e15) return false;
        out = static_cast<std::int64_t>(d);
        return true;
    }

    std::string blockIds(od::value& v, std::uint64_t lineNo, std::string_view key) {
        od::array ids;
        if (v.get_array().get(ids)) return fieldError(lineNo, key, "an array of block ids");
        std::uint64_t prefix = 0;
        for (auto item : ids) {
            std::uint64_t id = 0;
            if (const auto e = item.get_uint64().get(id))
                return fieldError(lineNo, key,
                                  e == simdjson::TAPE_ERROR
                                      ? "',' or ']' in the array of block ids"
                                      : "an array of non-negative integer block ids");
            if (m_format == TraceFormat::Bailian) {
                prefix = chainPrefixId(prefix, id);
                m_ids.push_back(prefix);
            } else {
                m_ids.push_back(id);
            }
        }
        return {};
    }

    std::string checkRecord(std::uint64_t lineNo, TraceRecord& rec) const {
        if (!m_haveTs)
            return where(lineNo) + "field 'timestamp' is missing; expected the arrival time";
        if (!m_haveIn)
            return where(lineNo) +
                   "field 'input_length' is missing; expected the prompt length in tokens";
        if (!m_haveIds)
            return where(lineNo) + "field 'hash_ids' is missing; expected the prompt's block ids";
        if (rec.inputTokens == 0) return fieldError(lineNo, "input_length", "at least 1 token");
        const std::uint64_t n = rec.inputTokens, len = m_ids.size(), b = m_block;
        if (len == 0 || (len - 1) * b >= n || n > len * b) {
            const std::uint64_t want = (n + b - 1) / b;
            return where(lineNo) + "field 'hash_ids': " + std::to_string(len) + " blocks of " +
                   std::to_string(b) + " tokens for input_length " + std::to_string(n) +
                   "; expected (len-1)*" + std::to_string(b) + " < input_length <= len*" +
                   std::to_string(b) + ", that is " + std::to_string(want) +
                   " blocks (set the block size with --block-tokens if the trace uses another)";
        }
        rec.blockIds = std::span<const std::uint64_t>(m_ids.data(), m_ids.size());
        return {};
    }

    // simdjson only says that the line's brackets do not pair up. Which bracket is left open (and
    // in which field), or the text after the closed object, makes the message: a walk over the
    // brackets outside strings.
    std::string unbalanced(std::string_view line, std::uint64_t lineNo) const {
        std::vector<char> open;
        std::string_view lastString, key, openField;
        for (std::size_t i = 0; i < line.size(); ++i) {
            const char c = line[i];
            if (c == '"') {
                std::size_t j = i + 1;
                while (j < line.size() && line[j] != '"')
                    j += line[j] == '\\' ? 2 : 1;
                lastString = line.substr(i + 1, std::min(j, line.size()) - i - 1);
                i = j;
            } else if (c == ':' && open.size() == 1) {
                key = lastString;
            } else if (c == '{' || c == '[') {
                if (open.size() == 1) openField = key;
                open.push_back(c);
            } else if (c == '}' || c == ']') {
                if (open.empty()) break;
                open.pop_back();
                if (open.empty()) return where(lineNo) + "unexpected text after the JSON object";
            }
        }
        if (open.empty() || open.front() != '{')
            return where(lineNo) + "expected a JSON object, one request per line";
        if (open.size() == 1) return where(lineNo) + "expected ',' or '}' (is the line cut short?)";
        if (openField == "hash_ids" && open.size() == 2 && open.back() == '[')
            return fieldError(lineNo, openField, "',' or ']' in the array of block ids");
        return where(lineNo) + "field '" + std::string(openField) + "': not a valid JSON value";
    }

    TraceFormat m_format;
    std::uint32_t m_block;
    double m_scale;
    od::parser m_parser;
    std::vector<char> m_padded; // the line and simdjson's padding
    std::vector<std::uint64_t> m_ids;
    bool m_haveTs = false, m_haveIn = false, m_haveIds = false;
};

bool startsWithObject(std::string_view line) {
    return !line.empty() && line.front() == '{';
}

bool has(std::string_view line, std::string_view field) {
    return line.find(field) != std::string_view::npos;
}

std::unique_ptr<LineParser> makeParser(const std::string& source, const ParserSettings& s) {
    return std::make_unique<JsonLineParser>(source, s.format, s.blockTokens, s.secondsPerUnit);
}

} // namespace

TraceFormatEntry mooncakeFormat() {
    return {{.name = "mooncake",
             .title = "Mooncake",
             .layout = TraceLayout::JsonLines,
             .telling = "'hash_ids'",
             .shape = "(timestamp, input_length, output_length, hash_ids)",
             .extensions = {".jsonl", ".json"},
             .blockTokens = 512,
             .secondsPerUnit = 1e-3,
             .detect =
                 [](std::string_view line) {
                     return startsWithObject(line) && has(line, "\"hash_ids\"") &&
                            !has(line, "\"chat_id\"") && !has(line, "\"parent_chat_id\"");
                 }},
            makeParser};
}

TraceFormatEntry bailianFormat() {
    return {{.name = "bailian",
             .title = "Bailian",
             .layout = TraceLayout::JsonLines,
             .telling = "'chat_id'",
             .shape = "(chat_id, parent_chat_id, timestamp, ..., hash_ids)",
             .extensions = {".jsonl", ".json"},
             .blockTokens = 16,
             .secondsPerUnit = 1,
             .detect =
                 [](std::string_view line) {
                     return startsWithObject(line) &&
                            (has(line, "\"chat_id\"") || has(line, "\"parent_chat_id\""));
                 }},
            makeParser};
}

} // namespace kvbe::detail
