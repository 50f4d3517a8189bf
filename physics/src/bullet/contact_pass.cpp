// The terrain's contact searches for bodies: one body-chunk search (what the near-callback, the closest-point queries
// and the pass share), and the contact pass that runs the step's searches on several threads ahead of the dispatcher
// (BulletTerrain::runContactPass). The pass only computes; the near-callback still updates the pairs and writes the
// manifolds, in the dispatcher's order, so the step comes out bit for bit as without the pass.
#include <algorithm>
#include <new>

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
  bool owns;
  if (link != nullptr && link->owns_at == physics.masks().version()) {
    owns = link->owns;
  } else {
    const std::uint64_t version = physics.masks().version();
    owns = physics.masks().mayOwnTriangles(chunk);
    if (link != nullptr) link->owns = owns, link->owns_at = version;
  }
  if (!owns) return 0;
  auto pin = physics.colliders().acquire(chunk);
  if (!pin) return -1;
  counters.colliders_built += pin->built() ? 1 : 0;
  return chunkManifold(*pin.value(), convex, pose.getBasis(), position, chunk, min, max, physics.voxelSize(), threshold,
                       options.one_sided, work, counters, kept);
}

void BulletTerrainState::runContactPass(TaskRunner& tasks) {
  drainEdits();  // as the near-callback does first: the links the pass reads are then those it will see
  pass_bodies.clear();
  // Awake bodies whose shape is still the one their algorithm serves (a game may swap a body's shape).
  for (BodyLinks* body : passable)
    if (body->object->isActive() && body->object->getCollisionShape() == body->shape) pass_bodies.push_back(body);
  if (pass_bodies.empty()) return;
  pass_workers.resize(std::max<std::size_t>(pass_workers.size(), tasks.workers()));
  const std::uint64_t sequence = physics.world().publishSequence();
  const double voxel_size = physics.voxelSize();
  tasks.forEach(pass_bodies.size(), [&](std::size_t index, unsigned worker) {
    BodyLinks& body = *pass_bodies[index];
    PassWorker& w = pass_workers[worker];
    body.pass.clear();
    body.pass_sequence = ~0ull;
    const btConvexShape& convex = *body.shape;
    const btTransform& pose = body.object->getWorldTransform();
    try {
    // The near-callback's bounds for this pose (TerrainAlgorithm::processCollision). Its pairs are the body's links
    // as they stand: the chunks its box reached at its last update. A chunk the box enters now is searched by the
    // near-callback, once the pair tracker has added it.
    const btScalar threshold = convex.getContactBreakingThreshold(gContactBreakingThreshold);
    const btVector3& o = pose.getOrigin();
    std::array<double, 3> min, max;
    shapeBounds(convex, pose.getBasis(), {double(o.x()), double(o.y()), double(o.z())}, double(threshold), min, max);
    for (ChunkLink& link : body.links) {  // this body's alone while the pass runs
      if (options.max_reuse_distance > 0 && link.sequence == sequence && link.found_with == &convex &&
          closeEnough(pose, link.found_at, options, voxel_size, threshold))
        continue;  // the near-callback reuses its points
      PassSearch& search = body.pass.emplace_back();
      search.chunk = link.chunk;
      search.count =
          searchChunk(convex, pose, min, max, link.chunk, threshold, w.scratch, w.counters, search.kept, &link);
    }
    } catch (const std::bad_alloc&) {
      body.pass.clear();  // out of memory: the near-callback searches for this body itself
      return;
    }
    body.pass_pose = pose;
    body.pass_shape = &convex;
    body.pass_sequence = sequence;
  });
  for (const BodyLinks* body : pass_bodies) stats.pass_searches += body->pass.size();
  for (PassWorker& w : pass_workers) {
    stats.gjk_calls += w.counters.gjk_calls;
    stats.colliders_built += w.counters.colliders_built;
    w.counters = {};
  }
}

}  // namespace vtp::physics
