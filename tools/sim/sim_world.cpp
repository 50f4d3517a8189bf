// The per-mode simulation loop and its timers (sim_world.h).
#include "sim_world.h"

#include <BulletCollision/CollisionShapes/btConvexHullShape.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "alloc_hook.h"
#include "vtp/terrain/hash.h"
#include "vtp/terrain/world_file.h"

namespace vtp::tools::sim {

using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// A btCollisionDispatcher that knows its simulation, for the near-callback (set on this dispatcher only).
class SimWorld::Dispatcher : public btCollisionDispatcher {
 public:
  Dispatcher(btCollisionConfiguration* config, SimWorld* owner) : btCollisionDispatcher(config), m_owner(owner) {}
  SimWorld* m_owner;
};

// A btDiscreteDynamicsWorld that times its broadphase (AABB update and pair search), its solver and its integration
// (with the continuous-collision sweeps).
class SimWorld::DynamicsWorld : public btDiscreteDynamicsWorld {
 public:
  DynamicsWorld(btDispatcher* d, btBroadphaseInterface* b, btConstraintSolver* s, btCollisionConfiguration* c,
                TickSample* sample, TerrainBackend* backend, int tag)
      : btDiscreteDynamicsWorld(d, b, s, c), m_sample(sample), m_backend(backend), m_tag(tag) {}
  void performDiscreteCollisionDetection() override {
    {
      TerrainScope scope(m_tag);
      const auto t0 = Clock::now();
      m_backend->beforeCollision();
      m_sample->terrain += msSince(t0);
    }
    btDiscreteDynamicsWorld::performDiscreteCollisionDetection();
  }
  void updateAabbs() override {
    const auto t0 = Clock::now();
    btDiscreteDynamicsWorld::updateAabbs();
    m_sample->broadphase += msSince(t0);
  }
  void computeOverlappingPairs() override {
    const auto t0 = Clock::now();
    btDiscreteDynamicsWorld::computeOverlappingPairs();
    m_sample->broadphase += msSince(t0);
  }
  void integrateTransforms(btScalar time_step) override {
    const auto t0 = Clock::now();
    btDiscreteDynamicsWorld::integrateTransforms(time_step);
    m_sample->integrate += msSince(t0);
  }
  void solveConstraints(btContactSolverInfo& info) override {
    const auto t0 = Clock::now();
    btDiscreteDynamicsWorld::solveConstraints(info);
    m_sample->solver += msSince(t0);
  }

 private:
  TickSample* m_sample;
  TerrainBackend* m_backend;
  int m_tag;
};

// A TaskRunner whose iterations allocate under an allocation tag (TerrainScope on the worker running each).
class TaggedTasks final : public physics::TaskRunner {
 public:
  TaggedTasks(physics::TaskRunner& inner, int tag) : m_inner(inner), m_tag(tag) {}
  unsigned workers() const noexcept override { return m_inner.workers(); }
  void forEach(std::size_t count, const std::function<void(std::size_t, unsigned)>& body) override {
    m_inner.forEach(count, [&](std::size_t i, unsigned w) {
      TerrainScope scope(m_tag);
      body(i, w);
    });
  }

 private:
  physics::TaskRunner& m_inner;
  int m_tag;
};

namespace {

// The radius of a sphere the body always contains around its centre. [Unit: world units]
double innerRadius(const BodySpec& b) {
  switch (b.kind) {
    case BodyKind::kSphere: return b.size[0];
    case BodyKind::kBox: return std::min({b.size[0], b.size[1], b.size[2]});
    case BodyKind::kCapsule: return b.size[0];
    case BodyKind::kHull: return 0.5 * std::min({b.size[0], b.size[1], b.size[2]});
  }
  return b.size[0];
}

}  // namespace

SimWorld::SimWorld(std::unique_ptr<TerrainBackend> backend, const Scene& scene, SimOptions options)
    : m_backend(std::move(backend)), m_scene(scene), m_options(options), m_ray_state(options.seed ^ 0x5241595345454421ull) {}

SimWorld::~SimWorld() {
  // Bodies and the backend leave the Bullet world before it goes; the world before the voxels (and the water's
  // TerrainPhysics before the world).
  for (btRigidBody* body : m_bodies) {
    if (m_dynamics) m_dynamics->removeRigidBody(body);
    delete body->getMotionState();
    delete body;
  }
  m_backend.reset();
  m_dynamics.reset();
  m_water.reset();
}

Status SimWorld::open(const std::string& world_path) {
  m_open_start = Clock::now();
  auto loaded = terrain::loadWorldFile(world_path);
  if (!loaded) return loaded.error();
  m_world = std::move(loaded->world);
  m_config = std::make_unique<btDefaultCollisionConfiguration>();
  m_dispatcher = std::make_unique<Dispatcher>(m_config.get(), this);
  m_dispatcher->setNearCallback(&SimWorld::nearCallback);
  m_broadphase = std::make_unique<btDbvtBroadphase>();
  m_solver = std::make_unique<btSequentialImpulseConstraintSolver>();
  m_dynamics = std::make_unique<DynamicsWorld>(m_dispatcher.get(), m_broadphase.get(), m_solver.get(), m_config.get(),
                                               &m_current, m_backend.get(), m_options.tag);
  if (m_options.tasks) m_terrain_tasks = std::make_unique<TaggedTasks>(*m_options.tasks, m_options.tag);
  m_dynamics->setGravity(btVector3(0, btScalar(-9.81 * m_scene.voxel_size), 0));
  // Static objects keep their AABBs: only moving bodies are updated each step (both modes).
  m_dynamics->setForceUpdateAllAabbs(false);
  {
    TerrainScope scope(m_options.tag);
    if (Status s = m_backend->open(*m_world, *m_dynamics, m_options.cache_bytes, m_terrain_tasks.get()); !s) return s;
  }
  addBodies();
  m_first_step_ms = msSince(m_open_start);  // the first tick adds its step time
  auto water = WaterForces::create(*m_world, m_scene);  // not terrain collision: after the clock, outside the scope
  if (!water) return water.error();
  m_water = std::move(water.value());
  return {};
}

void SimWorld::addBodies() {
  for (const BodySpec& spec : m_scene.bodies) {
    std::unique_ptr<btCollisionShape> shape;
    switch (spec.kind) {
      case BodyKind::kSphere: shape = std::make_unique<btSphereShape>(btScalar(spec.size[0])); break;
      case BodyKind::kBox:
        shape = std::make_unique<btBoxShape>(btVector3(btScalar(spec.size[0]), btScalar(spec.size[1]), btScalar(spec.size[2])));
        break;
      case BodyKind::kCapsule:
        shape = std::make_unique<btCapsuleShape>(btScalar(spec.size[0]), btScalar(2 * spec.size[1]));
        break;
      case BodyKind::kHull: {
        auto hull = std::make_unique<btConvexHullShape>();
        for (const auto& p : spec.hull_points) hull->addPoint(btVector3(btScalar(p[0]), btScalar(p[1]), btScalar(p[2])), false);
        hull->recalcLocalAabb();
        shape = std::move(hull);
        break;
      }
    }
    btVector3 inertia(0, 0, 0);
    shape->calculateLocalInertia(btScalar(spec.mass), inertia);
    btTransform start;
    start.setOrigin(btVector3(btScalar(spec.position[0]), btScalar(spec.position[1]), btScalar(spec.position[2])));
    start.setRotation(btQuaternion(btScalar(spec.orientation[0]), btScalar(spec.orientation[1]),
                                   btScalar(spec.orientation[2]), btScalar(spec.orientation[3])));
    auto* motion = new btDefaultMotionState(start);
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(spec.mass), motion, shape.get(), inertia);
    info.m_friction = 0.6f;
    auto* body = new btRigidBody(info);
    if (m_options.no_sleep) body->setActivationState(DISABLE_DEACTIVATION);
    // Continuous collision for any body moving more than its inner radius in a step, so a small body falling fast
    // does not pass through the terrain's surface between two steps (both modes: Bullet's CCD sweeps against the
    // terrain object or the chunk objects).
    const double inner = innerRadius(spec);
    body->setCcdMotionThreshold(btScalar(inner));
    body->setCcdSweptSphereRadius(btScalar(0.8 * inner));
    m_dynamics->addRigidBody(body);
    m_bodies.push_back(body);
    m_shapes.push_back(std::move(shape));
  }
}

void SimWorld::nearCallback(btBroadphasePair& pair, btCollisionDispatcher& dispatcher, const btDispatcherInfo& info) {
  SimWorld& self = *static_cast<Dispatcher&>(dispatcher).m_owner;
  const auto* a = static_cast<const btCollisionObject*>(pair.m_pProxy0->m_clientObject);
  const auto* b = static_cast<const btCollisionObject*>(pair.m_pProxy1->m_clientObject);
  if (!self.m_backend->isTerrain(a) && !self.m_backend->isTerrain(b)) {
    btCollisionDispatcher::defaultNearCallback(pair, dispatcher, info);
    return;
  }
  if (!dispatcher.needsCollision(a, b)) return;
  {
    TerrainScope scope(self.m_options.tag);
    const auto t0 = Clock::now();
    btCollisionDispatcher::defaultNearCallback(pair, dispatcher, info);
    self.m_current.terrain += msSince(t0);
  }
  ++self.m_terrain_calls;
  static thread_local btManifoldArray manifolds;
  manifolds.resize(0);
  int points = 0;
  if (pair.m_algorithm != nullptr) pair.m_algorithm->getAllContactManifolds(manifolds);
  for (int k = 0; k < manifolds.size(); ++k) points += manifolds[k]->getNumContacts();
  if (points == 0) ++self.m_empty_terrain_calls;
}

void SimWorld::tick(std::span<const terrain::EditCommand> edits) {
  m_current = {};
  const auto tick_start = Clock::now();
  for (const terrain::EditCommand& edit : edits) {
    TerrainScope scope(m_options.tag);
    const auto t0 = Clock::now();
    auto result = m_world->apply(edit);
    if (result) {
      ++m_edits_applied;
      if (!result->changed.empty()) m_backend->afterEdit(result->changed);
    }
    m_current.terrain += msSince(t0);
  }
  m_current.step = msSince(tick_start);
  if (m_water) {
    const auto t0 = Clock::now();
    m_in_water = m_water->apply(m_bodies, m_options.tasks);
    m_current.water = msSince(t0);
  }
  for (const btRigidBody* body : m_bodies) m_current.awake += body->isActive() ? 1 : 0;
  const auto step_start = Clock::now();
  const btScalar dt = btScalar(1.0 / 60.0);
  m_dynamics->stepSimulation(dt, 1, dt);
  {
    TerrainScope scope(m_options.tag);
    const auto t0 = Clock::now();
    m_backend->afterStep(int(m_samples.size()));
    m_current.terrain += msSince(t0);
  }
  m_current.step += msSince(step_start);
  if (m_samples.empty()) m_first_step_ms += m_current.step;

  // Contact points in terrain manifolds after the step.
  for (int k = 0; k < m_dispatcher->getNumManifolds(); ++k) {
    const btPersistentManifold* m = m_dispatcher->getManifoldByIndexInternal(k);
    if (m_backend->isTerrain(m->getBody0()) || m_backend->isTerrain(m->getBody1())) m_contacts += std::uint64_t(m->getNumContacts());
  }

  // R rays from random bodies in random directions, 32 voxels long.
  m_rays.clear();
  const double length = 32 * m_scene.voxel_size;
  for (int r = 0; r < m_options.rays_per_step && !m_bodies.empty(); ++r) {
    const btVector3 p = m_bodies[std::size_t(nextRandom(m_ray_state) % m_bodies.size())]->getCenterOfMassPosition();
    const std::array<double, 3> d = randomUnit<3>(m_ray_state);
    if (!std::isfinite(p.x()) || !std::isfinite(p.y()) || !std::isfinite(p.z())) continue;
    physics::Ray ray;
    ray.origin = {double(p.x()), double(p.y()), double(p.z())};
    ray.direction = {d[0] * length, d[1] * length, d[2] * length};
    m_rays.push_back(ray);
  }
  {
    TerrainScope scope(m_options.tag);
    const auto t0 = Clock::now();
    m_ray_hits += std::uint64_t(m_backend->castRays(m_rays));
    m_current.rays = msSince(t0);
  }
  const double background = m_backend->backgroundCpuMs();
  m_current.background_cpu = background - m_background_ms;
  m_background_ms = background;
  m_samples.push_back(m_current);
}

std::vector<BodyState> SimWorld::bodyStates() const {
  std::vector<BodyState> out;
  out.reserve(m_bodies.size());
  const double s = m_scene.voxel_size;
  for (const btRigidBody* body : m_bodies) {
    BodyState st;
    const btVector3 p = body->getCenterOfMassPosition();
    btVector3 lo, hi;
    body->getAabb(lo, hi);
    const btVector3 v = body->getLinearVelocity(), w = body->getAngularVelocity();
    for (int a = 0; a < 3; ++a) {
      st.position[std::size_t(a)] = p[a];
      st.aabb_min[std::size_t(a)] = lo[a];
      st.aabb_max[std::size_t(a)] = hi[a];
      st.finite = st.finite && std::isfinite(p[a]) && std::isfinite(v[a]) && std::isfinite(w[a]);
    }
    st.resting = !body->isActive() || (v.length() < 0.1 * s && w.length() < 0.5);
    out.push_back(st);
  }
  return out;
}

std::uint64_t bodiesHash(std::span<btRigidBody* const> bodies) {
  std::uint64_t h = terrain::kFnvOffset;
  for (const btRigidBody* body : bodies) {
    const btTransform& t = body->getWorldTransform();
    const btQuaternion q = t.getRotation();
    const btVector3 &p = t.getOrigin(), &v = body->getLinearVelocity(), &w = body->getAngularVelocity();
    const btScalar values[13] = {p.x(), p.y(), p.z(), q.x(), q.y(), q.z(), q.w(),
                                 v.x(), v.y(), v.z(), w.x(), w.y(), w.z()};
    std::uint8_t bytes[sizeof(values)];
    std::memcpy(bytes, values, sizeof(values));
    h = terrain::fnv1a64(bytes, h);
  }
  return h;
}

}  // namespace vtp::tools::sim
