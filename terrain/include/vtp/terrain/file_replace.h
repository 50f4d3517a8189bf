#pragma once
/// \file
/// Replacing a file so that a crash leaves the old contents or the new, never a mix: world saves and the tools'
/// outputs use it.
///
/// The new contents go to a temp file `<name>.tmp.<pid>.<n>` beside the target (O_EXCL; the name cut to 200 bytes),
/// which is fsynced, renamed over the target, and the directory fsynced. While it is written its writer holds an
/// exclusive flock(2) on it. A process that dies mid-write leaves its temp file behind; every later replacement of the
/// same target removes the temp files of that target that nobody holds locked and that are older than
/// kOrphanMinAgeSeconds (the age covers the moment between a writer's create and its lock).
///
/// Thread-safety: any number of threads and processes may replace the same or different files at once; the last
/// rename wins. One FileReplacement is used by one thread at a time. Never prints or throws except std::bad_alloc.
/// Every commit lists the target's directory once to find orphans. On NFS, locks are POSIX locks shared by the
/// hosts, except on mounts with local_lock=flock or nolock, where a writer idle for a minute on one host can lose its
/// temp file to another host's sweep (its commit then fails and the old file stays).

#include <cstdint>
#include <filesystem>
#include <span>

#include "vtp/terrain/status.h"

namespace vtp::terrain {

/// A temp file left by a writer that died is removed by later writes once it is this old. [Unit: second]
inline constexpr int kOrphanMinAgeSeconds = 60;

/// A replacement of one file written in pieces: open(), write() any number of times, commit(). Destroyed without a
/// successful commit, it removes its temp file and the target is untouched.
class FileReplacement {
 public:
  /// Starts replacing `path`: creates and locks the temp file (0600 when a file is replaced, which commit gives the
  /// old file's mode, owner and group, set-ID bits included where the process may; a new file gets 0666 less the
  /// umask). A path that is a symbolic link replaces the file it names, a dangling link's target included (the link
  /// stays a link); as the kernel's fs.protected_symlinks, another user's link in a sticky world-writable directory
  /// is not followed. Errors, before anything is written: (kInvalidArgument) namesStream(path) (replacing would swap
  /// out a device node, or the file under an open descriptor); (kIo) a directory or other non-regular file, another
  /// user's file in a sticky directory (the rename would fail; in a world-writable one root is refused too, as the
  /// kernel's fs.protected_regular), a link that cannot or may not be followed, a temp file that cannot be created
  /// (with errno's text).
  static Result<FileReplacement> open(const std::filesystem::path& path);
  FileReplacement(FileReplacement&& other) noexcept;
  FileReplacement& operator=(FileReplacement&& other) noexcept;
  FileReplacement(const FileReplacement&) = delete;
  FileReplacement& operator=(const FileReplacement&) = delete;
  ~FileReplacement();

  /// Appends `bytes`. kIo when the write fails (a full disk); the replacement can then only be dropped.
  Status write(std::span<const std::uint8_t> bytes);
  /// Gives a replacing file the old one's owner, group and mode, fsyncs, renames over the target and fsyncs the
  /// directory; then removes orphaned temp files of the target. Once only. kIo on failure: before the rename the old
  /// file is untouched (the temp file goes when the FileReplacement is dropped); after it, the message says the new
  /// file is in place (opening or syncing the directory failed).
  Status commit();

 private:
  FileReplacement() = default;
  std::filesystem::path m_target, m_temp;
  int m_fd = -1;
  bool m_failed = false;
  struct Kept {
    bool replaces = false;  // a file is replaced: commit gives the temp file its mode, owner and group
    std::uint32_t mode = 0, uid = 0, gid = 0;
  } m_kept;
  void swap(FileReplacement& other) noexcept;
};

/// Whether `path` names a stream rather than a file that can be replaced: a device, FIFO or socket, or an open
/// descriptor's name in procfs (/dev/stdout, /dev/fd/3, /proc/self/fd/1, through links). Such a path is written
/// straight through (the tools do) and FileReplacement::open refuses it.
bool namesStream(const std::filesystem::path& path);

/// Writes `bytes` to `path` atomically: FileReplacement's open, write and commit, with their errors.
Status replaceFile(std::span<const std::uint8_t> bytes, const std::filesystem::path& path);

/// Removes the orphaned temp files of target `path` (as above: unlocked and at least `min_age_seconds` old) and
/// returns how many it removed. Every commit calls it; a server may also call it at start-up.
std::size_t removeOrphanedTempFiles(const std::filesystem::path& path, int min_age_seconds = kOrphanMinAgeSeconds);

}  // namespace vtp::terrain
