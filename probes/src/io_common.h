// Shared by the I/O engines: the measurement clock and windows, offsets, per-worker tallies.
#pragma once

#include "kvbe/probes/buffer_arena.h"
#include "kvbe/probes/data_pattern.h"
#include "kvbe/probes/errno_text.h"
#include "kvbe/probes/io_engine.h"

#include <atomic>
#include <cstdint>
#include <ctime>
#include <vector>

namespace kvbe::probes::detail {

inline std::uint64_t nowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

// Warm-up, then `repeats` windows of equal length; a completion belongs to the window it ends in.
class Windows {
  public:
    Windows(const IoSetting& s, std::uint64_t startNs)
        : m_sizeBased(s.totalBytes != 0), m_repeats(s.repeats), m_start(startNs),
          m_warmupNs(static_cast<std::uint64_t>(s.warmupS * 1e9)),
          m_windowNs(static_cast<std::uint64_t>(s.repeatS * 1e9)) {}
    int windowCount() const { return m_sizeBased ? 1 : m_repeats; }
    // -1 warm-up, 0..repeats-1 a window, repeats: past the end.
    int windowOf(std::uint64_t ns) const {
        if (m_sizeBased) return 0;
        if (ns < m_start + m_warmupNs) return -1;
        const std::uint64_t k = (ns - m_start - m_warmupNs) / (m_windowNs ? m_windowNs : 1);
        return k >= static_cast<std::uint64_t>(m_repeats) ? m_repeats : static_cast<int>(k);
    }
    bool over(std::uint64_t ns) const { return !m_sizeBased && windowOf(ns) >= m_repeats; }
    double windowSeconds() const { return static_cast<double>(m_windowNs) / 1e9; }

  private:
    bool m_sizeBased;
    int m_repeats;
    std::uint64_t m_start, m_warmupNs, m_windowNs;
};

// Block offsets: random whole blocks (as KV blocks are fetched), or in order, wrapping. The
// sequential cursor and the size-based op counter are shared between psync workers.
struct SharedCursor {
    std::atomic<std::uint64_t> next{0};
};

class Offsets {
  public:
    Offsets(const IoSetting& s, std::uint64_t targetSize, std::uint64_t seed, SharedCursor* cursor)
        : m_block(s.blockBytes), m_blocks(targetSize / s.blockBytes),
          m_sequential(s.sequential || s.totalBytes != 0),
          m_limit(s.totalBytes ? s.totalBytes / s.blockBytes : 0),
          m_state(seed * 0x9E3779B97F4A7C15ull + 1), m_cursor(cursor) {}
    // False when a size-based run has handed out all its blocks.
    bool next(std::uint64_t& offset) {
        if (m_sequential) {
            const std::uint64_t k = m_cursor->next.fetch_add(1, std::memory_order_relaxed);
            if (m_limit && k >= m_limit) return false;
            offset = (k % m_blocks) * m_block;
            return true;
        }
        offset = (splitmix() % m_blocks) * m_block;
        return true;
    }

  private:
    std::uint64_t splitmix() {
        std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint64_t m_block, m_blocks;
    bool m_sequential;
    std::uint64_t m_limit, m_state;
    SharedCursor* m_cursor;
};

// What one worker saw; merged at the end.
struct Tally {
    explicit Tally(int windows)
        : bytes(static_cast<size_t>(windows), 0), ops(static_cast<size_t>(windows), 0),
          verifiedWindow(static_cast<size_t>(windows), false) {}
    std::vector<std::uint64_t> bytes, ops;
    std::vector<bool> verifiedWindow;
    std::vector<float> latencyUs;
    std::uint64_t verified = 0, requeued = 0;

    // Whether this completed read should be checked against the pattern.
    bool wantsVerify(VerifyMode mode, int window) {
        if (mode == VerifyMode::All) return true;
        if (mode == VerifyMode::None || window < 0) return false;
        if (verifiedWindow[static_cast<size_t>(window)]) return false;
        verifiedWindow[static_cast<size_t>(window)] = true;
        return true;
    }
    void record(int window, std::uint64_t blockBytes, std::uint64_t startNs, std::uint64_t endNs) {
        if (window < 0 || window >= static_cast<int>(bytes.size())) return;
        bytes[static_cast<size_t>(window)] += blockBytes;
        ops[static_cast<size_t>(window)] += 1;
        latencyUs.push_back(static_cast<float>(static_cast<double>(endNs - startNs) / 1e3));
    }
};

void mergeTally(IoMeasurement& m, Tally&& t);

// The sentence for a pattern mismatch at fileOffset + index.
std::string mismatchMessage(const IoTarget& target, std::uint64_t fileOffset, std::size_t index);
// The sentence for a failed read/write.
std::string ioErrorMessage(const IoTarget& target, const IoSetting& s, std::uint64_t offset,
                           int err);

} // namespace kvbe::probes::detail
