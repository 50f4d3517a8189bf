// World rays under concurrency (TSan in CI, label `tsan`): four threads cast rays across chunks (closest, any and all
// hits) while one thread edits the world and a small collider budget forces evictions, so the walk's lock-free mask
// lookups (MaskIndex::mayOwnTriangles) and the collider cache race the edits. Every answer is well formed (t within
// the segment, the point on the ray, a unit normal, all hits sorted by t), and after the editor stops the answers
// equal a fresh single-threaded instance's.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "vtp/physics/terrain_physics.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

// A ray from above the ground, downwards and sideways, crossing several chunks.
Ray randomRay(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> xz(-14, 14), up(2, 8), side(-1, 1);
  return Ray{{xz(rng), up(rng), xz(rng)}, {side(rng), -1.0, side(rng)}, 30.0};
}

bool wellFormed(const Ray& ray, const WorldRayHit& h) {
  const RayHit& r = h.hit;
  if (!(r.t >= 0 && r.t <= ray.max_t)) return false;
  for (std::size_t a = 0; a < 3; ++a) {
    if (std::abs(r.point[a] - (ray.origin[a] + r.t * ray.direction[a])) > 1e-9) return false;
  }
  const double n = std::sqrt(double(r.normal[0]) * r.normal[0] + double(r.normal[1]) * r.normal[1] +
                             double(r.normal[2]) * r.normal[2]);
  return std::abs(n - 1) < 1e-3;
}

}  // namespace

TEST_CASE("World ray concurrency: 4 ray threads, 1 editor, a 64 KiB collider budget") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox({{-16, -8, -16}, {16, 0, 16}}, 2).ok());
  const VoxelBox region{{-14, -6, -14}, {14, 4, 14}};
  std::mt19937_64 setup(91);
  vtp::test::randomEdits(*world, region, 20, setup);
  TerrainPhysicsOptions options;
  options.colliders.byte_budget = std::size_t(64) << 10;
  auto created = TerrainPhysics::create(*world, options);
  REQUIRE(created.ok());
  TerrainPhysics& physics = **created;

  std::atomic<bool> done{false}, failed{false};
  std::atomic<long> rays{0}, hits{0};
  std::thread editor([&] {
    std::mt19937_64 rng(92);
    // An edit every 20 ms for 2 s (fewer if the machine is slow: at most 10 s).
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 100 && std::chrono::steady_clock::now() < start + std::chrono::seconds(10); ++i) {
      vtp::test::randomEdits(*world, region, 1, rng);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; ++t) {
    readers.emplace_back([&, t] {
      std::mt19937_64 rng(400 + std::uint64_t(t));
      std::vector<WorldRayHit> all;
      while (!done) {
        const Ray ray = randomRay(rng);
        WorldRayHit hit;
        const auto found = physics.raycastClosest(ray, hit);
        const auto any = physics.raycastAny(ray);
        const bool listed = physics.raycastAll(ray, all).ok();
        if (!found.ok() || !any.ok() || !listed) {
          failed = true;
          continue;
        }
        if (*found && !wellFormed(ray, hit)) failed = true;
        for (std::size_t i = 0; i < all.size(); ++i) {
          if (!wellFormed(ray, all[i]) || (i > 0 && all[i].hit.t < all[i - 1].hit.t)) failed = true;
        }
        ++rays;
        if (*found) ++hits;
      }
    });
  }
  editor.join();
  for (auto& r : readers) r.join();
  CHECK_FALSE(failed.load());
  CHECK(rays.load() > 100);
  CHECK(hits.load() > 10);
  // Quiet now: a second instance built from the same world answers the same.
  auto fresh = TerrainPhysics::create(*world);
  REQUIRE(fresh.ok());
  std::mt19937_64 rng(500);
  int compared = 0;
  for (int i = 0; i < 300; ++i) {
    const Ray ray = randomRay(rng);
    WorldRayHit a, b;
    const auto found_a = physics.raycastClosest(ray, a), found_b = (**fresh).raycastClosest(ray, b);
    REQUIRE(found_a.ok());
    REQUIRE(found_b.ok());
    REQUIRE(*found_a == *found_b);
    CHECK(physics.raycastAny(ray).value() == *found_a);
    if (*found_a) {
      CHECK(a.hit.t == b.hit.t);
      CHECK(a.chunk == b.chunk);
      CHECK(a.hit.triangle == b.hit.triangle);
      ++compared;
    }
    std::vector<WorldRayHit> all_a, all_b;
    REQUIRE(physics.raycastAll(ray, all_a).ok());
    REQUIRE((**fresh).raycastAll(ray, all_b).ok());
    REQUIRE(all_a.size() == all_b.size());
    for (std::size_t k = 0; k < all_a.size(); ++k) {
      CHECK(all_a[k].hit.t == all_b[k].hit.t);
      CHECK(all_a[k].chunk == all_b[k].chunk);
    }
  }
  CHECK(compared > 30);
}
