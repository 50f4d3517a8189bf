// Where a segment enters water (water.h). A DDA over the chunk grid (Amanatides and Woo, 1987) visits the chunks the
// segment crosses in order of t; a chunk whose masks hold no water is skipped unread, the others are read and walked
// voxel by voxel (water_voxels.h). Chunks and the voxels inside them are visited in order of t, so the first wet span
// found starts at the entry. Unlike surface rays there is no spill to widen for: water lies in its own voxels.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "vtp/physics/water.h"
#include "water/water_voxels.h"

namespace vtp::physics {

using terrain::ChunkCoord;

Result<bool> raycastWater(const TerrainPhysics& physics, const Ray& ray, WaterHit& hit) {
  {
    ChunkRay check;  // validates the ray and its range once
    if (Status s = prepareRay(ray, {0, 0, 0}, physics.voxelSize(), check); !s) return s.error();
  }
  const double inv = 1.0 / physics.voxelSize();
  water::VoxelSegment segment{{ray.origin[0] * inv, ray.origin[1] * inv, ray.origin[2] * inv},
                              {ray.direction[0] * inv, ray.direction[1] * inv, ray.direction[2] * inv}};
  // A wet span shorter than kTouchVoxels along the ray is a touch (an edge or corner seen through rounding), not an
  // entry: in t, that length over the direction's largest component (in voxels per t; prepareRay refused zero).
  segment.min_wet = kTouchVoxels / std::max({std::abs(segment.d[0]), std::abs(segment.d[1]), std::abs(segment.d[2])});
  constexpr double kSize = terrain::kChunkSize;
  std::array<std::int64_t, 3> cell{}, step{};
  std::array<double, 3> t_next{};
  // Where the segment leaves the current chunk along axis a: computed from the chunk each time, not accumulated (a
  // sum of steps drifts by more than kTouchVoxels over a few thousand chunks, and a chunk entered a hair early hands
  // walkWet a span in a voxel the segment only touches).
  const auto crossing = [&](std::size_t a) {
    const double d = segment.d[a];
    return d == 0 ? HUGE_VAL : ((double(cell[a]) + (d > 0 ? 1.0 : 0.0)) * kSize - segment.a[a]) / d;
  };
  for (std::size_t a = 0; a < 3; ++a) {
    cell[a] = std::int64_t(std::floor(segment.a[a] / kSize));
    step[a] = segment.d[a] > 0 ? 1 : (segment.d[a] < 0 ? -1 : 0);
    t_next[a] = crossing(a);
  }
  thread_local std::vector<terrain::Voxel> voxels(terrain::kChunkVolume);
  double t = 0;
  int entered = -1;  // axis of the chunk face the walk last crossed
  for (;;) {
    const std::size_t axis = std::size_t(std::min_element(t_next.begin(), t_next.end()) - t_next.begin());
    const double t_end = std::min(t_next[axis], ray.max_t);
    const ChunkCoord c{std::int32_t(cell[0]), std::int32_t(cell[1]), std::int32_t(cell[2])};
    if (physics.masks().mayHoldWater(c)) {
      if (Status s = physics.world().readBox(terrain::chunkBox(c), voxels); !s) return s.error();
      bool found = false;
      water::walkWet(segment, water::chunkBlock(c, voxels.data()), t, t_end,
                     [&](double w0, double, int x, int y, int z, water::WetStart how, int face) {
                       found = true;
                       hit.t = w0;
                       for (std::size_t a = 0; a < 3; ++a) hit.point[a] = ray.origin[a] + w0 * ray.direction[a];
                       hit.voxel = {c.x * terrain::kChunkSize + x, c.y * terrain::kChunkSize + y,
                                    c.z * terrain::kChunkSize + z};
                       hit.chunk = c;
                       hit.starts_in_water = w0 == 0;
                       hit.normal = {0, 0, 0};
                       if (hit.starts_in_water) {
                         // Over the largest component first: the squares of a direction of 1e-200 or 1e200 would
                         // underflow or overflow (prepareRay refused a zero one).
                         const double largest = std::max({std::abs(ray.direction[0]), std::abs(ray.direction[1]),
                                                          std::abs(ray.direction[2])});
                         const std::array<double, 3> u{ray.direction[0] / largest, ray.direction[1] / largest,
                                                       ray.direction[2] / largest};
                         const double len = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
                         for (std::size_t a = 0; a < 3; ++a) hit.normal[a] = -u[a] / len + 0.0;  // no -0
                       } else if (how == water::WetStart::kSurface) {
                         hit.normal[1] = 1;
                       } else {
                         // A voxel face: inside the chunk, or the chunk's own face at the walk's start.
                         const int a = how == water::WetStart::kFace ? face : entered;
                         if (a >= 0) hit.normal[std::size_t(a)] = ray.direction[std::size_t(a)] > 0 ? -1 : 1;
                       }
                       return false;
                     });
      if (found) return true;
    }
    if (t_next[axis] > ray.max_t) return false;
    t = std::max(t, t_next[axis]);  // never -0 or below the previous chunk's start
    cell[axis] += step[axis];
    t_next[axis] = crossing(axis);
    entered = int(axis);
  }
}

}  // namespace vtp::physics
