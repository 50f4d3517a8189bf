// Replacing a file atomically, and removing the temp files of writers that died (file_replace.h).
#include "vtp/terrain/file_replace.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

namespace vtp::terrain {
namespace {

// The temp files of target `name` are "<prefix><pid>.<n>".
std::string tempPrefix(const std::filesystem::path& path) {
  std::string name = path.filename().string();
  if (name.size() > 200) name.resize(200);  // a target name near the 255-byte limit still leaves a legal temp name
  return name + ".tmp.";
}

bool isTempSuffix(std::string_view rest) {
  const std::size_t dot = rest.find('.');
  auto digits = [](std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
  };
  return dot != std::string_view::npos && digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

std::filesystem::path directoryOf(const std::filesystem::path& path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

// An error naming what failed, the target and errno's text (read first, before anything can change it).
Error ioError(const char* what, const std::filesystem::path& target) {
  const int err = errno;
  return Error{ErrorCode::kIo, std::string(what) + " while saving " + target.string() + ": " + std::strerror(err), {}};
}

// The file `link_or_path` names, its symbolic links followed by hand (a dangling one to the file it would create).
// As the kernel's fs.protected_symlinks does, a link in a sticky world-writable directory (/tmp) is followed only
// when it is ours or the directory owner's: another user's link there is the classic way to make a privileged save
// write elsewhere. `through_proc` is set when a link leads into procfs (/dev/stdout -> /proc/self/fd/1): the name
// of an open descriptor, not a file that can be replaced.
Result<std::filesystem::path> followLinks(const std::filesystem::path& link_or_path, bool& through_proc) {
  through_proc = false;
  std::filesystem::path path = link_or_path;
  for (int depth = 0;; ++depth) {
    struct stat link {};
    if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return path;
    const auto refuse = [&](const std::string& why) {
      return Error{ErrorCode::kIo, "cannot resolve the link " + link_or_path.string() + ": " + why, {}};
    };
    if (depth == 40) return refuse("too many levels of links");
    if (struct stat d {}; ::stat(directoryOf(path).c_str(), &d) == 0 && (d.st_mode & S_ISVTX) != 0 &&
                          (d.st_mode & S_IWOTH) != 0 && link.st_uid != ::geteuid() && link.st_uid != d.st_uid) {
      return refuse(path.string() + " is another user's link in a sticky world-writable directory");
    }
    if (struct statfs fs {}; ::statfs(directoryOf(path).c_str(), &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC) {
      through_proc = true;
    }
    std::error_code ec;
    const std::filesystem::path target = std::filesystem::read_symlink(path, ec);
    if (ec) return refuse(ec.message());
    path = target.is_absolute() ? target : directoryOf(path) / target;
  }
}

// Whether the kernel resolves `path` to a device, FIFO or socket.
bool isDeviceLike(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 &&
         (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

}  // namespace

bool namesStream(const std::filesystem::path& path) {
  if (isDeviceLike(path)) return true;
  bool through_proc = false;
  return followLinks(path, through_proc).ok() && through_proc;
}

Result<FileReplacement> FileReplacement::open(const std::filesystem::path& link_or_path) {
  // A symbolic link writes the file it names, so the link stays a link (the rename would replace the link); a
  // dangling one too (the first save through `current.vtw -> worlds/v2.vtw` creates v2.vtw). Renaming over a
  // device, FIFO or socket would replace the node itself (for root, /dev/null too), and over what an open
  // descriptor names (/dev/stdout redirected to a file) would swap the file out from under the descriptor: both
  // refused (namesStream) before anything is written.
  bool through_proc = false;
  Result<std::filesystem::path> followed = followLinks(link_or_path, through_proc);
  if (through_proc || isDeviceLike(link_or_path)) {
    return Error{ErrorCode::kInvalidArgument,
                 link_or_path.string() + " is a device, FIFO, socket or open descriptor; cannot replace it", {}};
  }
  if (!followed) return followed.error();
  const std::filesystem::path path = std::move(followed).value();
  const std::filesystem::path dir = directoryOf(path);
  struct stat old {};
  const bool exists = ::stat(path.c_str(), &old) == 0;
  // The rest of what the rename would fail on, refused before anything is written.
  if (exists && !S_ISREG(old.st_mode)) {
    return Error{ErrorCode::kIo, "cannot replace " + path.string() + ": not a regular file", {}};
  }
  // In a sticky directory only the file's owner, the directory's owner or root may rename over a file; and in a
  // world-writable one (/tmp) a file owned by neither us nor the directory's owner is refused even to root (the
  // kernel's fs.protected_regular): planted by another user, it would pass its owner and mode on to what we write.
  if (struct stat d {}; exists && ::stat(dir.c_str(), &d) == 0 && (d.st_mode & S_ISVTX) != 0) {
    const uid_t me = ::geteuid();
    const bool may_rename = me == 0 || old.st_uid == me || d.st_uid == me;
    const bool planted = (d.st_mode & S_IWOTH) != 0 && old.st_uid != me && old.st_uid != d.st_uid;
    if (!may_rename || planted) {
      return Error{ErrorCode::kIo, "cannot replace " + path.string() + ": another user's file in a sticky directory",
                   {}};
    }
  }
  static std::atomic<std::uint64_t> counter{0};
  FileReplacement r;
  r.m_target = path;
  // A file replaced keeps its permission bits, owner and group (commit sets them); a new one gets 0666 less the
  // umask, as open() gives it.
  if (exists) {
    r.m_kept = {true, std::uint32_t(old.st_mode & 07777), std::uint32_t(old.st_uid), std::uint32_t(old.st_gid)};
  }
  // An orphan from a crashed process with the same pid (common in containers) may hold a name: take the next one.
  // Private until commit: a replaced 0600 world is never readable by others, not even while written, and an orphan
  // of a read-only target stays writable by its owner, so removeOrphanedTempFiles can lock it.
  const std::string prefix = tempPrefix(path);
  // Locked until the rename: removeOrphanedTempFiles leaves a locked temp file alone. A name whose lock a sweep
  // holds (its clock ahead of the file system's) is left to that sweep; a file system without flock refuses the
  // sweep's lock too, so nothing is removed there.
  for (int attempt = 0; attempt < 4096 && r.m_fd < 0; ++attempt) {
    std::filesystem::path next =
        dir / (prefix + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1)));
    const int fd = ::open(next.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, exists ? 0600 : 0666);
    if (fd < 0 && errno != EEXIST) break;
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      ::close(fd);
      continue;
    }
    r.m_fd = fd;
    r.m_temp = std::move(next);
  }
  if (r.m_fd < 0) return ioError("cannot create temp file", path);
  return r;
}

FileReplacement::FileReplacement(FileReplacement&& other) noexcept { swap(other); }

FileReplacement& FileReplacement::operator=(FileReplacement&& other) noexcept {
  FileReplacement(std::move(other)).swap(*this);  // this one's old temp file goes with the temporary
  return *this;
}

void FileReplacement::swap(FileReplacement& other) noexcept {
  std::swap(m_target, other.m_target);
  std::swap(m_temp, other.m_temp);
  std::swap(m_fd, other.m_fd);
  std::swap(m_failed, other.m_failed);
  std::swap(m_kept, other.m_kept);
}

FileReplacement::~FileReplacement() {
  if (!m_temp.empty()) ::unlink(m_temp.c_str());  // before the close drops the lock
  if (m_fd >= 0) ::close(m_fd);
}

Status FileReplacement::write(std::span<const std::uint8_t> bytes) {
  if (m_fd < 0 || m_failed) {
    return Error{ErrorCode::kIo, "the replacement of " + m_target.string() + " is over (committed or failed)", {}};
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(m_fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      m_failed = true;
      return ioError("write failed", m_target);
    }
    done += std::size_t(n);
  }
  return {};
}

Status FileReplacement::commit() {
  if (m_fd < 0 || m_failed) {
    return Error{ErrorCode::kIo, "the replacement of " + m_target.string() + " is over (committed or failed)", {}};
  }
  m_failed = true;  // whatever happens below, once
  if (m_kept.replaces) {
    // Owner first: fchown clears the set-user-ID and set-group-ID bits, which the mode then restores.
    (void)::fchown(m_fd, uid_t(m_kept.uid), gid_t(m_kept.gid));  // fails unless privileged or unchanged
    if (::fchmod(m_fd, mode_t(m_kept.mode)) != 0) return ioError("cannot copy the old file's permissions", m_target);
  }
  if (::fsync(m_fd) != 0) return ioError("fsync failed", m_target);
  if (::rename(m_temp.c_str(), m_target.c_str()) != 0) return ioError("rename failed", m_target);
  m_temp.clear();
  // The data is on disk (fsync above); a close error cannot lose it.
  ::close(m_fd);
  m_fd = -1;
  // The rename is durable only once the directory entry is. Past the rename the new file is in place: an error
  // here says so.
  const std::filesystem::path dir = directoryOf(m_target);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return ioError("the new file is in place but a crash may undo it: cannot open the directory", m_target);
  const int rc = ::fsync(dfd);
  ::close(dfd);
  if (rc != 0) return ioError("the new file is in place but a crash may undo it: directory fsync failed", m_target);
  (void)removeOrphanedTempFiles(m_target);
  return {};
}

Status replaceFile(std::span<const std::uint8_t> bytes, const std::filesystem::path& path) {
  Result<FileReplacement> file = FileReplacement::open(path);
  if (!file) return file.error();
  if (Status s = file->write(bytes); !s) return s;
  return file->commit();
}

std::size_t removeOrphanedTempFiles(const std::filesystem::path& path, int min_age_seconds) {
  const std::string prefix = tempPrefix(path);
  const std::filesystem::path dir = directoryOf(path);
  const std::time_t now = std::time(nullptr);
  std::size_t removed = 0;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (!isTempSuffix(std::string_view(name).substr(prefix.size()))) continue;
    if (struct stat named {}; ::lstat(it->path().c_str(), &named) != 0 || !S_ISREG(named.st_mode)) continue;
    // Read-write where we may: NFS emulates flock with POSIX locks, whose exclusive form needs a descriptor open for
    // writing (a local flock does not).
    int fd = ::open(it->path().c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0 && errno == EACCES) fd = ::open(it->path().c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {}, named {};
    // Old enough that its writer had time to lock it, and not locked: nobody is writing it. The name must still be
    // that file: another sweeper may have removed it meanwhile and a new writer taken the name.
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime >= min_age_seconds &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0 && ::lstat(it->path().c_str(), &named) == 0 && named.st_ino == st.st_ino &&
        named.st_dev == st.st_dev && ::unlink(it->path().c_str()) == 0) {
      ++removed;
    }
    ::close(fd);
  }
  return removed;
}

}  // namespace vtp::terrain
