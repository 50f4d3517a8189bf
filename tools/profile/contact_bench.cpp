// How the figures are taken (voxel units, times the world's voxel size):
// - Poses: 128 columns at uniformly random x, z at least 40 voxels inside the stored chunks' bounds, each with a ray
//   cast down from 40 voxels above the bounds; where it hits the surface, a sphere of radius 32 rests on the hit
//   point, sunk 0.05 voxel (its centre 31.95 above the hit). Columns whose ray hits nothing are left out.
// - Time: contacts() per pose, cycling over the poses, median of 3 repetitions of at least as many calls as poses,
//   clock overhead subtracted; every pose runs once before the timing (its colliders are then in the cache, as in
//   a server's later steps).
#include "contact_bench.h"

#include <algorithm>
#include <climits>
#include <random>
#include <vector>

#include "report.h"
#include "timing.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools {

using namespace vtp::terrain;

namespace {

constexpr int kPoses = 128;
constexpr double kRadius = 32;  // [Unit: voxel]

}  // namespace

Result<nlohmann::json> benchContacts(const std::filesystem::path& path, std::uint64_t seed) {
  Result<LoadedWorld> loaded = loadWorldFile(path);
  if (!loaded) return loaded.error();
  World& world = *loaded->world;
  auto created = physics::TerrainPhysics::create(world);
  if (!created) return created.error();
  physics::TerrainPhysics& physics = *created.value();
  const double s = world.voxelSize();
  VoxelCoord lo{INT_MAX, INT_MAX, INT_MAX}, hi{INT_MIN, INT_MIN, INT_MIN};
  {
    auto guard = world.read();
    world.forEachChunk(guard, [&](ChunkCoord c, const Chunk&) {
      const VoxelBox b = chunkBox(c);
      lo = {std::min(lo.x, b.min.x), std::min(lo.y, b.min.y), std::min(lo.z, b.min.z)};
      hi = {std::max(hi.x, b.max.x), std::max(hi.y, b.max.y), std::max(hi.z, b.max.z)};
    });
  }
  std::vector<physics::Pose> poses;
  const double margin = 40;
  if (lo.x <= hi.x && hi.x - lo.x > 2 * margin && hi.z - lo.z > 2 * margin) {
    std::mt19937_64 rng(seed ^ 0x434f4e5441435453ull);
    std::uniform_real_distribution<double> x(lo.x + margin, hi.x - margin), z(lo.z + margin, hi.z - margin);
    for (int i = 0; i < kPoses; ++i) {
      physics::Ray ray;
      const double px = x(rng), pz = z(rng);
      ray.origin = {px * s, (hi.y + 40) * s, pz * s};
      ray.direction = {0, -(hi.y - lo.y + 80) * s, 0};
      physics::WorldRayHit hit;
      auto found = physics.raycastClosest(ray, hit);
      if (!found) return found.error();
      if (!*found) continue;
      physics::Pose pose;
      pose.position = {hit.hit.point.x, hit.hit.point.y + (kRadius - 0.05) * s, hit.hit.point.z};
      poses.push_back(pose);
    }
  }
  const physics::ConvexShape sphere = physics::ConvexShape::sphere(kRadius * s);
  std::vector<physics::ChunkManifold> out;
  std::vector<double> times_us;
  std::size_t manifolds = 0, points = 0;
  for (const physics::Pose& pose : poses) {
    if (Status st = physics.contacts(sphere, pose, out); !st) return st.error();
    manifolds += out.size();
    for (const auto& m : out) points += std::size_t(m.count);
  }
  nlohmann::json j;
  j["world"] = jsonText(path.string());
  j["sphere_r32_poses"] = poses.size();
  j["sphere_r32_manifolds_per_pose"] = poses.empty() ? nlohmann::json() : nlohmann::json(double(manifolds) / double(poses.size()));
  j["sphere_r32_points_per_pose"] = poses.empty() ? nlohmann::json() : nlohmann::json(double(points) / double(poses.size()));
  if (poses.empty()) {
    j["sphere_r32_median_us"] = nullptr;
  } else {
    std::size_t sink = 0;
    const double ns = medianNsPerCall(
        [&](std::size_t n) {
          Cycle next(poses.size());
          for (std::size_t i = 0; i < n; ++i) {
            if (physics.contacts(sphere, poses[next.next()], out).ok()) sink += out.size();
          }
        },
        poses.size());
    j["sphere_r32_median_us"] = ns / 1000.0;
    if (sink == 1) j["sink"] = sink;  // keeps the timed calls
  }
  j["timing"] = "TerrainPhysics::contacts of a sphere of radius 32 voxels resting (sunk 0.05 voxel) on the surface "
                "under 128 random columns; batches cycling over the poses, median of 3, clock overhead subtracted, "
                "colliders cached";
  return j;
}

}  // namespace vtp::tools
