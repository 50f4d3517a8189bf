#pragma once
// Test helpers for colliders: a chunk's collider built fresh from the world as it is now (the brute-force side of the
// collider, cache and ray tests), and a fingerprint of a collider's content (its triangles in id order, with
// materials).

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <vector>

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

/// Chunk c's collider built from the world's current content (its 10^3 box, the mesher, `builder`).
inline std::unique_ptr<physics::Collider> freshCollider(const terrain::World& world, terrain::ChunkCoord c,
                                                        physics::ColliderBuilder& builder) {
  thread_local mesher::SurfaceMesher mesher;
  thread_local mesher::ChunkMesh mesh;
  const terrain::VoxelCoord o = terrain::chunkOrigin(c);
  std::vector<terrain::Voxel> box(1000);
  REQUIRE(world.readBox({{o.x - 1, o.y - 1, o.z - 1}, {o.x + 9, o.y + 9, o.z + 9}}, box).ok());
  REQUIRE(mesher.mesh(box, mesher::kApron, mesh).ok());
  auto built = builder.build(mesh, c);
  REQUIRE(built.ok());
  return std::move(built.value());
}

/// The fingerprint of chunk c's collider built from the world's current content.
inline std::uint64_t freshFingerprint(const terrain::World& world, terrain::ChunkCoord c) {
  physics::ColliderBuilder builder;
  return fingerprint(*freshCollider(world, c, builder));
}

}  // namespace vtp::test
