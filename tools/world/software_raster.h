#pragma once
// A small software rasterizer for pictures of terrain meshes without a GPU: an orthographic camera looking down on the
// scene from a diagonal, a z-buffer, flat Lambert shading with each triangle's normal and supersampled edges.

#include <array>
#include <cstdint>
#include <span>

#include "png_writer.h"

namespace vtp::tools::world {

/// An 8-bit colour.
struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
};

/// Camera and image. The camera is orthographic; it looks towards the scene from `azimuth_deg` (0 = from +z, 90 = from
/// +x) and `elevation_deg` above the horizon, and the picture is scaled so the whole scene fits with a small margin.
struct RenderView {
  int width = 1024;             ///< [Unit: pixel] 16..8192
  int height = 768;             ///< [Unit: pixel] 16..8192
  double azimuth_deg = 45.0;    ///< [Unit: degree]
  double elevation_deg = 35.0;  ///< [Unit: degree] 1..89
  int supersample = 3;          ///< Samples per pixel along each axis (anti-aliasing), 1..4.
};

/// Renders triangles (indices into `positions`, counter-clockwise seen from their front, i.e. normals out of the
/// solid) with one colour each. Back faces, seen where a region cut opens the surface, are drawn in a flat dark
/// colour so cuts read as solid. An empty mesh gives just the background.
RgbImage renderOblique(std::span<const std::array<double, 3>> positions,
                       std::span<const std::array<std::uint32_t, 3>> triangles, std::span<const Rgb> colours,
                       const RenderView& view);

}  // namespace vtp::tools::world
