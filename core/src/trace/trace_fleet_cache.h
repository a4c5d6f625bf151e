// The caches of a fleet (docs/workload-model.md, "The fleet"): the copies of one tier (a GPU
// cache per server, a local tier per node, one pool), each an LRU of block ids in slots of its
// own, and one index of which servers hold each block, so that a router reads a prefix's holders
// in the prefix's length, not in servers times it. Internal to kvbe_core.
#pragma once

#include "trace_cache.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace kvbe::detail {

// Asks for transparent huge pages under a large array (where the system allows them, madvise
// mode): the fleet's caches are read at random, and with 4 KiB pages most reads missed the TLB.
inline void adviseHugePages(const void* p, std::size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr std::size_t kHuge = std::size_t(2) << 20;
    if (bytes < 2 * kHuge) return;
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

// Block id -> slot, open addressing with linear probing and backward-shift deletion; a key and
// its slot side by side, so a probe reads one line.
class IdSlots {
  public:
    std::uint32_t find(std::uint32_t id) const {
        if (m_e.empty()) return kNil;
        for (std::size_t p = hash(id);; p = (p + 1) & m_mask) {
            const Entry e = m_e[p];
            if (e.key == id) return e.slot;
            if (e.key == kNil) return kNil;
        }
    }
    // The slot of a held id, to read or change in place (null when not held).
    std::uint32_t* at(std::uint32_t id) {
        if (m_e.empty()) return nullptr;
        for (std::size_t p = hash(id);; p = (p + 1) & m_mask) {
            Entry& e = m_e[p];
            if (e.key == id) return &e.slot;
            if (e.key == kNil) return nullptr;
        }
    }
    std::size_t size() const { return m_size; }
    void put(std::uint32_t id, std::uint32_t slot) {
        if ((m_size + 1) * 4 > m_e.size() * 3) grow();
        std::size_t p = hash(id);
        while (m_e[p].key != kNil && m_e[p].key != id)
            p = (p + 1) & m_mask;
        if (m_e[p].key == kNil) ++m_size;
        m_e[p] = {id, slot};
    }
    void erase(std::uint32_t id) {
        std::size_t p = hash(id);
        while (m_e[p].key != id) {
            if (m_e[p].key == kNil) return;
            p = (p + 1) & m_mask;
        }
        // Backward shift: move later entries of the run into the hole where they may sit.
        for (std::size_t q = (p + 1) & m_mask;; q = (q + 1) & m_mask) {
            const Entry e = m_e[q];
            if (e.key == kNil) break;
            const std::size_t home = hash(e.key);
            // q's entry may move to p when its home is not in (p, q] cyclically.
            const bool between = p <= q ? (home > p && home <= q) : (home > p || home <= q);
            if (between) continue;
            m_e[p] = e;
            p = q;
        }
        m_e[p].key = kNil;
        --m_size;
    }
    void reserve(std::size_t n) {
        while (m_e.size() * 3 < n * 4 + 4)
            grow();
    }
    std::uint64_t bytes() const { return m_e.capacity() * sizeof(Entry); }

  private:
    struct Entry {
        std::uint32_t key = kNil, slot = 0;
    };
    std::size_t hash(std::uint32_t id) const {
        return static_cast<std::size_t>((static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull) >>
                                        m_shift) &
               m_mask;
    }
    void grow() {
        std::vector<Entry> old = std::move(m_e);
        const std::size_t n = old.empty() ? 16 : old.size() * 2;
        m_e.assign(n, Entry{});
        adviseHugePages(m_e.data(), n * sizeof(Entry));
        m_mask = n - 1;
        m_shift = 64 - static_cast<unsigned>(__builtin_ctzll(n));
        m_size = 0;
        for (const Entry& e : old)
            if (e.key != kNil) put(e.key, e.slot);
    }
    std::vector<Entry> m_e;
    std::size_t m_mask = 0, m_size = 0;
    unsigned m_shift = 60;
};

// A block's record (ServerIndex::interleaved): each index's words, then for each LRU tier a few
// inline entries, each a copy's tag (the copy + 1; 0: free) and its stamp for the block. A block
// held by more copies of a tier than it has entries keeps the others in those copies' maps.
struct InlineStamps {
    std::uint64_t* base = nullptr; // the first block's entries of this tier
    std::size_t stride = 0;        // words a block
    int entries = 0;
    std::uint64_t* of(std::uint32_t id) const {
        return base + static_cast<std::size_t>(id) * stride;
    }
};

// One LRU cache of block ids, kept as stamps: each held block has the stamp of its last use (in
// the block's record where it has room, else in the copy's own map), and a queue lists the uses
// in order. The least recent block is the queue's first entry whose stamp is still its block's;
// older entries are skipped (and the queue compacted when they and the used-up head outnumber
// the blocks). A use reads the block's record, which the router and the index read anyway, and
// appends to the queue: no miss of its own where the record has room.
class SlotLru {
  public:
    SlotLru(std::uint64_t capacity, InlineStamps stamps, std::uint32_t copy)
        : m_cap(capacity), m_in(stamps), m_tag(copy + 1) {}
    std::uint64_t capacity() const { return m_cap; }
    std::uint64_t size() const { return m_size; }
    // A held block becomes the most recent.
    void touch(std::uint32_t id) {
        const Ref r = find(id);
        if (!r || r.get() == m_stamp) return;
        r.set(use(id));
    }
    // Stores a block it does not hold; the least recent goes to onEvict when full (capacity 0:
    // nothing is stored).
    template <class F> void insert(std::uint32_t id, F&& onEvict) {
        if (m_cap == 0) return;
        if (m_size >= m_cap) {
            const std::uint32_t old = oldest();
            remove(old);
            ++m_head;
            ahead();
            onEvict(old);
        }
        const std::uint32_t stamp = use(id);
        std::uint64_t* e = m_in.of(id);
        ++m_size;
        for (int q = 0; q < m_in.entries; ++q)
            if ((e[q] >> 32) == 0) {
                e[q] = static_cast<std::uint64_t>(m_tag) << 32 | stamp;
                return;
            }
        m_map.put(id, stamp);
    }
    // The least recent block (kNil when empty) and its removal.
    std::uint32_t oldest() {
        while (m_head < m_uses.size()) {
            const Use u = m_uses[m_head];
            const Ref r = find(u.id);
            if (r && r.get() == u.stamp) return u.id;
            ++m_head;
            ahead();
        }
        return kNil;
    }
    void remove(std::uint32_t id) {
        std::uint64_t* e = m_in.of(id);
        for (int q = 0; q < m_in.entries; ++q)
            if ((e[q] >> 32) == m_tag) {
                e[q] = 0;
                --m_size;
                return;
            }
        const std::size_t before = m_map.size();
        m_map.erase(id);
        m_size -= before - m_map.size();
    }
    std::uint64_t bytes() const { return m_uses.capacity() * sizeof(Use) + m_map.bytes(); }

  private:
    struct Use {
        std::uint32_t id, stamp;
    };
    // The records the next evictions read, fetched while this one goes on: the queue's head
    // moves one entry or a few a time.
    static constexpr std::size_t kAhead = 8;
    void ahead() const {
        if (m_in.entries > 0 && m_head + kAhead < m_uses.size())
            __builtin_prefetch(m_in.of(m_uses[m_head + kAhead].id), 1);
    }
    // Where a held block's stamp is: an inline entry or the map's slot.
    struct Ref {
        std::uint64_t* in = nullptr;
        std::uint32_t* out = nullptr;
        explicit operator bool() const { return in != nullptr || out != nullptr; }
        std::uint32_t get() const { return in ? static_cast<std::uint32_t>(*in) : *out; }
        void set(std::uint32_t v) const {
            if (in)
                *in = (*in & ~std::uint64_t(0xFFFFFFFF)) | v;
            else
                *out = v;
        }
    };
    Ref find(std::uint32_t id) {
        std::uint64_t* e = m_in.of(id);
        for (int q = 0; q < m_in.entries; ++q)
            if ((e[q] >> 32) == m_tag) return {e + q, nullptr};
        return {nullptr, m_map.at(id)};
    }
    // Appends a use and returns its stamp; drops the stale uses first when they are most of the
    // queue, renumbering the stamps from 1 (so that they never wrap).
    std::uint32_t use(std::uint32_t id) {
        if (m_uses.size() >= 2 * m_size + 1024 || m_stamp == kNil - 1) compact();
        m_uses.push_back({id, ++m_stamp});
        return m_stamp;
    }
    void compact() {
        std::size_t out = 0;
        m_stamp = 0;
        constexpr std::size_t kWalk = 16; // records in flight while the walk goes on
        for (std::size_t i = m_head; i < m_uses.size(); ++i) {
            if (m_in.entries > 0 && i + kWalk < m_uses.size())
                __builtin_prefetch(m_in.of(m_uses[i + kWalk].id), 1);
            const Use u = m_uses[i];
            const Ref r = find(u.id);
            if (!r || r.get() != u.stamp) continue;
            r.set(++m_stamp);
            m_uses[out++] = {u.id, m_stamp};
        }
        m_uses.resize(out);
        m_head = 0;
    }
    std::uint64_t m_cap;
    InlineStamps m_in;
    std::uint32_t m_tag;
    std::uint64_t m_size = 0;
    std::vector<Use> m_uses;
    std::size_t m_head = 0;
    std::uint32_t m_stamp = 0;
    IdSlots m_map; // the blocks with no room in their record
};

// Which servers hold each block: a bit per server, `words` 64-bit words a block. Several indexes
// may share one array, a block's words of each side by side and then the inline stamps of the
// first `stamped` (their LRUs', InlineStamps), so that what a request asks of every tier about a
// block is one record: one cache line up to 64 servers and four tiers.
class ServerIndex {
  public:
    ServerIndex() = default;
    ServerIndex(std::uint32_t blocks, int servers) { *this = interleaved(blocks, servers, 1)[0]; }
    // `count` indexes over one array, the first `stamped` with inline stamps.
    static std::vector<ServerIndex> interleaved(std::uint32_t blocks, int servers, int count,
                                                int stamped = 0) {
        const std::size_t words = (static_cast<std::size_t>(servers) + 63) / 64;
        const std::size_t bits = words * static_cast<std::size_t>(count);
        const auto lru = static_cast<std::size_t>(stamped);
        // A power of two up to a line, whole lines beyond, so that no record straddles more
        // lines than it must; the room left goes to more inline stamps.
        std::size_t stride = bits + lru;
        if (stride <= 8)
            stride = std::bit_ceil(stride);
        else
            stride = (stride + 7) / 8 * 8;
        const int entries = lru == 0 ? 0 : static_cast<int>((stride - bits) / lru);
        auto store = std::make_shared<BlockArray<std::uint64_t>>(
            static_cast<std::size_t>(blocks) * stride, 0);
        std::vector<ServerIndex> out(static_cast<std::size_t>(count));
        for (int c = 0; c < count; ++c) {
            ServerIndex& x = out[static_cast<std::size_t>(c)];
            x.m_store = store;
            // With no blocks the array holds nothing and data() may be null: no offset.
            std::uint64_t* data = store->data();
            x.m_base = blocks == 0 ? data : data + static_cast<std::size_t>(c) * words;
            x.m_words = words;
            x.m_stride = stride;
            if (c < stamped && blocks > 0)
                x.m_stamps = {data + bits + static_cast<std::size_t>(c * entries), stride, entries};
        }
        return out;
    }
    // This index's LRU stamps in the records (none: every stamp in the copies' maps).
    InlineStamps stamps() const { return m_stamps; }
    std::size_t words() const { return m_words; }
    const std::uint64_t* of(std::uint32_t id) const {
        return m_base + static_cast<std::size_t>(id) * m_stride;
    }
    bool holds(std::uint32_t id, int s) const {
        return (of(id)[static_cast<std::size_t>(s) / 64] >> (s % 64)) & 1u;
    }
    bool any(std::uint32_t id) const {
        const std::uint64_t* w = of(id);
        for (std::size_t q = 0; q < m_words; ++q)
            if (w[q]) return true;
        return false;
    }
    // The servers [first, first + count) gain or lose the block.
    void set(std::uint32_t id, int first, int count, bool on) {
        std::uint64_t* w = m_base + static_cast<std::size_t>(id) * m_stride;
        for (int s = first; s < first + count;) {
            const int bit = s % 64, n = std::min(64 - bit, first + count - s);
            const std::uint64_t m = (n == 64 ? ~std::uint64_t(0) : ((std::uint64_t(1) << n) - 1))
                                    << bit;
            if (on)
                w[static_cast<std::size_t>(s) / 64] |= m;
            else
                w[static_cast<std::size_t>(s) / 64] &= ~m;
            s += n;
        }
    }
    // Its share of the array: its words and its inline stamps.
    std::uint64_t bytes() const {
        return m_store && m_stride ? m_store->bytes() / m_stride *
                                         (m_words + static_cast<std::size_t>(m_stamps.entries))
                                   : 0;
    }

  private:
    std::shared_ptr<BlockArray<std::uint64_t>> m_store;
    std::uint64_t* m_base = nullptr;
    std::size_t m_words = 0, m_stride = 0;
    InlineStamps m_stamps;
};

// A change of a tier's index (a block stored or evicted at a copy), for a router that sees it
// late: at time t its servers [first, first + count) gain or lose the block.
struct IndexEvent {
    double t;
    std::uint32_t id;
    int first, count;
    std::uint8_t tier;
    bool on;
};

// The copies of one tier: copy c serves the servers [c × span, (c + 1) × span) (span 1 for the
// GPU, the node's servers for a local tier, every server for a pool). The index says which
// servers can read each block from this tier.
class TierCopies {
  public:
    TierCopies(ServerIndex index, int servers, int span, std::uint64_t capacity)
        : m_span(span), m_servers(servers), m_index(std::move(index)) {
        const int copies = (servers + span - 1) / span;
        m_copies.reserve(static_cast<std::size_t>(copies));
        for (int c = 0; c < copies; ++c)
            m_copies.emplace_back(capacity, m_index.stamps(), static_cast<std::uint32_t>(c));
    }
    int copyOf(int server) const { return m_span == 1 ? server : server / m_span; }
    // The line an access reads: the block's record (its index words and inline stamps).
    void prefetch(std::uint32_t id) const { __builtin_prefetch(m_index.of(id), 1); }
    std::uint32_t copies() const { return static_cast<std::uint32_t>(m_copies.size()); }
    const ServerIndex& index() const { return m_index; }
    bool holds(std::uint32_t id, int server) const { return m_index.holds(id, server); }
    // The block used at a server: touched where its copy holds it, else stored (true: written).
    bool access(std::uint32_t id, int server) {
        const int c = copyOf(server);
        if (m_index.holds(id, server)) {
            m_copies[static_cast<std::size_t>(c)].touch(id);
            return false;
        }
        auto& cache = m_copies[static_cast<std::size_t>(c)];
        if (cache.capacity() == 0) return false;
        cache.insert(id, [&](std::uint32_t old) {
            m_index.set(old, c * m_span, span(c), false);
            log(old, c, false);
        });
        m_index.set(id, c * m_span, span(c), true);
        log(id, c, true);
        return true;
    }
    // Every change from now on goes to `events`, stamped `*clock + lag`.
    void logTo(std::deque<IndexEvent>* events, const double* clock, double lag, std::uint8_t tier) {
        m_events = events;
        m_clock = clock;
        m_lag = lag;
        m_tier = tier;
    }
    // Evicts a copy's least recent blocks until it holds at most `keep`.
    void trim(int c, std::uint64_t keep) {
        auto& cache = m_copies[static_cast<std::size_t>(c)];
        while (cache.size() > keep) {
            const std::uint32_t old = cache.oldest();
            cache.remove(old);
            m_index.set(old, c * m_span, span(c), false);
        }
    }
    std::uint64_t size(int c) const { return m_copies[static_cast<std::size_t>(c)].size(); }
    std::uint64_t bytes() const {
        std::uint64_t b = m_index.bytes();
        for (const auto& c : m_copies)
            b += c.bytes();
        return b;
    }

  private:
    int span(int c) const { return std::min(m_span, m_servers - c * m_span); }
    void log(std::uint32_t id, int c, bool on) {
        if (m_events) m_events->push_back({*m_clock + m_lag, id, c * m_span, span(c), m_tier, on});
    }
    std::deque<IndexEvent>* m_events = nullptr;
    const double* m_clock = nullptr;
    double m_lag = 0;
    std::uint8_t m_tier = 0;
    int m_span, m_servers;
    ServerIndex m_index;
    std::vector<SlotLru> m_copies;
};

} // namespace kvbe::detail
