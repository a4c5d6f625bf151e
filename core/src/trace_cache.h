// One tier of the simulated prefix cache: LRU or S3-FIFO over dense block ids, with intrusive
// lists in flat arrays (no allocation per access). Internal to kvbe_core.
#pragma once

#include "kvbe/trace_sim.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace kvbe::detail {

inline constexpr std::uint32_t kNil = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();

class TierCache {
public:
    // resident: one byte per block shared by all tiers; this tier owns bit `bit`.
    TierCache(std::uint32_t blocks, std::uint64_t capacity, EvictionPolicy policy, std::uint8_t* resident,
              int bit)
        : m_cap(capacity), m_policy(policy), m_resident(resident), m_bit(static_cast<std::uint8_t>(1u << bit)),
          m_prev(blocks, kNil), m_next(blocks, kNil) {
        if (policy == EvictionPolicy::S3Fifo) {
            m_flags.assign(blocks, 0);
            m_smallCap = m_cap == kNoLimit ? kNoLimit : std::max<std::uint64_t>(1, m_cap / 10);
            if (m_cap != kNoLimit && m_cap > 0) {
                m_ghostCap = std::max<std::uint64_t>(1, std::min<std::uint64_t>(m_cap - std::min(m_cap, m_smallCap), blocks));
                m_ghost.assign(m_ghostCap, kNil);
                m_ghostStamp.assign(blocks, 0);
            }
        }
    }

    std::uint64_t capacity() const { return m_cap; }
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
        if (m_cap == 0) { onEvict(id); return; }
        if (m_policy == EvictionPolicy::Lru) {
            if (m_size >= m_cap) evictLru(onEvict);
            pushFront(0, id);
        } else {
            while (m_size >= m_cap) evictS3(onEvict);
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
        return (m_prev.capacity() + m_next.capacity() + m_ghostStamp.capacity() + m_ghost.capacity()) * 4 +
               m_flags.capacity();
    }

private:
    static constexpr std::uint8_t kSmall = 0, kMain = 4; // bit 2: which FIFO; bits 0-1: frequency
    struct List { std::uint32_t head = kNil, tail = kNil; std::uint64_t size = 0; };

    int listOf(std::uint32_t id) const {
        return m_policy == EvictionPolicy::S3Fifo && (m_flags[id] & kMain) ? 1 : 0;
    }
    void pushFront(int l, std::uint32_t id) {
        List& L = m_lists[l];
        m_prev[id] = kNil;
        m_next[id] = L.head;
        if (L.head != kNil) m_prev[L.head] = id;
        else L.tail = id;
        L.head = id;
        ++L.size;
    }
    void unlink(int l, std::uint32_t id) {
        List& L = m_lists[l];
        const std::uint32_t p = m_prev[id], n = m_next[id];
        if (p != kNil) m_next[p] = n; else L.head = n;
        if (n != kNil) m_prev[n] = p; else L.tail = p;
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
    std::vector<std::uint32_t> m_prev, m_next;
    List m_lists[2];
    std::uint64_t m_size = 0;
    // S3-FIFO
    std::vector<std::uint8_t> m_flags;
    std::uint64_t m_smallCap = 0, m_ghostCap = 0, m_ghostPos = 0;
    std::vector<std::uint32_t> m_ghost, m_ghostStamp;
};

} // namespace kvbe::detail
