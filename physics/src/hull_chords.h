#pragma once
// A convex hull's chords for the submerged volume (water.cpp), in the hull's own frame: parallel to one of its local
// axes over a grid covering its bounds, each cut by the hull's faces. They depend on the points, the axis and the
// voxel size only, so each thread keeps those of the hulls it met last (a game gives many bodies one hull and asks for
// them every step): the convex hull (Bullet's btConvexHullComputer), its planes and volume once per hull, the chords
// once per axis.

#include <array>
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

/// Hulls (with their chords) each thread keeps, and the most bytes of chords it keeps beyond the hull in use.
inline constexpr std::size_t kHullCacheEntries = 16;
inline constexpr std::size_t kHullCacheBytes = std::size_t(2) << 20;

/// The chords of the hull of `points` along its local axis `axis` (0, 1 or 2): at least 16 per side of the grid and
/// 2 per voxel of extent, at most 128. Errors (kInvalidArgument): points without a solid hull.
Result<HullChords> hullChords(std::span<const std::array<float, 3>> points, std::size_t axis, double voxel_size);

}  // namespace vtp::physics::water
