// README "Bodies in a Bullet world": attach the terrain to a btDiscreteDynamicsWorld and step bodies on it.
#include <btBulletDynamicsCommon.h>

#include <cstdio>
#include <memory>
#include <vector>

#include <vtp/physics/bullet/bullet_terrain.h>
#include <vtp/physics/terrain_physics.h>
#include <vtp/terrain/world_file.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s WORLD.vtw\n", argv[0]);
    return 2;
  }
  auto loaded = vtp::terrain::loadWorldFile(argv[1]);
  if (!loaded.ok()) return 1;
  vtp::terrain::World& world = *loaded->world;
  auto physics = vtp::physics::TerrainPhysics::create(world);
  if (!physics.ok()) return 1;

  // An ordinary Bullet world; the terrain registers its algorithm with this dispatcher and adds one static object.
  btDefaultCollisionConfiguration configuration;
  btCollisionDispatcher dispatcher(&configuration);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver solver;
  btDiscreteDynamicsWorld dynamics(&dispatcher, &broadphase, &solver, &configuration);
  dynamics.setGravity(btVector3(0, -9.81f, 0));
  auto terrain = vtp::physics::BulletTerrain::attach(**physics, dynamics);
  if (!terrain.ok()) return 1;

  // Three bodies dropped from 4 units above the ground (found with a ray), 1 unit apart.
  btSphereShape ball(0.5f);
  btBoxShape crate(btVector3(0.4f, 0.4f, 0.4f));
  btCylinderShape barrel(btVector3(0.3f, 0.5f, 0.3f));
  btCollisionShape* shapes[] = {&ball, &crate, &barrel};
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  for (int i = 0; i < 3; ++i) {
    vtp::physics::WorldRayHit ground;
    auto found = (*physics)->raycastClosest({{double(i), 60.0, 0.0}, {0.0, -1.0, 0.0}, 120.0}, ground);
    if (!found.ok() || !*found) return 1;
    btVector3 inertia;
    shapes[i]->calculateLocalInertia(1.0f, inertia);
    btTransform start(btQuaternion::getIdentity(), btVector3(float(i), float(ground.hit.point.y + 4.0), 0.0f));
    auto motion = new btDefaultMotionState(start);  // owned by the body's construction info below
    bodies.push_back(std::make_unique<btRigidBody>(btRigidBody::btRigidBodyConstructionInfo(1, motion, shapes[i],
                                                                                          inertia)));
    dynamics.addRigidBody(bodies.back().get());
  }

  // Two seconds at 60 Hz; a player digs under the barrel after one, and the terrain wakes it.
  for (int step = 0; step < 120; ++step) {
    if (step == 60) {
      const btVector3 at = bodies[2]->getWorldTransform().getOrigin();
      if (!world.clearSphere({at.x(), at.y() - 1.0, at.z()}, 2.0).ok()) return 1;
      std::printf("dug under the barrel; %zu body(ies) woken\n", (*terrain)->wakeBodies());
    }
    dynamics.stepSimulation(1.0f / 60.0f, 1, 1.0f / 60.0f);
  }
  const char* names[] = {"ball", "crate", "barrel"};
  for (int i = 0; i < 3; ++i) {
    const btVector3 at = bodies[std::size_t(i)]->getWorldTransform().getOrigin();
    std::printf("%s: y = %.1f, %s\n", names[i], at.y(), bodies[std::size_t(i)]->isActive() ? "awake" : "asleep");
  }
  std::printf("%llu terrain contacts\n", (unsigned long long)(*terrain)->stats().contacts);

  for (auto& body : bodies) {
    dynamics.removeRigidBody(body.get());
    delete body->getMotionState();
  }
  return 0;
}
