#pragma once
// A posed convex shape cut into parallel chords in the world, the quadrature of the submerged volume (water.cpp): each
// shape is laid along whichever of its parametrisations has steep chords, on a grid of its cross-section (balls and
// cylinders in polar coordinates that remove their square-root edges, hulls by hull_chords.h), with each chord's
// cross-section area as its weight. A shape's chords along one direction form a run, and lie axis by axis, so their
// wet parts are taken four at a time (water_voxels.h, wetMomentsParallel).

#include <array>
#include <cstddef>
#include <vector>

#include "vtp/physics/shape.h"
#include "vtp/terrain/status.h"
#include "water/water_voxels.h"

namespace vtp::physics::water {

/// A shape's chords in the world: chord i is the segment a_i + s d, s in [0, length_i], standing for cross-section
/// area weight_i, so weight_i * length_i is the volume it carries. Chords laid along one local direction form a run
/// sharing d (voxels per world unit) and its reciprocals, taken once; starts and lengths lie side by side, so the wet
/// measure takes four chords at a time (wetMomentsParallel). [Unit: voxel for a, world units for s and length,
/// world units^2 for weight]
struct Chords {
  struct Run {
    VoxelSegment direction;  // its start unused
    std::size_t begin = 0, end = 0;  // the run's chords
  };
  std::vector<Run> runs;
  std::vector<double> x, y, z, length, weight;  // chord i's start, length and weight

  std::size_t size() const { return length.size(); }
  void clear() {
    runs.clear();
    resize(0);
  }
  void resize(std::size_t n) {
    for (std::vector<double>* v : {&x, &y, &z, &length, &weight}) v->resize(n);
  }
};

/// A shape's analytic volume and the volume its chords carry. [Unit: world units^3]
struct Volumes {
  double shape = 0, chords = 0;
};

/// Lays the chords of a valid shape at `pose` into `out`. Errors (kInvalidArgument): a convex hull without volume.
Result<Volumes> layChords(const ConvexShape& shape, const Pose& pose, double voxel_size, Chords& out);

/// The analytic volume of a sphere, box, capsule or cylinder; 0 for a hull (its volume comes from its faces, with its
/// chords). [Unit: world units^3]
double primitiveVolume(const ConvexShape& shape);

/// A shape's bounds in the world. [Unit: voxel]
struct ShapeBounds {
  std::array<double, 3> lo, hi;
};
/// The bounds of a valid shape at `pose`, which hold every chord, grown by a hair against rounding. [Unit: voxel]
ShapeBounds shapeBounds(const ConvexShape& shape, const Pose& pose, double voxel_size);

}  // namespace vtp::physics::water
