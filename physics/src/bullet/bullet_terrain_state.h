#pragma once
// The state behind BulletTerrain (bullet_terrain.h), shared by its three parts: the terrain shape Bullet's queries
// run on (terrain_shape.cpp), the collision algorithm that fills per-chunk manifolds (terrain_algorithm.cpp), and
// the attachment to a world (bullet_terrain.cpp).
#include <BulletCollision/CollisionDispatch/btCollisionCreateFunc.h>
#include <BulletCollision/CollisionShapes/btConcaveShape.h>
#include <BulletCollision/NarrowPhaseCollision/btRaycastCallback.h>
#include <btBulletDynamicsCommon.h>

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "contact/chunk_contacts.h"
#include "vtp/physics/bullet/bullet_terrain.h"
#include "vtp/physics/pair_tracker.h"
#include "vtp/physics/task_runner.h"

namespace vtp::physics {

struct BulletTerrainState;

/// The whole terrain as one Bullet concave shape. Its object must keep the identity transform. processAllTriangles
/// recognises Bullet's ray and convex-cast callbacks and walks the chunks along their path (world rays, swept boxes)
/// instead of gathering the path's bounding box; other callbacks get the triangles under the box, chunk by chunk.
/// Triangles are reported with partId 0 and their collider triangle id.
class TerrainShape final : public btConcaveShape {
 public:
  explicit TerrainShape(BulletTerrainState& state);
  void getAabb(const btTransform& t, btVector3& aabb_min, btVector3& aabb_max) const override;
  void processAllTriangles(btTriangleCallback* callback, const btVector3& aabb_min,
                           const btVector3& aabb_max) const override;
  void calculateLocalInertia(btScalar mass, btVector3& inertia) const override;
  void setLocalScaling(const btVector3& scaling) override;
  const btVector3& getLocalScaling() const override { return m_scaling; }
  const char* getName() const override { return "vtpTerrain"; }

 private:
  void raycast(btTriangleRaycastCallback& callback) const;
  void convexcast(btTriangleConvexcastCallback& callback) const;
  // Feeds every triangle of the MIXED chunks under the box [min, max] to `callback`; `seen` (when given) skips
  // triangles already fed.
  void feedBox(btTriangleCallback& callback, const btVector3& min, const btVector3& max,
               std::unordered_set<std::uint64_t>* seen) const;
  BulletTerrainState& m_state;
  btVector3 m_scaling{1, 1, 1};
};

/// One body-chunk manifold and what its contact reuse needs.
struct ChunkLink {
  terrain::ChunkCoord chunk;
  btPersistentManifold* manifold = nullptr;
  bool recheck = false;  // an edit came within a voxel of the body: points the next search does not find are dropped
  btTransform found_at = btTransform::getIdentity();  // the body's pose when the terrain-side points were found
  const btConvexShape* found_with = nullptr;            // and its shape then (a game may swap a body's shape)
  // MaskIndex::mayOwnTriangles of the chunk, as of MaskIndex::version() `owns_at` (odd: not known).
  bool owns = false;
  std::uint64_t owns_at = 1;
  std::uint64_t sequence = ~0ull;  // World::publishSequence() then (~0: never)
};

/// What the terrain keeps per body it touches: per collision algorithm, so each child of a compound shape is a body
/// of its own (id = the algorithm's address).
struct BodyLinks {
  btCollisionObject* object = nullptr;
  std::vector<ChunkLink> links;
  /// The algorithm's shape when it is the object's own (not a compound child's): what the contact pass can search
  /// for ahead of the near-callback; null until the algorithm first runs, and for compound children.
  const btConvexShape* shape = nullptr;
  std::size_t pass_slot = 0;  // where it stands in BulletTerrainState::passable, once `shape` is set
  /// The contact pass of this substep brought every link the body had then up to date for the object's pose
  /// `pass_pose` with `pass_shape` at World::publishSequence() `pass_sequence` (~0: none). The near-callback trusts
  /// that once, when the body stands there still.
  btTransform pass_pose = btTransform::getIdentity();
  const btConvexShape* pass_shape = nullptr;  // the shape it updated them with
  std::uint64_t pass_sequence = ~0ull;  // set to ~0 again once the near-callback has read it
};

/// One worker's buffers in the contact pass, and what it adds to the stats.
struct PassWorker {
  ContactScratch scratch;
  BulletTerrainStats counts;
};

/// Whether `now` is within the reuse tolerances of `then`: the options' distance, but never more than the shape's
/// contact threshold (a search that found nothing within it stays true while the body moves less: a body whose
/// threshold is below the tolerance once moved through the ground on reused empty searches).
bool closeEnough(const btTransform& now, const btTransform& then, const BulletTerrainOptions& o, double voxel_size,
                 btScalar threshold);

/// The create functions a BulletTerrain registers (terrain_algorithm.cpp, terrain_closest_points.cpp): a dispatcher
/// that holds one already serves a terrain.
class TerrainCreateFuncBase : public btCollisionAlgorithmCreateFunc {};

/// The dispatcher's create functions for the pairs of a convex shape and CUSTOM_CONCAVE_SHAPE_TYPE, in either order:
/// what attach found there (the game's own, or the configuration's) and puts back when the terrain goes. Other concave
/// shapes of that type keep getting these.
class DispatcherEntries {
 public:
  /// Every convex proxy type: the shapes the terrain algorithm serves.
  static constexpr int kConvexTypes = CONCAVE_SHAPES_START_HERE;
  enum Query { kContacts, kClosestPoints };

  /// Records the dispatcher's current entries.
  explicit DispatcherEntries(btCollisionDispatcher& dispatcher);
  /// Whether a terrain's create functions are among them (another BulletTerrain serves this dispatcher).
  bool holdTerrain() const;
  /// What was registered for the pair of shape types `type0`, `type1` (one convex, the other CUSTOM_CONCAVE).
  btCollisionAlgorithmCreateFunc* previous(Query query, int type0, int type1) const;
  /// Registers `contacts` and `closest` for every convex type against CUSTOM_CONCAVE, in either order (`contacts[1]`
  /// when the concave shape comes first).
  void install(btCollisionAlgorithmCreateFunc* const (&contacts)[2], btCollisionAlgorithmCreateFunc* closest);
  /// Puts the recorded entries back where they still hold what install registered (an entry the game replaced since
  /// is left alone).
  void restore(const btCollisionAlgorithmCreateFunc* const (&contacts)[2],
               const btCollisionAlgorithmCreateFunc* closest);

 private:
  btCollisionDispatcher& m_dispatcher;
  // [query][convex type][concave first]
  btCollisionAlgorithmCreateFunc* m_previous[2][kConvexTypes][2];
};

struct BulletTerrainState {
  BulletTerrainState(TerrainPhysics& physics, btCollisionWorld& world, BulletTerrainOptions options);

  TerrainPhysics& physics;
  btCollisionWorld& world;
  btCollisionDispatcher& dispatcher;
  BulletTerrainOptions options;
  PairTracker tracker;
  TerrainShape shape;
  btCollisionObject object;
  BulletTerrainStats stats;
  std::unordered_map<std::uint64_t, std::unique_ptr<BodyLinks>> bodies;
  // Bodies (by algorithm id) whose box reached beyond physics' range at their last run: they get no terrain contacts.
  std::unordered_map<std::uint64_t, const btCollisionObject*> outside;
  DispatcherEntries entries;  // what the dispatcher held before attach registered these:
  std::unique_ptr<btCollisionAlgorithmCreateFunc> create_contacts[2];  // [terrain first]
  std::unique_ptr<btCollisionAlgorithmCreateFunc> create_closest_points;
  PairChanges changes;  // reused
  ContactScratch scratch;
  std::vector<PassWorker> pass_workers;  // the contact pass's, one per worker
  std::vector<BodyLinks*> passable;      // the bodies whose own shape the pass can search for (BodyLinks::shape)
  std::vector<BodyLinks*> pass_bodies;   // of those, the awake ones it searches for, reused
  std::vector<ChunkTouch> prefetch_touches;  // prefetchCandidates' scratch

  // The links of body `id` (on collision object `object`), created on first use; the entry stays at its address until
  // removeBody(id).
  BodyLinks& links(std::uint64_t id, const btCollisionObject* object);
  // Applies pair changes (solid pairs only) to the bodies' links: manifolds created and released.
  void apply(const PairChanges& changes);
  // Applies the pair changes edits made since the last call, activates the bodies they woke and marks their links for
  // a recheck; returns how many.
  std::size_t drainEdits();
  // Forgets a body: its pairs and manifolds.
  void removeBody(std::uint64_t id);
  // Brings `link`'s manifold up to date for `body` with `convex` at `pose` (bounds [min, max]): refreshes its
  // points, keeps the terrain-side points while they can be reused, else searches the chunk again and adds what it
  // finds (as btManifoldResult would, with the triangle material's friction and restitution). Adds to `counts`
  // (reused_manifolds, contacts, gjk_calls, colliders_built). Returns the manifold's points. Touches `link` and its
  // manifold only, so bodies can be updated on several threads (link_update.cpp).
  int updateLink(ChunkLink& link, const btCollisionObject& body, const btConvexShape& convex, const btTransform& pose,
                 const std::array<double, 3>& min, const std::array<double, 3>& max, btScalar threshold,
                 std::uint64_t sequence, ContactScratch& work, BulletTerrainStats& counts);
  // One chunk's manifold for `convex` at `pose` (bounds [min, max], world units) at the terrain's current state: its
  // count of points into `kept`, 0 for a chunk that owns no triangles, -1 when its collider cannot be had.
  // `link` (when given) is the body-chunk link searched for, which keeps the chunk's mayOwnTriangles answer.
  int searchChunk(const btConvexShape& convex, const btTransform& pose, const std::array<double, 3>& min,
                  const std::array<double, 3>& max, terrain::ChunkCoord chunk, btScalar threshold,
                  ContactScratch& work, ContactCounters& counters, std::span<ChunkContact, kManifoldPoints> kept,
                  ChunkLink* link = nullptr);
  // The contact pass (BulletTerrain::runContactPass).
  void runContactPass(TaskRunner& tasks);
};

/// The create function registered for (convex, terrain) and (terrain, convex) pairs: our algorithm when the concave
/// side is the terrain object, what the dispatcher held before (DispatcherEntries) otherwise.
btCollisionAlgorithmCreateFunc* newTerrainCreateFunc(BulletTerrainState& state, bool terrain_first);
/// The same for Bullet's closest-point queries (contactTest, contactPairTest), in either order
/// (terrain_closest_points.cpp).
btCollisionAlgorithmCreateFunc* newClosestPointsCreateFunc(BulletTerrainState& state);

}  // namespace vtp::physics
