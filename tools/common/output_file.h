#pragma once
// Where the tools write their reports and images (--json, --csv, --html, --png ...): stdout for "-", a device or
// FIFO straight through, and a file replaced atomically, so a crash or a full disk never leaves half a report where
// the old one was.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// Writes `bytes` to `path`: stdout when path is "-"; a path that exists and is not a regular file (/dev/null,
/// /dev/full, a FIFO) written straight through; anything else through terrain::replaceFile (temp file, fsync,
/// rename). Every step checked: kIo with the reason (a full disk, stdout on /dev/full, a directory).
Status writeOutputFile(std::span<const std::uint8_t> bytes, const std::string& path);
/// The same for text.
Status writeOutputFile(std::string_view text, const std::string& path);

}  // namespace vtp::tools
