// BulletTerrain::prefetchCandidates: where the world's moving bodies are headed, as chunks whose colliders the cache
// does not hold yet.
#include <algorithm>
#include <cmath>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {

Status BulletTerrain::prefetchCandidates(double seconds, std::vector<terrain::ChunkCoord>& out) const {
  out.clear();
  if (!std::isfinite(seconds) || seconds < 0)
    return Error{ErrorCode::kInvalidArgument, "prefetchCandidates: seconds must be finite and >= 0", {}};
  State& s = *m_state;
  const double voxel_size = s.physics.voxelSize();
  // A body moving less than this over `seconds` stays where its own searches already built the colliders.
  const double still = 0.25 * voxel_size;
  const btCollisionObjectArray& objects = s.world.getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    const btRigidBody* body = btRigidBody::upcast(objects[i]);
    if (body == nullptr || !body->isActive() || body->isStaticOrKinematicObject()) continue;
    const btVector3 travel = body->getLinearVelocity() * btScalar(seconds);
    if (!(double(travel.length()) >= still)) continue;  // NaN velocities too
    btVector3 lo, hi;
    body->getCollisionShape()->getAabb(body->getWorldTransform(), lo, hi);
    const btScalar grow = body->getCollisionShape()->getContactBreakingThreshold(gContactBreakingThreshold);
    Aabb box;
    for (int a = 0; a < 3; ++a) {
      box.min[std::size_t(a)] = double(std::min(lo[a], lo[a] + travel[a]) - grow);
      box.max[std::size_t(a)] = double(std::max(hi[a], hi[a] + travel[a]) + grow);
    }
    std::vector<ChunkTouch>& touches = s.prefetch_touches;
    if (!s.physics.masks().query(box, touches)) continue;  // beyond physics' range or not finite: nothing to build
    for (const ChunkTouch& t : touches)
      if (t.solid && t.tag == MaskTag::kMixed) out.push_back(t.chunk);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  // Each chunk asked of the cache once.
  out.erase(std::remove_if(out.begin(), out.end(), [&](terrain::ChunkCoord c) { return s.physics.colliders().holds(c); }),
            out.end());
  return {};
}

}  // namespace vtp::physics
