// README "Using vtp in your server": load a world, edit it, mesh a chunk, cast a ray, find contacts, save it.
#include <algorithm>
#include <cstdio>

#include <vtp/mesher/surface_mesher.h>
#include <vtp/physics/terrain_physics.h>
#include <vtp/terrain/world.h>
#include <vtp/terrain/world_file.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.vtw OUT.vtw\n", argv[0]);
    return 2;
  }
  using namespace vtp::terrain;

  // Load (validates everything; a damaged file is an error, never a partial world).
  auto loaded = loadWorldFile(argv[1]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "load failed: %s\n", loaded.error().message.c_str());
    return 1;
  }
  World& world = *loaded->world;

  // Listen for changes (the physics module does this to keep its masks and colliders current).
  Subscription sub = world.subscribe([](std::span<const ChangeEvent> events) {
    std::printf("%zu chunk(s) changed\n", events.size());
  });

  // A player digs a crater and builds a dirt pillar. Bad input comes back as an error and changes nothing.
  auto dig = world.clearSphere({10.0, 4.0, -6.0}, 5.0);
  auto build = world.fillCylinder({-20.0, 8.0, 12.0}, 2.0, 12.0, *world.materials().find("dirt"));
  auto bad = world.fillSphere({0.0, 0.0, 0.0}, 1e9, 2);
  if (!dig.ok() || !build.ok() || bad.ok()) return 1;
  std::printf("rejected: %s\n", bad.error().message.c_str());

  // Mesh chunk (0,0,0): read it with a 1-voxel apron (10^3 voxels), then surface nets into reusable buffers.
  std::vector<Voxel> box(vtp::mesher::boxVolume(vtp::mesher::kApron));
  if (!world.readBox({{-1, -1, -1}, {9, 9, 9}}, box).ok()) return 1;
  vtp::mesher::SurfaceMesher mesher;  // one per thread; holds its scratch memory
  vtp::mesher::ChunkMesh mesh;        // sized once for the largest chunk
  auto triangles = mesher.mesh(box, vtp::mesher::kApron, mesh);
  if (!triangles.ok()) return 1;
  std::printf("chunk (0,0,0): %d triangles, %d vertices\n", *triangles, mesh.vertex_count);

  // Physics: the mask index and the collider cache follow the world's edits; a ray straight down into the crater.
  // Physics positions are vtp::physics::WorldVec3, in world units (voxels x voxel_size; 1 in this world).
  auto physics = vtp::physics::TerrainPhysics::create(world);
  if (!physics.ok()) return 1;
  vtp::physics::WorldRayHit hit;
  auto found = (*physics)->raycastClosest({{10.0, 40.0, -6.0}, {0.0, -1.0, 0.0}, 80.0}, hit);
  if (!found.ok() || !*found) return 1;
  std::printf("ray down at (10, -6): ground at y = %.3f\n", hit.hit.point.y);

  // Contacts of a ball of radius 0.5 sunk 0.1 into that ground: one manifold (up to 4 points) per chunk it touches.
  vtp::physics::Pose pose;
  pose.position = {hit.hit.point.x, hit.hit.point.y + 0.4, hit.hit.point.z};
  std::vector<vtp::physics::ChunkManifold> manifolds;
  if (!(*physics)->contacts(vtp::physics::ConvexShape::sphere(0.5), pose, manifolds).ok() || manifolds.empty())
    return 1;
  double deepest = 0;
  for (const auto& m : manifolds)
    for (int i = 0; i < m.count; ++i) deepest = std::max(deepest, m.points[std::size_t(i)].depth);
  std::printf("ball on the ground: %zu manifold(s), deepest %.3f\n", manifolds.size(), deepest);

  // Save atomically: the old file or the new one survives a crash, never a torn one.
  if (auto saved = saveWorldFile(world, argv[2]); !saved.ok()) {
    std::fprintf(stderr, "save failed: %s\n", saved.error().message.c_str());
    return 1;
  }
  std::printf("saved %s\n", argv[2]);
  return 0;
}
