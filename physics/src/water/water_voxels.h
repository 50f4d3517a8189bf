#pragma once
// The water model of water.h, voxel by voxel, shared by the submerged volume (water.cpp) and the water ray
// (water_raycast.cpp): a water voxel of occupancy o holds water in the lower o/255 of its cell. walkWet follows a
// segment through a block of voxels (a chunk, or the box around a body) with a 3D DDA (Amanatides and Woo, "A Fast
// Voxel Traversal Algorithm for Ray Tracing", 1987) and reports, in order of t, the intervals of t spent in water.
// wetMoments sums them, and where the block's water is a level pool (findLevelPool) takes most segments' sums from
// the surface and the bed's height instead; wetMomentsParallel does the same for many parallel segments (a body's
// chords), four at a time.

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
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

/// The block of `box`'s voxels, read (World::readBox) into `voxels`.
inline VoxelBlock boxBlock(const terrain::VoxelBox& box, const terrain::Voxel* voxels) {
  return {box.min, {box.max.x - box.min.x, box.max.y - box.min.y, box.max.z - box.min.z}, voxels};
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
  /// walkWet reports only wet intervals longer than this, or starting at t = 0. [Unit: t] 0 (every positive interval)
  /// serves volumes; a water ray asks for more (kTouchVoxels), as a segment through a voxel's edge or corner steps
  /// through the voxel beside it for the ulp or so that rounding puts between two axes' crossings.
  double min_wet = 0;
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
/// in order of t, and calls wet(w0, w1, x, y, z, start, axis) for each interval w0 < w1 spent in water that is
/// longer than s.min_wet or starts at t = 0, with the
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
      const bool counts = w1 - w0 > s.min_wet || (w0 <= 0 && w0 < w1);  // the segment's start in water always does
      if (counts && !wet(w0, w1, cell[0], cell[1], cell[2], how, entered)) return;
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


/// Parallel segments a_i + s d for s in [0, length_i], sharing d and its reciprocals (`direction`'s: its own start is
/// unused), with their starts by axis. [Unit: voxel for the starts; s in the caller's unit]
struct ParallelSegments {
  VoxelSegment direction;
  const double* x = nullptr;
  const double* y = nullptr;
  const double* z = nullptr;
  const double* length = nullptr;
  std::size_t count = 0;
};

/// For each segment i, what clipToBlock (t0 = 0, t1 = length_i) and then wetMoments with `pool` give it, bit for bit:
/// the wet measure in length_out[i] and the first moment in first_out[i] (both 0 where nothing is wet). Where a level
/// pool answers from its surface and floor, four segments at a time in AVX2 lanes, with no branch on where each lies:
/// the scalar shortcut's branches on that (dry above the surface or not, reaching a floor or not) went either way for
/// a body's chords. Segments the pool cannot answer alone are walked one by one.
inline void wetMomentsParallel(const ParallelSegments& s, const VoxelBlock& b, const LevelPool* pool,
                               double* length_out, double* first_out) {
  const VoxelSegment& dir = s.direction;
  const double* starts[3] = {s.x, s.y, s.z};
  auto one = [&](std::size_t i) {
    VoxelSegment segment = dir;
    segment.a = {s.x[i], s.y[i], s.z[i]};
    double t0 = 0, t1 = s.length[i];
    WetMoments m;
    if (clipToBlock(segment, b, t0, t1)) m = wetMoments(segment, b, t0, t1, pool);
    length_out[i] = m.length;
    first_out[i] = m.first;
  };
  std::size_t i = 0;
  // wetMoments' own test for its shortcut: the same for every segment, as they share d.
  const bool steep = std::abs(dir.d[1]) >= 1e-3 * (std::abs(dir.d[0]) + std::abs(dir.d[2]));
  if (pool != nullptr && steep && dir.d[1] != 0 && std::isfinite(dir.inv[1])) {
    const std::int32_t origin[3] = {b.origin.x, b.origin.y, b.origin.z};
    const __m256d zero = _mm256_setzero_pd(), all = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
    const __m256d d1 = _mm256_set1_pd(dir.d[1]), inv1 = _mm256_set1_pd(dir.inv[1]);
    const __m256d surface = _mm256_set1_pd(pool->surface), highest = _mm256_set1_pd(double(pool->highest));
    const bool one_floor = pool->lowest == pool->highest, rising = dir.d[1] > 0;
    for (; i + 4 <= s.count; i += 4) {
      // clipToBlock: std::max(t0, n) is max_pd(n, t0) and std::min(t1, f) is min_pd(f, t1), NaN and ties included.
      __m256d t0 = zero, t1 = _mm256_loadu_pd(s.length + i), ok = all;
      for (int axis = 0; axis < 3; ++axis) {
        const double lo_s = double(origin[axis]), hi_s = lo_s + b.size[std::size_t(axis)];
        const __m256d a = _mm256_loadu_pd(starts[axis] + i), lo = _mm256_set1_pd(lo_s), hi = _mm256_set1_pd(hi_s);
        if (dir.d[std::size_t(axis)] == 0) {  // outside when a < lo or a >= hi
          ok = _mm256_and_pd(ok, _mm256_and_pd(_mm256_cmp_pd(a, lo, _CMP_NLT_UQ), _mm256_cmp_pd(a, hi, _CMP_NGE_UQ)));
          continue;
        }
        const __m256d inv = _mm256_set1_pd(dir.inv[std::size_t(axis)]);
        const __m256d n = _mm256_mul_pd(_mm256_sub_pd(lo, a), inv), f = _mm256_mul_pd(_mm256_sub_pd(hi, a), inv);
        const __m256d swap = _mm256_cmp_pd(n, f, _CMP_GT_OQ);
        t0 = _mm256_max_pd(_mm256_blendv_pd(n, f, swap), t0);
        t1 = _mm256_min_pd(_mm256_blendv_pd(f, n, swap), t1);
      }
      ok = _mm256_and_pd(ok, _mm256_cmp_pd(t0, t1, _CMP_LT_OQ));
      // wetMoments' shortcut, block-relative: the part below the surface...
      const __m256d a1 = _mm256_sub_pd(_mm256_loadu_pd(s.y + i), _mm256_set1_pd(double(origin[1])));
      const __m256d t_level = _mm256_mul_pd(_mm256_sub_pd(surface, a1), inv1);
      __m256d w0 = t0, w1 = t1;
      if (rising) {
        w1 = _mm256_min_pd(t_level, w1);
      } else {
        w0 = _mm256_max_pd(t_level, w0);
      }
      ok = _mm256_and_pd(ok, _mm256_cmp_pd(w0, w1, _CMP_LT_OQ));
      // ...above the floors (or down to the one floor of them all); a part reaching below the highest of uneven floors
      // is wetMoments' alone.
      const __m256d p = _mm256_add_pd(a1, _mm256_mul_pd(w0, d1)), q = _mm256_add_pd(a1, _mm256_mul_pd(w1, d1));
      const __m256d above = _mm256_cmp_pd(_mm256_min_pd(q, p), highest, _CMP_GE_OQ);
      const __m256d alone = one_floor ? zero : _mm256_andnot_pd(above, ok);
      const __m256d t_floor = _mm256_mul_pd(_mm256_sub_pd(highest, a1), inv1);
      if (rising) {
        w0 = _mm256_blendv_pd(_mm256_max_pd(t_floor, w0), w0, above);
      } else {
        w1 = _mm256_blendv_pd(_mm256_min_pd(t_floor, w1), w1, above);
      }
      const __m256d wet = _mm256_and_pd(_mm256_andnot_pd(alone, ok), _mm256_cmp_pd(w0, w1, _CMP_LT_OQ));
      const __m256d length = _mm256_sub_pd(w1, w0);
      const __m256d first =
          _mm256_mul_pd(_mm256_set1_pd(0.5), _mm256_sub_pd(_mm256_mul_pd(w1, w1), _mm256_mul_pd(w0, w0)));
      _mm256_storeu_pd(length_out + i, _mm256_and_pd(wet, length));
      _mm256_storeu_pd(first_out + i, _mm256_and_pd(wet, first));
      for (unsigned lanes = unsigned(_mm256_movemask_pd(alone)); lanes != 0; lanes &= lanes - 1) {
        one(i + std::size_t(std::countr_zero(lanes)));
      }
    }
  }
  for (; i < s.count; ++i) one(i);
}

}  // namespace vtp::physics::water
