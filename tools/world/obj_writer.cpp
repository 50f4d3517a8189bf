#include "obj_writer.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>

#include "vtp/mesher/surface_mesher.h"

namespace vtp::tools::world {
namespace {

// The mesher's grid is 2^kFractionBits units per voxel, and 1/2^k = 5^k / 10^k: a fraction of the grid times 5^k is
// a k-digit decimal (1/1024 = 0.0009765625).
constexpr int kFractionBits = std::countr_zero(unsigned(mesher::kPositionScale));
static_assert(mesher::kPositionScale == 1 << kFractionBits);
constexpr std::uint64_t kFivePower = [] {
  std::uint64_t p = 1;
  for (int i = 0; i < kFractionBits; ++i) p *= 5;
  return p;
}();

// Appends `fixed` / kPositionScale in exact decimal.
void appendExact(std::string& out, std::int64_t fixed) {
  if (fixed < 0) out.push_back('-');
  const std::uint64_t mag = fixed < 0 ? 0 - std::uint64_t(fixed) : std::uint64_t(fixed);
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof buf, mag >> kFractionBits).ptr;
  out.append(buf, end);
  std::uint64_t frac = (mag & std::uint64_t(mesher::kPositionScale - 1)) * kFivePower;
  if (frac == 0) return;
  char digits[kFractionBits];
  for (int i = kFractionBits - 1; i >= 0; --i, frac /= 10) digits[i] = char('0' + frac % 10);
  int n = kFractionBits;
  while (digits[n - 1] == '0') --n;
  out.push_back('.');
  out.append(digits, std::size_t(n));
}

void appendIndex(std::string& out, std::uint64_t one_based) {
  char buf[24];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, one_based).ptr);
}

class ObjFile {
 public:
  explicit ObjFile(const std::filesystem::path& path) : m_path(path), m_file(std::fopen(path.c_str(), "wb")) {
    if (!m_file) m_errno = errno;
  }
  ~ObjFile() {
    if (m_file) std::fclose(m_file);
  }
  ObjFile(const ObjFile&) = delete;
  ObjFile& operator=(const ObjFile&) = delete;

  // Text goes into buffer() and is written in blocks of about 1 MiB; the first failure is kept for close().
  std::string& buffer() { return m_buffer; }
  void maybeFlush() {
    if (m_buffer.size() >= (1u << 20)) flush();
  }

  Status close() {
    flush();
    if (m_file) {
      if (std::fclose(m_file) != 0 && m_errno == 0) m_errno = errno;
      m_file = nullptr;
    }
    if (m_errno == 0) return {};
    // Remove the partial file, but never a device or FIFO the user named (OUT may be /dev/full).
    std::error_code ec;
    if (m_opened && std::filesystem::is_regular_file(m_path, ec)) std::filesystem::remove(m_path, ec);
    return Error{ErrorCode::kIo, "cannot write " + m_path.string() + ": " + std::strerror(m_errno), {}};
  }

 private:
  void flush() {
    if (m_file && m_errno == 0 && std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) != m_buffer.size()) {
      m_errno = errno ? errno : EIO;
    }
    m_buffer.clear();
  }

  std::filesystem::path m_path;
  std::FILE* m_file;
  bool m_opened = m_file != nullptr;
  int m_errno = 0;
  std::string m_buffer;
};

}  // namespace

Status writeObj(const CollisionMesh& mesh, const terrain::MaterialTable& materials, const std::string& header,
                const std::filesystem::path& path) {
  ObjFile file(path);
  std::string& out = file.buffer();
  std::size_t start = 0;
  while (start < header.size()) {
    const std::size_t end = std::min(header.find('\n', start), header.size());
    out += "# ";
    out.append(header, start, end - start);
    out += '\n';
    start = end + 1;
  }
  for (const std::array<std::int64_t, 3>& p : mesh.positions) {
    out += "v ";
    appendExact(out, p[0]);
    out += ' ';
    appendExact(out, p[1]);
    out += ' ';
    appendExact(out, p[2]);
    out += '\n';
    file.maybeFlush();
  }
  // One group per material, in id order; within it, triangles keep the mesh's (chunk) order.
  std::vector<std::uint32_t> order(mesh.triangles.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return mesh.materials[a] < mesh.materials[b]; });
  int group = -1;
  for (const std::uint32_t t : order) {
    if (mesh.materials[t] != group) {
      group = mesh.materials[t];
      out += "g ";
      out += materials.contains(std::uint8_t(group)) ? materials[std::uint8_t(group)].name
                                                      : "m" + std::to_string(group);
      out += '\n';
    }
    out += 'f';
    for (const std::uint32_t i : mesh.triangles[t]) {
      out += ' ';
      appendIndex(out, std::uint64_t(i) + 1);
    }
    out += '\n';
    file.maybeFlush();
  }
  return file.close();
}

}  // namespace vtp::tools::world
