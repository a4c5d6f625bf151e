// What a drive probe reads or writes: a scratch file it makes in --dir, an existing --file
// (read-only), or a --device (read-only). Opening checks everything that can be checked before
// the first byte moves: folder writable, free space, file-size limit, O_DIRECT really in effect.
#pragma once

#include "kvbe/base/result.h"
#include "kvbe/probes/probe.h"

#include <cstdint>
#include <functional>
#include <string>

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
    // The scratch file never had a name (O_TMPFILE); otherwise it was unlinked right after open.
    bool anonymous() const { return m_anonymous; }
    // "4 GiB scratch file in /work/x (ext4, O_TMPFILE, O_DIRECT, logical block 512 B)"
    std::string describe() const;

    // Writes the whole scratch file with the non-zero pattern, then fdatasync. Unwritten extents
    // (fallocate, sparse files) read back as zeros at fake speed, so this is never skipped.
    // A failure carries the exit code it maps to (CannotRun: no space; Stopped; Failed).
    ExitStatus layOut(const std::function<void(double)>& progress);
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

// Opens (or creates) the target. A failure is Usage (not exactly one target), BadInput (a flag
// names something that cannot be probed) or CannotRun (the machine refuses: no space, tmpfs,
// not writable).
ExitResult<IoTarget> openTarget(const TargetRequest& request);

} // namespace kvbe::probes
