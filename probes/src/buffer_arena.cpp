#include "kvbe/probes/buffer_arena.h"

#include "kvbe/probes/probe.h"

#include <cstdint>
#include <cstring>
#include <sys/mman.h>

namespace kvbe::probes {

BufferArena::BufferArena(std::size_t count, std::size_t blockBytes) {
    constexpr std::size_t huge = 2 * kMiB;
    m_stride = (blockBytes + 4095) / 4096 * 4096;
    // Whole huge pages: THP only backs 2 MiB-aligned 2 MiB ranges, so a single 128 KiB buffer
    // would otherwise stay in scattered 4 KiB pages (up to 2 MiB more memory).
    const std::size_t bytes = (count * m_stride + huge - 1) / huge * huge;
    m_mapped = bytes + huge;
    void* p = ::mmap(nullptr, m_mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    m_base = p;
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    m_data = reinterpret_cast<std::byte*>((addr + huge - 1) / huge * huge);
    ::madvise(m_data, bytes, MADV_HUGEPAGE); // a hint: without THP the probe still runs
    std::memset(m_data, 0, bytes);
}

BufferArena::~BufferArena() {
    if (m_base) ::munmap(m_base, m_mapped);
}

} // namespace kvbe::probes
