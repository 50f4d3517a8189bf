#pragma once
// One collision mode's simulation: a btDiscreteDynamicsWorld stepped at a fixed 60 Hz with the scene's bodies, the
// terrain supplied by a TerrainBackend (vtp's adapter or Bullet's own BVH meshes), and per-tick timings.
//
// Timings, the same definitions in both modes (steady_clock, wall time, one thread):
//   - step: the whole tick except the raycasts: the tick's terrain edits with their upkeep, then stepSimulation;
//   - terrain collision: the backend's pass before collision detection (vtp: the contact pass on N threads, wall
//     time), the dispatcher's near-callback (set per dispatcher with setNearCallback) for every pair with
//     a terrain object, which includes the terrain's own broadphase work (vtp: masks, pair tracking, colliders;
//     Bullet: the BVH walk), plus the tick's edits with their upkeep (vtp: masks and cache invalidation through the
//     world's listeners, waking bodies; Bullet: re-meshing and rebuilding the BVHs of touched chunks);
//   - broadphase: btCollisionWorld::updateAabbs plus computeOverlappingPairs (Bullet's dynamic AABB tree);
//   - solver: btDiscreteDynamicsWorld::solveConstraints;
//   - integrate: btDiscreteDynamicsWorld::integrateTransforms, which includes the continuous-collision sweeps of fast
//     bodies (against the terrain too: these sweeps are not in terrain collision);
//   - rays: the tick's R raycasts (not part of step);
//   - water: buoyancy and drag on the bodies reaching below the water's top, before the step, on the SimOptions'
//     threads in both modes (water_forces.h; not part of step).

#include <btBulletDynamicsCommon.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "scene.h"
#include "water_forces.h"
#include "vtp/physics/collider.h"
#include "vtp/physics/task_runner.h"
#include "vtp/terrain/status.h"
#include "vtp/terrain/world.h"

namespace vtp::tools::sim {

/// Counters a backend reports; the tool adds its own (contacts, empty near-callbacks) which it counts alike in both.
struct BackendCounters {
  std::uint64_t gjk_calls = 0;        ///< Per-triangle GJK runs against the terrain since open.
  std::uint64_t colliders_built = 0;  ///< vtp: chunk colliders built; Bullet: chunk BVHs built (initial + rebuilds).
  std::size_t cache_bytes = 0;        ///< vtp: bytes in the collider cache; Bullet: bytes of all chunk BVHs + meshes.
  std::size_t index_bytes = 0;        ///< vtp: the mask index's bytes (masks, table, grids); Bullet: 0.
  std::uint64_t bodies_outside_range = 0;  ///< vtp: bodies beyond physics' range (BulletTerrain::bodiesOutsideRange).
  /// vtp: colliders built inside steps after the first simulated second (the step's own searches), and colliders
  /// its background prefetcher built.
  std::uint64_t colliders_built_in_step = 0, colliders_prefetched = 0;
  /// The mode's own counters, reported as they are under `<mode>.details` (name, value).
  std::vector<std::pair<const char*, std::uint64_t>> details;
};

/// The terrain side of one collision mode.
class TerrainBackend {
 public:
  virtual ~TerrainBackend() = default;
  /// "vtp" or "bullet_bvh" (the report's key).
  virtual const char* key() const = 0;
  /// Builds the terrain collision data for `world` (loaded by the caller) into `dynamics`. Runs inside the mode's
  /// TerrainScope and inside time to first step. The terrain's static objects sleep (ISLAND_SLEEPING, as
  /// btDiscreteDynamicsWorld::addRigidBody does for static bodies; vtp's adapter does it for its object, the Bullet
  /// mode for its chunk objects), so the dispatcher skips the pairs of sleeping bodies with the terrain in both modes.
  /// `tasks` (may be null: one thread) runs what the backend can run in parallel, allocating under its mode's tag.
  virtual Status open(terrain::World& world, btDiscreteDynamicsWorld& dynamics, std::size_t cache_bytes,
                      physics::TaskRunner* tasks) = 0;
  virtual bool isTerrain(const btCollisionObject* object) const = 0;
  /// Brings the terrain collision data up to date after `changed` (voxels) changed and wakes the bodies there.
  virtual void afterEdit(const terrain::VoxelBox& changed) = 0;
  /// Runs at the start of each step's collision detection (inside the step, timed as terrain collision): the vtp
  /// mode's parallel contact pass on `tasks`, when open() was given it.
  virtual void beforeCollision() {}
  /// Runs after each step (timed as terrain collision): every 4 ticks the vtp mode hands the chunks moving bodies will
  /// reach within 0.25 s (plus those ticks) to its background collider prefetcher. `tick` counts from 0.
  virtual void afterStep(int /*tick*/) {}
  /// CPU time the backend's background threads have spent on terrain since open. [Unit: ms]
  virtual double backgroundCpuMs() const { return 0; }
  /// Threads the terrain collision runs on.
  virtual unsigned threads() const { return 1; }
  /// Casts `rays` against the terrain; returns how many hit.
  virtual int castRays(std::span<const physics::Ray> rays) = 0;
  virtual BackendCounters counters() const = 0;
};

/// Per-tick timings. [Unit: ms]
struct TickSample {
  double step = 0, terrain = 0, broadphase = 0, solver = 0, integrate = 0, rays = 0, water = 0;
  /// CPU time of terrain work on background threads during the tick (the collider prefetcher; the contact pass's
  /// workers run inside the step's wall time, which counts them).
  double background_cpu = 0;
  int awake = 0;  ///< Bodies awake when the step began.
};

struct SimOptions {
  std::size_t cache_bytes = std::size_t(64) << 20;
  bool no_sleep = false;
  int rays_per_step = 100;
  std::uint64_t seed = 1;
  int tag = 1;  ///< The mode's allocation tag (alloc_hook.h).
  /// The threads the step's parallel parts run on (the vtp mode's contact pass, the water forces); null: one.
  physics::TaskRunner* tasks = nullptr;
};

class SimWorld {
 public:
  SimWorld(std::unique_ptr<TerrainBackend> backend, const Scene& scene, SimOptions options);
  ~SimWorld();
  SimWorld(const SimWorld&) = delete;
  SimWorld& operator=(const SimWorld&) = delete;

  /// Loads the world file, builds the terrain and adds the bodies; starts the time-to-first-step clock.
  Status open(const std::string& world_path);
  /// One 60 Hz tick: applies `edits` (counting those that changed voxels), steps, casts the rays.
  void tick(std::span<const terrain::EditCommand> edits);

  const char* key() const { return m_backend->key(); }
  int tag() const { return m_options.tag; }
  const std::vector<TickSample>& samples() const { return m_samples; }
  double timeToFirstStepMs() const { return m_first_step_ms; }
  std::vector<BodyState> bodyStates() const;
  terrain::World& world() { return *m_world; }
  const terrain::World& world() const { return *m_world; }
  TerrainBackend& backend() { return *m_backend; }
  const TerrainBackend& backend() const { return *m_backend; }
  const std::vector<btRigidBody*>& bodies() const { return m_bodies; }

  std::uint64_t contacts() const { return m_contacts; }
  std::uint64_t terrainPairCalls() const { return m_terrain_calls; }
  std::uint64_t emptyTerrainPairCalls() const { return m_empty_terrain_calls; }
  std::uint64_t editsApplied() const { return m_edits_applied; }
  std::uint64_t rayHits() const { return m_ray_hits; }
  /// Bodies with water around them in the last tick.
  int bodiesInWater() const { return m_in_water; }

 private:
  class Dispatcher;
  class DynamicsWorld;
  static void nearCallback(btBroadphasePair& pair, btCollisionDispatcher& dispatcher, const btDispatcherInfo& info);
  void addBodies();

  std::unique_ptr<TerrainBackend> m_backend;
  const Scene& m_scene;
  SimOptions m_options;
  std::unique_ptr<terrain::World> m_world;
  std::unique_ptr<btDefaultCollisionConfiguration> m_config;
  std::unique_ptr<Dispatcher> m_dispatcher;
  std::unique_ptr<btDbvtBroadphase> m_broadphase;
  std::unique_ptr<btSequentialImpulseConstraintSolver> m_solver;
  std::unique_ptr<DynamicsWorld> m_dynamics;
  std::unique_ptr<WaterForces> m_water;
  std::unique_ptr<physics::TaskRunner> m_terrain_tasks;  // m_options.tasks, allocating under the mode's tag
  std::vector<std::unique_ptr<btCollisionShape>> m_shapes;
  std::vector<btRigidBody*> m_bodies;  // owned; deleted in the destructor

  std::chrono::steady_clock::time_point m_open_start;
  double m_first_step_ms = 0;
  std::vector<TickSample> m_samples;
  TickSample m_current;
  std::uint64_t m_ray_state = 0;
  std::vector<physics::Ray> m_rays;
  int m_in_water = 0;
  double m_background_ms = 0;  // the backend's background CPU at the last tick's end
  std::uint64_t m_contacts = 0, m_terrain_calls = 0, m_empty_terrain_calls = 0, m_edits_applied = 0, m_ray_hits = 0;
};

/// Milliseconds since `start`.
double msSince(std::chrono::steady_clock::time_point start);

/// FNV-1a 64 over every body's position, orientation (x, y, z, w), linear and angular velocity as btScalar bytes, in
/// id order (the report's hash, tools/README.md).
std::uint64_t bodiesHash(std::span<btRigidBody* const> bodies);

}  // namespace vtp::tools::sim
