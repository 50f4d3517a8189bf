#pragma once
// Test helpers for colliders: a fingerprint of a collider's content (its triangles in id order, with materials), and
// the fingerprint of a chunk's collider built fresh from the world as it is now.

#include <cstdint>

#include "vtp/physics/collider.h"
#include "vtp/physics/collider_builder.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

inline std::uint64_t fingerprint(const physics::Collider& c) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  mix(std::uint64_t(c.triangleCount()));
  for (int id = 0; id < c.triangleCount(); ++id) {
    const physics::ColliderTriangle t = c.triangle(id);
    for (const mesher::Vertex& v : t.vertices) {
      mix(std::uint16_t(v.x));
      mix(std::uint16_t(v.y));
      mix(std::uint16_t(v.z));
    }
    mix(t.material);
  }
  return h;
}

/// The fingerprint of chunk c's collider built from the world's current content.
inline std::uint64_t freshFingerprint(const terrain::World& world, terrain::ChunkCoord c) {
  mesher::SurfaceMesher mesher;
  mesher::ChunkMesh mesh;
  physics::ColliderBuilder builder;
  const terrain::VoxelCoord o = terrain::chunkOrigin(c);
  std::vector<terrain::Voxel> box(1000);
  if (!world.readBox({{o.x - 1, o.y - 1, o.z - 1}, {o.x + 9, o.y + 9, o.z + 9}}, box).ok()) return 0;
  if (!mesher.mesh(box, mesher::kApron, mesh).ok()) return 0;
  auto built = builder.build(mesh, c);
  return built.ok() ? fingerprint(**built) : 0;
}

}  // namespace vtp::test
