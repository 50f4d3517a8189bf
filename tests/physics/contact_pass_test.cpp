// The parallel contact pass (BulletTerrain::runContactPass) and the thread pool it runs on: a scene of mixed bodies
// falling, rolling and resting on bumpy ground across chunk seams and negative coordinates, with edits under them,
// comes out bit for bit the same without the pass, with it on one worker and with it on three, and the pass serves
// most of the near-callbacks' searches.
#include <btBulletDynamicsCommon.h>
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "support/bullet_world.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/bullet/bullet_terrain.h"
#include "vtp/physics/task_runner.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

constexpr btScalar kStep = btScalar(1.0 / 60.0);

// One run of the scene; `tasks` null: no pass.
struct PassRun {
  std::unique_ptr<World> world = vtp::test::flatRockWorld(24);
  std::unique_ptr<TerrainPhysics> physics;
  std::unique_ptr<vtp::test::BulletWorld> bullet;
  TaskRunner* tasks = nullptr;

  explicit PassRun(TaskRunner* runner) : tasks(runner) {
    REQUIRE(world->fillBox({{-24, -24, -24}, {24, -8, 24}}, vtp::test::kRockId).ok());  // deeper than any pit
    std::mt19937_64 rng(33);
    vtp::test::randomEdits(*world, {{-24, -6, -24}, {24, 2, 24}}, 30, rng);  // bumps and pits over the seams
    physics = vtp::test::makePhysics(*world);
    bullet = std::make_unique<vtp::test::BulletWorld>(*physics);
    if (tasks) bullet->dynamics.setInternalTickCallback(&PassRun::preTick, this, true);
    for (int i = 0; i < 48; ++i) {
      const btVector3 at(btScalar(-18 + (i % 8) * 5.1), btScalar(4 + (i % 5)), btScalar(-18 + (i / 8) * 6.1));
      const btQuaternion turn(btVector3(1, 0.3f, 0.2f).normalized(), btScalar(0.1 * i));
      btRigidBody& body = bullet->add(shapeFor(i), 1, btTransform(turn, at), i % 4 != 0);
      body.setLinearVelocity(btVector3(btScalar(0.6 * std::sin(double(i + 1))), 0, 0.4f));
    }
  }
  static void preTick(btDynamicsWorld* world, btScalar) {
    auto& self = *static_cast<PassRun*>(world->getWorldUserInfo());
    self.bullet->terrain->runContactPass(*self.tasks);
  }
  btCollisionShape* shapeFor(int i) {
    switch (i % 6) {
      case 0: return new btSphereShape(btScalar(0.4 + 0.1 * (i % 3)));
      case 1: return new btBoxShape(btVector3(0.5f, 0.3f, 0.4f));
      case 2: return new btCapsuleShape(0.3f, 0.8f);
      case 3: return new btCylinderShape(btVector3(0.4f, 0.3f, 0.4f));
      case 4: {
        auto* hull = new btConvexHullShape();
        for (int k = 0; k < 12; ++k)
          hull->addPoint(btVector3(btScalar(0.6 * std::cos(k)), btScalar(0.5 * std::sin(2.0 * k)),
                                   btScalar(0.6 * std::sin(k))));
        return hull;
      }
      default: {  // a compound: its children are searched by the near-callback, not the pass
        auto* compound = new btCompoundShape();
        auto& shapes = bullet->shapes;
        shapes.emplace_back(new btBoxShape(btVector3(0.4f, 0.2f, 0.4f)));
        compound->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(0, -0.2f, 0)), shapes.back().get());
        shapes.emplace_back(new btSphereShape(0.3f));
        compound->addChildShape(btTransform(btQuaternion::getIdentity(), btVector3(0, 0.3f, 0)), shapes.back().get());
        return compound;
      }
    }
  }
  // Steps 4 s with two substeps a tick; craters and fills under the bodies at 1.5 s and 2.5 s.
  void run() {
    std::mt19937_64 rng(7);
    for (int tick = 0; tick < 240; ++tick) {
      if (tick == 90 || tick == 150) {
        vtp::test::randomEdits(*world, {{-22, -3, -22}, {22, 1, 22}}, 6, rng);
        bullet->terrain->wakeBodies();
      }
      bullet->dynamics.stepSimulation(2 * kStep, 2, kStep);
    }
  }
  std::vector<unsigned char> state() const {
    std::vector<unsigned char> bytes;
    for (const auto& b : bullet->bodies) {
      const btTransform& t = b->getWorldTransform();
      const btScalar v[12] = {t.getOrigin().x(), t.getOrigin().y(), t.getOrigin().z(), t.getRotation().x(),
                              t.getRotation().y(), t.getRotation().z(), t.getRotation().w(),
                              b->getLinearVelocity().x(), b->getLinearVelocity().y(), b->getLinearVelocity().z(),
                              b->getAngularVelocity().x(), b->getAngularVelocity().y()};
      const auto* p = reinterpret_cast<const unsigned char*>(v);
      bytes.insert(bytes.end(), p, p + sizeof v);
    }
    return bytes;
  }
};

}  // namespace

TEST_CASE("thread pool: every index runs exactly once, on a worker below workers(), loop after loop") {
  for (unsigned threads : {1u, 2u, 5u}) {
    auto pool = ThreadPool::create(threads);
    REQUIRE(pool.ok());
    CHECK(pool.value()->workers() == threads);
    for (std::size_t count : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(1000)}) {
      std::vector<std::atomic<int>> runs(count);
      std::atomic<bool> bad_worker{false};
      pool.value()->forEach(count, [&](std::size_t i, unsigned worker) {
        runs[i].fetch_add(1);
        if (worker >= threads) bad_worker = true;
      });
      for (std::size_t i = 0; i < count; ++i) CHECK(runs[i].load() == 1);
      CHECK(!bad_worker);
    }
  }
}

TEST_CASE("thread pool: 0 and 257 threads are refused") {
  for (unsigned threads : {0u, 257u}) {
    auto pool = ThreadPool::create(threads);
    REQUIRE(!pool.ok());
    CHECK(pool.error().code == vtp::ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("contact pass: a scene with edits steps bit for bit the same without the pass and with it on 1 or 3 workers") {
  PassRun plain(nullptr);
  plain.run();
  auto one = ThreadPool::create(1), three = ThreadPool::create(3);
  REQUIRE(one.ok());
  REQUIRE(three.ok());
  PassRun on_one(one.value().get()), on_three(three.value().get());
  on_one.run();
  on_three.run();
  const std::vector<unsigned char> expected = plain.state();
  CHECK(on_one.state() == expected);
  CHECK(on_three.state() == expected);
  const BulletTerrainStats a = plain.bullet->terrain->stats(), b = on_one.bullet->terrain->stats(),
                           c = on_three.bullet->terrain->stats();
  CHECK(a.pass_links == 0);
  CHECK(b.contacts == a.contacts);
  CHECK(c.contacts == a.contacts);
  CHECK(b.pass_links == c.pass_links);
  CHECK(b.pass_links_used == c.pass_links_used);
  // Most links are brought up to date by the pass: only compound children, newly added bodies and chunks a body has
  // just entered are left to the near-callback.
  CHECK(b.pass_links_used > 0);
  CHECK(b.pass_links_used * 4 >= b.pass_links * 3);
  // The scene did something: bodies touched the ground, and stay on it (in the pits at worst) in the 48 x 48 square.
  CHECK(a.contacts > 1000);
  int on_ground = 0;
  for (const auto& body : plain.bullet->bodies) {
    const btVector3& p = body->getWorldTransform().getOrigin();
    on_ground += std::abs(p.x()) < 24 && std::abs(p.z()) < 24 && p.y() > -14 && p.y() < 3 ? 1 : 0;
  }
  CHECK(on_ground >= 40);
}

TEST_CASE("thread pool: an iteration that throws leaves the others running, and forEach rethrows it") {
  auto pool = ThreadPool::create(3);
  REQUIRE(pool.ok());
  std::vector<std::atomic<int>> runs(200);
  CHECK_THROWS_AS(pool.value()->forEach(runs.size(),
                                        [&](std::size_t i, unsigned) {
                                          runs[i].fetch_add(1);
                                          if (i == 17) throw std::runtime_error("iteration 17");
                                        }),
                  std::runtime_error);
  for (const auto& r : runs) CHECK(r.load() == 1);
  // The pool still works.
  std::atomic<int> total{0};
  pool.value()->forEach(50, [&](std::size_t, unsigned) { total.fetch_add(1); });
  CHECK(total.load() == 50);
}

TEST_CASE("contact pass: a body whose shape the game swaps is searched with its new shape") {
  auto world = vtp::test::flatRockWorld(16);
  auto physics = vtp::test::makePhysics(*world);
  vtp::test::BulletWorld bullet(*physics);
  auto pool = ThreadPool::create(2);
  REQUIRE(pool.ok());
  btRigidBody& ball = bullet.add(new btSphereShape(0.5f), 1, btVector3(2.5f, 0.5f, 2.5f), false);
  auto step = [&](int n) {
    for (int i = 0; i < n; ++i) {
      bullet.terrain->runContactPass(*pool.value());
      bullet.dynamics.stepSimulation(btScalar(1.0 / 60.0), 0, btScalar(1.0 / 60.0));
    }
  };
  step(60);
  CHECK(std::abs(ball.getCenterOfMassPosition().y() - 0.5f) < 0.01f);
  // A larger ball in its place, the old shape kept alive (as a game's shape cache would): it must rise to rest on
  // its own radius, not keep the old one's contacts.
  bullet.shapes.emplace_back(new btSphereShape(1.0f));
  ball.setCollisionShape(bullet.shapes.back().get());
  step(120);
  CHECK(std::abs(ball.getCenterOfMassPosition().y() - 1.0f) < 0.02f);
}
