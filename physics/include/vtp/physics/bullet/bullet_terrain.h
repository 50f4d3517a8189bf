#pragma once
/// \file
/// The terrain inside a Bullet world: one static collision object standing for the whole terrain, and a collision
/// algorithm registered with the world's own btCollisionDispatcher for terrain against every convex shape, so ordinary
/// btRigidBody objects collide with the terrain with no further code. Per body it keeps one btPersistentManifold per
/// body-chunk pair, created and released as the pair tracker reports pairs added and removed. Bullet's rayTest,
/// convexSweepTest, contactTest and continuous collision against the terrain object also work; rays and sweeps walk
/// the chunks along their path instead of gathering triangles over their whole bounding box.
///
/// The library sets no process-global Bullet state (no gContactAddedCallback, no custom allocator, no global
/// dispatcher functions): everything is registered on the given world's dispatcher and undone on destruction.
///
/// Thread-safety: like the btCollisionWorld it is attached to (one stepping thread; not btCollisionDispatcherMt, whose
/// parallel narrowphase would share the adapter's state). The terrain's contact searches can run on several threads
/// in a pass before each substep's collision detection (runContactPass). Edit the terrain between steps;
/// then call wakeBodies() so bodies resting where the terrain changed are activated. An edit from another thread
/// during a step is safe (the pair changes the step applies stay consistent, PairTracker), but which bodies see it in
/// that step depends on when their pairs were updated.

#include <btBulletDynamicsCommon.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "vtp/physics/task_runner.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

struct BulletTerrainState;

struct BulletTerrainOptions {
  /// A body-chunk manifold keeps its terrain-side points and normals while its body stays within this distance of
  /// the pose they were found at (and turns less than max_reuse_angle) and the chunk is not edited; depths are
  /// re-evaluated every step. 0 disables reuse. [Unit: voxel]
  double max_reuse_distance = 0.01;
  /// [Unit: radian] (0.5 degree)
  double max_reuse_angle = 0.00872664626;
  /// One-sided terrain contacts (ContactOptions::one_sided): a body whose corner is pressed deep into a slope, where
  /// the least overlap with some triangle points further in, is pushed out through the face instead.
  bool one_sided = true;
};

/// Counters since attach (or the last resetStats()).
struct BulletTerrainStats {
  std::uint64_t narrowphase_calls = 0;        ///< Body-terrain algorithm runs.
  std::uint64_t empty_narrowphase_calls = 0;  ///< ... of which produced no contact point.
  std::uint64_t gjk_calls = 0;                ///< Per-triangle GJK/EPA runs (specialised tests not counted).
  std::uint64_t contacts = 0;                 ///< Contact points written into manifolds.
  std::uint64_t reused_manifolds = 0;         ///< Body-chunk manifolds refreshed without a new triangle search.
  std::uint64_t colliders_built = 0;          ///< Colliders the step's searches built (not found in the cache).
  std::uint64_t pass_links = 0;       ///< Body-chunk links the contact pass brought up to date (runContactPass).
  std::uint64_t pass_links_used = 0;  ///< ... of which the near-callback found current (the rest it updated again).
  std::uint64_t live_manifolds = 0;           ///< Body-chunk manifolds that exist now.
};

class BulletTerrain {
 public:
  /// Adds the terrain object to `world` and registers the terrain algorithms with its dispatcher, which must be a
  /// btCollisionDispatcher: contacts for convex objects (compound children included) and Bullet's closest-point
  /// queries (contactTest, contactPairTest) for (convex, CUSTOM_CONCAVE_SHAPE_TYPE) pairs in either order; other
  /// concave shapes of that type get what the dispatcher held for those pairs before (the game's own create
  /// functions, or the configuration's). A create function the game registers for those pairs after attach replaces
  /// the terrain's. `physics` and `world` must outlive the returned object. Errors (kInvalidArgument): a dispatcher
  /// of another type, a dispatcher that serves a vtp terrain already (attached to this world or another world
  /// sharing it).
  static Result<std::unique_ptr<BulletTerrain>> attach(TerrainPhysics& physics, btCollisionWorld& world,
                                                       BulletTerrainOptions options = {});
  /// Removes the object and the manifolds, and puts back what the dispatcher held for those pairs before attach
  /// (entries the game replaced since are left alone).
  ~BulletTerrain();
  BulletTerrain(const BulletTerrain&) = delete;
  BulletTerrain& operator=(const BulletTerrain&) = delete;

  /// The terrain's collision object (static; world units; its shape is a btConcaveShape).
  btCollisionObject& object() noexcept;

  /// Activates every body the terrain's edits woke since the last call (the terrain changed within one voxel of its
  /// box) and drops the contact reuse of edited chunks. Call between steps, after editing. Returns how many bodies
  /// were activated.
  std::size_t wakeBodies();

  /// Brings the terrain contacts the coming collision detection needs up to date on `tasks`' threads, ahead of the
  /// dispatcher: for every awake body whose own shape is convex (compound children are left to the near-callback),
  /// each body-chunk manifold it has: points refreshed, reused or searched again (a chunk its box enters in this
  /// substep is handled by the near-callback once the pair exists). The near-callback then leaves alone what the pass
  /// did when the body's pose, shape and the terrain are exactly as the pass saw them; pairs are still added and
  /// removed there, in the dispatcher's order, so a step gives the same result bit for bit with or without the pass
  /// and for any number of workers. Call it at the start of each
  /// simulation substep, before collision detection: from an override of performDiscreteCollisionDetection() that
  /// calls it and then the base, or from the world's internal pre-tick callback (btDynamicsWorld::
  /// setInternalTickCallback(cb, user, true)), where the bodies already stand where collision detection will see them.
  /// The pass applies the edits' pair changes and wakes their bodies first (as wakeBodies() does): call wakeBodies()
  /// after editing, as always, or bodies woken by an edit may be activated earlier with the pass than without it. A
  /// body whose pose or shape changes between the pass and collision detection is updated again by the near-callback
  /// (its points were refreshed at both poses); the pass's work is trusted once. Out of memory in a search: that
  /// body is left to the near-callback.
  /// Thread-safety: on the stepping thread, between steps' collision detection (not inside a near-callback); the
  /// searches read the terrain physics' thread-safe queries and each body's own links.
  void runContactPass(TaskRunner& tasks);

  /// The chunks whose colliders the world's moving bodies will need within `seconds` [Unit: s] and the collider cache
  /// does not hold, for a ColliderPrefetcher (collider_prefetch.h) to build off the step's critical path: for each awake rigid
  /// body moving at least a quarter voxel over `seconds`, its box grown by its contact threshold and swept along its
  /// linear velocity (Space Engineers prefetches along v x 3 s), the chunks the mask index says it may touch solid in
  /// that may own triangles (bodies beyond physics' range or with a non-finite pose or velocity are skipped). Sorted
  /// (z, y, x), each once, into `out` (cleared first): the same list for the same world, bodies and cache. Call on the
  /// stepping thread, between steps. Errors: `seconds` not finite or negative (kInvalidArgument), `out` empty then.
  Status prefetchCandidates(double seconds, std::vector<terrain::ChunkCoord>& out) const;

  /// The bodies whose box (grown by the contact threshold) reached beyond physics' range, 2^16 voxels from the origin
  /// (physics/README.md), when the dispatcher last ran their pair with the terrain: they get no terrain contacts until they come back.
  /// Each once, in the order of the world's collision object array. A game server should move or remove them.
  std::vector<const btCollisionObject*> bodiesOutsideRange() const;

  BulletTerrainStats stats() const noexcept;
  void resetStats() noexcept;

 private:
  using State = BulletTerrainState;
  explicit BulletTerrain(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

}  // namespace vtp::physics
