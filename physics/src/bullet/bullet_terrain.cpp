// BulletTerrain: attaching the terrain to a Bullet world (the object, the dispatcher's algorithms), the per-body
// manifold bookkeeping the pair tracker drives, and waking bodies after edits.
#include "vtp/physics/bullet/bullet_terrain.h"

#include <algorithm>
#include <cmath>

#include "bullet/bullet_terrain_state.h"

namespace vtp::physics {

BulletTerrainState::BulletTerrainState(TerrainPhysics& p, btCollisionWorld& w, BulletTerrainOptions o)
    : physics(p),
      world(w),
      dispatcher(*static_cast<btCollisionDispatcher*>(w.getDispatcher())),
      options(o),
      tracker(p.masks()),
      shape(*this),
      entries(dispatcher) {
  object.setCollisionShape(&shape);
  object.setCollisionFlags(object.getCollisionFlags() | btCollisionObject::CF_STATIC_OBJECT);
  object.setFriction(1);  // our points carry the triangle material's friction and restitution
  object.setRestitution(0);
  // Asleep, as btDiscreteDynamicsWorld::addRigidBody leaves static bodies: a sleeping body's pair with the terrain is
  // then skipped by the dispatcher instead of running the algorithm every step.
  object.setActivationState(ISLAND_SLEEPING);
}

BodyLinks& BulletTerrainState::links(std::uint64_t id, const btCollisionObject* body) {
  auto& slot = bodies[id];
  if (!slot) {
    slot = std::make_unique<BodyLinks>();
    slot->object = const_cast<btCollisionObject*>(body);
  }
  return *slot;
}

void BulletTerrainState::apply(const PairChanges& c) {
  for (const Pair& p : c.removed) {
    if (p.kind != PairKind::kSolid) continue;
    const auto it = bodies.find(p.body);
    if (it == bodies.end()) continue;
    auto& links = it->second->links;
    const auto link = std::find_if(links.begin(), links.end(), [&](const ChunkLink& l) { return l.chunk == p.chunk; });
    if (link == links.end()) continue;
    dispatcher.releaseManifold(link->manifold);
    links.erase(link);
  }
  for (const Pair& p : c.added) {
    if (p.kind != PairKind::kSolid) continue;
    const auto it = bodies.find(p.body);
    if (it == bodies.end()) continue;
    ChunkLink link;
    link.chunk = p.chunk;
    link.manifold = dispatcher.getNewManifold(it->second->object, &object);
    it->second->links.push_back(link);
  }
}

std::size_t BulletTerrainState::drainEdits() {
  if (!tracker.takeEditChanges(changes)) return 0;  // out of memory: the edits' changes wait for the next call
  apply(changes);
  std::size_t woken = 0;
  for (const std::uint64_t id : changes.woken) {
    const auto it = bodies.find(id);
    if (it == bodies.end()) continue;
    it->second->object->activate(true);
    // The terrain changed within a voxel of the body: its points may lie on a surface that is gone (a resting body
    // does not move, so refreshing them keeps them). The next search keeps those it finds again (with their
    // warm-starting impulses) and drops the rest.
    for (ChunkLink& link : it->second->links) link.recheck = true;
    ++woken;
  }
  return woken;
}

void BulletTerrainState::removeBody(std::uint64_t id) {
  outside.erase(id);
  const auto it = bodies.find(id);
  if (it == bodies.end()) return;
  tracker.remove(id, changes);
  for (const ChunkLink& l : it->second->links) dispatcher.releaseManifold(l.manifold);
  if (it->second->shape != nullptr) {  // off the pass's list: the last one takes its slot
    const std::size_t slot = it->second->pass_slot;
    passable[slot] = passable.back();
    passable[slot]->pass_slot = slot;
    passable.pop_back();
  }
  bodies.erase(it);
}

Result<std::unique_ptr<BulletTerrain>> BulletTerrain::attach(TerrainPhysics& physics, btCollisionWorld& world,
                                                             BulletTerrainOptions options) {
  if (!dynamic_cast<btCollisionDispatcher*>(world.getDispatcher()))
    return Error{ErrorCode::kInvalidArgument, "the world's dispatcher must be a btCollisionDispatcher", {}};
  auto tolerance = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!tolerance(options.max_reuse_distance) || !tolerance(options.max_reuse_angle))
    return Error{ErrorCode::kInvalidArgument, "contact reuse tolerances must be finite and >= 0", {}};
  // One terrain per dispatcher (so per world): a second would record the first's create functions as what the
  // dispatcher held, and hand them out (and put them back) after the first is gone.
  if (DispatcherEntries(*static_cast<btCollisionDispatcher*>(world.getDispatcher())).holdTerrain()) {
    return Error{ErrorCode::kInvalidArgument, "the world's dispatcher already serves a vtp terrain", {}};
  }
  auto state = std::make_unique<State>(physics, world, options);
  for (bool terrain_first : {false, true}) {
    state->create_contacts[terrain_first].reset(newTerrainCreateFunc(*state, terrain_first));
  }
  state->create_closest_points.reset(newClosestPointsCreateFunc(*state));
  state->entries.install({state->create_contacts[0].get(), state->create_contacts[1].get()},
                         state->create_closest_points.get());
  world.addCollisionObject(&state->object, btBroadphaseProxy::StaticFilter,
                           btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter);
  return std::unique_ptr<BulletTerrain>(new BulletTerrain(std::move(state)));
}

BulletTerrain::BulletTerrain(std::unique_ptr<State> state) : m_state(std::move(state)) {}

BulletTerrain::~BulletTerrain() {
  State& s = *m_state;
  // Removing the object drops its broadphase pairs, which destroys the algorithms and with them the manifolds.
  s.world.removeCollisionObject(&s.object);
  s.entries.restore({s.create_contacts[0].get(), s.create_contacts[1].get()}, s.create_closest_points.get());
}

btCollisionObject& BulletTerrain::object() noexcept { return m_state->object; }

std::size_t BulletTerrain::wakeBodies() { return m_state->drainEdits(); }

void BulletTerrain::runContactPass(TaskRunner& tasks) { m_state->runContactPass(tasks); }

BulletTerrainStats BulletTerrain::stats() const noexcept {
  BulletTerrainStats out = m_state->stats;
  out.live_manifolds = 0;
  for (const auto& [id, body] : m_state->bodies) out.live_manifolds += body->links.size();
  return out;
}

std::vector<const btCollisionObject*> BulletTerrain::bodiesOutsideRange() const {
  std::vector<const btCollisionObject*> out;
  for (const auto& [id, object] : m_state->outside) out.push_back(object);
  std::sort(out.begin(), out.end(), [](const btCollisionObject* a, const btCollisionObject* b) {
    return a->getWorldArrayIndex() < b->getWorldArrayIndex();
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());  // a compound's children are one body
  return out;
}

void BulletTerrain::resetStats() noexcept { m_state->stats = {}; }

}  // namespace vtp::physics
