#include "trace_write_queues.h"

#include "kvbe/base/statistics.h"

#include <algorithm>
#include <cmath>

namespace kvbe::detail {

WriteQueues::WriteQueues(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                         std::uint32_t blocks, const std::uint8_t* resident,
                         std::vector<TierReport>& report, double binS)
    : m_resident(resident), m_report(report), m_tiers(caps.size()) {
    setUp(config, caps, binS);
    m_pending = BlockBits(m_any ? blocks : 0, false);
    m_dropped = BlockBits(m_any ? blocks : 0, false);
}

WriteQueues::WriteQueues(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                         std::uint32_t, std::function<bool(std::uint32_t, std::size_t)> held,
                         std::vector<TierReport>& report, double binS)
    : m_held(std::move(held)), m_report(report), m_tiers(caps.size()) {
    setUp(config, caps, binS);
    m_pending = BlockBits(0, true);
    m_dropped = BlockBits(0, true);
}

void WriteQueues::setUp(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                        double binS) {
    if (config.writeQueue) {
        for (std::size_t k = 1; k < m_tiers; ++k) {
            const auto& t = config.tiers[k - 1];
            if (!(t.writeBps > 0) || caps[k] == 0) continue;
            auto& wq = m_q[k];
            wq.on = m_any = true;
            wq.shared = t.sharedLink;
            m_anyShared = m_anyShared || t.sharedLink;
            wq.tau = config.blockBytes / t.writeBps;
            wq.busy = BusySeries(binS);
            const double b = std::floor(t.writeBufferBytes / config.blockBytes);
            wq.bound = b >= 1 ? (b < 1e18 ? static_cast<std::uint64_t>(b) : kNoLimit) : 1;
        }
    }
}

void WriteQueues::drain(double t) {
    while (!m_events.empty() && m_events.top().t <= t) {
        const BatchEvent e = m_events.top();
        m_events.pop();
        Batch& b = m_batches[static_cast<std::size_t>(e.batch - m_batchesBase)];
        for (std::uint64_t w = b.begin; w < b.end; ++w) {
            const Write& wr = m_writes[static_cast<std::size_t>(w - m_writesBase)];
            issue(wr.tier, wr.id, e.t);
        }
        b.done = true;
        while (!m_batches.empty() && m_batches.front().done) {
            const std::uint64_t count = m_batches.front().end - m_batches.front().begin;
            m_writes.erase(m_writes.begin(), m_writes.begin() + static_cast<std::ptrdiff_t>(count));
            m_writesBase += count;
            m_batches.pop_front();
            ++m_batchesBase;
        }
    }
    for (std::size_t k = 1; k < m_tiers; ++k)
        if (m_q[k].on) drainTier(k, t);
}

void WriteQueues::closeBatch(double issueAt) {
    const std::uint64_t end = m_writesBase + m_writes.size();
    const std::uint64_t begin = m_batches.empty() ? m_writesBase : m_batches.back().end;
    if (end == begin) return;
    m_batches.push_back(Batch{begin, end, false});
    m_events.push(BatchEvent{issueAt, m_batchesBase + m_batches.size() - 1});
}

void WriteQueues::drainTier(std::size_t k, double t) {
    auto& wq = m_q[k];
    const auto bit = static_cast<std::uint8_t>(1u << k);
    if (wq.q.empty() || wq.headDone > t) return;
    // The writes completed now ran back to back: one busy interval.
    const double from = wq.headDone - wq.tau;
    double to = from;
    while (!wq.q.empty() && wq.headDone <= t) {
        m_pending.clear(wq.q.front(), bit);
        wq.q.pop_front();
        to = wq.headDone;
        if (!wq.q.empty()) wq.headDone += wq.tau;
    }
    wq.busy.add(from, to);
}

void WriteQueues::issue(std::size_t k, std::uint32_t id, double t) {
    auto& wq = m_q[k];
    const auto bit = static_cast<std::uint8_t>(1u << k);
    drainTier(k, t);
    // On a shared link a write starts once the reads before it have finished.
    const double start = wq.shared ? std::max(t, wq.linkFreeAt) : t;
    if (wq.q.empty()) wq.headDone = start + wq.tau;
    wq.q.push_back(id);
    if (wq.q.size() > wq.bound) {
        // A full queue drops its oldest pending write; the next one starts now. The part of it
        // already written took the link all the same.
        const double done = std::clamp(wq.tau - (wq.headDone - t), 0.0, wq.tau);
        wq.busy.add(t - done, t);
        const std::uint32_t old = wq.q.front();
        wq.q.pop_front();
        m_pending.clear(old, bit);
        if (m_resident ? (m_resident[old] & bit) != 0 : m_held(old, k)) m_dropped.set(old, bit);
        ++m_report[k].writesDropped;
        wq.headDone = start + wq.tau;
    }
    const double backlog = wq.headDone - t + static_cast<double>(wq.q.size() - 1) * wq.tau;
    m_report[k].maxBacklogS = std::max(m_report[k].maxBacklogS, backlog);
}

BusySeries WriteQueues::writeBusy(std::size_t k) const {
    const auto& wq = m_q[k];
    BusySeries b = wq.busy;
    if (!wq.q.empty())
        b.add(wq.headDone - wq.tau, wq.headDone + static_cast<double>(wq.q.size() - 1) * wq.tau);
    return b;
}

namespace {

// The q-quantile (kvbe/base/statistics.h) of `zeros` zeros followed by `sorted` (ascending, all
// above zero): the empty windows are counted without being stored, so a trace spanning years
// costs nothing extra.
double quantileAfterZeros(const std::vector<double>& sorted, std::uint64_t zeros, double q) {
    const std::uint64_t n = zeros + sorted.size();
    if (n == 0) return 0;
    auto at = [&](std::uint64_t i) {
        return i < zeros ? 0.0 : sorted[static_cast<std::size_t>(i - zeros)];
    };
    const QuantileRank r = quantileRank(n, q);
    return quantileBetween(at(r.index), r.fraction == 0 ? 0.0 : at(r.index + 1), r.fraction);
}

} // namespace

void summariseWriteRates(std::vector<std::pair<std::uint64_t, double>>& wb, std::uint64_t windows,
                         TierReport& tr) {
    std::sort(wb.begin(), wb.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<double> rates;
    for (std::size_t w = 0; w < wb.size(); ++w) {
        if (w > 0 && wb[w].first == wb[w - 1].first)
            rates.back() += wb[w].second / 60.0;
        else
            rates.push_back(wb[w].second / 60.0);
    }
    std::sort(rates.begin(), rates.end());
    const std::uint64_t empty = windows - std::min<std::uint64_t>(windows, rates.size());
    tr.writeRateP50 = quantileAfterZeros(rates, empty, 0.5);
    tr.writeRateP99 = quantileAfterZeros(rates, empty, 0.99);
    tr.writeRateMax = rates.empty() ? 0 : rates.back();
    if (tr.writeBps > 0)
        tr.windowsOverWriteBw = static_cast<std::uint64_t>(
            rates.end() - std::upper_bound(rates.begin(), rates.end(), tr.writeBps));
}

} // namespace kvbe::detail
