// The `vtp` mode (vtp_mode.h).
#include "vtp_mode.h"

#include "alloc_hook.h"

#include <algorithm>
#include <vector>

#include "vtp/physics/bullet/bullet_terrain.h"
#include "vtp/physics/collider_prefetch.h"
#include "vtp/physics/terrain_physics.h"

namespace vtp::tools::sim {
namespace {

// Prefetch the colliders moving bodies will touch within this long. [Unit: s]
constexpr double kPrefetchSeconds = 0.25;
constexpr int kPrefetchEveryTicks = 4;
constexpr int kFirstSecondTicks = 60;

class VtpBackend final : public TerrainBackend {
 public:
  ~VtpBackend() override {
    // The prefetcher stops before the cache it fills goes; the adapter leaves the Bullet world before the terrain
    // physics goes.
    m_prefetcher.reset();
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
    // Its builds are this mode's collision data: its thread allocates under the mode's tag (open runs in its scope).
    auto prefetcher = physics::ColliderPrefetcher::create(m_physics->colliders(), [tag = currentTag()] { tagThisThread(tag); });
    if (!prefetcher) return prefetcher.error();
    m_prefetcher = std::move(prefetcher.value());
    return {};
  }

  bool isTerrain(const btCollisionObject* object) const override { return object == &m_adapter->object(); }

  void beforeCollision() override {
    if (m_tasks) m_adapter->runContactPass(*m_tasks);
  }
  void afterStep(int tick) override {
    if (tick + 1 == kFirstSecondTicks) m_built_first_second = m_adapter->stats().colliders_built;
    // Every few ticks, looking that much further ahead: the list costs a mask query per moving body.
    if (tick % kPrefetchEveryTicks == 0 &&
        m_adapter->prefetchCandidates(kPrefetchSeconds + kPrefetchEveryTicks / 60.0, m_candidates))
      m_prefetcher->request(m_candidates);
  }
  double backgroundCpuMs() const override { return double(m_prefetcher->stats().cpu_ns) / 1e6; }
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
    c.colliders_built_in_step = stats.colliders_built - std::min(stats.colliders_built, m_built_first_second);
    c.colliders_prefetched = m_prefetcher->stats().built;
    c.cache_bytes = cache.bytes;
    const physics::MaskIndexStats index = m_physics->masks().stats();
    c.index_bytes = index.mask_bytes + index.index_bytes;
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
  std::unique_ptr<physics::ColliderPrefetcher> m_prefetcher;
  std::vector<terrain::ChunkCoord> m_candidates;  // reused
  // The adapter's collider builds in the first simulated second (its start-up), which colliders_built_in_step leaves out.
  std::uint64_t m_built_first_second = ~0ull;
};

}  // namespace

std::unique_ptr<TerrainBackend> makeVtpBackend() { return std::make_unique<VtpBackend>(); }

}  // namespace vtp::tools::sim
