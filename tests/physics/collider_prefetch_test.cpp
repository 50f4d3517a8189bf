// The collider prefetcher (collider_prefetch.h) and what feeds it: ColliderCache::holds and Pin::built, and the Bullet
// adapter's prefetchCandidates. Prefetched colliders equal fresh builds, the step's searches then find them cached,
// and a moving body's candidates are the chunks ahead of it that it will touch.
#include "vtp/physics/collider_prefetch.h"

#include <btBulletDynamicsCommon.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "support/bullet_world.h"
#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/bullet/bullet_terrain.h"

using namespace vtp::terrain;
using namespace vtp::physics;

TEST_CASE("collider cache: holds peeks without building or counting, and a pin says whether its acquire built") {
  auto world = vtp::test::flatRockWorld(16);
  auto cache = ColliderCache::create(*world);
  REQUIRE(cache.ok());
  ColliderCache& c = *cache.value();
  const ChunkCoord chunk{0, -1, 0};
  CHECK_FALSE(c.holds(chunk));
  CHECK(c.stats().misses == 0);
  {
    auto query_only = c.acquire(chunk, ColliderUse::kQueries);
    REQUIRE(query_only.ok());
    CHECK(query_only->built());
  }
  CHECK(c.holds(chunk, ColliderUse::kQueries));
  CHECK_FALSE(c.holds(chunk, ColliderUse::kContacts));  // no edge flags yet
  auto first = c.acquire(chunk);
  REQUIRE(first.ok());
  CHECK(first->built());
  auto again = c.acquire(chunk);
  REQUIRE(again.ok());
  CHECK_FALSE(again->built());
  CHECK(c.holds(chunk));
  const ColliderCacheStats s = c.stats();
  CHECK(s.misses == 2);
  CHECK(s.hits == 1);
  REQUIRE(world->clearBox({{0, -4, 0}, {4, 0, 4}}).ok());  // an edit drops it
  CHECK_FALSE(c.holds(chunk));
}

TEST_CASE("collider prefetcher: builds the requested chunks the cache lacks, as fresh builds, skipping held ones") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(5);
  vtp::test::randomEdits(*world, {{-20, -10, -20}, {20, 10, 20}}, 30, rng);
  auto cache = ColliderCache::create(*world);
  REQUIRE(cache.ok());
  ColliderCache& c = *cache.value();
  std::vector<ChunkCoord> chunks;
  for (int z = -3; z <= 2; ++z)
    for (int x = -3; x <= 2; ++x) chunks.push_back({x, 0, z});
  { auto held = c.acquire(chunks[3]); }  // one already cached
  bool started = false;
  auto prefetcher = ColliderPrefetcher::create(c, [&] { started = true; });
  REQUIRE(prefetcher.ok());
  prefetcher.value()->request(chunks);
  prefetcher.value()->wait();
  CHECK(started);
  ColliderPrefetchStats s = prefetcher.value()->stats();
  CHECK(s.requested == chunks.size());
  CHECK(s.built == chunks.size() - 1);
  CHECK(s.held == 1);
  CHECK(s.failed == 0);
  for (const ChunkCoord chunk : chunks) {
    REQUIRE(c.holds(chunk));
    auto pin = c.acquire(chunk);
    REQUIRE(pin.ok());
    CHECK_FALSE(pin->built());
    CHECK(vtp::test::fingerprint(**pin) == vtp::test::freshFingerprint(*world, chunk));
  }
  // A chunk beyond physics' range fails and is counted; the prefetcher carries on.
  const std::vector<ChunkCoord> beyond{{1 << 20, 0, 0}, {4, 0, 4}};
  prefetcher.value()->request(beyond);
  prefetcher.value()->wait();
  s = prefetcher.value()->stats();
  CHECK(s.failed == 1);
  CHECK(s.built == chunks.size());
  CHECK(c.holds({4, 0, 4}));
}

TEST_CASE("bullet terrain: prefetch candidates are the unbuilt chunks ahead of a moving body, none for a still one") {
  auto world = vtp::test::flatRockWorld(48);
  auto physics = vtp::test::makePhysics(*world);
  vtp::test::BulletWorld bullet(*physics);
  BulletTerrain& terrain = *bullet.terrain;
  btRigidBody& body = bullet.add(new btSphereShape(0.5f), 1, btVector3(0.5f, 0.5f, 0.5f), false);
  std::vector<ChunkCoord> out;
  CHECK(terrain.prefetchCandidates(0.25, out).ok());
  CHECK(out.empty());  // still
  // Rolling along +x at 40 voxels/s: within 0.25 s it reaches x = 10.5, the surface chunks x 0 and 1 (y -1 holds the
  // ground's top layer; y 0 owns nothing); the sphere's own chunk is not built yet either.
  body.setLinearVelocity(btVector3(40, 0, 0));
  CHECK(terrain.prefetchCandidates(0.25, out).ok());
  REQUIRE_FALSE(out.empty());
  CHECK(std::is_sorted(out.begin(), out.end()));
  for (const ChunkCoord c : out) {
    CHECK(physics->masks().mayOwnTriangles(c));
    CHECK(c.x >= -1);
    CHECK(c.x <= 1);
  }
  CHECK(std::find(out.begin(), out.end(), ChunkCoord{1, -1, 0}) != out.end());
  // Once they are built, nothing is left to prefetch.
  for (const ChunkCoord c : out) REQUIRE(physics->colliders().acquire(c).ok());
  CHECK(terrain.prefetchCandidates(0.25, out).ok());
  CHECK(out.empty());
  CHECK_FALSE(terrain.prefetchCandidates(-1, out).ok());
}
