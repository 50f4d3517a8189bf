#include "output_file.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace vtp::tools {
namespace {

Error writeError(const std::string& name, int err) {
  return Error{ErrorCode::kIo, "cannot write " + name + ": " + std::strerror(err != 0 ? err : EIO), {}};
}

std::span<const std::uint8_t> bytesOf(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

}  // namespace

Result<OutputFile> OutputFile::open(const std::string& path) {
  OutputFile out;
  out.m_name = path == "-" ? "stdout" : path;
  if (path == "-") {
    out.m_stream = stdout;
    return out;
  }
  if (terrain::namesStream(path)) {
    out.m_stream = std::fopen(path.c_str(), "ab");  // appending: /dev/stdout on a file keeps what came before
    if (out.m_stream == nullptr) return writeError(path, errno);
    return out;
  }
  Result<terrain::FileReplacement> file = terrain::FileReplacement::open(path);
  if (!file) return file.error();
  out.m_file.emplace(std::move(file.value()));
  return out;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : m_name(std::move(other.m_name)),
      m_stream(std::exchange(other.m_stream, nullptr)),
      m_file(std::move(other.m_file)) {
  other.m_file.reset();
}

OutputFile::~OutputFile() {
  if (m_stream != nullptr && m_stream != stdout) std::fclose(m_stream);
}

Status OutputFile::write(std::span<const std::uint8_t> bytes) {
  if (m_file) return m_file->write(bytes);
  if (m_stream == nullptr) return writeError(m_name, EBADF);
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), m_stream) != bytes.size()) return writeError(m_name, errno);
  return {};
}

Status OutputFile::write(std::string_view text) { return write(bytesOf(text)); }

Status OutputFile::close() {
  if (m_file) {
    Status s = m_file->commit();
    m_file.reset();
    return s;
  }
  if (m_stream == nullptr) return writeError(m_name, EBADF);
  errno = 0;
  bool ok = std::fflush(m_stream) == 0;
  int err = errno;
  if (m_stream != stdout) {
    ok = std::fclose(m_stream) == 0 && ok;
    if (err == 0) err = errno;
  }
  m_stream = nullptr;
  return ok ? Status{} : writeError(m_name, err);
}

Status writeOutputFile(std::span<const std::uint8_t> bytes, const std::string& path) {
  Result<OutputFile> out = OutputFile::open(path);
  if (!out) return out.error();
  if (Status s = out->write(bytes); !s) return s;
  return out->close();
}

Status writeOutputFile(std::string_view text, const std::string& path) { return writeOutputFile(bytesOf(text), path); }

}  // namespace vtp::tools
