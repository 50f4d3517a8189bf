#pragma once
/// \file
/// The physics of one terrain world: the mask index (mask_index.h) and the collider cache (collider_cache.h), both
/// kept current through the world's change events, and the queries that span chunks. Rays come first; contacts,
/// water and the Bullet adapter build on this (physics/README.md, "What the module does").
///
/// Thread-safety: every query may run on any number of threads, concurrently with edits on the world (each query
/// sees, per chunk, the terrain before or after a concurrent edit, never a mix inside one chunk).
/// Range: physics answers within |x| < 2^16 voxels of the origin (physics/README.md); beyond is an error.

#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include "vtp/physics/collider.h"
#include "vtp/physics/collider_cache.h"
#include "vtp/physics/contact.h"
#include "vtp/physics/mask_index.h"
#include "vtp/physics/shape.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::physics {

struct TerrainPhysicsOptions {
  MaskIndexOptions masks;
  ColliderCacheOptions colliders;
};

/// A hit of a world ray: the collider hit (t along the ray as given, point, normal, material, front face), its chunk,
/// and the hit triangle's corners as that collider stores them ([Unit: 1/1024 voxel (1 / kGridScale), relative to
/// the chunk's origin]; read from the collider the hit came from, so they match it even if an edit has since replaced
/// the chunk's collider).
struct WorldRayHit {
  RayHit hit;
  terrain::ChunkCoord chunk;
  std::array<mesher::Vertex, 3> vertices{};
};

class TerrainPhysics {
 public:
  /// Builds the mask index of `world` and an empty collider cache; both follow the world's edits. Must be destroyed
  /// before the world. Errors: a CPU without x86-64-v3 (kUnsupportedCpu), invalid options (kInvalidArgument).
  static Result<std::unique_ptr<TerrainPhysics>> create(terrain::World& world, TerrainPhysicsOptions options = {});

  const MaskIndex& masks() const noexcept { return *m_masks; }
  MaskIndex& masks() noexcept { return *m_masks; }
  ColliderCache& colliders() noexcept { return *m_colliders; }
  double voxelSize() const noexcept { return m_voxel_size; }
  const terrain::World& world() const noexcept { return m_world; }

  /// The contacts of `shape` at `pose` with the terrain, one manifold per chunk with contacts, into `out` (cleared
  /// first), in the order of the mask index's query. Adds to `stats` when given. Costs one allocation per call (the
  /// shape's Bullet form); a Bullet world should use the adapter (bullet/bullet_terrain.h), which holds its shapes.
  /// Errors: an invalid shape, pose or options (kInvalidArgument), a shape reaching 2^16 voxels from the origin
  /// (kOutOfRange); `out` is empty then.
  Status contacts(const ConvexShape& shape, const Pose& pose, std::vector<ChunkManifold>& out,
                  const ContactOptions& options = {}, ContactStats* stats = nullptr);

  /// The closest surface hit with t in [0, ray.max_t] into `hit`; false when nothing is hit. Chunks are visited in
  /// order of entry into their bounds grown by one voxel (where their triangles lie) and the walk stops when the next
  /// chunk's entry exceeds the best hit. Errors: as prepareRay (kInvalidArgument, kOutOfRange).
  Result<bool> raycastClosest(const Ray& ray, WorldRayHit& hit);
  /// Whether any surface lies on the segment.
  Result<bool> raycastAny(const Ray& ray);
  /// Every hit on the segment, sorted by t (then chunk, then triangle), into `out` (cleared first). A ray through a
  /// shared edge can report both triangles at the same t.
  Status raycastAll(const Ray& ray, std::vector<WorldRayHit>& out);

 private:
  TerrainPhysics(terrain::World& world, std::unique_ptr<MaskIndex> masks, std::unique_ptr<ColliderCache> colliders);
  // The chunk walk (src/query/chunk_walk.h) over the chunks that may own triangles (their masks have solid bits)
  // while `keep_going(entry)`: `visit(collider, ray prepared for it, chunk)` returns false to stop. Returns the first
  // error.
  template <class Continue, class Visit>
  Status walkColliders(const Ray& ray, Continue&& keep_going, Visit&& visit);

  terrain::World& m_world;
  double m_voxel_size;
  std::unique_ptr<MaskIndex> m_masks;
  std::unique_ptr<ColliderCache> m_colliders;
};

}  // namespace vtp::physics
