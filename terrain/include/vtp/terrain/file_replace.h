#pragma once
/// \file
/// Replacing a file so that a crash leaves the old contents or the new, never a mix: world saves and the tools'
/// reports use it.
///
/// replaceFile writes a temp file `<name>.tmp.<pid>.<n>` beside the target (O_EXCL; the name cut to 200 bytes),
/// fsyncs it, renames it over the target and fsyncs the directory. While it writes it holds an exclusive flock(2) on
/// the temp file. A process that dies mid-write leaves its temp file behind; every later replaceFile of the same
/// target removes the temp files of that target that nobody holds locked and that are older than
/// kOrphanMinAgeSeconds (the age covers the moment between a writer's create and its lock).
///
/// Thread-safety: any number of threads and processes may replace the same or different files at once; the last
/// rename wins. Never prints or throws except std::bad_alloc.

#include <cstdint>
#include <filesystem>
#include <span>

#include "vtp/terrain/status.h"

namespace vtp::terrain {

/// A temp file left by a writer that died is removed by later writes once it is this old. [Unit: second]
inline constexpr int kOrphanMinAgeSeconds = 60;

/// Writes `bytes` to `path` atomically (see the file comment). A path that is a symbolic link writes the file it
/// names (the link stays a link); a file replaced keeps its permission bits, and its owner where the process may
/// set it. Errors: (kInvalidArgument) the target is a device, FIFO or socket (replacing would swap out the node
/// itself), before anything is written; (kIo, with errno's text) the temp file cannot be created, written or
/// synced, or the rename fails (a directory): the old file is then untouched and no temp file is left. When opening
/// or syncing the directory after the rename fails, the message says the new file is in place.
Status replaceFile(std::span<const std::uint8_t> bytes, const std::filesystem::path& path);

/// Removes the orphaned temp files of target `path` (as above: unlocked and at least `min_age_seconds` old) and
/// returns how many it removed. replaceFile calls it after each write; a server may also call it at start-up.
std::size_t removeOrphanedTempFiles(const std::filesystem::path& path, int min_age_seconds = kOrphanMinAgeSeconds);

}  // namespace vtp::terrain
