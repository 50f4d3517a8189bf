#pragma once
/// \file
/// Water as a query: how much of a body lies in water and where (submerged volume and centre of buoyancy), and where
/// a segment first enters water. Both read the water voxels themselves; the mask index only picks the chunks that
/// may hold water (a ray skips chunks without water unread; a body with no water chunk in reach reads nothing, a small
/// one reads the box of voxels it reaches at once, a large one only its water chunks).
///
/// The water model (one for both queries): a voxel is water when its material is water and its occupancy > 0
/// (terrain/README.md), and water settles: a water voxel of occupancy o fills the lower o/255 of its cell, the rest of
/// the cell being dry. Flat water whose top layer has occupancy o therefore has its surface o/255 voxel above that
/// layer's floor, and the submerged volume is occupancy-weighted (a voxel wholly inside a body adds o/255 of a cell).
/// Solid voxels and air hold no water (a body's part inside rock is not submerged).
///
/// Thread-safety: like TerrainPhysics' other queries, any number of threads, concurrently with edits (each chunk is
/// read before or after a concurrent edit, never a mix). Scratch buffers are per thread and reused: no allocation per
/// voxel, none per call once they have grown.
/// Range: bodies and segments must lie within |x| < 2^16 voxels of the origin (physics/README.md), else kOutOfRange.

#include <array>

#include "vtp/physics/collider.h"
#include "vtp/physics/shape.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/coords.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

/// The part of a body in water.
struct Submersion {
  /// Submerged volume. [Unit: world units^3] In [0, the shape's volume].
  double volume = 0;
  /// Centre of buoyancy: the centroid of the submerged part; the pose's position when nothing is submerged.
  /// [Unit: world]
  WorldVec3 centre;
  /// The shape's whole volume, so volume / shape_volume is the submerged fraction. [Unit: world units^3]
  double shape_volume = 0;
};

/// The submerged volume and centre of buoyancy of `shape` at `pose`.
///
/// How: the shape is cut into parallel chords laid out by a fixed quadrature over its cross-section, along whichever
/// of its own axes keeps them steepest (a sphere's along world Y; a capsule or cylinder lying down is cut across its
/// axis): polar with a sin substitution for spheres and capsule ends, equal-area rings or cross-wise strips for
/// cylinders, a grid for boxes and hulls; 8 to 32 samples per parameter and at least 2 per voxel of extent, up to 128
/// (so a body over 64 voxels across samples more sparsely than that, and water pockets smaller than its spacing may be
/// missed: a sphere of radius 30,000 voxels around an 8^3 pool reports none of it). Each chord
/// is walked voxel by voxel through the water (3D DDA) and the lengths it spends in water are summed exactly. The wet
/// fraction of the chord measure is scaled by the shape's analytic volume, so a body wholly in full water gets exactly
/// its volume and its centre. In flat water the volume is within 2% of the analytic one (tests: sphere, box, capsule,
/// cylinder at several depths and orientations; measured: spheres, capsules, cylinders within 0.5% at depths from
/// 0.1 radius, tilted boxes and cylinders within 1.1%).
///
/// Shape volumes: a box's and a cylinder's margin lies inside their extents and changes nothing; a sphere's and a
/// capsule's is their radius; a convex hull's volume is the hull of its points, its margin ignored.
/// Cost (measured, one thread of this shared 2-core machine, 1-voxel bodies): 12-18 microseconds across the surface
/// (one readBox of the voxels the body reaches, 200-400 chords walked); about 0.2 microseconds wholly dry or wholly
/// in full water (the voxels read show it; no chord is laid). A body reaching more than 32^3 voxels lays up to 128^2
/// chords and reads its reach in tiles of 64 x 32 x 64 voxels: about 1 ms for a box of 128 x 16 x 128 voxels or a
/// sphere of radius 40 floating in a lake, 0.17 ms for a sphere of radius 16. A convex hull's faces (Bullet's
/// btConvexHullComputer) and its chords in its own frame are computed on a thread's first call for those points (and
/// voxel size), then kept: each thread keeps its last 256 hulls, recognised by their points' values, with at most
/// 2 MiB of chords beyond the hull in use; each kept hull also holds its points and face planes (about 1 KiB for a
/// dozen points).
/// Errors: an invalid shape or pose (kInvalidArgument, see validate()); a body whose bounds reach 2^16 voxels from the
/// origin (kOutOfRange). Nothing is changed either way.
Result<Submersion> submerged(const TerrainPhysics& physics, const ConvexShape& shape, const Pose& pose);

/// Where a segment enters water.
struct WaterHit {
  /// Along the ray as given (Ray::direction units, like RayHit::t), in [0, ray.max_t]; 0 when the ray starts in water.
  double t = 0;
  WorldVec3 point;                 ///< origin + t * direction. [Unit: world]
  /// Unit normal of the water boundary crossed, out of the water: a voxel face's axis against the ray, or +Y through a
  /// partly filled voxel's surface; for a ray starting in water, minus its unit direction.
  std::array<double, 3> normal{};
  terrain::VoxelCoord voxel;       ///< The water voxel entered. [Unit: voxel]
  terrain::ChunkCoord chunk;       ///< Its chunk.
  bool starts_in_water = false;    ///< The ray's origin lies in water (t = 0).
};

/// The longest wet span raycastWater takes for a touch rather than an entry. [Unit: voxel, along the segment's
/// largest axis]
inline constexpr double kTouchVoxels = 1e-9;

/// The first point of the segment origin + t * direction, t in [0, ray.max_t], that lies in water (the model above),
/// into `hit`; false when the segment stays dry. Chunks are visited in order along the segment; those whose masks
/// hold no water are skipped without reading voxels. Touching water is not an entry: a wet span shorter than
/// kTouchVoxels along the segment (a ray through a water voxel's edge or corner, which rounding gives a span of an
/// ulp or so) does not count, unless the segment starts in it. Errors: as prepareRay (kInvalidArgument for a
/// non-finite, zero or vanishingly small direction or a bad max_t, kOutOfRange beyond 2^16 voxels); `hit` is
/// unchanged on error or miss.
Result<bool> raycastWater(const TerrainPhysics& physics, const Ray& ray, WaterHit& hit);

}  // namespace vtp::physics
