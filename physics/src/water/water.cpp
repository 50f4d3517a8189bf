// Submerged volume and centre of buoyancy (water.h). The shape is cut into parallel chords over a quadrature of its
// cross-section (shape_chords.h); each chord is walked through the water voxels of the chunks the mask index reports
// with water, and the lengths it spends in water (water_voxels.h) are exact, so the only approximation is the 2D
// quadrature, whose integrand is continuous with kinks where a chord's end crosses the water surface (error O(h^2) for
// sample spacing h). Chords run along one of the body's own axes, so the cross-section is an exact domain (no partly
// covered samples at a box's sides), and the steepest one, so no chord lies level in the surface (wholly wet or dry: a
// step). Where the water around a body is a level pool (water_voxels.h: a lake's surface over its bed), most chords'
// wet parts come from the surface and the bed's height alone, without the walk, and equal the walk's; four chords at a
// time, as a shape's chords are parallel.
#include "vtp/physics/water.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "water/shape_chords.h"
#include "water/water_voxels.h"

namespace vtp::physics {

using terrain::ChunkCoord;
using terrain::Voxel;

namespace {

using V3 = std::array<double, 3>;

// Bodies reaching at most this many voxels are read in one box (64 KiB of voxels); larger ones tile by tile.
constexpr std::int64_t kMaxBlockVoxels = 32 * 32 * 32;
// A large body's tiles: the part of its reach in each box of 8 x 4 x 8 chunks of the chunk grid (256 KiB of voxels)
// that holds a chunk with water. Every chord is clipped against every tile, so a ship of 128 x 16 x 128 voxels pays
// for 16-32 tiles where it paid for ~770 chunks (17.7 ms a call before, chunk by chunk).
constexpr std::array<int, 3> kTileShift{6, 5, 6};  // log2 of a tile's voxels per axis

// Tile `tile`'s voxels (tile coordinates below 2^16 voxels in magnitude once scaled: no overflow).
terrain::VoxelBox tileBox(const std::array<std::int32_t, 3>& tile) {
  const terrain::VoxelCoord min{tile[0] * (1 << kTileShift[0]), tile[1] * (1 << kTileShift[1]),
                                tile[2] * (1 << kTileShift[2])};
  return {min, {min.x + (1 << kTileShift[0]), min.y + (1 << kTileShift[1]), min.z + (1 << kTileShift[2])}};
}

}  // namespace

Result<Submersion> submerged(const TerrainPhysics& physics, const ConvexShape& shape, const Pose& pose) {
  if (Status s = validate(shape); !s) return Error{s.error().code, "submerged: " + s.error().message, {}};
  if (Status s = validate(pose); !s) return Error{s.error().code, "submerged: " + s.error().message, {}};
  const double voxel_size = physics.voxelSize();
  thread_local water::Chords chords;
  thread_local std::vector<ChunkTouch> touches;
  thread_local std::vector<Voxel> voxels;
  const water::ShapeBounds bounds = water::shapeBounds(shape, pose, voxel_size);
  const Aabb world_box{{bounds.lo[0] * voxel_size, bounds.lo[1] * voxel_size, bounds.lo[2] * voxel_size},
                       {bounds.hi[0] * voxel_size, bounds.hi[1] * voxel_size, bounds.hi[2] * voxel_size}};
  if (Status s = physics.masks().query(world_box, touches); !s)
    return Error{s.error().code, "submerged: " + s.error().message, {}};
  // The voxels the body reaches (the query grows its box by the mesher's one-voxel spill; water has none). In int32
  // once the query passed.
  const auto voxelAt = [](double v) { return std::int32_t(std::floor(v)); };
  const terrain::VoxelBox reach{{voxelAt(bounds.lo[0]), voxelAt(bounds.lo[1]), voxelAt(bounds.lo[2])},
                                {voxelAt(bounds.hi[0]) + 1, voxelAt(bounds.hi[1]) + 1, voxelAt(bounds.hi[2]) + 1}};
  std::erase_if(touches, [&](const ChunkTouch& t) {
    return !t.water || terrain::intersect(terrain::chunkBox(t.chunk), reach).empty();
  });
  const auto read = [&](const terrain::VoxelBox& box) -> Status {
    voxels.resize(std::size_t(box.volume()));
    if (Status s = physics.world().readBox(box, voxels); !s)
      return Error{s.error().code, "submerged: " + s.error().message, {}};
    return {};
  };

  // A small body reads the box it reaches at once; wholly dry or wholly in full water it needs no chords.
  enum class Wetness { kDry, kFull, kPartial } wetness = Wetness::kDry;
  const bool small = reach.volume() <= kMaxBlockVoxels;
  if (!touches.empty()) {
    if (!small) {
      wetness = Wetness::kPartial;
    } else {
      if (Status s = read(reach); !s) return s.error();
      std::size_t water = 0, full = 0;
      for (const Voxel v : voxels) {
        water += terrain::isWater(v) ? 1 : 0;
        full += v == Voxel{terrain::kWaterMaterial, 255} ? 1 : 0;
      }
      wetness = water == 0 ? Wetness::kDry : (full == voxels.size() ? Wetness::kFull : Wetness::kPartial);
    }
  }
  Submersion out;
  out.centre = pose.position;
  out.shape_volume = water::primitiveVolume(shape);
  if (wetness != Wetness::kPartial && shape.kind != ShapeKind::kConvexHull) {
    if (wetness == Wetness::kFull) out.volume = out.shape_volume;
    return out;
  }

  Result<water::Volumes> volumes = water::layChords(shape, pose, voxel_size, chords);
  if (!volumes) return volumes.error();
  if (chords.size() == 0) return Error{ErrorCode::kInvalidArgument, "submerged: shape has no volume", {}};
  out.shape_volume = volumes->shape;
  // A hull's centroid is not its origin: a wholly submerged hull is integrated too.
  if (wetness == Wetness::kDry) return out;
  // Per chord, the wet part's measure and first moment in s (world units): sums of (s1 - s0) and (s1^2 - s0^2) / 2.
  double wet = 0;
  V3 moment{};
  // A level pool (a body floating in a lake, or lying on its bed) gives most chords' wet part from its surface alone.
  const auto integrate = [&](const water::VoxelBlock& block) {
    thread_local water::LevelPool pool;
    const water::LevelPool* level = water::findLevelPool(block, pool) ? &pool : nullptr;
    thread_local std::vector<double> wet_length, wet_first;  // per chord
    wet_length.resize(chords.size());
    wet_first.resize(chords.size());
    for (const water::Chords::Run& run : chords.runs) {
      const std::size_t b = run.begin;
      water::wetMomentsParallel({run.direction, &chords.x[b], &chords.y[b], &chords.z[b], &chords.length[b],
                                 run.end - b},
                                block, level, &wet_length[b], &wet_first[b]);
      // Every chord's share, a dry one's zero (a branch on it went either way). The sums stay in registers: through
      // the captured references, each chord's went through memory.
      const V3& d = run.direction.d;
      double run_wet = wet, mx = moment[0], my = moment[1], mz = moment[2];
      for (std::size_t i = b; i < run.end; ++i) {
        const double w = chords.weight[i], length = wet_length[i], first = wet_first[i];
        run_wet += w * length;  // world units^3
        mx += w * (chords.x[i] * length + d[0] * first);
        my += w * (chords.y[i] * length + d[1] * first);
        mz += w * (chords.z[i] * length + d[2] * first);
      }
      wet = run_wet, moment = {mx, my, mz};
    }
  };
  if (small) {
    integrate(water::boxBlock(reach, voxels.data()));
  } else {
    // A large body: tile by tile, only tiles with a chunk whose masks hold water.
    thread_local std::vector<std::array<std::int32_t, 3>> tiles;
    tiles.clear();
    for (const ChunkTouch& touch : touches) {
      const terrain::VoxelCoord o = terrain::chunkOrigin(touch.chunk);
      tiles.push_back({o.x >> kTileShift[0], o.y >> kTileShift[1], o.z >> kTileShift[2]});  // shifts floor
    }
    std::sort(tiles.begin(), tiles.end());
    tiles.erase(std::unique(tiles.begin(), tiles.end()), tiles.end());
    for (const auto& tile : tiles) {
      const terrain::VoxelBox box = terrain::intersect(tileBox(tile), reach);
      if (Status s = read(box); !s) return s.error();
      if (std::any_of(voxels.begin(), voxels.end(), terrain::isWater)) {
        integrate(water::boxBlock(box, voxels.data()));
      }
    }
  }
  if (wet > 0) {
    // Scale the wet measure by the analytic volume: a body wholly in full water gets exactly its volume.
    out.volume = std::min(volumes->shape, volumes->shape * wet / volumes->chords);
    for (std::size_t a = 0; a < 3; ++a) out.centre[a] = moment[a] / wet * voxel_size;
  }
  return out;
}

}  // namespace vtp::physics
