// The `vtp` mode (vtp_mode.h).
#include "vtp_mode.h"

#include "vtp/physics/bullet/bullet_terrain.h"
#include "vtp/physics/terrain_physics.h"

namespace vtp::tools::sim {
namespace {

class VtpBackend final : public TerrainBackend {
 public:
  ~VtpBackend() override {
    // The adapter leaves the Bullet world before the terrain physics goes.
    m_adapter.reset();
    m_physics.reset();
  }
  const char* key() const override { return "vtp"; }

  Status open(terrain::World& world, btDiscreteDynamicsWorld& dynamics, std::size_t cache_bytes,
              physics::TaskRunner* tasks) override {
    m_tasks = tasks;
    physics::TerrainPhysicsOptions options;
    options.colliders.byte_budget = cache_bytes;
    auto created = physics::TerrainPhysics::create(world, options);
    if (!created) return created.error();
    m_physics = std::move(created.value());
    auto attached = physics::BulletTerrain::attach(*m_physics, dynamics);
    if (!attached) return attached.error();
    m_adapter = std::move(attached.value());
    return {};
  }

  bool isTerrain(const btCollisionObject* object) const override { return object == &m_adapter->object(); }

  void beforeCollision() override {
    if (m_tasks) m_adapter->runContactPass(*m_tasks);
  }
  unsigned threads() const override { return m_tasks ? m_tasks->workers() : 1; }

  void afterEdit(const terrain::VoxelBox&) override { m_adapter->wakeBodies(); }

  int castRays(std::span<const physics::Ray> rays) override {
    int hits = 0;
    physics::WorldRayHit hit;
    for (const physics::Ray& r : rays) {
      auto found = m_physics->raycastClosest(r, hit);
      hits += found && *found ? 1 : 0;
    }
    return hits;
  }

  BackendCounters counters() const override {
    BackendCounters c;
    const physics::BulletTerrainStats stats = m_adapter->stats();
    c.gjk_calls = stats.gjk_calls;
    c.details = {{"adapter_narrowphase_calls", stats.narrowphase_calls},
                 {"adapter_empty_narrowphase_calls", stats.empty_narrowphase_calls},
                 {"adapter_contacts", stats.contacts},
                 {"adapter_reused_manifolds", stats.reused_manifolds},
                 {"adapter_live_manifolds", stats.live_manifolds}};
    const physics::ColliderCacheStats cache = m_physics->colliders().stats();
    c.colliders_built = cache.builds;
    c.bodies_outside_range = m_adapter->bodiesOutsideRange().size();
    c.cache_bytes = cache.bytes;
    c.details.insert(c.details.end(), {{"cache_hits", cache.hits},
                                       {"cache_misses", cache.misses},
                                       {"cache_evictions", cache.evictions},
                                       {"cache_invalidations", cache.invalidations},
                                       {"cache_upgrades", cache.upgrades}});
    return c;
  }

 private:
  std::unique_ptr<physics::TerrainPhysics> m_physics;
  std::unique_ptr<physics::BulletTerrain> m_adapter;
  physics::TaskRunner* m_tasks = nullptr;
};

}  // namespace

std::unique_ptr<TerrainBackend> makeVtpBackend() { return std::make_unique<VtpBackend>(); }

}  // namespace vtp::tools::sim
