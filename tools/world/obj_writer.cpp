#include "obj_writer.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <numeric>

#include "output_file.h"
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

// The output (OutputFile: a file replaced atomically) with text gathered in a buffer and written in blocks of about
// 1 MiB; the first failure is kept for close().
class ObjFile {
 public:
  explicit ObjFile(const std::filesystem::path& path) : m_out(OutputFile::open(path.string())) {
    if (!m_out) m_status = m_out.error();
  }

  std::string& buffer() { return m_buffer; }
  void maybeFlush() {
    if (m_buffer.size() >= (1u << 20)) flush();
  }

  Status close() {
    flush();
    if (m_status) m_status = m_out->close();
    return m_status;
  }

 private:
  void flush() {
    if (m_status) m_status = m_out->write(m_buffer);
    m_buffer.clear();
  }

  Result<OutputFile> m_out;
  Status m_status;
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
