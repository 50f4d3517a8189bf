// The collider cache under concurrency (run under TSan in CI, label `tsan`): four threads query colliders and read
// them while one thread edits the world and a 64 KiB budget forces evictions. Half the queries are for rays (colliders
// without edge flags), half for contacts (which replace those); each must get a collider that serves it. Every collider a query got must equal
// a fresh build of its chunk at a version published no earlier than the last edit that had returned when the query
// started, and no later than the edit after the last one returned when it ended (the editor fingerprints every chunk
// after each edit; the check runs after all threads stop). The budget must hold throughout, and queries after the
// last edit see it.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "vtp/physics/collider_cache.h"

using namespace vtp::terrain;
using vtp::physics::ColliderCache;

TEST_CASE("Collider cache concurrency: 4 query threads, 1 editor, a 64 KiB budget") {
  auto world = vtp::test::makeWorld();
  const VoxelBox region{{-16, -8, -16}, {16, 8, 16}};
  std::mt19937_64 setup(71);
  vtp::test::randomEdits(*world, region, 30, setup);
  auto created = ColliderCache::create(*world, {std::size_t(64) << 10});
  REQUIRE(created.ok());
  ColliderCache& cache = **created;

  std::vector<ChunkCoord> chunks;
  for (int z = -3; z <= 2; ++z)
    for (int y = -2; y <= 1; ++y)
      for (int x = -3; x <= 2; ++x) chunks.push_back({x, y, z});
  // Published versions: every chunk's fingerprint before the first edit (version 0) and after edit k (version k).
  std::map<ChunkCoord, std::vector<std::uint64_t>> published;
  auto record = [&] {
    for (const ChunkCoord c : chunks) published[c].push_back(vtp::test::freshFingerprint(*world, c));
  };
  record();

  std::atomic<bool> done{false}, over_budget{false}, failed{false};
  std::atomic<int> edits_returned{0};
  std::thread editor([&] {
    std::mt19937_64 rng(72);
    const auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int i = 1; i <= 40 && std::chrono::steady_clock::now() < stop; ++i) {
      vtp::test::randomEdits(*world, region, 1, rng);
      record();
      edits_returned = i;
    }
    done = true;
  });
  struct Seen {
    ChunkCoord chunk;
    std::uint64_t fingerprint;
    int first, last;  // the versions the answer may be
  };
  std::vector<std::vector<Seen>> seen(4);
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(100 + std::uint64_t(t));
      std::vector<ColliderCache::Pin> held;
      while (!done) {
        const ChunkCoord c = chunks[rng() % chunks.size()];
        const auto use = rng() % 2 ? vtp::physics::ColliderUse::kContacts : vtp::physics::ColliderUse::kQueries;
        const int first = edits_returned.load();
        auto pin = cache.acquire(c, use);
        const int last = edits_returned.load() + 1;
        if (!pin.ok() || !*pin || !(*pin)->serves(use)) {
          failed = true;
          break;
        }
        seen[std::size_t(t)].push_back({c, vtp::test::fingerprint(**pin), first, last});
        // Read it (a ray down through the chunk) while others evict and the editor invalidates.
        const VoxelCoord o = chunkOrigin(c);
        auto ray = vtp::physics::prepareRay({{o.x + 4.3, o.y + 9.0, o.z + 3.7}, {0.01, -1, 0.02}, 10.0}, c, 1.0);
        vtp::physics::RayHit hit;
        if (ray.ok()) (void)(*pin)->closestHit(*ray, hit);
        if (rng() % 4 == 0) held.push_back(std::move(pin.value()));
        if (held.size() > 3) held.erase(held.begin());
        if (cache.stats().bytes > cache.byteBudget()) over_budget = true;
      }
    });
  }
  editor.join();
  for (auto& r : readers) r.join();
  CHECK_FALSE(failed.load());
  CHECK_FALSE(over_budget.load());
  std::size_t queries = 0, unknown = 0;
  for (const auto& list : seen) {
    for (const Seen& q : list) {
      ++queries;
      const std::vector<std::uint64_t>& versions = published[q.chunk];
      const int last = std::min(q.last, int(versions.size()) - 1);
      bool match = false;
      for (int k = q.first; k <= last; ++k) match = match || versions[std::size_t(k)] == q.fingerprint;
      if (!match) ++unknown;
    }
  }
  CHECK(queries > 100);
  CHECK(unknown == 0);
  const auto s = cache.stats();
  CHECK(s.evictions > 0);
  CHECK(s.invalidations > 0);
  CHECK(s.upgrades > 0);
  // After the last edit, every query sees the world as it is.
  for (const ChunkCoord c : chunks) {
    auto pin = cache.acquire(c);
    REQUIRE(pin.ok());
    CHECK(vtp::test::fingerprint(**pin) == vtp::test::freshFingerprint(*world, c));
  }
}

TEST_CASE("Collider cache concurrency: rays and contacts race on two chunks while an editor changes them") {
  // Two chunks of a floor, both uses from 4 threads holding pins, an editor toggling voxels in both, and budgets of
  // about one, two and four colliders: lean colliders are replaced, replacements overflow, edits land mid-build.
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-8, -8, 0}, {40, 4, 8}}, 2).ok());
  std::size_t one = 0;
  {
    auto probe = ColliderCache::create(*world, {std::size_t(1) << 20});
    REQUIRE(probe.ok());
    one = (*(*probe)->acquire({1, 0, 0}))->bytes();
  }
  for (const std::size_t budget : {one + one / 2, 2 * one + one / 2, 4 * one}) {
    auto created = ColliderCache::create(*world, {budget});
    REQUIRE(created.ok());
    ColliderCache& cache = **created;
    std::atomic<bool> done{false}, failed{false}, over_budget{false};
    std::thread editor([&] {
      std::mt19937_64 rng(budget);
      for (int i = 0; i < 100; ++i) {
        const VoxelCoord v{8 + int(rng() % 16), 4, int(rng() % 8)};
        (void)world->fillBox(VoxelBox{v, {v.x + 1, v.y + 1, v.z + 1}}, (i & 1) ? 3 : 0);
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // room for builds, hits and replacements
      }
      done = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 4; ++t) {
      readers.emplace_back([&, t] {
        std::mt19937_64 rng(200 + std::uint64_t(t));
        std::vector<ColliderCache::Pin> held;
        while (!done) {
          const ChunkCoord c{1 + int(rng() % 2), 0, 0};
          const auto use = rng() % 2 ? vtp::physics::ColliderUse::kContacts : vtp::physics::ColliderUse::kQueries;
          auto pin = cache.acquire(c, use);
          if (!pin.ok() || !*pin || !(*pin)->serves(use) || (*pin)->chunk() != c) {
            failed = true;
            break;
          }
          if (rng() % 8 == 0) held.push_back(std::move(pin.value()));
          if (held.size() > 1) held.erase(held.begin());
          if (cache.stats().bytes > budget) over_budget = true;
        }
      });
    }
    editor.join();
    for (auto& r : readers) r.join();
    const auto s = cache.stats();
    MESSAGE("budget " << budget << ": upgrades " << s.upgrades << ", misses " << s.misses << ", stale "
                      << s.stale_builds << ", overflow " << s.overflow_builds << ", evictions " << s.evictions
                      << ", invalidations " << s.invalidations);
    CHECK_FALSE(failed.load());
    CHECK_FALSE(over_budget.load());
    CHECK(s.bytes <= budget);
    CHECK(s.entries <= 2);
    CHECK(s.invalidations > 0);
    // Afterwards every query sees the world as it is, with edge flags for contacts.
    for (const ChunkCoord c : {ChunkCoord{1, 0, 0}, ChunkCoord{2, 0, 0}}) {
      auto pin = cache.acquire(c);
      REQUIRE(pin.ok());
      CHECK((*pin)->hasEdgeFlags());
      CHECK(vtp::test::fingerprint(**pin) == vtp::test::freshFingerprint(*world, c));
    }
  }
}
