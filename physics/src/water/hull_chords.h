#pragma once
// A convex hull's chords for the submerged volume (water.cpp), in the hull's own frame: parallel to one of its local
// axes over a grid covering its bounds, each cut by the hull's faces. They depend on the points, the axis and the
// voxel size only, so each thread keeps those of the hulls it met last (a game gives many bodies one hull and asks for
// them every step): the convex hull (Bullet's btConvexHullComputer), its planes and volume once per hull, the chords
// once per axis.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <span>

#include "vtp/terrain/status.h"

namespace vtp::physics::water {

/// A chord in the hull's frame: from `start` along the chord axis for `length`, standing for cross-section area
/// `weight`. [Unit: world units, world units^2]
struct LocalChord {
  std::array<double, 3> start;
  double length;
  double weight;
};

struct HullChords {
  double volume = 0;                     ///< The hull's volume. [Unit: world units^3]
  std::span<const LocalChord> chords;    ///< Valid until this thread's next hullChords call.
};

/// Samples along one axis of a chord quadrature (water.cpp's shapes and the hulls here): at least `base`, at least 2
/// per voxel of `extent` (so uneven water is resolved on big bodies), at most 128. [Unit: extent and voxel_size in
/// world units; voxel_size > 0]
inline int samplesFor(double extent, double voxel_size, int base) {
  return std::clamp(int(std::ceil(2.0 * extent / voxel_size)), base, 128);
}

/// Hulls (with their chords) each thread keeps, and the most bytes of chords it keeps beyond the hull in use. A server
/// whose bodies each have a hull of their own asks for every wet one each step: vtp-sim's scene has about 35. Each
/// kept hull also holds its points and face planes, uncounted: about 1 KiB for a game's hull of a dozen points, 256
/// times that per thread at most; hulls of many thousands of points would want a byte bound here too.
inline constexpr std::size_t kHullCacheEntries = 256;
inline constexpr std::size_t kHullCacheBytes = std::size_t(2) << 20;

/// The chords of the hull of `points` along its local axis `axis` (0, 1 or 2): samplesFor(side, voxel_size, 16) per
/// side of the grid. `voxel_size` > 0 (the world's). Errors (kInvalidArgument): points without a solid hull (fewer
/// than 4 faces: too few points, or all in a plane).
Result<HullChords> hullChords(std::span<const std::array<float, 3>> points, std::size_t axis, double voxel_size);

}  // namespace vtp::physics::water
