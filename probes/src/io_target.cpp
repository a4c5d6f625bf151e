// Opening drive-probe targets and writing scratch files.
#include "kvbe/probes/io_target.h"

#include "kvbe/probes/buffer_arena.h"
#include "kvbe/probes/data_pattern.h"
#include "kvbe/probes/errno_text.h"

#include "kvbe/probes/stop_signal.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace kvbe::probes {
namespace {

constexpr std::uint64_t kScratchHeadroom = 16 * kMiB;

std::string fsTypeName(long type) {
    switch (static_cast<unsigned long>(type)) {
    case EXT4_SUPER_MAGIC:
        return "ext4"; // ext2/3 share the magic
    case XFS_SUPER_MAGIC:
        return "xfs";
    case BTRFS_SUPER_MAGIC:
        return "btrfs";
    case TMPFS_MAGIC:
        return "tmpfs";
    case RAMFS_MAGIC:
        return "ramfs";
    case OVERLAYFS_SUPER_MAGIC:
        return "overlayfs";
    case NFS_SUPER_MAGIC:
        return "nfs";
    case 0x65735546:
        return "fuse";
    case 0x2fc12fc1:
        return "zfs";
    case 0xf2f52010:
        return "f2fs";
    default: {
        char hex[32];
        std::snprintf(hex, sizeof hex, "filesystem 0x%lx", static_cast<unsigned long>(type));
        return hex;
    }
    }
}

// Memory filesystems accept O_DIRECT on recent kernels (tmpfs since 6.6) but have no drive under
// them, so "O_DIRECT" there would measure memory and call it a drive.
bool inMemory(long type) {
    return static_cast<unsigned long>(type) == TMPFS_MAGIC ||
           static_cast<unsigned long>(type) == RAMFS_MAGIC;
}

std::uint32_t logicalBlockOf(dev_t dev) {
    const std::string base =
        "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
    for (const char* rel : {"/queue/logical_block_size", "/../queue/logical_block_size"}) {
        std::ifstream in(base + rel);
        std::uint32_t v = 0;
        if (in >> v && v >= 512 && (v & (v - 1)) == 0) return v;
    }
    return 4096; // unknown (network, device-mapper, btrfs anonymous dev): the safe multiple
}

std::string humanBytes(std::uint64_t b) {
    return formatBlock(b);
}

std::string directHint() {
    return "pick a directory on the drive, or pass --buffered to measure the page cache instead";
}

} // namespace

IoTarget::IoTarget(IoTarget&& o) noexcept {
    *this = std::move(o);
}

IoTarget& IoTarget::operator=(IoTarget&& o) noexcept {
    if (this != &o) {
        if (m_fd >= 0) ::close(m_fd);
        if (m_dirLock >= 0) ::close(m_dirLock);
        m_fd = std::exchange(o.m_fd, -1);
        m_dirLock = std::exchange(o.m_dirLock, -1);
        m_kind = o.m_kind;
        m_path = std::move(o.m_path);
        m_size = o.m_size;
        m_logicalBlock = o.m_logicalBlock;
        m_direct = o.m_direct;
        m_anonymous = o.m_anonymous;
        m_laidOut = o.m_laidOut;
        m_fsType = std::move(o.m_fsType);
    }
    return *this;
}

IoTarget::~IoTarget() {
    if (m_fd >= 0) ::close(m_fd);
    if (m_dirLock >= 0) ::close(m_dirLock); // releases the folder's lock
}

std::string IoTarget::describe() const {
    std::string what;
    switch (m_kind) {
    case TargetKind::Scratch:
        what = humanBytes(m_size) + " scratch file in " + m_path + " (" + m_fsType + ", " +
               (m_anonymous ? "O_TMPFILE" : "unlinked after open");
        break;
    case TargetKind::File:
        what = "file " + m_path + " (" + humanBytes(m_size) + ", " + m_fsType + ", read-only";
        break;
    case TargetKind::Device:
        what = "device " + m_path + " (" + humanBytes(m_size) + ", read-only";
        break;
    }
    what += m_direct ? ", O_DIRECT" : ", BUFFERED: page cache, not the drive";
    return what + ", logical block " + std::to_string(m_logicalBlock) + " B)";
}

ExitStatus IoTarget::layOut(const std::function<void(double)>& progress) {
    if (m_kind != TargetKind::Scratch) return Ok{};
    // Past RLIMIT_FSIZE the kernel sends SIGXFSZ, which kills by default; EFBIG is what we want.
    std::signal(SIGXFSZ, SIG_IGN);
    const std::size_t chunk = 8 * kMiB;
    BufferArena arena(1, chunk);
    if (!arena)
        return ProbeOutcome{ExitCode::Failed, "cannot allocate 8 MiB to write the scratch file"};
    std::byte* const data = arena.at(0);
    std::uint64_t offset = 0;
    int lastReport = -1;
    while (offset < m_size) {
        if (stopRequested()) return ProbeOutcome{ExitCode::Stopped, stopMessage()};
        const std::size_t len =
            static_cast<std::size_t>(std::min<std::uint64_t>(chunk, m_size - offset));
        fillPattern(data, len, offset);
        std::size_t done = 0;
        while (done < len) {
            const ssize_t n =
                ::pwrite(m_fd, data + done, len - done, static_cast<off_t>(offset + done));
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                if (stopRequested()) break;
                continue;
            }
            if (n <= 0) {
                const int err = n < 0 ? errno : ENOSPC;
                const ExitCode exit = err == ENOSPC || err == EFBIG || err == EDQUOT
                                          ? ExitCode::CannotRun
                                          : ExitCode::Failed;
                std::string why =
                    err == EFBIG ? " (the file-size limit, ulimit -f, is in the way)" : "";
                return ProbeOutcome{exit, "writing the scratch file in " + m_path + " failed at " +
                                              humanBytes(offset + done) + " of " +
                                              humanBytes(m_size) + ": " + errnoText(err) + why};
            }
            done += static_cast<std::size_t>(n);
        }
        offset += done;
        const int pct =
            static_cast<int>(100.0 * static_cast<double>(offset) / static_cast<double>(m_size));
        if (progress && pct / 5 != lastReport) {
            lastReport = pct / 5;
            progress(static_cast<double>(offset) / static_cast<double>(m_size));
        }
    }
    if (::fdatasync(m_fd) != 0) {
        const int err = errno;
        return ProbeOutcome{ExitCode::Failed, "fdatasync of the scratch file in " + m_path +
                                                  " failed: " + errnoText(err)};
    }
    m_laidOut = true;
    return Ok{};
}

// The friend of IoTarget that fills it in.
struct TargetOpener {
    static ExitResult<IoTarget> openScratch(const TargetRequest& r) {
        struct stat st {};
        if (::stat(r.dir.c_str(), &st) != 0) {
            const int err = errno;
            return ProbeOutcome{ExitCode::BadInput, "--dir " + r.dir + ": " + errnoText(err) +
                                                        "; expected an existing folder"};
        }
        if (!S_ISDIR(st.st_mode))
            return ProbeOutcome{ExitCode::BadInput,
                                "--dir " + r.dir +
                                    " is not a folder; expected a folder on the drive to probe"};
        if (::faccessat(AT_FDCWD, r.dir.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
            const int err = errno;
            return ProbeOutcome{ExitCode::CannotRun,
                                "--dir " + r.dir + " is not writable (" + errnoText(err) +
                                    "): the scratch file needs a folder you can write to"};
        }
        struct statfs fs {};
        if (::statfs(r.dir.c_str(), &fs) != 0) {
            const int err = errno;
            return ProbeOutcome{ExitCode::CannotRun,
                                "--dir " + r.dir +
                                    ": cannot read its filesystem: " + errnoText(err)};
        }
        IoTarget t;
        t.m_kind = TargetKind::Scratch;
        t.m_path = r.dir;
        // Two probes with scratch files in one folder would measure each other (and need twice
        // the space): the folder itself is locked, so no lock file is ever left behind, and the
        // kernel drops the lock when the process ends, however it ends.
        t.m_dirLock = ::open(r.dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (t.m_dirLock >= 0 && ::flock(t.m_dirLock, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            if (err == EWOULDBLOCK)
                return ProbeOutcome{
                    ExitCode::CannotRun,
                    "another kvbe probe is measuring in " + r.dir +
                        " right now; two runs on one folder would measure each other, so "
                        "wait for it to finish or pick another --dir"};
        }
        t.m_fsType = fsTypeName(fs.f_type);
        t.m_direct = r.direct;
        t.m_logicalBlock = logicalBlockOf(st.st_dev);
        if (r.direct && inMemory(fs.f_type))
            return ProbeOutcome{ExitCode::CannotRun,
                                "O_DIRECT is not supported on " + t.m_fsType + " (" + r.dir +
                                    " is in memory, not on a drive): " + directHint()};
        // Whole 4 KiB pages: every block size the probe accepts then fits an integral number of
        // times.
        t.m_size = r.scratchBytes / 4096 * 4096;
        struct rlimit limit {};
        if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
            limit.rlim_cur < t.m_size)
            return ProbeOutcome{ExitCode::CannotRun,
                                "too little space: --file-size " + humanBytes(t.m_size) +
                                    " is above this process's file-size limit (ulimit -f) of " +
                                    humanBytes(static_cast<std::uint64_t>(limit.rlim_cur))};
        struct statvfs vfs {};
        if (::statvfs(r.dir.c_str(), &vfs) == 0) {
            const std::uint64_t avail = static_cast<std::uint64_t>(vfs.f_bavail) * vfs.f_frsize;
            if (avail < t.m_size + kScratchHeadroom)
                return ProbeOutcome{
                    ExitCode::CannotRun,
                    "too little space in " + r.dir + ": --file-size " + humanBytes(t.m_size) +
                        " needs that much plus 16 MiB headroom, and " + humanBytes(avail) +
                        " is free; pass a smaller --file-size or another --dir"};
        }

        const int directFlag = r.direct ? O_DIRECT : 0;
        int fd = -1;
        if (r.allowTmpfile) {
            fd = ::open(r.dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC | directFlag, 0600);
            t.m_anonymous = fd >= 0;
        }
        int openErr = 0;
        if (fd < 0) {
            // No O_TMPFILE here (or not wanted): a unique name, unlinked as soon as it is open. The
            // signal handler knows the name for the instant in between.
            static std::atomic<int> counter{0};
            const std::string name = r.dir + (r.dir.ends_with('/') ? "" : "/") + ".kvbe-probe-" +
                                     std::to_string(::getpid()) + "-" + std::to_string(counter++);
            registerScratchPath(name.c_str());
            fd = ::open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | directFlag, 0600);
            openErr = errno;
            if (fd >= 0) ::unlink(name.c_str());
            registerScratchPath(nullptr);
            if (fd < 0 && r.direct && openErr == EINVAL) {
                // Did O_DIRECT alone make the open fail?
                registerScratchPath(name.c_str());
                const int probe = ::open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
                if (probe >= 0) {
                    ::unlink(name.c_str());
                    ::close(probe);
                }
                registerScratchPath(nullptr);
                if (probe >= 0)
                    return ProbeOutcome{ExitCode::CannotRun, "O_DIRECT is not supported by " +
                                                                 t.m_fsType + " at " + r.dir +
                                                                 ": " + directHint()};
            }
        }
        if (fd < 0)
            return ProbeOutcome{ExitCode::CannotRun, "cannot create a scratch file in " + r.dir +
                                                         ": " +
                                                         errnoText(openErr ? openErr : errno)};
        t.m_fd = fd;
        if (r.direct && (::fcntl(fd, F_GETFL) & O_DIRECT) == 0)
            return ProbeOutcome{ExitCode::CannotRun, "O_DIRECT did not stay in effect on " +
                                                         t.m_fsType + " at " + r.dir + ": " +
                                                         directHint()};
        return t;
    }

    static ExitResult<IoTarget> openExisting(const std::string& path, bool isDevice, bool direct) {
        const std::string flag = isDevice ? "--device" : "--file";
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            const int err = errno;
            return ProbeOutcome{ExitCode::BadInput, flag + " " + path + ": " + errnoText(err) +
                                                        "; expected an existing " +
                                                        (isDevice ? "block device" : "file")};
        }
        if (S_ISDIR(st.st_mode))
            return ProbeOutcome{ExitCode::BadInput,
                                flag + " " + path +
                                    " is a folder: name a file to read, or pass --dir " + path +
                                    " to probe with a scratch file there"};
        if (!isDevice && (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)))
            return ProbeOutcome{ExitCode::BadInput,
                                "--file " + path + " is a " +
                                    (S_ISBLK(st.st_mode) ? "block" : "character") +
                                    " device: devices are read only when named with --device " +
                                    path + " (read-only)"};
        if (isDevice && !S_ISBLK(st.st_mode))
            return ProbeOutcome{
                ExitCode::BadInput,
                "--device " + path +
                    " is not a block device; expected a drive such as /dev/nvme0n1"};
        if (!isDevice && !S_ISREG(st.st_mode))
            return ProbeOutcome{ExitCode::BadInput,
                                "--file " + path +
                                    " is not a regular file; expected a file to read"};

        IoTarget t;
        t.m_kind = isDevice ? TargetKind::Device : TargetKind::File;
        t.m_path = path;
        t.m_direct = direct;
        if (!isDevice) {
            struct statfs fs {};
            if (::statfs(path.c_str(), &fs) == 0) {
                t.m_fsType = fsTypeName(fs.f_type);
                if (direct && inMemory(fs.f_type))
                    return ProbeOutcome{ExitCode::CannotRun,
                                        "O_DIRECT is not supported on " + t.m_fsType + " (" + path +
                                            " is in memory, not on a drive): " + directHint()};
            }
            t.m_logicalBlock = logicalBlockOf(st.st_dev);
        } else {
            t.m_fsType = "block device";
        }
        // Read-only, always: O_RDONLY is the guarantee that --file and --device are never written.
        // O_NOATIME keeps even the access time still where we own the file.
        const int flags = O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0);
        int fd = ::open(path.c_str(), flags | O_NOATIME);
        if (fd < 0 && errno == EPERM) fd = ::open(path.c_str(), flags);
        if (fd < 0) {
            const int err = errno;
            if (err == EINVAL && direct)
                return ProbeOutcome{ExitCode::CannotRun, "O_DIRECT is not supported for " + path +
                                                             " (" + t.m_fsType +
                                                             "): " + directHint()};
            return ProbeOutcome{
                ExitCode::CannotRun,
                "cannot open " + path + " read-only: " + errnoText(err) +
                    (isDevice && (err == EACCES || err == EPERM)
                         ? "; reading a drive needs root or the disk group, and a container "
                           "must be allowed the device"
                         : "")};
        }
        t.m_fd = fd;
        if (isDevice) {
            std::uint64_t bytes = 0;
            int sector = 0;
            if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0 || ::ioctl(fd, BLKSSZGET, &sector) != 0) {
                const int err = errno;
                return ProbeOutcome{ExitCode::CannotRun,
                                    "cannot read the size of " + path + ": " + errnoText(err)};
            }
            t.m_size = bytes;
            t.m_logicalBlock = static_cast<std::uint32_t>(sector);
        } else {
            t.m_size = static_cast<std::uint64_t>(st.st_size);
        }
        if (t.m_size == 0)
            return ProbeOutcome{ExitCode::BadInput,
                                flag + " " + path + " is empty; expected something to read"};
        return t;
    }
};

ExitResult<IoTarget> openTarget(const TargetRequest& r) {
    const int given = !r.dir.empty() + !r.file.empty() + !r.device.empty();
    if (given != 1)
        return ProbeOutcome{ExitCode::Usage, "name exactly one of --dir, --file or --device"};
    if (!r.dir.empty()) return TargetOpener::openScratch(r);
    if (!r.file.empty()) return TargetOpener::openExisting(r.file, false, r.direct);
    return TargetOpener::openExisting(r.device, true, r.direct);
}

} // namespace kvbe::probes
