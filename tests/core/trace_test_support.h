// Helpers shared by the trace, store-admission and plan tests: the conversation trace read with
// Qt's JSON parser (independent of the production reader), the cost model they replay with, and
// a trace written inline.
#pragma once

#include "kvbe/cost/cost_model.h"
#include "kvbe/trace/trace.h"
#include "kvbe/trace/trace_generate.h"
#include "test_support.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <initializer_list>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace kvbe::test {

// A generated trace of n requests (docs/trace.md, "Generated traces"): shared system prompts,
// conversations and one-off requests, from `seed`, at `rate` requests a second.
inline Trace generatedTrace(std::uint64_t n, std::uint64_t seed, double rate = 20) {
    TraceGeneratorSpec spec;
    spec.requests = n;
    spec.seed = seed;
    spec.ratePerS = rate;
    std::string text;
    auto g = generateTrace(spec, [&](std::string_view chunk) -> Status {
        text += chunk;
        return Ok{};
    });
    if (!g) qFatal("%s", g.message().c_str());
    auto t = loadTraceText(text, "generated", {});
    if (!t) qFatal("%s", t.message().c_str());
    return std::move(*t);
}

struct RealRequest {
    double n = 0;
    std::vector<qint64> ids;
};

// The Mooncake conversation trace (tests/fixtures/traces/README.md: where it comes from).
inline QString realTracePath() {
    return QStringLiteral(KVBE_FIXTURES "/traces/mooncake-conversation.jsonl");
}
inline constexpr const char* kNoRealTrace =
    "tests/fixtures/traces/mooncake-conversation.jsonl is missing or unreadable";

// The conversation trace parsed with Qt's JSON reader: empty when the file cannot be read.
inline const std::vector<RealRequest>& realTrace() {
    static const std::vector<RealRequest> reqs = [] {
        std::vector<RealRequest> out;
        QFile f(realTracePath());
        if (!f.open(QIODevice::ReadOnly)) return out;
        while (!f.atEnd()) {
            const QByteArray line = f.readLine().trimmed();
            if (line.isEmpty()) continue;
            const QJsonObject o = QJsonDocument::fromJson(line).object();
            RealRequest r;
            r.n = o.value("input_length").toDouble();
            for (const auto v : o.value("hash_ids").toArray())
                r.ids.push_back(v.toInteger());
            out.push_back(std::move(r));
        }
        return out;
    }();
    return reqs;
}

// Llama 3.2 3B, BF16 KV, 989 TFLOP/s at 50 %: the model the trace tests replay with.
inline CostModel llama3b() {
    CostInputs in;
    in.model = preset("meta-llama/Llama-3.2-3B");
    in.kvDtype = KvDtype::BF16;
    in.peakFlops = 989e12;
    in.utilisation = 0.5;
    auto cm = CostModel::create(in);
    if (!cm) qFatal("%s", cm.message().c_str());
    return *cm;
}

// One line each, newline-terminated: a trace file's text.
inline std::string lines(std::initializer_list<const char*> ls) {
    std::string s;
    for (const char* l : ls) {
        s += l;
        s += '\n';
    }
    return s;
}

// An ordered-dictionary LRU (std::list + hash map), independent of the simulator's.
class ReferenceLru {
  public:
    explicit ReferenceLru(std::size_t capacity) : m_cap(capacity) {}
    bool holds(qint64 id) const { return m_where.count(id) > 0; }
    // Used: the most recent; returns whether it was stored (not held before). Capacity 0 stores
    // nothing.
    bool use(qint64 id) {
        if (m_cap == 0) return false;
        auto it = m_where.find(id);
        const bool stored = it == m_where.end();
        if (!stored) m_order.erase(it->second);
        m_order.push_front(id);
        m_where[id] = m_order.begin();
        if (m_order.size() > m_cap) {
            m_where.erase(m_order.back());
            m_order.pop_back();
        }
        return stored;
    }
    // The request's hit run in blocks, then its blocks stored (touch order first to last).
    std::size_t request(const std::vector<qint64>& ids) {
        std::size_t h = 0;
        while (h < ids.size() && holds(ids[h]))
            ++h;
        for (auto id : ids)
            use(id);
        return h;
    }

  private:
    std::size_t m_cap;
    std::list<qint64> m_order;
    std::unordered_map<qint64, std::list<qint64>::iterator> m_where;
};

} // namespace kvbe::test
