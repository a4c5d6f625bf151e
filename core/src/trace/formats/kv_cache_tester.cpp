// kv-cache-tester's agentic-session traces (github.com/callanjfox/kv-cache-tester,
// docs/trace_replay_tester.md and traces/trace_*.json; the cc-traces data sets are the same
// format): one JSON object a file, one session; a folder of them is one trace. The rules are its
// replay tool's, trace_replay_tester.py (docs/trace.md, "kv-cache-tester sessions"):
//
// - a request's `t` counts seconds from its session's start, and every session starts at 0 (the
//   tool's first users start together); a request of type "subagent" holds its own `requests`,
//   whose `t` count from the parent's `t` (its flatten_requests);
// - `hash_ids` name the prompt's full `block_size`-token blocks (`in` / block_size of them, the
//   partial last block has none) and are local: the tool keys a block by (session id, hash id),
//   so no id is shared between files; within a file the ids of a sub-agent are its own under
//   `hash_id_scope` "local" (the tool's default "per_context"), and shared with the session's
//   under "global". Each such context gets the next free range of kvbe's ids, as wide as its
//   largest id + 1, so the ids stay small and dense (the trace's id table indexes them directly).
#include "trace_format_entry.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace kvbe::detail {
namespace {

namespace dom = simdjson::dom;

constexpr std::uint64_t kMaxLocalId = (std::uint64_t(1) << 40) - 1;
constexpr std::uint64_t kMaxIds = std::uint64_t(1) << 62; // the ranges of a whole trace
constexpr int kMaxDepth = 8;                              // sub-agents within sub-agents

std::string str(std::string_view s) {
    return std::string(s);
}

// 12 and 12.0 are whole numbers; 12.5 and -1 are not.
bool wholeNumber(dom::element v, std::uint64_t& out) {
    if (!v.get_uint64().get(out)) return true;
    double d = 0;
    if (v.get_double().get(d) || d < 0 || d != std::floor(d) || d > 9.0e15) return false;
    out = static_cast<std::uint64_t>(d);
    return true;
}

class SessionParser final : public LineParser {
  public:
    SessionParser(const std::string& source, const ParserSettings& s)
        : LineParser(source), m_block(s.blockTokens), m_scale(s.secondsPerUnit) {}

    // The document's lines, kept for finish().
    std::string parse(std::string_view line, std::uint64_t, TraceRecord&, bool& isRecord) override {
        isRecord = false;
        m_text.append(line);
        m_text.push_back('\n');
        return {};
    }

    std::string finish(const std::function<void(const TraceRecord&)>& sink) override {
        // An empty file of a folder (the reader refuses an empty first file itself).
        if (m_text.find_first_not_of(" \t\r\n") == std::string::npos)
            return source() + ": the file is empty; expected one kv-cache-tester session";
        const simdjson::padded_string text(m_text);
        m_text.clear();
        m_records.clear();
        m_ids.clear();
        m_contextMax.clear();
        if (auto e = session(text); !e.empty()) return e;
        // Each context's range of ids, after those of the contexts (and files) before it.
        std::vector<std::uint64_t> base(m_contextMax.size());
        for (std::size_t c = 0; c < base.size(); ++c) {
            if (m_nextId > kMaxIds - (m_contextMax[c] + 1))
                return source() + ": more block ids than a trace can hold (2^62 over all its " +
                       "sessions and sub-agents); expected fewer";
            base[c] = m_nextId;
            m_nextId += m_contextMax[c] + 1;
        }
        for (const auto& h : m_records)
            for (std::size_t j = h.from; j < h.from + h.count; ++j)
                m_ids[j] += base[h.context];
        // In the order of their arrivals: a sub-agent's requests come between its parent's.
        std::stable_sort(m_records.begin(), m_records.end(), [](const Held& a, const Held& b) {
            return a.rec.arrivalS < b.rec.arrivalS;
        });
        for (auto& h : m_records) {
            h.rec.blockIds = std::span<const std::uint64_t>(m_ids.data() + h.from, h.count);
            sink(h.rec);
        }
        return {};
    }

  private:
    struct Held {
        TraceRecord rec;
        std::size_t from = 0, count = 0;
        std::size_t context = 0; // the file's session is 0, its sub-agents (local scope) after it
    };

    std::string at(const std::string& path) const { return source() + ": " + path + ": "; }
    std::string fieldError(const std::string& path, std::string_view field,
                           std::string_view expected) const {
        return (path.empty() ? source() + ": " : at(path)) + "field '" + str(field) +
               "': expected " + str(expected);
    }

    std::string session(const simdjson::padded_string& text) {
        dom::element doc;
        if (const auto err = m_parser.parse(text).get(doc))
            return source() + ": not valid JSON (" + simdjson::error_message(err) +
                   "); expected one kv-cache-tester session, a JSON object";
        dom::object top;
        if (doc.get_object().get(top))
            return source() + ": expected one kv-cache-tester session, a JSON object";
        dom::element v;
        if (!top["block_size"].get(v)) {
            std::uint64_t b = 0;
            if (!wholeNumber(v, b) || b == 0)
                return fieldError("", "block_size", "the tokens per block id, at least 1");
            if (b != m_block)
                return source() + ": field 'block_size': " + std::to_string(b) +
                       " tokens; expected " + std::to_string(m_block) +
                       " (kv-cache-tester's 64 unless --block-tokens says otherwise: read a "
                       "trace of " +
                       std::to_string(b) + "-token blocks with --block-tokens " +
                       std::to_string(b) + ")";
        }
        bool shared = false;
        if (!top["hash_id_scope"].get(v)) {
            std::string_view scope;
            if (v.get_string().get(scope) ||
                (scope != "local" && scope != "per_context" && scope != "global"))
                return fieldError("", "hash_id_scope", "\"local\", \"per_context\" or \"global\"");
            shared = scope == "global";
        }
        dom::array requests;
        if (top["requests"].get(v))
            return source() + ": field 'requests' is missing; expected "
                              "the session's requests, an array";
        if (v.get_array().get(requests))
            return fieldError("", "requests", "the session's requests, an array");
        const std::size_t context = newContext();
        m_number = 0;
        return walk(requests, 0.0, context, shared, "requests", 0);
    }

    std::size_t newContext() {
        m_contextMax.push_back(0);
        return m_contextMax.size() - 1;
    }

    std::string walk(dom::array requests, double base, std::size_t context, bool shared,
                     const std::string& path, int depth) {
        if (depth > kMaxDepth)
            return at(path) + "sub-agents nested more than " + std::to_string(kMaxDepth) +
                   " deep; expected fewer";
        std::size_t i = 0;
        for (dom::element item : requests) {
            const std::string here = path + "[" + std::to_string(i++) + "]";
            dom::object req;
            if (item.get_object().get(req)) return at(here) + "expected a request, a JSON object";
            dom::element v;
            double t = 0;
            if (req["t"].get(v))
                return at(here) + "field 't' is missing; expected the seconds from the start";
            if (v.get_double().get(t) || !(t >= 0) || !std::isfinite(t))
                return fieldError(here, "t", "seconds from the start, 0 or more");
            std::string_view type;
            if (!req["type"].get(v) && v.get_string().get(type))
                return fieldError(here, "type", "a string: \"s\", \"n\" or \"subagent\"");
            if (type == "subagent") {
                dom::array inner;
                if (req["requests"].get(v) || v.get_array().get(inner))
                    return fieldError(here, "requests", "the sub-agent's requests, an array");
                const std::size_t sub = shared ? context : newContext();
                if (auto e = walk(inner, base + t, sub, shared, here + ".requests", depth + 1);
                    !e.empty())
                    return e;
                continue;
            }
            if (auto e = request(req, base + t, context, here); !e.empty()) return e;
        }
        return {};
    }

    std::string request(dom::object req, double t, std::size_t context, const std::string& here) {
        Held h;
        h.rec.arrivalS = t * m_scale;
        h.rec.line = ++m_number;
        std::uint64_t in = 0, out = 0;
        dom::element v;
        if (req["in"].get(v))
            return at(here) + "field 'in' is missing; expected the prompt's length in tokens";
        if (!wholeNumber(v, in) || in == 0 || in > 0xffffffffULL)
            return fieldError(here, "in", "a whole number of prompt tokens, at least 1");
        if (req["out"].get(v))
            return at(here) + "field 'out' is missing; expected the tokens generated";
        if (!wholeNumber(v, out) || out > 0xffffffffULL)
            return fieldError(here, "out", "a whole number of generated tokens, 0 or more");
        h.rec.inputTokens = static_cast<std::uint32_t>(in);
        h.rec.outputTokens = static_cast<std::uint32_t>(out);
        dom::array ids;
        if (req["hash_ids"].get(v))
            return at(here) + "field 'hash_ids' is missing; expected the prompt's block ids";
        if (v.get_array().get(ids)) return fieldError(here, "hash_ids", "an array of block ids");
        h.from = m_ids.size();
        for (dom::element id : ids) {
            std::uint64_t n = 0;
            if (id.get_uint64().get(n) || n > kMaxLocalId)
                return fieldError(here, "hash_ids", "block ids, whole numbers from 0 to 2^40 - 1");
            m_ids.push_back(n);
            m_contextMax[context] = std::max(m_contextMax[context], n);
        }
        h.count = m_ids.size() - h.from;
        h.context = context;
        if (h.count != in / m_block)
            return at(here) + "field 'hash_ids': " + std::to_string(h.count) + " block ids for " +
                   std::to_string(in) + " prompt tokens; expected " + std::to_string(in / m_block) +
                   ", one a full block of " + std::to_string(m_block) + " tokens (in / block_size)";
        m_records.push_back(h);
        return {};
    }

    std::uint32_t m_block;
    double m_scale;
    std::string m_text;
    dom::parser m_parser;
    std::vector<Held> m_records;
    std::vector<std::uint64_t> m_ids;
    std::vector<std::uint64_t> m_contextMax; // the file's contexts' largest ids
    std::uint64_t m_nextId = 0; // across the files of a folder: no id is shared between them
    std::uint64_t m_number = 0; // the file's requests, counted as they come
};

std::unique_ptr<LineParser> makeParser(const std::string& source, const ParserSettings& s) {
    return std::make_unique<SessionParser>(source, s);
}

} // namespace

TraceFormatEntry kvCacheTesterFormat() {
    return {{.name = "kv-cache-tester",
             .title = "kv-cache-tester",
             .layout = TraceLayout::JsonDocument,
             .telling = "'requests'",
             .shape = "session (one JSON object: block_size and requests[] of t, type, in, out, "
                      "hash_ids)",
             .extensions = {".json"},
             .blockTokens = 64,
             .secondsPerUnit = 1,
             .folder = true,
             .detect =
                 [](std::string_view line) {
                     auto has = [&](std::string_view s) {
                         return line.find(s) != std::string_view::npos;
                     };
                     return !line.empty() && line.front() == '{' && has("\"requests\"") &&
                            (has("\"block_size\"") || has("\"hash_id_scope\""));
                 }},
            makeParser};
}

} // namespace kvbe::detail
