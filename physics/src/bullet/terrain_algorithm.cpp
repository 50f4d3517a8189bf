// The collision algorithm for a convex body against the terrain object: each run updates the body's pairs
// (PairTracker), keeps one btPersistentManifold per solid body-chunk pair, refreshes its points from the body's pose
// (as btPersistentManifold::refreshContactPoints does every step) and, unless the terrain-side points can be reused,
// searches the chunk's collider for new ones (chunk_contacts.h) and adds them as btManifoldResult would.
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>

#include <algorithm>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {
namespace {

class TerrainAlgorithm final : public btCollisionAlgorithm {
 public:
  TerrainAlgorithm(const btCollisionAlgorithmConstructionInfo& ci, BulletTerrainState& state,
                   const btCollisionObject* body)
      : btCollisionAlgorithm(ci), m_state(state), m_body(body), m_links(state.links(id(), body)) {}
  ~TerrainAlgorithm() override { m_state.removeBody(id()); }

  void processCollision(const btCollisionObjectWrapper* wrap0, const btCollisionObjectWrapper* wrap1,
                        const btDispatcherInfo&, btManifoldResult*) override {
    const btCollisionObjectWrapper* body = wrap0->getCollisionObject() == m_body ? wrap0 : wrap1;
    const auto* shape = static_cast<const btConvexShape*>(body->getCollisionShape());
    const btTransform& pose = body->getWorldTransform();          // the shape's (a compound child's own)
    BulletTerrainState& s = m_state;
    ++s.stats.narrowphase_calls;
    s.drainEdits();

    const btScalar threshold = shape->getContactBreakingThreshold(gContactBreakingThreshold);
    std::array<double, 3> min, max;
    shapeBounds(*shape, pose, double(threshold), min, max);
    BodyLinks& links = m_links;
    if (shape == m_body->getCollisionShape()) {  // the object's own: the pass can serve it
      if (links.shape == nullptr) {
        s.passable.push_back(&links);  // first: an allocation failure leaves the links unlisted
        links.pass_slot = s.passable.size() - 1;
      }
      links.shape = shape;  // the shape now, should the game have swapped it
    }
    if (Status st = s.tracker.update(id(), {{min[0], min[1], min[2]}, {max[0], max[1], max[2]}}, s.changes); !st) {
      // Out of physics' range (listed: bodiesOutsideRange) or not finite: no contacts.
      if (st.error().code == ErrorCode::kOutOfRange) s.outside[id()] = m_body;
      links.pass_sequence = ~0ull;
      for (ChunkLink& l : links.links) l.manifold->clearManifold();
      ++s.stats.empty_narrowphase_calls;
      return;
    }
    if (!s.outside.empty()) s.outside.erase(id());
    s.apply(s.changes);

    const std::uint64_t sequence = s.physics.world().publishSequence();
    // The contact pass ran for this very pose, shape and terrain (trusted once): it updated every link the body had
    // then, each now stamped with this sequence; a link the tracker has just added (never updated) is not.
    const bool pass_valid = links.pass_sequence == sequence && links.pass_shape == shape && links.pass_pose == pose;
    links.pass_sequence = ~0ull;
    int points = 0;
    for (ChunkLink& link : links.links) {
      if (pass_valid && link.sequence == sequence) {
        ++s.stats.pass_links_used;
        points += link.manifold->getNumContacts();
        continue;
      }
      points += s.updateLink(link, *m_body, *shape, pose, min, max, threshold, sequence, s.scratch, s.stats);
    }
    if (points == 0) ++s.stats.empty_narrowphase_calls;
  }

  btScalar calculateTimeOfImpact(btCollisionObject*, btCollisionObject*, const btDispatcherInfo&,
                                 btManifoldResult*) override {
    return 1;  // btDiscreteDynamicsWorld's continuous collision runs convex sweeps (TerrainShape) instead
  }

  void getAllContactManifolds(btManifoldArray& out) override {
    for (const ChunkLink& l : m_links.links) out.push_back(l.manifold);
  }

 private:
  std::uint64_t id() const noexcept { return std::uint64_t(reinterpret_cast<std::uintptr_t>(this)); }

  BulletTerrainState& m_state;
  const btCollisionObject* m_body;
  BodyLinks& m_links;  // this body's entry in m_state.bodies, until the destructor removes it
};

class TerrainCreateFunc final : public TerrainCreateFuncBase {
 public:
  TerrainCreateFunc(BulletTerrainState& state, bool terrain_first) : m_state(state), m_terrain_first(terrain_first) {}
  btCollisionAlgorithm* CreateCollisionAlgorithm(btCollisionAlgorithmConstructionInfo& ci,
                                                 const btCollisionObjectWrapper* wrap0,
                                                 const btCollisionObjectWrapper* wrap1) override {
    const btCollisionObjectWrapper* terrain = m_terrain_first ? wrap0 : wrap1;
    const btCollisionObjectWrapper* body = m_terrain_first ? wrap1 : wrap0;
    if (terrain->getCollisionObject() != &m_state.object) {
      // Another concave shape of the same type: what the dispatcher held before attach.
      return m_state.entries
          .previous(DispatcherEntries::kContacts, wrap0->getCollisionShape()->getShapeType(),
                    wrap1->getCollisionShape()->getShapeType())
          ->CreateCollisionAlgorithm(ci, wrap0, wrap1);
    }
    void* memory = ci.m_dispatcher1->allocateCollisionAlgorithm(sizeof(TerrainAlgorithm));
    return new (memory) TerrainAlgorithm(ci, m_state, body->getCollisionObject());
  }

 private:
  BulletTerrainState& m_state;
  bool m_terrain_first;
};

}  // namespace

btCollisionAlgorithmCreateFunc* newTerrainCreateFunc(BulletTerrainState& state, bool terrain_first) {
  return new TerrainCreateFunc(state, terrain_first);
}

}  // namespace vtp::physics
