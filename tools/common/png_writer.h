#pragma once
// A minimal PNG encoder (W3C "Portable Network Graphics Specification", 2nd edition): 8-bit RGB, no interlacing,
// one zlib stream in one IDAT chunk, the filter of each row chosen by the spec's minimum-sum-of-absolute-differences
// heuristic (section 12.8). Enough for the tools' pictures; nothing is read back.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "vtp/terrain/status.h"

namespace vtp::tools {

/// An 8-bit RGB image, rows top to bottom, 3 bytes per pixel.
struct RgbImage {
  int width = 0;                   ///< [Unit: pixel] 1..2^24
  int height = 0;                  ///< [Unit: pixel] 1..2^24
  std::vector<std::uint8_t> rgb;   ///< width * height * 3 bytes
};

/// The PNG file bytes for `image`. kInvalidArgument for a size out of range or an rgb buffer of the wrong length.
Result<std::vector<std::uint8_t>> encodePng(const RgbImage& image);

/// Encodes `image` and writes it to `path` (replacing it). kIo, naming the path, when the file cannot be written.
Status writePng(const RgbImage& image, const std::filesystem::path& path);

}  // namespace vtp::tools
