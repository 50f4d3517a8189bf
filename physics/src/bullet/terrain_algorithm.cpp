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
    const btTransform& frame = m_body->getWorldTransform();       // the object's, which manifold points refer to
    BulletTerrainState& s = m_state;
    ++s.stats.narrowphase_calls;
    s.drainEdits();

    const btScalar threshold = shape->getContactBreakingThreshold(gContactBreakingThreshold);
    const btVector3& o = pose.getOrigin();
    const std::array<double, 3> position{double(o.x()), double(o.y()), double(o.z())};
    std::array<double, 3> min, max;
    shapeBounds(*shape, pose.getBasis(), position, double(threshold), min, max);
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

    const double voxel_size = s.physics.voxelSize();
    const std::uint64_t sequence = s.physics.world().publishSequence();
    const auto& materials = s.physics.world().materials();
    const btTransform& terrain = s.object.getWorldTransform();
    // The contact pass ran for this very pose and terrain: its searches stand, and a link it did not search was one
    // whose points it found reusable (the same test as below, on the same link).
    const bool pass_valid = links.pass_sequence == sequence && links.pass_shape == shape && links.pass_pose == pose;
    links.pass_sequence = ~0ull;  // read once: a later substep without a pass searches here
    int points = 0;
    for (ChunkLink& link : links.links) {
      btPersistentManifold& m = *link.manifold;
      m.refreshContactPoints(frame, terrain);
      const PassSearch* ahead = pass_valid ? passSearch(links, link.chunk) : nullptr;
      if (s.options.max_reuse_distance > 0 && link.sequence == sequence && link.found_with == shape &&
          (pass_valid ? ahead == nullptr : closeEnough(pose, link.found_at, s.options, voxel_size, threshold))) {
        ++s.stats.reused_manifolds;
        points += m.getNumContacts();
        continue;
      }
      link.found_at = pose;
      link.found_with = shape;
      link.sequence = sequence;
      std::array<ChunkContact, kManifoldPoints> kept;
      int n = 0;
      if (ahead) {
        ++s.stats.pass_searches_used;
        n = ahead->count;
        std::copy_n(ahead->kept.begin(), std::max(n, 0), kept.begin());
      } else {
        ContactCounters counters;
        n = s.searchChunk(*shape, pose, min, max, link.chunk, threshold, s.scratch, counters, kept, &link);
        s.stats.gjk_calls += counters.gjk_calls;
        s.stats.colliders_built += counters.colliders_built;
      }
      if (n < 0) continue;  // beyond physics' range: the tracker already refused such boxes
      const std::array<double, 3> origin = chunkOriginWorld(link.chunk, voxel_size);
      const btVector3 shift{btScalar(origin[0]), btScalar(origin[1]), btScalar(origin[2])};
      unsigned fresh = 0;  // the manifold slots this search filled
      for (int i = 0; i < n; ++i) addPoint(m, kept[std::size_t(i)], shift, frame, terrain, materials, fresh);
      if (link.recheck) {  // after an edit nearby: a point this search did not find again is on terrain that is gone
        for (int k = m.getNumContacts() - 1; k >= 0; --k) {
          if ((fresh >> k & 1u) == 0) m.removeContactPoint(k);  // the last point, already looked at, moves to k
        }
        link.recheck = false;
      }
      s.stats.contacts += unsigned(n);
      points += m.getNumContacts();
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

  // The contact pass's search of `chunk` (the pass having run for the body's pose and terrain now), else null.
  static const PassSearch* passSearch(const BodyLinks& links, terrain::ChunkCoord chunk) {
    for (const PassSearch& p : links.pass)
      if (p.chunk == chunk) return &p;
    return nullptr;
  }

  // As btManifoldResult::addContactPoint, with the friction and restitution of the triangle's material standing for
  // the terrain object's. A point landing on a slot this search already filled (bit in `fresh`) keeps the deeper of
  // the two: an internal edge's corrected contact sits where the face's own contact is.
  void addPoint(btPersistentManifold& m, const ChunkContact& c, const btVector3& shift, const btTransform& body,
                const btTransform& terrain, const terrain::MaterialTable& materials, unsigned& fresh) {
    const btVector3 on_terrain = c.contact.point + shift;
    const btVector3& normal = c.contact.normal;
    const btScalar distance = c.contact.distance;
    const btVector3 on_body = on_terrain + normal * distance;
    btManifoldPoint p(body.invXform(on_body), terrain.invXform(on_terrain), normal, distance);
    p.m_positionWorldOnA = on_body;
    p.m_positionWorldOnB = on_terrain;
    const terrain::Material& material = materials[c.material];
    const btCollisionObject* terrain_object = &m_state.object;
    p.m_combinedFriction = std::clamp(m_body->getFriction() * material.friction, btScalar(-10), btScalar(10));
    p.m_combinedRestitution = m_body->getRestitution() * material.restitution;
    p.m_combinedRollingFriction = btManifoldResult::calculateCombinedRollingFriction(m_body, terrain_object);
    p.m_combinedSpinningFriction = btManifoldResult::calculateCombinedSpinningFriction(m_body, terrain_object);
    p.m_partId1 = 0;
    p.m_index1 = c.triangle;
    int slot = m.getCacheEntry(p);
    if (slot >= 0) {
      if ((fresh >> slot & 1u) != 0 && m.getContactPoint(slot).getDistance() <= distance) return;
      m.replaceContactPoint(p, slot);
    } else {
      slot = m.addManifoldPoint(p);
    }
    fresh |= 1u << slot;
  }

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
