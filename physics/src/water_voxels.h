#pragma once
// The water model of water.h, voxel by voxel, shared by the submerged volume (water.cpp) and the water ray
// (water_raycast.cpp): a water voxel of occupancy o holds water in the lower o/255 of its cell. walkWet follows a
// segment through a block of voxels (a chunk, or the box around a body) with a 3D DDA (Amanatides and Woo, "A Fast
// Voxel Traversal Algorithm for Ray Tracing", 1987) and reports, in order of t, the intervals of t spent in water.
// wetMoments sums them, and where the block's water is a level pool (findLevelPool) takes most segments' sums from
// the surface and the bed's height instead.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

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

/// The wet measure of a segment over [t0, t1]: the sums over its wet intervals [w0, w1] of w1 - w0 and of
/// (w1^2 - w0^2) / 2 (the first moment in t). [Unit: t]
struct WetMoments {
  double length = 0, first = 0;
  bool walked = false;  ///< Whether walkWet gave them (wetMoments), rather than a level pool's surface and floor.
  void add(double w0, double w1) {
    length += w1 - w0;
    first += 0.5 * (w1 * w1 - w0 * w0);
  }
};

/// A block whose water is a level pool: in every column (x, z), from the bottom up, dry voxels (rock, air), then full
/// water, then at most one partly filled water voxel, then dry voxels, and every column with water has the same
/// surface. In a column, every point below the surface and at or above the column's floor (its first water voxel; the
/// block's top for a column without water) is then wet, and every point above the surface is dry. [Unit: voxel,
/// block-relative y]
struct LevelPool {
  double surface = 0;
  std::vector<std::int32_t> floors;  ///< Per column, x + size[0] * z.
  std::int32_t lowest = 0, highest = 0;  ///< The lowest and the highest floor of all columns.
};

/// Makes `pool` the block's level pool and returns true, if its water is one (false otherwise, or when it holds no
/// water).
inline bool findLevelPool(const VoxelBlock& b, LevelPool& pool) {
  const int nx = b.size[0], ny = b.size[1], nz = b.size[2];
  pool.floors.resize(std::size_t(nx) * std::size_t(nz));
  pool.lowest = ny, pool.highest = 0;
  bool any = false;
  for (int z = 0; z < nz; ++z)
    for (int x = 0; x < nx; ++x) {
      const terrain::Voxel* column = b.voxels + x + std::size_t(nx) * std::size_t(ny) * std::size_t(z);
      const auto fill = [&](int y) { return fillOf(column[std::size_t(nx) * std::size_t(y)]); };
      int y = 0;
      while (y < ny && fill(y) == 0) ++y;
      pool.floors[std::size_t(x + nx * z)] = y;
      pool.lowest = std::min(pool.lowest, y), pool.highest = std::max(pool.highest, y);
      if (y == ny) continue;  // no water in this column
      while (y < ny && fill(y) == 1) ++y;
      double surface = y;
      if (y < ny && fill(y) > 0) surface += fill(y++);
      for (; y < ny; ++y) {
        if (fill(y) != 0) return false;
      }
      if (any && surface != pool.surface) return false;
      pool.surface = surface;
      any = true;
    }
  return any;
}

/// The wet measure of the segment over [t0, t1] (inside the block, as clipToBlock gives), by walkWet; with a level
/// pool (findLevelPool of the same block), for a steep segment (the chords of water.cpp are), from the surface and the
/// floor alone where its part below the surface stays above the floors of the columns it crosses, or those columns
/// share one floor (a body floating in a lake, or lying on a level bed), by walkWet elsewhere. A level or nearly level
/// segment is always walked: where it crosses the surface or a floor is where rounding decides.
inline WetMoments wetMoments(const VoxelSegment& s, const VoxelBlock& b, double t0, double t1,
                             const LevelPool* pool) {
  WetMoments m;
  const bool steep = std::abs(s.d[1]) >= 1e-3 * (std::abs(s.d[0]) + std::abs(s.d[2]));
  if (pool != nullptr && steep && s.d[1] != 0 && std::isfinite(s.inv[1])) {
    // Block-relative, as walkWet works: the part below the surface ends where walkWet puts a partly filled voxel's
    // level, (level - a) / d.
    double a[3], d[3];
    const std::int32_t origin[3] = {b.origin.x, b.origin.y, b.origin.z};
    for (std::size_t axis = 0; axis < 3; ++axis) a[axis] = s.a[axis] - double(origin[axis]), d[axis] = s.d[axis];
    double w0 = t0, w1 = t1;
    const double t_level = (pool->surface - a[1]) * s.inv[1];
    if (d[1] > 0) {
      w1 = std::min(w1, t_level);
    } else {
      w0 = std::max(w0, t_level);
    }
    if (!(w0 < w1)) return m;
    // The lowest and highest floor of the columns that part crosses: the block's, unless they differ and the part
    // goes below the highest (then only its columns, clamped to the block: the part lies inside it).
    const double bottom = std::min(a[1] + w0 * d[1], a[1] + w1 * d[1]);
    std::int32_t lowest = pool->lowest, highest = pool->highest;
    if (lowest != highest && bottom < double(highest)) {
      int lo[2], hi[2];
      for (int k = 0; k < 2; ++k) {
        const std::size_t axis = k == 0 ? 0 : 2;
        const double p0 = a[axis] + w0 * d[axis], p1 = a[axis] + w1 * d[axis];
        const int last = b.size[axis] - 1;
        lo[k] = std::clamp(int(std::floor(std::min(p0, p1))), 0, last);
        hi[k] = std::clamp(int(std::floor(std::max(p0, p1))), 0, last);
      }
      lowest = b.size[1], highest = 0;
      for (int z = lo[1]; z <= hi[1]; ++z)
        for (int x = lo[0]; x <= hi[0]; ++x) {
          const std::int32_t f = pool->floors[std::size_t(x + b.size[0] * z)];
          lowest = std::min(lowest, f), highest = std::max(highest, f);
        }
    }
    const bool above_floors = bottom >= double(highest);
    if (above_floors || lowest == highest) {
      // Wet from the floor (one for all these columns) to the surface: the part above the floor, as walkWet finds a
      // voxel face, (floor - a) / d.
      if (!above_floors) {
        const double t_floor = (double(highest) - a[1]) * s.inv[1];
        if (d[1] > 0) {
          w0 = std::max(w0, t_floor);
        } else {
          w1 = std::min(w1, t_floor);
        }
      }
      if (w0 < w1) m.add(w0, w1);
      return m;
    }
  }
  m.walked = true;
  walkWet(s, b, t0, t1, [&](double w0, double w1, int, int, int, WetStart, int) {
    m.add(w0, w1);
    return true;
  });
  return m;
}

}  // namespace vtp::physics::water
