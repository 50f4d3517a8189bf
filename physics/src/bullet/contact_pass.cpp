// The contact pass (BulletTerrain::runContactPass): the step's body-chunk links brought up to date on several threads
// ahead of the dispatcher. Each body's links and manifolds are its own, so bodies run in any order on any worker;
// pairs are still added and removed by the near-callback, in the dispatcher's order, and it updates a link itself
// unless the pass did so for the pose it finds: the step comes out bit for bit as without the pass.
#include <new>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {

void BulletTerrainState::runContactPass(TaskRunner& tasks) {
  drainEdits();  // as the near-callback does first: the links the pass reads are then those it will see
  pass_bodies.clear();
  // Awake bodies whose shape is still the one their algorithm serves (a game may swap a body's shape).
  for (BodyLinks* body : passable)
    if (body->object->isActive() && body->object->getCollisionShape() == body->shape) pass_bodies.push_back(body);
  if (pass_bodies.empty()) return;
  pass_workers.resize(std::max<std::size_t>(pass_workers.size(), tasks.workers()));
  const std::uint64_t sequence = physics.world().publishSequence();
  tasks.forEach(pass_bodies.size(), [&](std::size_t index, unsigned worker) {
    BodyLinks& body = *pass_bodies[index];
    PassWorker& w = pass_workers[worker];
    body.pass_sequence = ~0ull;
    const btConvexShape& convex = *body.shape;
    const btTransform& pose = body.object->getWorldTransform();
    // The near-callback's bounds for this pose (TerrainAlgorithm::processCollision). Its pairs are the body's links
    // as they stand: the chunks its box reached at its last update. A chunk the box enters now is updated by the
    // near-callback, once the pair tracker has added it.
    const btScalar threshold = convex.getContactBreakingThreshold(gContactBreakingThreshold);
    std::array<double, 3> min, max;
    shapeBounds(convex, pose, double(threshold), min, max);
    try {
      for (ChunkLink& link : body.links) {
        updateLink(link, *body.object, convex, pose, min, max, threshold, sequence, w.scratch, w.counts);
        ++w.counts.pass_links;
      }
    } catch (const std::bad_alloc&) {
      return;  // out of memory: the body's pass stamp stays unset, so the near-callback updates its links
    }
    body.pass_pose = pose;
    body.pass_shape = &convex;
    body.pass_sequence = sequence;
  });
  for (PassWorker& w : pass_workers) {
    stats.pass_links += w.counts.pass_links;
    stats.reused_manifolds += w.counts.reused_manifolds;
    stats.contacts += w.counts.contacts;
    stats.gjk_calls += w.counts.gjk_calls;
    stats.colliders_built += w.counts.colliders_built;
    w.counts = {};
  }
}

}  // namespace vtp::physics
