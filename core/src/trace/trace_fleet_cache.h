// The caches of a fleet (docs/workload-model.md, "The fleet"): the copies of a tier (a GPU cache
// per server, a local tier per node, one pool), each an LRU of block ids kept as stamps (one
// order for the tiers that see the same uses), and one index per tier of which servers hold each
// block, so that a router reads a prefix's holders in the prefix's length, not in servers times
// it. Internal to kvbe_core.
#pragma once

#include "trace_cache.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
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

// A block's record (ServerIndex::interleaved): each index's words, then for each LRU a few inline
// entries, each a copy's tag (the copy + 1; 0: free) and its stamp for the block. A block held by
// more copies of an LRU than it has entries keeps the others in those copies' maps.
struct InlineStamps {
    std::uint64_t* base = nullptr; // the first block's entries of this LRU
    std::size_t stride = 0;        // words a block
    int entries = 0;
    std::size_t blocks = 0;
    std::uint64_t* of(std::uint32_t id) const {
        return base + static_cast<std::size_t>(id) * stride;
    }
    std::uint64_t bytes() const { return blocks * static_cast<std::size_t>(entries) * 8; }
};

// One copy's LRU order of block ids, shared by the tiers that see the same uses (a GPU cache and
// the offload tiers written through beside it, each with its own capacity). A queue lists the
// uses in order, and each held block has the stamp of its last use (its place in the queue: the
// queue's first use has stamp m_base), in the block's record where it has room, else in the
// copy's own map. A use marks the block's previous use in the queue stale (its id becomes kNil).
// As every tier of the group sees the same uses, a tier of capacity c holds the c most recent
// blocks: the blocks whose live use is at or after the tier's head. A tier that must evict moves
// its head over stale uses to the next live one and drops that block; a block that no tier holds
// any more loses its stamp. So a head reads the queue in order and a block's record only to
// evict it. When the stale uses and the used-up start outnumber the held blocks, the queue is
// packed and the held blocks' stamps renumbered from 1 (so that they never wrap). A use reads
// the block's record, which the router and the index read anyway: one record and one queue for
// the group, where an LRU per tier would read and append once per tier.
class SlotLru {
  public:
    static constexpr int kMax = 8; // tiers in a group (kMaxTiers)
    SlotLru(std::span<const std::uint64_t> capacities, InlineStamps stamps, std::uint32_t copy)
        : m_tiers(static_cast<int>(std::min<std::size_t>(capacities.size(), kMax))), m_in(stamps),
          m_tag(copy + 1) {
        for (int j = 0; j < m_tiers; ++j) {
            m_cap[j] = capacities[static_cast<std::size_t>(j)];
            if (m_cap[j] > 0) m_stores |= static_cast<std::uint8_t>(1u << j);
        }
    }
    std::uint64_t capacity(int j) const { return m_cap[j]; }
    std::uint64_t size(int j) const { return m_count[j]; }
    // Block id is used, and the tiers in `missing` (a bit each) do not hold it: it becomes the
    // most recent in every tier, and each missing tier stores it (a full one evicting its least
    // recent first: onEvict(j, old); capacity 0: nothing is stored). Returns the tiers that
    // stored it.
    template <class F> std::uint8_t access(std::uint32_t id, std::uint8_t missing, F&& onEvict) {
        if (!m_stores) return 0;
        if (const Ref r = find(id)) {
            const std::uint32_t was = r.get();
            if (was != m_stamp) {
                m_uses[was - m_base] = kNil;
                r.set(use(id));
            }
        } else {
            const std::uint32_t stamp = use(id);
            ++m_live;
            std::uint64_t* e = m_in.of(id);
            int q = 0;
            while (q < m_in.entries && (e[q] >> 32) != 0)
                ++q;
            if (q < m_in.entries)
                e[q] = static_cast<std::uint64_t>(m_tag) << 32 | stamp;
            else
                m_map.put(id, stamp);
        }
        const auto stored = static_cast<std::uint8_t>(missing & m_stores);
        for (unsigned w = stored; w; w &= w - 1) {
            const int j = __builtin_ctz(w);
            if (m_count[j] >= m_cap[j]) evict(j, onEvict);
            ++m_count[j];
        }
        return stored;
    }
    // Evicts tier j's least recent blocks until it holds at most `keep`.
    template <class F> void trim(int j, std::uint64_t keep, F&& onEvict) {
        while (m_count[j] > keep)
            evict(j, onEvict);
    }
    std::uint64_t bytes() const {
        return m_uses.capacity() * sizeof(std::uint32_t) + m_map.bytes();
    }

  private:
    static constexpr int kAhead = 8;
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
    // Tier j's least recent block leaves it: the first live use from its head on (there is one:
    // the tier holds its blocks' live uses). A block that no other tier holds loses its stamp.
    template <class F> void evict(int j, F& onEvict) {
        std::size_t h = m_head[j];
        while (m_uses[h] == kNil)
            ++h;
        const std::uint32_t old = m_uses[h];
        const std::size_t at = h;
        m_head[j] = h + 1;
        // The records the tier's next evictions change (a request's misses evict a few blocks
        // in a row), fetched meanwhile: the live uses up to kAhead on from the head.
        std::size_t& p = m_ahead[j];
        int more = 1;
        if (p <= h) p = h, more = kAhead;
        for (; more > 0 && p + 1 < m_uses.size(); --more) {
            ++p;
            while (p + 1 < m_uses.size() && m_uses[p] == kNil)
                ++p;
            if (m_uses[p] != kNil) __builtin_prefetch(m_in.of(m_uses[p]), 1);
        }
        --m_count[j];
        bool held = false;
        for (int o = 0; o < m_tiers && !held; ++o)
            held = o != j && m_cap[o] > 0 && m_head[o] <= at;
        if (!held) {
            forget(old);
            m_uses[at] = kNil;
        }
        onEvict(j, old);
    }
    void forget(std::uint32_t id) {
        --m_live;
        std::uint64_t* e = m_in.of(id);
        for (int q = 0; q < m_in.entries; ++q)
            if ((e[q] >> 32) == m_tag) {
                e[q] = 0;
                return;
            }
        m_map.erase(id);
    }
    // Appends a use and returns its stamp; packs the queue first when its stale uses are most of
    // it.
    std::uint32_t use(std::uint32_t id) {
        if (m_uses.size() >= 4 * m_live + 1024 || m_stamp == kNil - 1) compact();
        m_uses.push_back(id);
        return ++m_stamp;
    }
    void compact() {
        // No tier holds a block whose use is before the first head.
        std::size_t from = m_uses.size();
        for (int j = 0; j < m_tiers; ++j)
            if (m_cap[j] > 0) from = std::min(from, m_head[j]);
        std::size_t next[kMax];
        for (int j = 0; j < m_tiers; ++j)
            next[j] = m_head[j];
        std::size_t out = 0;
        constexpr std::size_t kWalk = 16; // records in flight while the walk goes on
        for (std::size_t i = from; i < m_uses.size(); ++i) {
            for (int j = 0; j < m_tiers; ++j)
                if (m_head[j] == i) next[j] = out;
            if (m_in.entries > 0 && i + kWalk < m_uses.size() && m_uses[i + kWalk] != kNil)
                __builtin_prefetch(m_in.of(m_uses[i + kWalk]), 1);
            const std::uint32_t id = m_uses[i];
            if (id == kNil) continue;
            find(id).set(static_cast<std::uint32_t>(out + 1));
            m_uses[out++] = id;
        }
        for (int j = 0; j < m_tiers; ++j)
            m_head[j] = m_cap[j] == 0 ? 0 : m_head[j] >= m_uses.size() ? out : next[j];
        for (int j = 0; j < m_tiers; ++j)
            m_ahead[j] = 0;
        m_uses.resize(out);
        m_base = 1;
        m_stamp = static_cast<std::uint32_t>(out);
    }
    int m_tiers;
    std::uint64_t m_cap[kMax] = {}, m_count[kMax] = {};
    std::size_t m_head[kMax] = {};
    std::size_t m_ahead[kMax] = {}; // per tier: the last use whose record was fetched ahead
    std::uint8_t m_stores = 0;      // the tiers that store anything (capacity above 0)
    InlineStamps m_in;
    std::uint32_t m_tag;
    std::uint64_t m_live = 0;          // blocks with a stamp: held by one tier or more
    std::vector<std::uint32_t> m_uses; // block ids in order of use; kNil: a stale use
    std::uint32_t m_base = 1;          // the stamp of the queue's first use
    std::uint32_t m_stamp = 0;         // the last use's
    IdSlots m_map;                     // the blocks with no room in their record
};

// Which servers hold each block: a bit per server, `words` 64-bit words a block. Several indexes
// may share one array, a block's words of each side by side and then the inline stamps of each
// LRU (InlineStamps), so that what a request asks of every tier about a block is one record: one
// cache line up to 64 servers and four tiers.
class ServerIndex {
  public:
    ServerIndex() = default;
    ServerIndex(std::uint32_t blocks, int servers) {
        *this = interleaved(blocks, servers, 1).index[0];
    }
    struct Records {
        std::vector<ServerIndex> index;
        std::vector<InlineStamps> stamps;
    };
    // `count` indexes over one array, and the inline stamps of `lrus` LRUs.
    static Records interleaved(std::uint32_t blocks, int servers, int count, int lrus = 0) {
        const std::size_t words = (static_cast<std::size_t>(servers) + 63) / 64;
        const std::size_t bits = words * static_cast<std::size_t>(count);
        const auto lru = static_cast<std::size_t>(lrus);
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
        Records out;
        out.index.resize(static_cast<std::size_t>(count));
        // With no blocks the array holds nothing and data() may be null: no offset.
        std::uint64_t* data = store->data();
        for (int c = 0; c < count; ++c) {
            ServerIndex& x = out.index[static_cast<std::size_t>(c)];
            x.m_store = store;
            x.m_base = blocks == 0 ? data : data + static_cast<std::size_t>(c) * words;
            x.m_words = words;
            x.m_stride = stride;
        }
        for (std::size_t l = 0; l < lru; ++l)
            out.stamps.push_back(
                blocks == 0 ? InlineStamps{}
                            : InlineStamps{data + bits + l * static_cast<std::size_t>(entries),
                                           stride, entries, blocks});
        return out;
    }
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
    // Its share of the array: its words.
    std::uint64_t bytes() const {
        return m_store && m_stride ? m_store->bytes() / m_stride * m_words : 0;
    }

  private:
    std::shared_ptr<BlockArray<std::uint64_t>> m_store;
    std::uint64_t* m_base = nullptr;
    std::size_t m_words = 0, m_stride = 0;
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

// The copies of a group of tiers that see the same uses: copy c serves the servers
// [c × span, (c + 1) × span) (span 1 for the GPU, the node's servers for a local tier, every
// server for a pool), and each copy keeps one LRU order for all the group's tiers (SlotLru). Each
// tier's index says which servers can read each block from it.
class TierCopies {
  public:
    // The group's tiers: their indexes and capacities (blocks a copy), in the same order.
    TierCopies(std::vector<ServerIndex> index, InlineStamps stamps, int servers, int span,
               const std::vector<std::uint64_t>& capacities)
        : m_span(span), m_servers(servers), m_index(std::move(index)), m_stamps(stamps),
          m_tierOf(m_index.size(), 0) {
        const int copies = (servers + span - 1) / span;
        m_copies.reserve(static_cast<std::size_t>(copies));
        for (int c = 0; c < copies; ++c)
            m_copies.emplace_back(capacities, stamps, static_cast<std::uint32_t>(c));
    }
    int copyOf(int server) const { return m_span == 1 ? server : server / m_span; }
    std::uint32_t copies() const { return static_cast<std::uint32_t>(m_copies.size()); }
    std::size_t tiers() const { return m_index.size(); }
    const ServerIndex& index(std::size_t j = 0) const { return m_index[j]; }
    bool holds(std::uint32_t id, int server, std::size_t j = 0) const {
        return m_index[j].holds(id, server);
    }
    // The block used at a server: it becomes the most recent in every tier of the group, and
    // each tier whose copy did not hold it stores it. Returns the tiers that did (bit j: the
    // group's j-th).
    std::uint8_t access(std::uint32_t id, int server) {
        const int c = copyOf(server);
        std::uint8_t missing = 0;
        for (std::size_t j = 0; j < m_index.size(); ++j)
            if (!m_index[j].holds(id, server)) missing |= static_cast<std::uint8_t>(1u << j);
        auto& cache = m_copies[static_cast<std::size_t>(c)];
        const std::uint8_t stored = cache.access(id, missing, [&](int j, std::uint32_t old) {
            m_index[static_cast<std::size_t>(j)].set(old, c * m_span, span(c), false);
            log(j, old, c, false);
        });
        for (unsigned w = stored; w; w &= w - 1) {
            const int j = __builtin_ctz(w);
            m_index[static_cast<std::size_t>(j)].set(id, c * m_span, span(c), true);
            log(j, id, c, true);
        }
        return stored;
    }
    // Every change of the group's j-th tier from now on goes to `events`, stamped
    // `*clock + lag`, as tier `tier`.
    void logTo(std::size_t j, std::deque<IndexEvent>* events, const double* clock, double lag,
               std::uint8_t tier) {
        m_events = events;
        m_clock = clock;
        m_lag = lag;
        m_tierOf[j] = tier;
        m_logged |= static_cast<std::uint8_t>(1u << j);
    }
    // Evicts the least recent blocks of a copy's j-th tier until it holds at most `keep`.
    void trim(int c, std::uint64_t keep, int j = 0) {
        m_copies[static_cast<std::size_t>(c)].trim(j, keep, [&](int t, std::uint32_t old) {
            m_index[static_cast<std::size_t>(t)].set(old, c * m_span, span(c), false);
            log(t, old, c, false);
        });
    }
    std::uint64_t size(int c, int j = 0) const {
        return m_copies[static_cast<std::size_t>(c)].size(j);
    }
    std::uint64_t bytes() const {
        std::uint64_t b = m_stamps.bytes();
        for (const auto& x : m_index)
            b += x.bytes();
        for (const auto& c : m_copies)
            b += c.bytes();
        return b;
    }

  private:
    int span(int c) const { return std::min(m_span, m_servers - c * m_span); }
    void log(int j, std::uint32_t id, int c, bool on) {
        if (m_logged >> j & 1u)
            m_events->push_back({*m_clock + m_lag, id, c * m_span, span(c),
                                 m_tierOf[static_cast<std::size_t>(j)], on});
    }
    std::deque<IndexEvent>* m_events = nullptr;
    const double* m_clock = nullptr;
    double m_lag = 0;
    std::uint8_t m_logged = 0; // the tiers whose changes are logged, a bit each
    int m_span, m_servers;
    std::vector<ServerIndex> m_index;
    InlineStamps m_stamps;
    std::vector<std::uint8_t> m_tierOf; // the fleet's number of each tier (its events')
    std::vector<SlotLru> m_copies;
};

} // namespace kvbe::detail
