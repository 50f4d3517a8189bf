#pragma once
/// \file
/// Contacts between a convex shape and the terrain, engine-neutral (TerrainPhysics::contacts). Per chunk the shape
/// may touch (the mask index's solid pairs), the collider's triangles under the shape's box are tested one by one —
/// closed forms for spheres and capsules, Bullet's GJK/EPA for the other shapes — and the contacts are reduced to one
/// manifold of at most four points spanning the largest area.

#include <array>
#include <cstdint>

#include "vtp/physics/world_vec.h"
#include "vtp/terrain/coords.h"

namespace vtp::physics {

/// One contact point. [Unit: world]
struct ContactPoint {
  /// On the terrain surface, except for a contact on an internal edge that took its face's normal: there it lies
  /// along that normal from the shape's point facing the face, at the edge contact's depth (a little off the surface).
  WorldVec3 point;
  std::array<float, 3> normal{};  ///< Unit, out of the terrain (towards the shape).
  /// How deep the shape reaches into the terrain along the normal: > 0 overlapping, <= 0 separated by -depth (points
  /// are reported up to the query's contact distance).
  double depth = 0;
  int triangle = -1;          ///< Collider triangle id in the manifold's chunk.
  std::uint8_t material = 0;  ///< The triangle's material.
  float friction = 0;         ///< The material's friction (world material table).
  float restitution = 0;      ///< The material's restitution.
};

/// The contacts of one body-chunk pair.
struct ChunkManifold {
  terrain::ChunkCoord chunk;
  int count = 0;  ///< 1..4 points used.
  std::array<ContactPoint, 4> points{};
};

struct ContactOptions {
  /// Points separated by less than this are reported too (Bullet's contact breaking threshold plays this role).
  /// [Unit: world units] finite, >= 0.
  double contact_distance = 0.02;
  /// Treat the terrain as one-sided (a triangle's back faces the inside of the solid): a contact whose normal points
  /// into the solid takes the face normal and the depth behind the face's plane where the shape's centre lies over
  /// the face, and is dropped elsewhere (past a ridge, where the neighbouring face holds the body). Off by default, so
  /// the contacts are GJK/EPA's two-sided ones (with internal edges corrected); the Bullet adapter turns it on
  /// (BulletTerrainOptions::one_sided): a body pressed deep into a slope is pushed out, never through.
  bool one_sided = false;
};

/// Work a query did.
struct ContactStats {
  std::uint64_t chunks = 0;     ///< Chunks whose collider was searched.
  std::uint64_t triangles = 0;  ///< Triangles tested.
  std::uint64_t gjk_calls = 0;  ///< GJK/EPA runs (the specialised tests are not counted).
};

}  // namespace vtp::physics
