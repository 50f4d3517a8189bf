#pragma once
// Where the tools write their outputs (--json, --csv, --html, --out of export-obj, PNG images): stdout for "-", a
// device, FIFO or /dev/stdout straight through (appended), and a file replaced atomically (terrain::FileReplacement),
// so a crash or a full disk never leaves half an output where the old one was.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "vtp/terrain/file_replace.h"
#include "vtp/terrain/status.h"

namespace vtp::tools {

/// One output written in pieces: open(), write() any number of times, close(). Every step checked: kIo with the
/// reason (a full disk, stdout on /dev/full, a directory). Dropped without a successful close(), a file output leaves
/// the old file as it was.
class OutputFile {
 public:
  /// "-" is stdout; a stream (terrain::namesStream: /dev/null, /dev/full, a FIFO, /dev/stdout even when redirected
  /// to a file) is written straight through; anything else is replaced atomically (a directory is refused).
  static Result<OutputFile> open(const std::string& path);
  OutputFile(OutputFile&& other) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  Status write(std::span<const std::uint8_t> bytes);
  Status write(std::string_view text);
  Status close();

 private:
  OutputFile() = default;
  std::string m_name;
  std::FILE* m_stream = nullptr;  // stdout or a device (closed unless stdout)
  std::optional<terrain::FileReplacement> m_file;
};

/// Writes `bytes` to `path` as one OutputFile.
Status writeOutputFile(std::span<const std::uint8_t> bytes, const std::string& path);
/// The same for text.
Status writeOutputFile(std::string_view text, const std::string& path);

}  // namespace vtp::tools
