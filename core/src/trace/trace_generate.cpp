// The trace generator (kvbe/trace/trace_generate.h; docs/trace.md, "Generated traces").
#include "kvbe/trace/trace_generate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <queue>
#include <vector>

namespace kvbe {

namespace {

// splitmix64: a full-period 64-bit generator whose output is the same everywhere.
struct Rng {
    std::uint64_t s;
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; } // [0, 1)
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) {                // [lo, hi]
        return lo + next() % (hi - lo + 1);
    }
    double exponential(double mean) { return -mean * std::log1p(-uniform()); }
};

// Whole lengths of the parts of a prompt, in tokens (uniform between the bounds).
constexpr std::uint64_t kSystemMin = 800, kSystemMax = 6000;
constexpr std::uint64_t kFirstMin = 200, kFirstMax = 2200;         // a conversation's first message
constexpr std::uint64_t kTurnMin = 50, kTurnMax = 1150;            // each later message
constexpr std::uint64_t kDocumentMin = 1000, kDocumentMax = 12000; // a one-off's document
constexpr std::uint64_t kOutputMin = 100, kOutputMax = 700; // the answer (joins the next turn)

struct Conversation {
    std::vector<std::uint64_t> full; // ids of the previous prompt's full blocks
    std::uint64_t tokens = 0;        // the previous prompt's length
    std::uint64_t output = 0;        // the previous answer's length
};

struct Ready {
    double at;
    std::uint32_t conv;
    bool operator>(const Ready& o) const { return at != o.at ? at > o.at : conv > o.conv; }
};

class Generator {
  public:
    explicit Generator(const TraceGeneratorSpec& s) : m_s(s), m_rng{s.seed} {
        // Zipf's law over the system prompts: the k-th most used is picked in proportion to 1/k.
        double sum = 0;
        for (int k = 1; k <= s.systemPrompts; ++k) {
            sum += 1.0 / k;
            m_zipf.push_back(sum);
        }
        for (auto& c : m_zipf)
            c /= sum;
        for (int k = 0; k < s.systemPrompts; ++k) {
            const std::uint64_t len = m_rng.between(kSystemMin, kSystemMax);
            m_systemTokens.push_back(len);
            std::vector<std::uint64_t> ids;
            for (std::uint64_t b = 0; b < len / s.blockTokens; ++b)
                ids.push_back(m_nextId++);
            m_systemIds.push_back(std::move(ids));
        }
        m_peak = s.ratePerS * (1 + s.waveShare);
    }

    // The next request as a line appended to out.
    void request(std::string& out) {
        const double now = nextArrival();
        std::uint64_t tokens = 0, output = m_rng.between(kOutputMin, kOutputMax);
        m_ids.clear();
        if (m_rng.uniform() < m_s.oneOffShare) {
            const std::size_t sys = system();
            tokens = m_systemTokens[sys] + m_rng.between(kDocumentMin, kDocumentMax);
            startFrom(m_systemIds[sys], tokens);
        } else if (!m_ready.empty() && m_ready.top().at <= now &&
                   continues(m_convs[m_ready.top().conv])) {
            const std::uint32_t c = m_ready.top().conv;
            m_ready.pop();
            Conversation& conv = m_convs[c];
            tokens = conv.tokens + conv.output + m_rng.between(kTurnMin, kTurnMax);
            startFrom(conv.full, tokens);
            keep(c, tokens, output, now);
        } else {
            if (!m_ready.empty() && m_ready.top().at <= now) end(m_ready.top().conv);
            const std::size_t sys = system();
            tokens = m_systemTokens[sys] + m_rng.between(kFirstMin, kFirstMax);
            tokens = std::min<std::uint64_t>(tokens, m_s.maxTokens);
            startFrom(m_systemIds[sys], tokens);
            keep(newConversation(), tokens, output, now);
        }
        line(out, now, tokens, output);
        m_tokens += static_cast<double>(tokens);
        m_last = now;
    }
    double tokensSum() const { return m_tokens; }
    double lastArrival() const { return m_last; }

  private:
    // A Poisson process at the wave's rate, by thinning one at its peak.
    double nextArrival() {
        for (;;) {
            m_t += m_rng.exponential(1 / m_peak);
            if (m_rng.uniform() * m_peak < rate(m_t)) return m_t;
        }
    }
    // A triangle wave (no libm sine: the same bits on every platform), between 1 ± waveShare.
    double rate(double t) const {
        if (m_s.waveShare <= 0) return m_s.ratePerS;
        const double phase = t / m_s.waveS - std::floor(t / m_s.waveS); // [0, 1)
        const double tri = phase < 0.5 ? 4 * phase - 1 : 3 - 4 * phase; // -1 … 1 … -1
        return m_s.ratePerS * (1 + m_s.waveShare * tri);
    }
    std::size_t system() {
        const double u = m_rng.uniform();
        return static_cast<std::size_t>(std::upper_bound(m_zipf.begin(), m_zipf.end(), u) -
                                        m_zipf.begin()) %
               m_zipf.size();
    }
    // The ready conversation takes another turn, unless its prompt would grow past maxTokens.
    bool continues(const Conversation& c) const {
        return c.tokens + c.output + kTurnMax <= m_s.maxTokens;
    }
    // The prompt: the full blocks it shares, then new blocks up to `tokens`.
    void startFrom(const std::vector<std::uint64_t>& shared, std::uint64_t tokens) {
        const std::uint64_t blocks = (tokens + m_s.blockTokens - 1) / m_s.blockTokens;
        const std::uint64_t keep = std::min<std::uint64_t>(shared.size(), tokens / m_s.blockTokens);
        m_ids.assign(shared.begin(), shared.begin() + static_cast<std::ptrdiff_t>(keep));
        while (m_ids.size() < blocks)
            m_ids.push_back(m_nextId++);
    }
    std::uint32_t newConversation() {
        if (!m_free.empty()) {
            const std::uint32_t c = m_free.back();
            m_free.pop_back();
            return c;
        }
        m_convs.emplace_back();
        return static_cast<std::uint32_t>(m_convs.size() - 1);
    }
    void end(std::uint32_t c) {
        m_ready.pop();
        m_convs[c].full.clear();
        m_free.push_back(c);
    }
    // After a turn: the conversation comes back after a think time, or ends (geometric turns).
    void keep(std::uint32_t c, std::uint64_t tokens, std::uint64_t output, double now) {
        Conversation& conv = m_convs[c];
        if (m_rng.uniform() >= 1 - 1 / m_s.meanTurns) {
            conv.full.clear();
            m_free.push_back(c);
            return;
        }
        conv.full.assign(m_ids.begin(),
                         m_ids.begin() + static_cast<std::ptrdiff_t>(tokens / m_s.blockTokens));
        conv.tokens = tokens;
        conv.output = output;
        m_ready.push({now + m_rng.exponential(m_s.thinkS), c});
    }
    void line(std::string& out, double now, std::uint64_t tokens, std::uint64_t output) {
        char buf[32];
        auto num = [&](std::uint64_t v) {
            const auto r = std::to_chars(buf, buf + sizeof buf, v);
            out.append(buf, r.ptr);
        };
        out += "{\"timestamp\": ";
        num(static_cast<std::uint64_t>(std::floor(now * 1000)));
        out += ", \"input_length\": ";
        num(tokens);
        out += ", \"output_length\": ";
        num(output);
        out += ", \"hash_ids\": [";
        for (std::size_t i = 0; i < m_ids.size(); ++i) {
            if (i) out += ", ";
            num(m_ids[i]);
        }
        out += "]}\n";
    }

    const TraceGeneratorSpec& m_s;
    Rng m_rng;
    double m_t = 0, m_peak = 0;
    std::vector<double> m_zipf;
    std::vector<std::uint64_t> m_systemTokens;
    std::vector<std::vector<std::uint64_t>> m_systemIds;
    std::vector<Conversation> m_convs;
    std::vector<std::uint32_t> m_free;
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> m_ready;
    std::vector<std::uint64_t> m_ids;
    std::uint64_t m_nextId = 0;
    double m_tokens = 0, m_last = 0;
};

} // namespace

Status checkTraceGeneratorSpec(const TraceGeneratorSpec& s) {
    if (s.requests < 1) return Error{"requests: expected 1 or more"};
    if (!(s.ratePerS > 0) || !std::isfinite(s.ratePerS))
        return Error{"rate: expected requests a second above 0"};
    if (!(s.waveShare >= 0 && s.waveShare < 1))
        return Error{"wave: expected a share from 0 to below 1 of the rate"};
    if (!(s.waveS > 0) || !std::isfinite(s.waveS))
        return Error{"wave period: expected seconds above 0"};
    if (s.systemPrompts < 1 || s.systemPrompts > 1000000)
        return Error{"system prompts: expected 1 to 1,000,000"};
    if (!(s.oneOffShare >= 0 && s.oneOffShare <= 1))
        return Error{"one-off share: expected a share from 0 to 1"};
    if (!(s.meanTurns >= 1) || !std::isfinite(s.meanTurns))
        return Error{"mean turns: expected 1 or more"};
    if (!(s.thinkS >= 0) || !std::isfinite(s.thinkS))
        return Error{"think time: expected 0 or more seconds"};
    if (s.blockTokens < 1 || s.blockTokens > (1u << 24))
        return Error{"block tokens: expected 1 to 16,777,216"};
    if (s.maxTokens < kSystemMax + kDocumentMax)
        return Error{"max tokens: expected at least " + std::to_string(kSystemMax + kDocumentMax) +
                     " (the longest system prompt and document)"};
    return Ok{};
}

Result<TraceGeneratorStats> generateTrace(const TraceGeneratorSpec& spec,
                                          const std::function<Status(std::string_view)>& out,
                                          const std::function<bool(double)>& progress) {
    if (auto ok = checkTraceGeneratorSpec(spec); !ok) return ok.error();
    Generator g(spec);
    TraceGeneratorStats stats;
    std::string chunk;
    constexpr std::size_t kChunk = std::size_t(4) << 20;
    chunk.reserve(kChunk + 4096);
    for (std::uint64_t i = 0; i < spec.requests; ++i) {
        g.request(chunk);
        if (chunk.size() >= kChunk) {
            if (auto ok = out(chunk); !ok) return ok.error();
            stats.bytes += chunk.size();
            chunk.clear();
            if (progress && !progress(double(i + 1) / double(spec.requests)))
                return Error{"generating the trace: cancelled"};
        }
    }
    if (!chunk.empty())
        if (auto ok = out(chunk); !ok) return ok.error();
    stats.bytes += chunk.size();
    if (progress) progress(1.0);
    stats.requests = spec.requests;
    stats.durationS = g.lastArrival();
    stats.meanInputTokens = g.tokensSum() / double(spec.requests);
    return stats;
}

Result<TraceGeneratorStats> generateTraceFile(const TraceGeneratorSpec& spec,
                                              const std::string& path,
                                              const std::function<bool(double)>& progress) {
    if (auto ok = checkTraceGeneratorSpec(spec); !ok) return ok.error();
    const std::string tmp = path + ".tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return Error{path + ": cannot be written (" + tmp + " could not be created)"};
    auto written = generateTrace(
        spec,
        [&](std::string_view c) -> Status {
            if (std::fwrite(c.data(), 1, c.size(), f) != c.size())
                return Error{path + ": writing failed (disk full?)"};
            return Ok{};
        },
        progress);
    const bool closed = std::fclose(f) == 0;
    std::error_code ec;
    if (!written || !closed) {
        std::filesystem::remove(tmp, ec);
        return written ? Error{path + ": writing failed"} : written.error();
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        return Error{path + ": cannot be written (" + ec.message() + ")"};
    }
    return written;
}

} // namespace kvbe
