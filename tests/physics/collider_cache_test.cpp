// The collider cache: a miss builds exactly the collider a fresh build gives, a hit returns it again; an edit drops
// exactly the chunks whose 12^3 box it changed and the next query sees the new surface; eviction is least recently
// used first and never touches pinned colliders; the budget holds under a random query storm (overflow builds aside);
// a collider dropped while pinned stays readable; rays and gathers get colliders without edge flags, which the first
// contact query replaces by the full collider (within the budget, pinned or not); bad options and chunks are refused.
#include "vtp/physics/collider_cache.h"

#include <doctest/doctest.h>

#include <random>
#include <set>
#include <vector>

#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"

using namespace vtp::terrain;
using vtp::physics::ColliderCache;
using vtp::physics::ColliderCacheOptions;
using vtp::physics::ColliderUse;

namespace {

std::unique_ptr<ColliderCache> makeCache(World& world, std::size_t budget) {
  auto cache = ColliderCache::create(world, ColliderCacheOptions{budget});
  REQUIRE(cache.ok());
  return std::move(cache.value());
}

// A flat rock floor (top at y = 4) over chunks x in 0..7 at y = 0, z = 0: identical colliders, same bytes each.
std::unique_ptr<World> floorWorld() {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-8, -8, 0}, {72, 4, 8}}, 2).ok());
  return world;
}

}  // namespace

TEST_CASE("collider cache: a miss builds what a fresh build gives and a hit returns the same collider") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(3);
  vtp::test::randomEdits(*world, {{-20, -10, -20}, {20, 10, 20}}, 30, rng);
  auto cache = makeCache(*world, std::size_t(16) << 20);
  int chunks = 0;
  for (int z = -3; z <= 2; ++z)
    for (int y = -2; y <= 1; ++y)
      for (int x = -3; x <= 2; ++x) {
        const ChunkCoord c{x, y, z};
        auto a = cache->acquire(c);
        REQUIRE(a.ok());
        CHECK(vtp::test::fingerprint(**a) == vtp::test::freshFingerprint(*world, c));
        CHECK((*a)->chunk() == c);
        auto b = cache->acquire(c);
        REQUIRE(b.ok());
        CHECK(b->get() == a->get());
        ++chunks;
      }
  const auto s = cache->stats();
  CHECK(s.misses == std::uint64_t(chunks));
  CHECK(s.hits == std::uint64_t(chunks));
  CHECK(s.builds == std::uint64_t(chunks));
  CHECK(s.entries == std::size_t(chunks));
  CHECK(s.evictions == 0);
  CHECK(s.bytes > 0);
  CHECK(s.bytes <= cache->byteBudget());
}

TEST_CASE("collider cache: an edit drops exactly the chunks whose 12^3 box it changed and the next query sees it") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(5);
  vtp::test::randomEdits(*world, {{-20, -10, -20}, {20, 10, 20}}, 30, rng);
  auto cache = makeCache(*world, std::size_t(16) << 20);
  std::vector<ChunkCoord> all;
  for (int z = -3; z <= 2; ++z)
    for (int y = -2; y <= 1; ++y)
      for (int x = -3; x <= 2; ++x) all.push_back({x, y, z});
  for (int round = 0; round < 20; ++round) {
    for (const ChunkCoord c : all) REQUIRE(cache->acquire(c).ok());
    const auto before = cache->stats();
    // One voxel, sometimes on a chunk corner.
    std::uniform_int_distribution<int> at(-20, 19);
    VoxelCoord v{at(rng), at(rng) / 2, at(rng)};
    if (round % 3 == 0) v = {8 * (at(rng) / 8), 8 * (at(rng) / 16), 8 * (at(rng) / 8)};
    const bool fill = world->voxel(v).occupancy < 128;
    REQUIRE((fill ? world->fillBox(VoxelBox{v, {v.x + 1, v.y + 1, v.z + 1}}, 3)
                  : world->clearBox(VoxelBox{v, {v.x + 1, v.y + 1, v.z + 1}}))
                .ok());
    std::set<ChunkCoord> affected;
    for (int dz = -2; dz <= 2; ++dz)  // the 12^3 box: the chunk and two voxels around (edge flags)
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) affected.insert(chunkOf({v.x + dx, v.y + dy, v.z + dz}));
    std::uint64_t expected_drops = 0;
    for (const ChunkCoord c : all) expected_drops += affected.count(c);
    CHECK(cache->stats().invalidations - before.invalidations == expected_drops);
    for (const ChunkCoord c : all) {
      const auto s0 = cache->stats();
      auto pin = cache->acquire(c);
      REQUIRE(pin.ok());
      CHECK(vtp::test::fingerprint(**pin) == vtp::test::freshFingerprint(*world, c));
      CHECK(cache->stats().misses - s0.misses == (affected.count(c) ? 1u : 0u));
    }
  }
}

TEST_CASE("collider cache: least recently used first, pinned colliders never evicted, overflow builds not kept") {
  auto world = floorWorld();
  auto probe = makeCache(*world, std::size_t(1) << 20);
  const std::size_t one = (*probe->acquire({1, 0, 0}))->bytes();
  for (int x = 1; x <= 6; ++x) REQUIRE((*probe->acquire({x, 0, 0}))->bytes() == one);

  SUBCASE("LRU order") {
    auto cache = makeCache(*world, 3 * one);
    for (int x : {1, 2, 3}) REQUIRE(cache->acquire({x, 0, 0}).ok());
    REQUIRE(cache->acquire({1, 0, 0}).ok());  // 2 is now the least recently used
    REQUIRE(cache->acquire({4, 0, 0}).ok());  // evicts 2
    auto s = cache->stats();
    CHECK(s.evictions == 1);
    CHECK(s.entries == 3);
    CHECK(s.bytes == 3 * one);
    const auto misses = s.misses;
    for (int x : {1, 3, 4}) REQUIRE(cache->acquire({x, 0, 0}).ok());
    CHECK(cache->stats().misses == misses);  // all hits
    REQUIRE(cache->acquire({2, 0, 0}).ok());  // a miss again; evicts 1 (used before 3 and 4)
    CHECK(cache->stats().misses == misses + 1);
    REQUIRE(cache->acquire({3, 0, 0}).ok());
    REQUIRE(cache->acquire({4, 0, 0}).ok());
    CHECK(cache->stats().misses == misses + 1);
    REQUIRE(cache->acquire({1, 0, 0}).ok());
    CHECK(cache->stats().misses == misses + 2);
  }
  SUBCASE("pinned colliders stay; with everything pinned a build overflows and is freed with its pin") {
    auto cache = makeCache(*world, 2 * one);
    auto a = cache->acquire({1, 0, 0});
    auto b = cache->acquire({2, 0, 0});
    REQUIRE((a.ok() && b.ok()));
    const auto* a_collider = a->get();
    {
      auto c = cache->acquire({3, 0, 0});
      REQUIRE(c.ok());
      CHECK((*c)->triangleCount() == (*a)->triangleCount());
      const auto s = cache->stats();
      CHECK(s.overflow_builds == 1);
      CHECK(s.evictions == 0);
      CHECK(s.entries == 2);
      CHECK(s.bytes == 2 * one);
    }
    b = ColliderCache::Pin();  // unpin 2: now evictable
    REQUIRE(cache->acquire({3, 0, 0}).ok());
    const auto s = cache->stats();
    CHECK(s.evictions == 1);
    CHECK(s.overflow_builds == 1);
    auto again = cache->acquire({1, 0, 0});
    REQUIRE(again.ok());
    CHECK(again->get() == a_collider);  // 1 was pinned: never evicted
  }
  SUBCASE("a collider larger than the budget is served, not kept, and evicts nothing") {
    auto cache = makeCache(*world, one / 2);
    auto pin = cache->acquire({1, 0, 0});
    REQUIRE(pin.ok());
    CHECK((*pin)->triangleCount() > 0);
    CHECK(cache->stats().overflow_builds == 1);
    CHECK(cache->stats().entries == 0);
    CHECK(cache->stats().bytes == 0);
  }
}

TEST_CASE("collider cache: a collider dropped by an edit while pinned stays readable until unpinned") {
  auto world = floorWorld();
  auto cache = makeCache(*world, std::size_t(1) << 20);
  auto old = cache->acquire({2, 0, 0});
  REQUIRE(old.ok());
  const std::uint64_t before = vtp::test::fingerprint(**old);
  REQUIRE(world->clearBox(VoxelBox{{16, 0, 0}, {24, 8, 8}}).ok());
  CHECK(cache->stats().invalidations >= 1);
  CHECK(vtp::test::fingerprint(**old) == before);  // still the old surface, still alive (ASan checks)
  CHECK(cache->stats().entries == 0);
  CHECK(cache->stats().bytes == (*old)->bytes());  // dropped but pinned: still counted
  auto fresh = cache->acquire({2, 0, 0});
  REQUIRE(fresh.ok());
  CHECK(vtp::test::fingerprint(**fresh) == vtp::test::freshFingerprint(*world, {2, 0, 0}));
  CHECK(vtp::test::fingerprint(**fresh) != before);
  CHECK(cache->stats().bytes == (*old)->bytes() + (*fresh)->bytes());
  old = ColliderCache::Pin();
  CHECK(cache->stats().bytes == (*fresh)->bytes());
}

TEST_CASE("collider cache: the budget holds under a random query storm with edits") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(9);
  vtp::test::randomEdits(*world, {{-24, -12, -24}, {24, 12, 24}}, 40, rng);
  for (const std::size_t budget : {std::size_t(4) << 10, std::size_t(64) << 10, std::size_t(1) << 20}) {
    auto cache = makeCache(*world, budget);
    std::uniform_int_distribution<int> at(-4, 3);
    std::vector<ColliderCache::Pin> held;
    for (int i = 0; i < 3000; ++i) {
      const ChunkCoord c{at(rng), at(rng) / 2, at(rng)};
      auto pin = cache->acquire(c);
      REQUIRE(pin.ok());
      if (rng() % 7 == 0) held.push_back(std::move(pin.value()));
      if (held.size() > 4) held.erase(held.begin());
      if (i % 500 == 0) vtp::test::randomEdits(*world, {{-24, -12, -24}, {24, 12, 24}}, 1, rng);
      CHECK(cache->stats().bytes <= budget);
    }
    const auto s = cache->stats();
    CHECK(s.hits + s.misses == 3000);
    if (budget < (std::size_t(1) << 20)) CHECK(s.evictions > 0);
  }
}

TEST_CASE("collider cache: bad options and chunks are refused") {
  auto world = vtp::test::makeWorld();
  CHECK_FALSE(ColliderCache::create(*world, ColliderCacheOptions{0}).ok());
  CHECK_FALSE(ColliderCache::create(*world, ColliderCacheOptions{std::size_t(1) << 41}).ok());
  auto cache = makeCache(*world, 1 << 20);
  CHECK_FALSE(cache->acquire({1 << 22, 0, 0}).ok());
  CHECK(cache->acquire({0, 0, 0}, ColliderUse(7)).error().code == vtp::ErrorCode::kInvalidArgument);
  CHECK(cache->stats().misses == 0);  // refused before any build
  CHECK(cache->acquire({0, 0, 0}).ok());
}

TEST_CASE("collider cache: an edit exactly two voxels outside a chunk rebuilds it (its edge flags see that far)") {
  auto world = vtp::test::flatRockWorld(16);
  auto cache = makeCache(*world, std::size_t(16) << 20);
  const ChunkCoord c{0, -1, 0};  // voxels [0, 8) on x and z, its top layer the ground's surface
  for (const int outside : {2, 3}) {
    REQUIRE(cache->acquire(c).ok());
    const auto before = cache->stats();
    // A voxel `outside` voxels past the chunk's +x face, on the surface.
    const VoxelCoord v{7 + outside, 0, 3};
    REQUIRE(world->fillBox(VoxelBox{v, {v.x + 1, v.y + 1, v.z + 1}}, 3).ok());
    CHECK(cache->stats().invalidations - before.invalidations == (outside == 2 ? 1u : 0u));
    auto pin = cache->acquire(c);
    REQUIRE(pin.ok());
    CHECK(cache->stats().misses - before.misses == (outside == 2 ? 1u : 0u));
  }
}

TEST_CASE("collider cache: queries get colliders without edge flags and the first contact query replaces them") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(13);
  vtp::test::randomEdits(*world, {{-20, -10, -20}, {20, 10, 20}}, 30, rng);
  auto cache = makeCache(*world, std::size_t(16) << 20);
  auto reference = makeCache(*world, std::size_t(16) << 20);  // contacts only
  std::vector<ChunkCoord> all;
  for (int z = -3; z <= 2; ++z)
    for (int y = -2; y <= 1; ++y)
      for (int x = -3; x <= 2; ++x) all.push_back({x, y, z});
  std::vector<ColliderCache::Pin> lean;
  std::size_t lean_bytes = 0, full_bytes = 0;
  int flagged = 0;
  for (const ChunkCoord c : all) {
    auto q = cache->acquire(c, ColliderUse::kQueries);
    REQUIRE(q.ok());
    CHECK_FALSE((*q)->hasEdgeFlags());
    CHECK(vtp::test::fingerprint(**q) == vtp::test::freshFingerprint(*world, c));
    auto again = cache->acquire(c, ColliderUse::kQueries);
    REQUIRE(again.ok());
    CHECK(again->get() == q->get());
    lean_bytes += (*q)->bytes();
    lean.push_back(std::move(q.value()));
  }
  auto s = cache->stats();
  CHECK(s.misses == all.size());
  CHECK(s.upgrades == 0);
  CHECK(s.bytes == lean_bytes);
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto k = cache->acquire(all[i], ColliderUse::kContacts);
    REQUIRE(k.ok());
    CHECK((*k)->hasEdgeFlags());
    CHECK(k->get() != lean[i].get());
    // Exactly the collider a contacts-only cache builds, edge flags included.
    auto r = reference->acquire(all[i]);
    REQUIRE(r.ok());
    REQUIRE((*k)->triangleCount() == (*r)->triangleCount());
    for (int id = 0; id < (*k)->triangleCount(); ++id) {
      CHECK((*k)->triangle(id).edge_flags == (*r)->triangle(id).edge_flags);
      flagged += (*k)->triangle(id).edge_flags != 0;
    }
    CHECK(vtp::test::fingerprint(**k) == vtp::test::fingerprint(*lean[i]));
    full_bytes += (*k)->bytes();
    // Every later query, of either kind, hits it.
    auto q = cache->acquire(all[i], ColliderUse::kQueries);
    REQUIRE(q.ok());
    CHECK(q->get() == k->get());
  }
  CHECK(flagged > 0);
  s = cache->stats();
  CHECK(s.misses == 2 * all.size());
  CHECK(s.upgrades == all.size());
  CHECK(s.entries == all.size());
  CHECK(s.bytes == lean_bytes + full_bytes);  // the replaced colliders are still pinned: still counted
  lean.clear();
  CHECK(cache->stats().bytes == full_bytes);
  // A chunk first built for contacts serves queries with no build.
  auto fresh = makeCache(*world, std::size_t(16) << 20);
  REQUIRE(fresh->acquire(all[5]).ok());
  REQUIRE(fresh->acquire(all[5], ColliderUse::kQueries).ok());
  CHECK(fresh->stats().builds == 1);
  CHECK(fresh->stats().hits == 1);
}

TEST_CASE("collider cache: a contact query's replacement keeps the budget, with the replaced collider pinned or not") {
  auto world = floorWorld();
  auto probe = makeCache(*world, std::size_t(1) << 20);
  const std::size_t one = (*probe->acquire({1, 0, 0}))->bytes();
  REQUIRE((*probe->acquire({1, 0, 0}, ColliderUse::kQueries))->bytes() == one);
  SUBCASE("unpinned: it makes the room itself") {
    auto cache = makeCache(*world, 2 * one);
    REQUIRE(cache->acquire({1, 0, 0}, ColliderUse::kQueries).ok());
    REQUIRE(cache->acquire({2, 0, 0}, ColliderUse::kQueries).ok());
    auto k = cache->acquire({1, 0, 0}, ColliderUse::kContacts);
    REQUIRE(k.ok());
    CHECK((*k)->hasEdgeFlags());
    const auto s = cache->stats();
    CHECK(s.upgrades == 1);
    CHECK(s.evictions == 0);
    CHECK(s.entries == 2);
    CHECK(s.bytes == 2 * one);
  }
  SUBCASE("pinned: another collider is evicted") {
    auto cache = makeCache(*world, 2 * one);
    auto q = cache->acquire({1, 0, 0}, ColliderUse::kQueries);
    REQUIRE(q.ok());
    REQUIRE(cache->acquire({2, 0, 0}, ColliderUse::kQueries).ok());
    auto k = cache->acquire({1, 0, 0}, ColliderUse::kContacts);
    REQUIRE(k.ok());
    const auto s = cache->stats();
    CHECK(s.upgrades == 1);
    CHECK(s.evictions == 1);
    CHECK(s.entries == 1);
    CHECK(s.bytes == 2 * one);
    CHECK_FALSE((*q)->hasEdgeFlags());  // still readable
  }
  SUBCASE("pinned, and nothing else to evict: served, not kept; the replaced one stays") {
    auto cache = makeCache(*world, one);
    auto q = cache->acquire({1, 0, 0}, ColliderUse::kQueries);
    REQUIRE(q.ok());
    auto k = cache->acquire({1, 0, 0}, ColliderUse::kContacts);
    REQUIRE(k.ok());
    CHECK((*k)->hasEdgeFlags());
    const auto s = cache->stats();
    CHECK(s.upgrades == 0);
    CHECK(s.overflow_builds == 1);
    CHECK(s.entries == 1);
    CHECK(s.bytes == one);
    k = ColliderCache::Pin();
    q = ColliderCache::Pin();
    auto again = cache->acquire({1, 0, 0}, ColliderUse::kQueries);  // a hit on the collider without edge flags
    REQUIRE(again.ok());
    CHECK_FALSE((*again)->hasEdgeFlags());
    CHECK(cache->stats().hits == 1);
    CHECK(cache->stats().bytes == one);
  }
}

TEST_CASE("collider cache: after a replacement, evicting everything frees each collider once (ASan checks)") {
  auto world = floorWorld();
  auto probe = makeCache(*world, std::size_t(1) << 20);
  const std::size_t one = (*probe->acquire({1, 0, 0}))->bytes();
  auto cache = makeCache(*world, 2 * one);
  REQUIRE(cache->acquire({1, 0, 0}, ColliderUse::kQueries).ok());
  REQUIRE(cache->acquire({1, 0, 0}, ColliderUse::kContacts).ok());  // replaces the lean collider, which is freed
  // Evicts through the LRU order: a replaced collider left on it would be read after being freed.
  for (int x = 2; x <= 6; ++x) REQUIRE(cache->acquire({x, 0, 0}, ColliderUse::kContacts).ok());
  const auto s = cache->stats();
  CHECK(s.upgrades == 1);
  CHECK(s.entries == 2);
  CHECK(s.evictions == 4);
  CHECK(s.bytes == 2 * one);
}
