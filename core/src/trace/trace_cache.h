// One tier of the simulated prefix cache: LRU or S3-FIFO over dense block ids, with intrusive
// lists in flat arrays (no allocation per access). Internal to kvbe_core.
//
// The list links of all tiers are interleaved: block id's links for tier k sit at
// links[id * stride + k], so the links one access touches in every tier share a cache line
// (with write-through LRU the tiers see the same access stream, so a block's neighbours are
// mostly the same blocks in every tier, and their lines are shared too).
#pragma once

#include "kvbe/trace/trace_sim.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kvbe::detail {

inline constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
// The GPU and up to 7 offload tiers: one resident bit each in a byte.
inline constexpr std::size_t kMaxTiers = 8;

struct Link {
    std::uint32_t prev = kNil, next = kNil;
};

// A fixed-size array for the simulator's per-block state, 2 MiB aligned and, on Linux, backed by
// transparent huge pages where the system allows them (madvise mode): the replay touches it at
// random, and with 4 KiB pages nearly every access of a multi-million-block trace missed the TLB
// as well as the cache.
template <class T> class BlockArray {
  public:
    BlockArray() = default;
    // Left unfilled: the caller writes every element before reading it.
    explicit BlockArray(std::size_t n) { allocate(n); }
    BlockArray(std::size_t n, const T& fill) {
        allocate(n);
        for (std::size_t i = 0; i < n; ++i)
            m_p.get()[i] = fill;
    }
    T* data() { return m_p.get(); }
    const T* data() const { return m_p.get(); }
    T& operator[](std::size_t i) { return m_p.get()[i]; }
    const T& operator[](std::size_t i) const { return m_p.get()[i]; }
    std::size_t size() const { return m_n; }
    std::uint64_t bytes() const { return m_n * sizeof(T); }

  private:
    void allocate(std::size_t n) {
        m_n = n;
        if (n == 0) return;
        constexpr std::size_t kAlign = std::size_t(2) << 20;
        const std::size_t bytes = n * sizeof(T);
        if (bytes >= kAlign) {
            const std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
            m_p.reset(static_cast<T*>(std::aligned_alloc(kAlign, rounded)));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
            if (m_p) ::madvise(m_p.get(), rounded, MADV_HUGEPAGE);
#endif
        } else {
            m_p.reset(static_cast<T*>(std::malloc(bytes)));
        }
        if (!m_p) throw std::bad_alloc();
    }

    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T, Free> m_p;
    std::size_t m_n = 0;
};

// The links of every tier, interleaved (stride: the tier count rounded up to a power of two, so
// one block's links never straddle a 64-byte line for up to 8 tiers).
class TierLinks {
  public:
    TierLinks(std::uint32_t blocks, std::size_t tiers) : m_stride(1) {
        while (m_stride < tiers)
            m_stride *= 2;
        m_links = BlockArray<Link>(static_cast<std::size_t>(blocks) * m_stride, Link{});
    }
    // No blocks, no array: data() is null, and null + offset is undefined (fuzz_trace found it).
    Link* base(std::size_t tier) { return m_links.data() ? m_links.data() + tier : nullptr; }
    std::size_t stride() const { return m_stride; }
    const Link* of(std::uint32_t id) const {
        return m_links.data() ? m_links.data() + static_cast<std::size_t>(id) * m_stride : nullptr;
    }
    std::uint64_t stateBytes() const { return m_links.bytes(); }

  private:
    std::size_t m_stride;
    BlockArray<Link> m_links;
};

class TierCache {
  public:
    // resident: one byte per block shared by all tiers; this tier owns bit `bit`.
    // links: this tier's links in the shared TierLinks (base(bit), stride()).
    TierCache(std::uint32_t blocks, std::uint64_t capacity, EvictionPolicy policy,
              std::uint8_t* resident, int bit, Link* links, std::size_t stride)
        : m_cap(capacity), m_policy(policy), m_resident(resident),
          m_bit(static_cast<std::uint8_t>(1u << bit)), m_links(links), m_stride(stride) {
        if (policy == EvictionPolicy::S3Fifo) {
            m_flags.assign(blocks, 0);
            m_smallCap = m_cap == kNoLimit ? kNoLimit : std::max<std::uint64_t>(1, m_cap / 10);
            if (m_cap != kNoLimit && m_cap > 0) {
                m_ghostCap = std::max<std::uint64_t>(
                    1, std::min<std::uint64_t>(m_cap - std::min(m_cap, m_smallCap), blocks));
                m_ghost.assign(m_ghostCap, kNil);
                m_ghostStamp.assign(blocks, 0);
            }
        }
    }

    std::uint64_t capacity() const { return m_cap; }
    std::uint64_t size() const { return m_size; }
    bool holds(std::uint32_t id) const { return (m_resident[id] & m_bit) != 0; }

    // A hit: LRU moves the block to the front; S3-FIFO counts it.
    void touch(std::uint32_t id) {
        if (m_policy == EvictionPolicy::Lru) {
            if (m_lists[0].head == id) return;
            unlink(0, id);
            pushFront(0, id);
        } else if ((m_flags[id] & 3u) < 3u) {
            ++m_flags[id];
        }
    }

    // Stores a block that is not here; evicted blocks go to onEvict (a block that cannot be
    // stored at all, capacity 0, is handed straight back).
    template <class F> void insert(std::uint32_t id, F&& onEvict) {
        if (m_cap == 0) {
            onEvict(id);
            return;
        }
        if (m_policy == EvictionPolicy::Lru) {
            if (m_size >= m_cap) evictLru(onEvict);
            pushFront(0, id);
        } else {
            while (m_size >= m_cap)
                evictS3(onEvict);
            const bool ghost = inGhost(id);
            m_flags[id] = static_cast<std::uint8_t>(ghost ? kMain : kSmall);
            pushFront(ghost ? 1 : 0, id);
        }
        m_resident[id] |= m_bit;
        ++m_size;
    }

    // Takes a block out (cascade: it moves to another tier).
    void remove(std::uint32_t id) {
        unlink(listOf(id), id);
        m_resident[id] &= static_cast<std::uint8_t>(~m_bit);
        --m_size;
    }

    std::uint64_t stateBytes() const {
        // The links are counted by their owner (TierLinks).
        return (m_ghostStamp.capacity() + m_ghost.capacity()) * 4 + m_flags.capacity();
    }

  private:
    static constexpr std::uint8_t kSmall = 0, kMain = 4; // bit 2: which FIFO; bits 0-1: frequency
    struct List {
        std::uint32_t head = kNil, tail = kNil;
        std::uint64_t size = 0;
    };

    int listOf(std::uint32_t id) const {
        return m_policy == EvictionPolicy::S3Fifo && (m_flags[id] & kMain) ? 1 : 0;
    }
    Link& link(std::uint32_t id) const { return m_links[static_cast<std::size_t>(id) * m_stride]; }
    void pushFront(int l, std::uint32_t id) {
        List& L = m_lists[l];
        Link& k = link(id);
        k.prev = kNil;
        k.next = L.head;
        if (L.head != kNil)
            link(L.head).prev = id;
        else
            L.tail = id;
        L.head = id;
        ++L.size;
    }
    void unlink(int l, std::uint32_t id) {
        List& L = m_lists[l];
        const Link k = link(id);
        if (k.prev != kNil)
            link(k.prev).next = k.next;
        else
            L.head = k.next;
        if (k.next != kNil)
            link(k.next).prev = k.prev;
        else
            L.tail = k.prev;
        --L.size;
    }
    void drop(std::uint32_t id) {
        m_resident[id] &= static_cast<std::uint8_t>(~m_bit);
        --m_size;
    }
    template <class F> void evictLru(F& onEvict) {
        const std::uint32_t t = m_lists[0].tail;
        unlink(0, t);
        drop(t);
        onEvict(t);
    }
    bool inGhost(std::uint32_t id) const {
        if (m_ghost.empty()) return false;
        const std::uint32_t s = m_ghostStamp[id];
        if (s == 0) return false;
        const std::uint64_t at = s - 1;
        return m_ghostPos - at <= m_ghostCap && m_ghost[at % m_ghostCap] == id;
    }
    void ghostPush(std::uint32_t id) {
        if (m_ghost.empty()) return;
        m_ghost[m_ghostPos % m_ghostCap] = id;
        m_ghostStamp[id] = static_cast<std::uint32_t>(m_ghostPos + 1);
        ++m_ghostPos;
    }
    // S3-FIFO eviction of one block: from the small FIFO while it holds its share (a block seen
    // at least twice there moves to main instead), else from main (a counted block is
    // reinserted with its count lowered).
    template <class F> void evictS3(F& onEvict) {
        for (;;) {
            List& S = m_lists[0];
            List& M = m_lists[1];
            if (S.size > 0 && (S.size >= m_smallCap || M.size == 0)) {
                const std::uint32_t t = S.tail;
                unlink(0, t);
                if ((m_flags[t] & 3u) > 1u) {
                    m_flags[t] = kMain;
                    pushFront(1, t);
                    continue;
                }
                ghostPush(t);
                drop(t);
                onEvict(t);
                return;
            }
            const std::uint32_t t = M.tail;
            if (m_flags[t] & 3u) {
                --m_flags[t];
                unlink(1, t);
                pushFront(1, t);
                continue;
            }
            unlink(1, t);
            drop(t);
            onEvict(t);
            return;
        }
    }

    std::uint64_t m_cap;
    EvictionPolicy m_policy;
    std::uint8_t* m_resident;
    std::uint8_t m_bit;
    Link* m_links;
    std::size_t m_stride;
    List m_lists[2];
    std::uint64_t m_size = 0;
    // S3-FIFO
    std::vector<std::uint8_t> m_flags;
    std::uint64_t m_smallCap = 0, m_ghostCap = 0, m_ghostPos = 0;
    std::vector<std::uint32_t> m_ghost, m_ghostStamp;
};

// Write-through LRU in every tier, in one structure. Every tier sees the same access stream, so
// a tier of capacity c holds exactly the c most recently used blocks: the blocks whose last
// access is among the c latest. With the position of each block's last access in the trace's
// access sequence, recency order *is* that sequence, read skipping stale entries (positions that
// are no longer their block's last access). So no list is kept: an access records its position,
// and a tier that must evict advances a cursor along the access sequence to the first live
// position; that block goes. Each tier's cursor passes every position at most once, reading the
// sequence in order and the last-access array a fixed distance ahead (prefetched), where a list
// would chase a pointer into a random line for every move. 4 bytes a block and the shared
// resident byte. The result is the per-tier TierCache's, block for block.
class InclusiveLru {
  public:
    static constexpr std::uint32_t kNever = std::numeric_limits<std::uint32_t>::max();
    // capacities: blocks per tier (kNoLimit: unlimited; 0: the tier stores nothing); accesses:
    // the block ids in touch order (fewer than 2^32 - 1 of them).
    InclusiveLru(std::uint32_t blocks, const std::vector<std::uint64_t>& capacities,
                 std::uint8_t* resident, const std::uint32_t* accesses, std::size_t accessCount)
        : m_last(blocks, kNever), m_res(resident), m_acc(accesses), m_accN(accessCount),
          m_tiers(capacities.size()) {
        for (std::size_t k = 0; k < m_tiers; ++k) {
            m_cap[k] = capacities[k];
            if (m_cap[k] > 0) m_active |= static_cast<std::uint8_t>(1u << k);
        }
    }

    void prefetch(std::uint32_t id) const {
        __builtin_prefetch(&m_last[id], 1);
        __builtin_prefetch(&m_res[id], 1);
    }

    // The access at position pos of the sequence (accesses[pos] == id). Returns the tiers that
    // did not hold the block (each writes it).
    std::uint8_t access(std::uint32_t id, std::uint32_t pos) {
        const std::uint8_t mask = m_res[id];
        const auto missing = static_cast<std::uint8_t>(m_active & ~mask);
        m_last[id] = pos;
        m_res[id] = static_cast<std::uint8_t>(mask | missing);
        for (std::uint8_t w = missing; w; w &= static_cast<std::uint8_t>(w - 1)) {
            const auto k = static_cast<std::size_t>(__builtin_ctz(w));
            if (m_count[k] < m_cap[k]) {
                ++m_count[k];
                continue;
            }
            // Full: evict the least recent block, the first live position from the cursor on.
            // There is one before pos (the tier holds c >= 1 blocks older than this access).
            std::uint64_t q = m_cursor[k];
            for (;;) {
                if (q + kAhead < m_accN) __builtin_prefetch(&m_last[m_acc[q + kAhead]]);
                const std::uint32_t b = m_acc[q];
                if (m_last[b] == q) break;
                ++q;
            }
            m_res[m_acc[q]] &= static_cast<std::uint8_t>(~(1u << k));
            m_cursor[k] = q + 1;
        }
        return missing;
    }

    std::uint64_t stateBytes() const { return m_last.bytes(); }

  private:
    static constexpr std::size_t kMax = 8;
    static constexpr std::size_t kAhead = 24;
    BlockArray<std::uint32_t> m_last; // position of the block's last access
    std::uint8_t* m_res;
    const std::uint32_t* m_acc;
    std::size_t m_accN;
    std::size_t m_tiers;
    std::uint64_t m_cap[kMax] = {}, m_count[kMax] = {}, m_cursor[kMax] = {};
    std::uint8_t m_active = 0;
};

} // namespace kvbe::detail
