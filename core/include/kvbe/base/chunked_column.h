// A column of values appended one at a time (a trace as it is read) in chunks, joined into one
// vector of exactly its size at the end, each chunk freed as soon as it is copied.
//
// Why not a vector: one grown by doubling holds its values twice while it moves them, and keeps
// up to as much again unused. At 10^7 requests a trace's block ids (0.8 GB) peaked at 1.6 GB while
// read and held 1.07 GB after.
//
// The chunks grow: the first holds FirstChunkBytes, each next one twice the last, up to
// MaxChunkBytes (64 MiB), then every chunk holds that. A chunk is never moved or copied while the
// column grows (a new one is added instead), so the values are copied once, by join(). So a
// column costs what it holds: a one-line trace reserves a few KiB a column, not 64 MiB (a read
// reserved 64 MiB for each of its five columns, which cost the sanitizers' allocator about a
// fifth of a second a read and held the trace fuzzer to 5 inputs a second). Chunks of 64 MiB are
// mapped by themselves (above glibc's largest mmap threshold, 32 MiB), so a chunk freed goes back
// to the system at once; the ramp below them adds under 64 MiB, once a column.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kvbe {

template <class T, std::size_t MaxChunkBytes = (std::size_t(64) << 20),
          std::size_t FirstChunkBytes = 4096>
class ChunkedColumn {
  public:
    static constexpr std::size_t kMaxChunk = MaxChunkBytes / sizeof(T) > 0
                                                 ? MaxChunkBytes / sizeof(T)
                                                 : 1;
    static constexpr std::size_t kFirstChunk =
        std::clamp<std::size_t>(FirstChunkBytes / sizeof(T), 1, kMaxChunk);

    void push_back(T v) {
        if (m_chunks.empty() || m_chunks.back().size() == m_chunks.back().capacity()) {
            const std::size_t next = m_chunks.empty()
                                         ? kFirstChunk
                                         : std::min(kMaxChunk, 2 * m_chunks.back().capacity());
            m_chunks.emplace_back();
            m_chunks.back().reserve(next);
        }
        m_chunks.back().push_back(v);
        ++m_size;
    }
    std::size_t size() const { return m_size; }
    std::size_t chunks() const { return m_chunks.size(); }
    // Values the chunks have room for: what the column has reserved.
    std::size_t reserved() const {
        std::size_t n = 0;
        for (const auto& c : m_chunks)
            n += c.capacity();
        return n;
    }

    // The values in order, in a vector of exactly their size; the column is left empty.
    std::vector<T> join() {
        std::vector<T> out;
        if (m_chunks.size() == 1) {
            out.swap(m_chunks.front());
            out.shrink_to_fit(); // one chunk at most copied
        } else {
            out.reserve(m_size);
            for (auto& c : m_chunks) {
                out.insert(out.end(), c.begin(), c.end());
                std::vector<T>().swap(c);
            }
        }
        m_chunks.clear();
        m_size = 0;
        return out;
    }

  private:
    std::vector<std::vector<T>> m_chunks;
    std::size_t m_size = 0;
};

} // namespace kvbe
