#pragma once
/// \file
/// Where the large features of a procedural world go: lakes, rivers, mesas (cliffs with overhangs), floating islands
/// and tunnels, plus the vertical levels (water, rim top, bedrock). planTerrain() places them from a seed; the
/// TerrainSampler (terrain_sampler.h) turns a layout into voxels. Build data, separate from the sampling.

#include <cstdint>
#include <vector>

#include "vtp/terrain/coords.h"

namespace vtp::worldgen {

/// A point in the horizontal (x, z) plane. [Unit: voxel]
struct Point2 {
  double x = 0;  ///< [Unit: voxel]
  double z = 0;  ///< [Unit: voxel]
};

/// A body of water: a channel carved along a polyline (one point for a round lake) down to `depth` below the water
/// level and filled with water up to it; its banks rise gently beyond `radius`.
struct WaterBody {
  std::vector<Point2> path;  ///< At least one point. [Unit: voxel]
  double radius = 0;         ///< Horizontal distance from the path at which the banks reach the water level + 2.5.
  double depth = 0;          ///< Depth of the flat bed below the water level. [Unit: voxel]
};

/// A flat-topped rock tower whose cliffs are vertical, then lean outward over the last `flare_height` voxels below
/// the top: an overhanging lip all round.
struct Mesa {
  Point2 center;
  double radius = 0;        ///< Radius of the vertical part. [Unit: voxel]
  double top = 0;           ///< Height of the flat top. [Unit: voxel]
  double flare_height = 0;  ///< Height of the overhanging band under the top. [Unit: voxel]
};

/// A floating island: a flat disc of ground with a cone of rock hanging under it, touching nothing.
struct Island {
  terrain::Vec3d center;  ///< Centre of the disc's underside. [Unit: voxel]
  double radius = 0;      ///< Radius of the disc. [Unit: voxel]
  double thickness = 0;   ///< Height of the disc above `center`. [Unit: voxel]
  double depth = 0;       ///< Height of the cone below `center`. [Unit: voxel]
};

/// A round tube along a 3D polyline that starts above the ground (the entrance) and winds down into it.
struct Tunnel {
  std::vector<terrain::Vec3d> path;  ///< At least two points. [Unit: voxel]
  double radius = 0;                 ///< [Unit: voxel]
};

/// Everything planTerrain() decides. Heights are world voxel y coordinates; the box is the generated region.
struct TerrainLayout {
  std::uint64_t seed = 1;        ///< Seeds the noise fields of the sampler too.
  terrain::VoxelBox box;         ///< x and z centred on 0, y from -Y/2.
  double water_level = -4;       ///< Water fills carved ground below this height (an integer). [Unit: voxel]
  double rim_width = 6;          ///< Thickness of the rock wall round the edge. [Unit: voxel]
  double rim_top = 42;           ///< Height of the wall's top. [Unit: voxel]
  double bedrock_top = -45;      ///< Everything below is solid rock; caves stay above. [Unit: voxel]
  std::vector<WaterBody> water;  ///< Lakes first (one-point paths), then one river per lake.
  std::vector<Mesa> mesas;       ///< Apart from each other and from the water.
  std::vector<Island> islands;   ///< Apart from each other and from the mesas, clear of the ground under them.
  std::vector<Tunnel> tunnels;   ///< Clear of the water, the mesas and the rim.
};

/// The least size (X, Y, Z in voxels) planTerrain() accepts. Features that do not fit a small world are left out;
/// the lake and its river always fit.
inline constexpr terrain::VoxelCoord kMinTerrainSize{64, 96, 64};
/// Highest open ground, whatever the seed. The rim rises to the top of the box minus 6 (42 for the default's 96
/// voxels), at least 8 above every hill and mesa; island tops also stay 8 under it. [Unit: voxel]
inline constexpr double kMaxHillHeight = 19.0;
/// Highest mesa top, wobble included. [Unit: voxel]
inline constexpr double kMaxMesaTop = 28.0;

/// Places the features of a `size` world (X, Y, Z voxels, each at least kMinTerrainSize) from `seed`. Feature counts
/// grow with the area (the 256 x 256 default has one lake and its river, two mesas, three islands, two tunnels).
/// Deterministic: equal arguments give equal layouts on every build.
TerrainLayout planTerrain(std::uint64_t seed, terrain::VoxelCoord size);

/// The box of a `size` world: x and z centred on 0 (from -X/2, rounded toward zero), y from -Y/2
/// (tools/worldgen/README.md).
terrain::VoxelBox worldBox(terrain::VoxelCoord size);

}  // namespace vtp::worldgen
