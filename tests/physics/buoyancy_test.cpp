// The buoyancy helper (buoyancy.h) on real Bullet bodies: the acceptance crate (1 m, 500 kg/m^3, voxel = 1 m,
// g = 9.81) floats at its analytic draft; shapes convert with their margins; unsupported shapes are refused.
#include "vtp/physics/bullet/buoyancy.h"

#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "support/random_world.h"
#include "support/terrain_physics_support.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

// A Bullet dynamics world with nothing but gravity (the crate needs no terrain contact).
struct Dynamics {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld world{&dispatcher, &broadphase, &solver, &config};
  Dynamics() { world.setGravity(btVector3(0, -9.81f, 0)); }
};

}  // namespace

TEST_CASE("buoyancy: a 1 m crate of 500 kg/m^3 settles at its analytic draft") {
  // Deep flat water with its surface at y = 0 (voxel = 1 m).
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-32, -40, -32}, {32, 0, 32}}, kWaterMaterial).ok());
  auto physics = vtp::test::makePhysics(*world);

  Dynamics dynamics;
  btBoxShape crate(btVector3(0.5f, 0.5f, 0.5f));
  const btScalar mass = 500;  // 1 m^3 at 500 kg/m^3
  btVector3 inertia;
  crate.calculateLocalInertia(mass, inertia);
  btTransform start;
  start.setIdentity();
  start.setOrigin(btVector3(0.3f, 1.0f, -0.2f));  // dropped from 0.5 m above the water
  btRigidBody body(btRigidBody::btRigidBodyConstructionInfo(mass, nullptr, &crate, inertia));
  body.setWorldTransform(start);
  dynamics.world.addRigidBody(&body);

  // Floating, half the crate is under: its bottom 0.5 m below the surface, its centre at the surface.
  const double draft = 0.5;
  double worst_last_second = 0;
  Submersion last;
  for (int step = 0; step < 600; ++step) {
    auto sub = applyBuoyancy(*physics, body);
    REQUIRE(sub.ok());
    last = *sub;
    dynamics.world.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
    const double bottom_depth = 0.0 - (body.getCenterOfMassPosition().y() - 0.5);
    if (step >= 540) worst_last_second = std::max(worst_last_second, std::abs(bottom_depth - draft));
  }
  dynamics.world.removeRigidBody(&body);
  CHECK(worst_last_second < 0.05);
  CHECK(last.volume == doctest::Approx(0.5).epsilon(0.1));
  CHECK(std::abs(body.getLinearVelocity().y()) < 0.05);
}

TEST_CASE("buoyancy: Bullet shapes convert to engine-neutral shapes") {
  std::vector<std::array<float, 3>> points;
  SUBCASE("a box keeps its full half extents, its margin inside") {
    btBoxShape box(btVector3(0.5f, 0.25f, 1.0f));
    auto s = convexShapeOf(box, points);
    REQUIRE(s.ok());
    CHECK(s->kind == ShapeKind::kBox);
    CHECK(s->half_extents[1] == doctest::Approx(0.25));
    CHECK(s->margin == doctest::Approx(box.getMargin()));
    CHECK(s->half_extents[0] == doctest::Approx(0.5));
  }
  SUBCASE("capsules and cylinders along Y convert; along X or Z they are refused") {
    btCapsuleShape capsule(0.3f, 1.0f);
    auto s = convexShapeOf(capsule, points);
    REQUIRE(s.ok());
    CHECK(s->radius == doctest::Approx(0.3));
    CHECK(s->half_height == doctest::Approx(0.5));
    btCylinderShape cylinder(btVector3(0.4f, 0.6f, 0.4f));
    s = convexShapeOf(cylinder, points);
    REQUIRE(s.ok());
    CHECK(s->half_extents[0] == doctest::Approx(0.4));
    CHECK(s->half_extents[1] == doctest::Approx(0.6));
    btCapsuleShapeX capsule_x(0.3f, 1.0f);
    CHECK(convexShapeOf(capsule_x, points).error().code == vtp::ErrorCode::kInvalidArgument);
    btCylinderShapeZ cylinder_z(btVector3(0.4f, 0.4f, 0.6f));
    CHECK(convexShapeOf(cylinder_z, points).error().code == vtp::ErrorCode::kInvalidArgument);
  }
  SUBCASE("a convex hull is copied with its local scaling") {
    const float p[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    btConvexHullShape hull(&p[0][0], 4, sizeof(p[0]));
    hull.setLocalScaling(btVector3(2, 1, 1));
    auto s = convexShapeOf(hull, points);
    REQUIRE(s.ok());
    CHECK(s->points.size() == 4);
    CHECK(s->points[1][0] == doctest::Approx(2.0));
  }
  SUBCASE("other shapes are refused, and so are bad options") {
    btStaticPlaneShape plane(btVector3(0, 1, 0), 0);
    CHECK(convexShapeOf(plane, points).error().code == vtp::ErrorCode::kInvalidArgument);
    auto world = vtp::test::makeWorld();
    auto physics = vtp::test::makePhysics(*world);
    btSphereShape sphere(0.5f);
    btRigidBody body(btRigidBody::btRigidBodyConstructionInfo(1, nullptr, &sphere));
    BuoyancyOptions bad;
    bad.fluid_density = -1;
    CHECK(applyBuoyancy(*physics, body, bad).error().code == vtp::ErrorCode::kInvalidArgument);
    bad = {};
    bad.linear_drag = std::nan("");
    CHECK(applyBuoyancy(*physics, body, bad).error().code == vtp::ErrorCode::kInvalidArgument);
    CHECK(applyBuoyancy(*physics, body).ok());
  }
}

TEST_CASE("buoyancy: finite options whose forces overflow a float are refused, the body untouched") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-8, 0, -8}, {0, 8, 0}}, kWaterMaterial).ok());
  auto physics = vtp::test::makePhysics(*world);
  btSphereShape sphere(0.5f);
  btRigidBody body(btRigidBody::btRigidBodyConstructionInfo(1, nullptr, &sphere, btVector3(0.1f, 0.1f, 0.1f)));
  btTransform pose;
  pose.setIdentity();
  pose.setOrigin(btVector3(-4, 4, -4));
  body.setWorldTransform(pose);
  body.setLinearVelocity(btVector3(0, 1, 0));
  body.setAngularVelocity(btVector3(1, 0, 0));
  auto untouched = [&] {
    CHECK(body.getTotalForce() == btVector3(0, 0, 0));
    CHECK(body.getTotalTorque() == btVector3(0, 0, 0));
  };
  BuoyancyOptions options;
  for (int which = 0; which < 4; ++which) {
    options = {};
    if (which == 0) options.gravity = {0, -1e39, 0};
    if (which == 1) options.fluid_density = 1e300;
    if (which == 2) options.linear_drag = 1e300;
    if (which == 3) options.angular_drag = 1e300;
    auto r = applyBuoyancy(*physics, body, options);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().code == vtp::ErrorCode::kInvalidArgument);
    untouched();
  }
  // Each force finite, their sum not: a lift and a drag (the body sinks at 1 m/s) of about 2e38 each.
  body.setLinearVelocity(btVector3(0, -1, 0));
  options = {};
  options.fluid_density = 2e38 / (9.81 * 4.0 / 3.0 * M_PI * 0.125);
  options.linear_drag = 2e38;
  REQUIRE_FALSE(applyBuoyancy(*physics, body, options).ok());
  untouched();
  REQUIRE(applyBuoyancy(*physics, body).ok());  // the defaults: a finite lift
  CHECK(body.getTotalForce().y() > 0);
}
