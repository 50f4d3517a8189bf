#pragma once
// Test scaffolding for the Bullet adapter: a Bullet dynamics world (voxel = 1 m, g = 9.81) with a terrain attached,
// and rigid bodies it owns and removes before the terrain goes.

#include <btBulletDynamicsCommon.h>
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "vtp/physics/bullet/bullet_terrain.h"

namespace vtp::test {

struct BulletWorld {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld dynamics{&dispatcher, &broadphase, &solver, &config};
  std::unique_ptr<physics::BulletTerrain> terrain;
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> motions;
  std::vector<std::unique_ptr<btRigidBody>> bodies;

  /// `physics` must outlive the world.
  explicit BulletWorld(physics::TerrainPhysics& physics, physics::BulletTerrainOptions options = {}) {
    dynamics.setGravity(btVector3(0, btScalar(-9.81), 0));
    auto attached = physics::BulletTerrain::attach(physics, dynamics, options);
    REQUIRE(attached.ok());
    terrain = std::move(attached.value());
  }
  ~BulletWorld() {
    for (auto& b : bodies) dynamics.removeRigidBody(b.get());
    terrain.reset();
  }
  BulletWorld(const BulletWorld&) = delete;
  BulletWorld& operator=(const BulletWorld&) = delete;

  /// A body of `shape` (taken over) and `mass` at `at`; `sleep` false keeps it awake for good.
  btRigidBody& add(btCollisionShape* shape, double mass, const btTransform& at, bool sleep = true) {
    shapes.emplace_back(shape);
    btVector3 inertia(0, 0, 0);
    shape->calculateLocalInertia(btScalar(mass), inertia);
    motions.push_back(std::make_unique<btDefaultMotionState>(at));
    btRigidBody::btRigidBodyConstructionInfo info(btScalar(mass), motions.back().get(), shape, inertia);
    bodies.push_back(std::make_unique<btRigidBody>(info));
    if (!sleep) bodies.back()->setActivationState(DISABLE_DEACTIVATION);
    dynamics.addRigidBody(bodies.back().get());
    return *bodies.back();
  }
  btRigidBody& add(btCollisionShape* shape, double mass, const btVector3& at, bool sleep = true) {
    return add(shape, mass, btTransform(btQuaternion::getIdentity(), at), sleep);
  }
};

}  // namespace vtp::test
