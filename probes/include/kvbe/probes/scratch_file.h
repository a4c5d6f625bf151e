// What a drive probe reads or writes: a scratch file it makes in --dir, an existing --file
// (read-only), or a --device (read-only). Opening checks everything that can be checked before
// the first byte moves: folder writable, free space, file-size limit, O_DIRECT really in effect.
#pragma once

#include "kvbe/probes/probe.h"
#include "kvbe/result.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace kvbe::probes {

enum class TargetKind { Scratch, File, Device };

struct TargetRequest {
    std::string dir, file, device;  // exactly one
    std::uint64_t scratchBytes = 0; // --dir only
    bool direct = true;             // O_DIRECT; false is --buffered
    bool allowTmpfile = true;       // false forces the named-then-unlinked path (tests)
};

class IoTarget {
  public:
    IoTarget() = default;
    IoTarget(IoTarget&& other) noexcept;
    IoTarget& operator=(IoTarget&& other) noexcept;
    IoTarget(const IoTarget&) = delete;
    IoTarget& operator=(const IoTarget&) = delete;
    ~IoTarget();

    int fd() const { return m_fd; }
    TargetKind kind() const { return m_kind; }
    const std::string& path() const { return m_path; } // the folder of a scratch file
    std::uint64_t size() const { return m_size; }
    std::uint32_t logicalBlock() const { return m_logicalBlock; }
    bool direct() const { return m_direct; }
    bool writable() const { return m_kind == TargetKind::Scratch; }
    const std::string& fsType() const { return m_fsType; }
    // The scratch file never had a name (O_TMPFILE); otherwise it was unlinked right after open.
    bool anonymous() const { return m_anonymous; }
    // "4 GiB scratch file in /work/x (ext4, O_TMPFILE, O_DIRECT, logical block 512 B)"
    std::string describe() const;

    // Writes the whole scratch file with the non-zero pattern, then fdatasync. Unwritten extents
    // (fallocate, sparse files) read back as zeros at fake speed, so this is never skipped.
    // `failure` says which exit code a failure maps to.
    Status layOut(const std::function<void(double)>& progress, ProbeExit& failure);
    bool laidOut() const { return m_laidOut; }

  private:
    friend struct TargetOpener;
    int m_fd = -1;
    int m_dirLock = -1; // the --dir folder, flock()ed while the scratch file exists
    TargetKind m_kind = TargetKind::Scratch;
    std::string m_path;
    std::uint64_t m_size = 0;
    std::uint32_t m_logicalBlock = 4096;
    bool m_direct = true;
    bool m_anonymous = false;
    bool m_laidOut = false;
    std::string m_fsType;
};

// Opens (or creates) the target. On failure `failure` is BadInput (a flag names something that
// cannot be probed), CannotRun (the machine refuses: no space, tmpfs, not writable) or Stopped.
Result<IoTarget> openTarget(const TargetRequest& request, ProbeExit& failure);

// The scratch data: every byte non-zero and a function of its file offset, so a sample of what
// comes back can be checked against where it was read from.
void fillPattern(std::byte* buffer, std::size_t length, std::uint64_t fileOffset);
// Index of the first byte that differs from the pattern, or `length` when all match.
std::size_t firstPatternMismatch(const std::byte* buffer, std::size_t length,
                                 std::uint64_t fileOffset);

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

// "Permission denied (EACCES)"
std::string errnoText(int err);

} // namespace kvbe::probes
