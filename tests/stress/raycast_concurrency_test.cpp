// World rays under concurrency (TSan in CI, label `tsan`): four threads cast rays across chunks (closest, any and all
// hits) while one thread edits the world and a small collider budget forces evictions, so the walk's lock-free mask
// lookups (MaskIndex::mayOwnTriangles) and the collider cache race the edits. Every answer is well formed (t within
// the segment, the point on the ray, a unit normal, all hits sorted by t), and after the editor stops the answers
// equal a fresh single-threaded instance's.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "support/edit_storm.h"
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
  vtp::test::StormScene scene = vtp::test::makeStormScene(91);
  TerrainPhysics& physics = *scene.physics;
  std::atomic<bool> failed{false};
  std::atomic<long> rays{0}, hits{0};
  vtp::test::runWithEditor(*scene.world, 92, 4, [&](int t, const std::atomic<bool>& done) {
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
  CHECK_FALSE(failed.load());
  CHECK(rays.load() > 100);
  CHECK(hits.load() > 10);
  // Quiet now: a second instance built from the same world answers the same.
  auto fresh = TerrainPhysics::create(*scene.world);
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
