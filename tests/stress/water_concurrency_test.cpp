// The water queries under concurrency (run under TSan in CI, label `tsan`): one thread raises and drains a lake while
// two ask for submerged volumes and water rays across it. Every answer succeeds and lies within bounds; once the
// edits are done, answers equal those of a fresh TerrainPhysics.
#include <doctest/doctest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "support/random_world.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/water.h"

using namespace vtp::terrain;
using namespace vtp::physics;

TEST_CASE("water queries: volumes and rays stay in bounds as a lake rises and drains and end equal to a fresh one") {
  SUBCASE("submerged volumes and water rays run while edits raise and drain a lake; the end state equals a fresh one") {
    auto world = vtp::test::makeWorld();
    REQUIRE(world->fillBox(VoxelBox{{-20, -12, -20}, {20, -4, 20}}, kWaterMaterial).ok());
    auto physics = vtp::test::makePhysics(*world);

    std::atomic<bool> done{false}, failed{false};
    std::thread editor([&] {
      std::mt19937_64 rng(71);
      for (int i = 0; i < 80; ++i) {
        const std::int32_t top = -3 + std::int32_t(rng() % 7);  // both boxes non-empty
        if (!world->fillBox(VoxelBox{{-20, -4, -20}, {20, top, 20}}, kWaterMaterial).ok()) failed = true;
        if (!world->clearBox(VoxelBox{{-20, top, -20}, {20, 4, 20}}).ok()) failed = true;
      }
      done = true;
    });
    const ConvexShape ball = ConvexShape::sphere(0.9), crate = ConvexShape::box({0.6, 0.5, 0.7});
    auto asker = [&](std::uint64_t seed) {
      std::mt19937_64 rng(seed);
      std::uniform_real_distribution<double> at(-18.0, 18.0), height(-6.0, 5.0);
      WaterHit hit;
      while (!done) {
        const Pose pose{{at(rng), height(rng), at(rng)}, {0.2, 0.1, 0.0, 0.9746794}};
        for (const ConvexShape& shape : {ball, crate}) {
          auto got = submerged(*physics, shape, pose);
          if (!got.ok() || got->volume < 0 || got->volume > got->shape_volume * (1 + 1e-12)) failed = true;
        }
        auto wet = raycastWater(*physics, {{pose.position[0], 10.0, pose.position[2]}, {0.1, -1.0, 0.2}, 30.0}, hit);
        if (!wet.ok() || (*wet && (hit.point[1] > 4.0 || hit.point[1] < -12.0))) failed = true;
      }
    };
    std::thread a(asker, 72), b(asker, 73);
    editor.join();
    a.join();
    b.join();
    CHECK_FALSE(failed.load());

    auto fresh = vtp::test::makePhysics(*world);
    std::mt19937_64 rng(74);
    std::uniform_real_distribution<double> at(-18.0, 18.0), height(-6.0, 5.0);
    for (int i = 0; i < 50; ++i) {
      const Pose pose{{at(rng), height(rng), at(rng)}};
      auto now = submerged(*physics, crate, pose), then = submerged(*fresh, crate, pose);
      REQUIRE(now.ok());
      REQUIRE(then.ok());
      CHECK(now->volume == then->volume);
      CHECK(now->centre == then->centre);
      WaterHit h1, h2;
      const Ray ray{{pose.position[0], 10.0, pose.position[2]}, {0.0, -1.0, 0.1}, 30.0};
      CHECK(raycastWater(*physics, ray, h1).value() == raycastWater(*fresh, ray, h2).value());
      CHECK(h1.t == h2.t);
    }
  }
}
