#pragma once
// The water model of water.h, voxel by voxel, shared by the submerged volume (water.cpp) and the water ray
// (water_raycast.cpp): a water voxel of occupancy o holds water in the lower o/255 of its cell. walkWet follows a
// segment through a block of voxels (a chunk, or the box around a body) with a 3D DDA (Amanatides and Woo, "A Fast
// Voxel Traversal Algorithm for Ray Tracing", 1987) and reports, in order of t, the intervals of t spent in water.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "vtp/terrain/coords.h"
#include "vtp/terrain/voxel.h"

namespace vtp::physics::water {

/// A box of voxels read with World::readBox (x fastest, then y, then z), not owned.
struct VoxelBlock {
  terrain::VoxelCoord origin;       ///< The first voxel. [Unit: voxel]
  std::array<int, 3> size{};        ///< Voxels along each axis.
  const terrain::Voxel* voxels = nullptr;
  terrain::VoxelBox box() const {
    return {origin, {origin.x + size[0], origin.y + size[1], origin.z + size[2]}};
  }
};

/// The block of chunk c's voxels in `voxels` (8^3 of them).
inline VoxelBlock chunkBlock(terrain::ChunkCoord c, const terrain::Voxel* voxels) {
  return {terrain::chunkOrigin(c), {terrain::kChunkSize, terrain::kChunkSize, terrain::kChunkSize}, voxels};
}

/// occupancy / 255 for every occupancy, computed at compile time (a division per voxel was the walk's largest cost).
inline constexpr std::array<double, 256> kFillOfOccupancy = [] {
  std::array<double, 256> t{};
  for (int i = 0; i < 256; ++i) t[std::size_t(i)] = i / 255.0;
  return t;
}();

/// The fraction of a voxel's cell that holds water (from its floor up): occupancy / 255 for water, else 0.
inline double fillOf(terrain::Voxel v) { return terrain::isWater(v) ? kFillOfOccupancy[v.occupancy] : 0.0; }

/// A segment p(t) = a + t d, with 1 / d per axis (HUGE_VAL where d is 0) so walks divide nothing. [Unit: voxel]
struct VoxelSegment {
  std::array<double, 3> a{}, d{}, inv{};
  VoxelSegment() = default;
  VoxelSegment(const std::array<double, 3>& start, const std::array<double, 3>& direction) : a(start), d(direction) {
    for (std::size_t axis = 0; axis < 3; ++axis) inv[axis] = d[axis] == 0 ? HUGE_VAL : 1.0 / d[axis];
  }
};

/// Narrows [t0, t1] to the part of the segment inside the block's voxels, a half-open box (half-open along an axis
/// the segment does not move on, so a chord on a chunk face is counted once). False when nothing is left.
inline bool clipToBlock(const VoxelSegment& s, const VoxelBlock& b, double& t0, double& t1) {
  const std::int32_t k[3] = {b.origin.x, b.origin.y, b.origin.z};
  for (int axis = 0; axis < 3; ++axis) {
    const double lo = double(k[axis]), hi = lo + b.size[std::size_t(axis)];
    const double a = s.a[std::size_t(axis)], inv = s.inv[std::size_t(axis)];
    if (s.d[std::size_t(axis)] == 0) {
      if (a < lo || a >= hi) return false;
      continue;
    }
    double n = (lo - a) * inv, f = (hi - a) * inv;
    if (n > f) std::swap(n, f);
    t0 = std::max(t0, n);
    t1 = std::min(t1, f);
  }
  return t0 < t1;
}

/// Where a wet interval begins.
enum class WetStart : std::uint8_t {
  kFirst,    ///< At t0, the start of the walk (no face crossed).
  kFace,     ///< On the face of the voxel that the walk entered through (`axis`).
  kSurface,  ///< On the water surface inside a partly filled voxel (the segment comes down through it).
};

/// Walks the voxels of block `b` that the segment crosses for t in [t0, t1] (inside the block, as clipToBlock gives),
/// in order of t, and calls wet(w0, w1, x, y, z, start, axis) for each interval w0 < w1 spent in water, with the
/// voxel's block-relative coordinates; `axis` is the axis of the face crossed when start is kFace. wet returns false
/// to stop the walk.
template <class Wet>
void walkWet(const VoxelSegment& s, const VoxelBlock& b, double t0, double t1, Wet&& wet) {
  const std::int32_t k[3] = {b.origin.x, b.origin.y, b.origin.z};
  const int n[3] = {b.size[0], b.size[1], b.size[2]};
  double a[3], d[3], t_next[3], t_delta[3];
  int cell[3], step[3];
  for (int axis = 0; axis < 3; ++axis) {
    a[axis] = s.a[std::size_t(axis)] - double(k[axis]);  // block-relative
    d[axis] = s.d[std::size_t(axis)];
    // Rounding can put the start a hair outside the block: clamp (the span is inside it by construction).
    cell[axis] = std::clamp(int(std::floor(a[axis] + t0 * d[axis])), 0, n[axis] - 1);
    step[axis] = d[axis] > 0 ? 1 : (d[axis] < 0 ? -1 : 0);
    const double inv = s.inv[std::size_t(axis)];
    t_next[axis] = d[axis] == 0 ? HUGE_VAL : (double(cell[axis] + (d[axis] > 0 ? 1 : 0)) - a[axis]) * inv;
    t_delta[axis] = d[axis] == 0 ? HUGE_VAL : std::abs(inv);
  }
  double t = t0;
  WetStart start = WetStart::kFirst;
  int entered = -1;
  while (t < t1) {
    const int axis = t_next[0] < t_next[1] ? (t_next[0] < t_next[2] ? 0 : 2) : (t_next[1] < t_next[2] ? 1 : 2);
    const double t_end = std::min(t_next[axis], t1);
    const double fill = fillOf(b.voxels[cell[0] + n[0] * (cell[1] + n[1] * cell[2])]);
    if (fill > 0 && t_end > t) {
      double w0 = t, w1 = t_end;
      WetStart how = start;
      if (fill < 1) {
        // Wet below the fill level: y(t) <= cell_y + fill.
        const double level = double(cell[1]) + fill;
        if (d[1] == 0) {
          if (a[1] > level) w1 = w0;
        } else {
          const double t_level = (level - a[1]) * s.inv[1];
          if (d[1] > 0) {
            w1 = std::min(w1, t_level);
          } else if (t_level > w0) {
            w0 = t_level;
            how = WetStart::kSurface;
          }
        }
      }
      if (w0 < w1 && !wet(w0, w1, cell[0], cell[1], cell[2], how, entered)) return;
    }
    if (t_next[axis] >= t1) return;
    t = std::max(t, t_next[axis]);  // a start on a voxel face gives -0 or a hair below t0 here
    cell[axis] += step[axis];
    if (cell[axis] < 0 || cell[axis] >= n[axis]) return;
    t_next[axis] += t_delta[axis];
    start = WetStart::kFace;
    entered = axis;
  }
}

}  // namespace vtp::physics::water
