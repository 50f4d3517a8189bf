// Bullet's closest-point queries (btCollisionWorld::contactTest and contactPairTest) for a convex object against the
// terrain object: the terrain's contacts within the query's distance threshold, chunk by chunk as the contact
// algorithm finds them (terrain_algorithm.cpp), without its per-body pairs, manifolds or reuse. Without it Bullet 3.24
// dispatches these queries on CUSTOM_CONCAVE_SHAPE_TYPE (= SDF_SHAPE_PROXYTYPE) to btConvexConcaveCollisionAlgorithm,
// which casts the terrain shape to btSdfCollisionShape.
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>

#include <vector>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {
namespace {

class TerrainClosestPoints final : public btCollisionAlgorithm {
 public:
  TerrainClosestPoints(const btCollisionAlgorithmConstructionInfo& ci, BulletTerrainState& state,
                       const btCollisionObject* body)
      : btCollisionAlgorithm(ci), m_state(state), m_manifold(ci.m_dispatcher1->getNewManifold(body, &state.object)) {}
  ~TerrainClosestPoints() override {
    if (m_manifold != nullptr) m_dispatcher->releaseManifold(m_manifold);
  }

  void processCollision(const btCollisionObjectWrapper* wrap0, const btCollisionObjectWrapper* wrap1,
                        const btDispatcherInfo&, btManifoldResult* result) override {
    BulletTerrainState& s = m_state;
    const btCollisionObjectWrapper* body = wrap0->getCollisionObject() == &s.object ? wrap1 : wrap0;
    const auto* shape = static_cast<const btConvexShape*>(body->getCollisionShape());
    const btTransform& pose = body->getWorldTransform();
    const btScalar threshold = std::max(result->m_closestPointDistanceThreshold, btScalar(0));
    std::array<double, 3> min, max;
    shapeBounds(*shape, pose, double(threshold), min, max);
    if (!s.physics.masks().query({{min[0], min[1], min[2]}, {max[0], max[1], max[2]}}, m_touches).ok()) return;
    if (m_manifold == nullptr) return;  // the dispatcher's manifold pool is full and may not grow
    // The manifold's body 0 is the convex object: each point goes in as a normal on the terrain and a point on it,
    // which btManifoldResult turns round when the query named the terrain first. The triangle id goes to the
    // terrain's side of the result, whichever that is.
    result->setPersistentManifold(m_manifold);
    const bool terrain_is_a = result->getBody0Internal() == &s.object;
    const double voxel_size = s.physics.voxelSize();
    for (const ChunkTouch& touch : m_touches) {
      if (!touch.solid) continue;
      ContactCounters counters;
      std::array<ChunkContact, kManifoldPoints> kept;
      const int n = s.searchChunk(*shape, pose, min, max, touch.chunk, threshold, s.scratch, counters, kept);
      const std::array<double, 3> origin = chunkOriginWorld(touch.chunk, voxel_size);
      const btVector3 shift{btScalar(origin[0]), btScalar(origin[1]), btScalar(origin[2])};
      for (int i = 0; i < n; ++i) {
        const ChunkContact& c = kept[std::size_t(i)];
        if (terrain_is_a) {
          result->setShapeIdentifiersA(0, c.triangle);
        } else {
          result->setShapeIdentifiersB(0, c.triangle);
        }
        result->addContactPoint(c.contact.normal, c.contact.point + shift, c.contact.distance);
      }
    }
  }

  btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                 btManifoldResult*) override {
    return 1;
  }

  void getAllContactManifolds(btManifoldArray& out) override { out.push_back(m_manifold); }

 private:
  BulletTerrainState& m_state;
  btPersistentManifold* m_manifold;
  std::vector<ChunkTouch> m_touches;
};

class ClosestPointsCreateFunc final : public TerrainCreateFuncBase {
 public:
  explicit ClosestPointsCreateFunc(BulletTerrainState& state) : m_state(state) {}
  btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& ci,
                                                 const btCollisionObjectWrapper* wrap0,
                                                 const btCollisionObjectWrapper* wrap1) override {
    const bool terrain0 = wrap0->getCollisionObject() == &m_state.object;
    if (!terrain0 && wrap1->getCollisionObject() != &m_state.object) {
      // Another concave shape of the same type: what the dispatcher held before attach.
      return m_state.entries
          .previous(DispatcherEntries::kClosestPoints, wrap0->getCollisionShape()->getShapeType(),
                    wrap1->getCollisionShape()->getShapeType())
          ->CreateCollisionAlgorithm(ci, wrap0, wrap1);
    }
    const btCollisionObject* body = terrain0 ? wrap1->getCollisionObject() : wrap0->getCollisionObject();
    void* memory = ci.m_dispatcher1->allocateCollisionAlgorithm(sizeof(TerrainClosestPoints));
    return new (memory) TerrainClosestPoints(ci, m_state, body);
  }

 private:
  BulletTerrainState& m_state;
};

}  // namespace

btCollisionAlgorithmCreateFunc* newClosestPointsCreateFunc(BulletTerrainState& state) {
  return new ClosestPointsCreateFunc(state);
}

}  // namespace vtp::physics
