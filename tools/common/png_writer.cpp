// PNG layout: the 8-byte signature, then chunks of (big-endian length, 4-byte type, data, CRC-32 of type + data):
// IHDR (size, bit depth 8, colour type 2 = RGB), IDAT (the zlib stream of the filtered rows), IEND.
#include "png_writer.h"

#include <zlib.h>

#include <array>
#include <cstdlib>

#include "output_file.h"

namespace vtp::tools {
namespace {

void putU32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  out.push_back(std::uint8_t(v >> 24));
  out.push_back(std::uint8_t(v >> 16));
  out.push_back(std::uint8_t(v >> 8));
  out.push_back(std::uint8_t(v));
}

void putChunk(std::vector<std::uint8_t>& out, const char type[4], const std::uint8_t* data, std::size_t size) {
  putU32(out, std::uint32_t(size));
  const std::size_t type_at = out.size();
  out.insert(out.end(), type, type + 4);
  if (size > 0) out.insert(out.end(), data, data + size);
  const uLong crc = crc32(0L, out.data() + type_at, uInt(4 + size));
  putU32(out, std::uint32_t(crc));
}

// The Paeth predictor of PNG filter type 4.
int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  if (pa <= pb && pa <= pc) return a;
  return pb <= pc ? b : c;
}

// Appends the filter byte and filtered bytes of one row, trying all five filters and keeping the one whose output,
// read as signed bytes, has the smallest sum of magnitudes (the spec's recommended heuristic for RGB images).
void filterRow(const std::uint8_t* row, const std::uint8_t* prev, std::size_t n, std::vector<std::uint8_t>& out) {
  constexpr std::size_t kBpp = 3;
  std::array<std::vector<std::uint8_t>, 5> candidates;
  std::size_t best = 0;
  std::uint64_t best_cost = ~std::uint64_t{0};
  for (std::size_t f = 0; f < 5; ++f) {
    std::vector<std::uint8_t>& c = candidates[f];
    c.resize(n);
    std::uint64_t cost = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int a = i >= kBpp ? row[i - kBpp] : 0;
      const int b = prev ? prev[i] : 0;
      const int cc = (prev && i >= kBpp) ? prev[i - kBpp] : 0;
      int predicted = 0;
      switch (f) {
        case 1: predicted = a; break;
        case 2: predicted = b; break;
        case 3: predicted = (a + b) / 2; break;
        case 4: predicted = paeth(a, b, cc); break;
        default: break;
      }
      c[i] = std::uint8_t(row[i] - predicted);
      cost += std::uint64_t(std::abs(int(std::int8_t(c[i]))));
    }
    if (cost < best_cost) {
      best_cost = cost;
      best = f;
    }
  }
  out.push_back(std::uint8_t(best));
  out.insert(out.end(), candidates[best].begin(), candidates[best].end());
}

}  // namespace

Result<std::vector<std::uint8_t>> encodePng(const RgbImage& image) {
  constexpr int kMaxSide = 1 << 24;
  if (image.width < 1 || image.height < 1 || image.width > kMaxSide || image.height > kMaxSide) {
    return Error{ErrorCode::kInvalidArgument, "PNG size out of range", {}};
  }
  const std::size_t stride = std::size_t(image.width) * 3;
  if (image.rgb.size() != stride * std::size_t(image.height)) {
    return Error{ErrorCode::kInvalidArgument, "PNG pixel buffer does not match its size", {}};
  }
  std::vector<std::uint8_t> raw;
  raw.reserve((stride + 1) * std::size_t(image.height));
  for (int y = 0; y < image.height; ++y) {
    const std::uint8_t* row = image.rgb.data() + stride * std::size_t(y);
    filterRow(row, y > 0 ? row - stride : nullptr, stride, raw);
  }
  uLongf packed_size = compressBound(uLong(raw.size()));
  std::vector<std::uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), uLong(raw.size()), Z_BEST_COMPRESSION) != Z_OK) {
    return Error{ErrorCode::kIo, "zlib could not compress the PNG data", {}};
  }

  std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<std::uint8_t> ihdr;
  putU32(ihdr, std::uint32_t(image.width));
  putU32(ihdr, std::uint32_t(image.height));
  ihdr.insert(ihdr.end(), {8, 2, 0, 0, 0});  // bit depth 8, RGB, deflate, adaptive filtering, no interlace
  putChunk(png, "IHDR", ihdr.data(), ihdr.size());
  putChunk(png, "IDAT", packed.data(), packed_size);
  putChunk(png, "IEND", nullptr, 0);
  return png;
}

Status writePng(const RgbImage& image, const std::filesystem::path& path) {
  Result<std::vector<std::uint8_t>> png = encodePng(image);
  if (!png) return png.error();
  return writeOutputFile(*png, path.string());
}

}  // namespace vtp::tools
