// I/O buffers in huge pages, aligned for O_DIRECT.
#pragma once

#include <cstddef>

namespace kvbe::probes {

// The I/O buffers of one setting, `count` blocks in one 2 MiB-aligned region with transparent
// huge pages asked for and every page touched up front. The surprise this avoids: a block made of
// scattered 4 KiB pages needs a segment per page, and past the device's segment limit (254 on
// virtio-blk, so already at 1 MiB) the kernel splits each request in two.
class BufferArena {
  public:
    BufferArena(std::size_t count, std::size_t blockBytes);
    BufferArena(const BufferArena&) = delete;
    BufferArena& operator=(const BufferArena&) = delete;
    ~BufferArena();
    explicit operator bool() const { return m_base != nullptr; }
    std::byte* at(std::size_t i) const { return m_data + i * m_stride; }
    // Gives the memory up without unmapping it (the kernel may still write into it).
    void release() { m_base = nullptr; }

  private:
    void* m_base = nullptr;
    std::size_t m_mapped = 0;
    std::byte* m_data = nullptr;
    std::size_t m_stride = 0;
};

} // namespace kvbe::probes
