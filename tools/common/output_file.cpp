#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "vtp/terrain/file_replace.h"

namespace vtp::tools {
namespace {

// Writes to a stream already open; `name` for messages.
Status writeStream(std::span<const std::uint8_t> bytes, std::FILE* out, bool close, const std::string& name) {
  errno = 0;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
  ok = std::fflush(out) == 0 && ok;
  const int saved = errno;
  if (close) ok = std::fclose(out) == 0 && ok;
  if (!ok) return Error{ErrorCode::kIo, "cannot write " + name + ": " + std::strerror(saved != 0 ? saved : errno), {}};
  return {};
}

}  // namespace

Status writeOutputFile(std::span<const std::uint8_t> bytes, const std::string& path) {
  if (path == "-") return writeStream(bytes, stdout, false, "stdout");
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (type == std::filesystem::file_type::character || type == std::filesystem::file_type::block ||
      type == std::filesystem::file_type::fifo || type == std::filesystem::file_type::socket) {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr) return Error{ErrorCode::kIo, "cannot write " + path + ": " + std::strerror(errno), {}};
    return writeStream(bytes, out, true, path);
  }
  return terrain::replaceFile(bytes, path);
}

Status writeOutputFile(std::string_view text, const std::string& path) {
  return writeOutputFile(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), path);
}

}  // namespace vtp::tools
