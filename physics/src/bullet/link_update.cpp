// One body-chunk link kept current: the manifold's points refreshed from the body's pose (as
// btPersistentManifold::refreshContactPoints does every step), its terrain-side points reused while the body has not
// moved, else the chunk searched again (the one search the near-callback, the contact pass and the closest-point
// queries share) and the points added as btManifoldResult would.
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>

#include <algorithm>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {

bool closeEnough(const btTransform& now, const btTransform& then, const BulletTerrainOptions& o, double voxel_size,
                 btScalar threshold) {
  const double d = double((now.getOrigin() - then.getOrigin()).length());
  if (d > std::min(o.max_reuse_distance * voxel_size, double(threshold))) return false;
  const btQuaternion q = now.getRotation() * then.getRotation().inverse();
  return double(q.getAngleShortestPath()) <= o.max_reuse_angle;
}

int BulletTerrainState::searchChunk(const btConvexShape& convex, const btTransform& pose,
                                    const std::array<double, 3>& min, const std::array<double, 3>& max,
                                    terrain::ChunkCoord chunk, btScalar threshold, ContactScratch& work,
                                    ContactCounters& counters, std::span<ChunkContact, kManifoldPoints> kept,
                                    ChunkLink* link) {
  const btVector3& o = pose.getOrigin();
  const std::array<double, 3> position{double(o.x()), double(o.y()), double(o.z())};
  if (chunkBeyondReach(convex, pose.getBasis(), position, chunk, physics.voxelSize(), double(threshold))) return 0;
  // A chunk all solid (around a buried body) owns none. The link keeps the answer while the index stays as it was.
  // Only an answer read at an even version is kept (odd: an update is being stored, MaskIndex::version).
  const std::uint64_t version = physics.masks().version();
  const bool settled = version % 2 == 0;
  bool owns;
  if (link != nullptr && settled && link->owns_at == version) {
    owns = link->owns;
  } else {
    owns = physics.masks().mayOwnTriangles(chunk);
    if (link != nullptr && settled) link->owns = owns, link->owns_at = version;
  }
  if (!owns) return 0;
  auto pin = physics.colliders().acquire(chunk);
  if (!pin) return -1;
  counters.colliders_built += pin->built() ? 1 : 0;
  return chunkManifold(*pin.value(), convex, pose.getBasis(), position, chunk, min, max, physics.voxelSize(), threshold,
                       options.one_sided, work, counters, kept);
}

namespace {

// As btManifoldResult::addContactPoint, with the friction and restitution of the triangle's material standing for
// the terrain object's. A point landing on a slot this search already filled (bit in `fresh`) keeps the deeper of
// the two: an internal edge's corrected contact sits where the face's own contact is.
void addPoint(btPersistentManifold& m, const ChunkContact& c, const btVector3& shift, const btCollisionObject& body,
              const btCollisionObject& terrain, const terrain::MaterialTable& materials, unsigned& fresh) {
  const btVector3 on_terrain = c.contact.point + shift;
  const btVector3& normal = c.contact.normal;
  const btScalar distance = c.contact.distance;
  const btVector3 on_body = on_terrain + normal * distance;
  btManifoldPoint p(body.getWorldTransform().invXform(on_body), terrain.getWorldTransform().invXform(on_terrain),
                    normal, distance);
  p.m_positionWorldOnA = on_body;
  p.m_positionWorldOnB = on_terrain;
  const terrain::Material& material = materials[c.material];
  p.m_combinedFriction = std::clamp(body.getFriction() * material.friction, btScalar(-10), btScalar(10));
  p.m_combinedRestitution = body.getRestitution() * material.restitution;
  p.m_combinedRollingFriction = btManifoldResult::calculateCombinedRollingFriction(&body, &terrain);
  p.m_combinedSpinningFriction = btManifoldResult::calculateCombinedSpinningFriction(&body, &terrain);
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

}  // namespace

int BulletTerrainState::updateLink(ChunkLink& link, const btCollisionObject& body, const btConvexShape& convex,
                                   const btTransform& pose, const std::array<double, 3>& min,
                                   const std::array<double, 3>& max, btScalar threshold, std::uint64_t sequence,
                                   ContactScratch& work, BulletTerrainStats& counts) {
  btPersistentManifold& m = *link.manifold;
  const btTransform& frame = body.getWorldTransform();  // the object's, which manifold points refer to
  m.refreshContactPoints(frame, object.getWorldTransform());
  const double voxel_size = physics.voxelSize();
  if (options.max_reuse_distance > 0 && link.sequence == sequence && link.found_with == &convex &&
      closeEnough(pose, link.found_at, options, voxel_size, threshold)) {
    ++counts.reused_manifolds;
    return m.getNumContacts();
  }
  link.found_at = pose;
  link.found_with = &convex;
  link.sequence = sequence;
  std::array<ChunkContact, kManifoldPoints> kept;
  ContactCounters counters;
  const int n = searchChunk(convex, pose, min, max, link.chunk, threshold, work, counters, kept, &link);
  counts.gjk_calls += counters.gjk_calls;
  counts.colliders_built += counters.colliders_built;
  if (n < 0) return m.getNumContacts();  // beyond physics' range: the tracker already refused such boxes
  const std::array<double, 3> origin = chunkOriginWorld(link.chunk, voxel_size);
  const btVector3 shift{btScalar(origin[0]), btScalar(origin[1]), btScalar(origin[2])};
  const auto& materials = physics.world().materials();
  unsigned fresh = 0;  // the manifold slots this search filled
  for (int i = 0; i < n; ++i) addPoint(m, kept[std::size_t(i)], shift, body, object, materials, fresh);
  if (link.recheck) {  // after an edit nearby: a point this search did not find again is on terrain that is gone
    for (int k = m.getNumContacts() - 1; k >= 0; --k) {
      if ((fresh >> k & 1u) == 0) m.removeContactPoint(k);  // the last point, already looked at, moves to k
    }
    link.recheck = false;
  }
  counts.contacts += unsigned(n);
  return m.getNumContacts();
}

}  // namespace vtp::physics
