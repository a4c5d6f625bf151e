// The offload tiers' write queues in a replay (docs/workload-model.md, "Writes and the write
// queue"). Internal to kvbe_core.
#pragma once

#include "trace_cache.h"
#include "trace_link_use.h"

#include <algorithm>
#include <array>
#include <deque>
#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

namespace kvbe::detail {

// A byte of tier bits per block: dense (an array over every block) or, for the many queues of a
// fleet, sparse (only the blocks with a bit set: their pending and dropped writes).
class BlockBits {
  public:
    BlockBits() = default;
    BlockBits(std::uint32_t blocks, bool sparse) : m_sparse(sparse) {
        if (!sparse) m_dense = BlockArray<std::uint8_t>(blocks, 0);
    }
    std::uint8_t operator[](std::uint32_t id) const {
        if (!m_sparse) return m_dense[id];
        const auto it = m_map.find(id);
        return it == m_map.end() ? 0 : it->second;
    }
    void set(std::uint32_t id, std::uint8_t bits) {
        if (!m_sparse) {
            m_dense[id] |= bits;
            return;
        }
        m_map[id] |= bits;
    }
    void clear(std::uint32_t id, std::uint8_t bits) {
        if (!m_sparse) {
            m_dense[id] &= static_cast<std::uint8_t>(~bits);
            return;
        }
        const auto it = m_map.find(id);
        if (it == m_map.end()) return;
        it->second &= static_cast<std::uint8_t>(~bits);
        if (!it->second) m_map.erase(it);
    }
    std::uint64_t bytes() const { return m_dense.bytes() + m_map.size() * 16; }

  private:
    bool m_sparse = false;
    BlockArray<std::uint8_t> m_dense;
    std::unordered_map<std::uint32_t, std::uint8_t> m_map;
};

// One queue per offload tier with a write bandwidth (ReplayConfig::writeQueue). Writes wait for
// their request's prefill to end, then join their tier's queue in the order they were issued and
// drain at the tier's write bandwidth in trace time. A block is readable from a tier once its
// write has completed; a full queue drops its oldest pending write.
class WriteQueues {
  public:
    // binS: the bins of the writes' busy time (ReplayResult::binS).
    WriteQueues(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                std::uint32_t blocks, const std::uint8_t* resident, std::vector<TierReport>& report,
                double binS);
    // A fleet's queues of one node (or of the pools): the tiers whose caps are not 0 here, each
    // block's pending and dropped bits kept sparsely, and `held(id, k)` whether this node's copy
    // of tier k still holds a block.
    WriteQueues(const ReplayConfig& config, const std::vector<std::uint64_t>& caps,
                std::uint32_t blocks, std::function<bool(std::uint32_t, std::size_t)> held,
                std::vector<TierReport>& report, double binS);

    bool any() const { return m_any; }
    bool anySharedLink() const { return m_anyShared; }
    bool on(std::size_t k) const { return m_q[k].on; }
    bool shared(std::size_t k) const { return m_q[k].shared; }
    // Per block, a bit per tier: its write to the tier is queued (pending), or the tier holds the
    // block's place but its write was dropped. Only when any().
    std::uint8_t pending(std::uint32_t id) const { return m_pending[id]; }
    std::uint8_t dropped(std::uint32_t id) const { return m_dropped[id]; }
    std::uint64_t stateBytes() const { return m_pending.bytes() + m_dropped.bytes(); }
    // Writes that joined tier k's queue (a write of a block already queued there joins that one).
    std::uint64_t queued(std::size_t k) const { return m_queued[k]; }

    // Issues the batches due by t and completes the writes done by t.
    void drain(double t);

    // A load of `busy` seconds from a tier whose reads and writes share one link, at time t (the
    // queue already drained to t): reads go first, so the write in progress and every write
    // behind it finish `busy` later, and a write issued meanwhile starts when the reads end.
    void occupyLink(std::size_t k, double t, double busy) {
        auto& wq = m_q[k];
        wq.linkFreeAt = std::max(wq.linkFreeAt, t) + busy;
        if (!wq.q.empty()) wq.headDone += busy;
    }

    // Block id is stored in tier k by the current request: it is not readable there until its
    // write, issued when the request's prefill ends, has gone through the queue.
    void enqueue(std::size_t k, std::uint32_t id) {
        const auto bit = static_cast<std::uint8_t>(1u << k);
        m_dropped.clear(id, bit);
        if (m_pending[id] & bit) return; // its earlier write is still to come: that one stores it
        m_pending.set(id, bit);
        ++m_queued[k];
        m_writes.push_back(Write{id, static_cast<std::uint32_t>(k)});
    }

    // After a request's updates: its writes become one batch, issued at issueAt (when its
    // prefill ends).
    void closeBatch(double issueAt);

    // Tier k's time spent writing: the writes completed, the part done of those dropped while
    // under way, and the writes still queued at the end as they would drain.
    BusySeries writeBusy(std::size_t k) const;

  private:
    struct Queue {
        bool on = false;
        double tau = 0;          // seconds to write one block
        std::uint64_t bound = 0; // queued blocks before the oldest is dropped
        std::deque<std::uint32_t> q;
        double headDone = 0;   // when the write at the front completes
        bool shared = false;   // reads take the same link (SimTier::sharedLink)
        double linkFreeAt = 0; // shared: when the reads issued so far have finished
        BusySeries busy;       // the time spent writing
    };
    // A request's writes are one batch (one issue time): the writes sit in a FIFO in request
    // order, and a heap orders the batches by issue time.
    struct Write {
        std::uint32_t id;
        std::uint32_t tier;
    };
    struct Batch {
        std::uint64_t begin = 0, end = 0; // absolute indices into the writes
        bool done = false;
    };
    struct BatchEvent {
        double t;
        std::uint64_t batch; // absolute index into the batches (also the tie-break: trace order)
        bool operator>(const BatchEvent& o) const { return t != o.t ? t > o.t : batch > o.batch; }
    };

    void drainTier(std::size_t k, double t);
    void issue(std::size_t k, std::uint32_t id, double t);

    const std::uint8_t* m_resident = nullptr;
    std::function<bool(std::uint32_t, std::size_t)> m_held; // a fleet's, instead of m_resident
    std::vector<TierReport>& m_report;
    std::size_t m_tiers;
    std::array<Queue, kMaxTiers> m_q;
    std::array<std::uint64_t, kMaxTiers> m_queued{};
    bool m_any = false, m_anyShared = false;
    BlockBits m_pending, m_dropped;
    void setUp(const ReplayConfig& config, const std::vector<std::uint64_t>& caps, double binS);
    std::deque<Write> m_writes;
    std::deque<Batch> m_batches;
    std::uint64_t m_writesBase = 0, m_batchesBase = 0;
    std::priority_queue<BatchEvent, std::vector<BatchEvent>, std::greater<>> m_events;
};

// A tier's write rates over 1-minute windows from its (window, bytes) pairs (any order; a window
// may repeat, its bytes add up), over `windows` windows from the first arrival to the last, the
// empty ones included: the p50, p99 and largest rates and the windows above its write bandwidth.
void summariseWriteRates(std::vector<std::pair<std::uint64_t, double>>& windowBytes,
                         std::uint64_t windows, TierReport& tier);

} // namespace kvbe::detail
