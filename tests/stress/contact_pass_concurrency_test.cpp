// The parallel contact pass under concurrency (TSan in CI, label `tsan`): a Bullet world of mixed bodies steps with
// BulletTerrain::runContactPass on three workers while an editor thread keeps digging craters under them and a
// small collider budget forces evictions. Every body stays finite and in the ground's column, and once the editor
// stops the mask index and the collider cache pass their validate() walks and the terrain still holds the bodies.
#include <btBulletDynamicsCommon.h>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>
#include <memory>
#include <vector>

#include "support/bullet_world.h"
#include "support/edit_storm.h"
#include "vtp/physics/bullet/bullet_terrain.h"
#include "vtp/physics/task_runner.h"

using namespace vtp::terrain;
using namespace vtp::physics;

TEST_CASE("contact pass concurrency: a step's pass on 3 workers while an editor digs craters under the bodies") {
  vtp::test::StormScene scene = vtp::test::makeStormScene(91);
  REQUIRE(scene.world->fillBox({{-16, -24, -16}, {16, -8, 16}}, vtp::test::kRockId).ok());  // deeper than any pit
  vtp::test::BulletWorld bullet(*scene.physics);
  BulletTerrain& terrain = *bullet.terrain;
  auto pool = ThreadPool::create(3);
  REQUIRE(pool.ok());
  for (int i = 0; i < 32; ++i) {
    btCollisionShape* shape = nullptr;
    switch (i % 4) {
      case 0: shape = new btSphereShape(0.45f); break;
      case 1: shape = new btBoxShape(btVector3(0.4f, 0.3f, 0.5f)); break;
      case 2: shape = new btCapsuleShape(0.3f, 0.6f); break;
      default: {
        auto* hull = new btConvexHullShape();
        for (int k = 0; k < 10; ++k)
          hull->addPoint(btVector3(btScalar(0.5 * std::cos(k)), btScalar(0.4 * std::sin(3.0 * k)), btScalar(0.5 * std::sin(k))));
        shape = hull;
      }
    }
    bullet.add(shape, 1, btVector3(btScalar(-12 + (i % 6) * 4.5), btScalar(5 + i % 3), btScalar(-12 + (i / 6) * 4.5)), false);
  }
  std::atomic<int> steps{0};
  auto step = [&] {
    terrain.wakeBodies();
    terrain.runContactPass(*pool.value());  // one substep a call: the pass stands right before its collision
    bullet.dynamics.stepSimulation(btScalar(1.0 / 60.0), 0, btScalar(1.0 / 60.0));
    ++steps;
  };
  // The editor digs craters (fills could bury a body, which no contact solver digs out) every 20 ms for 2 s.
  std::atomic<bool> done{false};
  std::thread editor([&] {
    std::mt19937_64 rng(92);
    std::uniform_real_distribution<double> xz(-13, 13), depth(-4, 0), radius(1, 3);
    for (int i = 0; i < 100; ++i) {
      const SphereShape crater{{xz(rng), depth(rng), xz(rng)}, radius(rng)};
      if (!scene.world->apply(ShapeEdit{crater, EditOp::kClear, 0}).ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    done = true;
  });
  while (!done) step();
  editor.join();
  CHECK(steps.load() > 20);
  for (int i = 0; i < 60; ++i) step();  // a second of quiet
  CHECK(scene.physics->masks().validate().ok());
  CHECK(scene.physics->colliders().validate().ok());
  for (const auto& body : bullet.bodies) {
    const btVector3& p = body->getWorldTransform().getOrigin();
    REQUIRE(std::isfinite(p.x()));
    REQUIRE(std::isfinite(p.y()));
    REQUIRE(std::isfinite(p.z()));
    // Over the ground, a body stays above its floor (y = -24); one that rolled off the 32 x 32 block may fall.
    if (std::abs(p.x()) < 15 && std::abs(p.z()) < 15) CHECK(p.y() > -24);
  }
}
