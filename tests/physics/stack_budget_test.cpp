// The stack budget physics/README.md promises (Query rules, Stack: 64 KiB): the queries with the largest frames run
// on a thread whose stack is that small — every hit of a long ray through many triangles (Collider::allHits keeps
// them all on the stack), a batched mask query of many boxes, contacts of a box sunk into the ground (Bullet's
// GJK/EPA), and the submerged volume of a sphere across a water surface (its chord layout). A query that needs more
// overflows into the guard page and the test dies. Sanitizer builds grow every frame (ASan's redzones), so they run
// the same calls with 8 times the budget: there the test checks the calls, not the figure.
#include <doctest/doctest.h>
#include <pthread.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/mask_index.h"
#include "vtp/physics/terrain_physics.h"
#include "vtp/physics/water.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr std::size_t kStackBytes = 8 * 64 * 1024;
#else
constexpr std::size_t kStackBytes = 64 * 1024;
#endif

// What the small-stack thread found, checked on the test's own thread.
struct Answers {
  TerrainPhysics* physics = nullptr;
  bool rays_ok = false, batch_ok = false, contacts_ok = false, water_ok = false;
  std::size_t ray_hits = 0, batch_touches = 0, manifolds = 0;
  double submerged = 0, sphere_volume = 0;
};

void* run(void* arg) {
  Answers& a = *static_cast<Answers*>(arg);
  TerrainPhysics& physics = *a.physics;
  // A ray through a row of ridges: every crossing is a hit, and allHits keeps them all on its stack.
  std::vector<WorldRayHit> hits;
  Ray ray;
  ray.origin = {-15.7, 2.1, 8.3};
  ray.direction = {1, 0, 0};
  ray.max_t = 31;
  a.rays_ok = physics.raycastAll(ray, hits).ok();
  a.ray_hits = hits.size();
  // 200 body-sized boxes in one batched query: several sections of the visit table.
  std::vector<Aabb> boxes;
  for (int i = 0; i < 200; ++i) {
    const double x = -15 + 0.15 * i, z = 8 + 4 * std::sin(i);
    boxes.push_back({{x, 1.5, z}, {x + 1.5, 3.0, z + 1.5}});
  }
  TouchBatch batch;
  a.batch_ok = physics.masks().query(boxes, batch).ok();
  for (std::size_t i = 0; i < boxes.size(); ++i) a.batch_touches += batch.touches(i).size();
  // A tilted box pushed into the ground: deep penetration, EPA.
  std::vector<ChunkManifold> manifolds;
  Pose pose;
  pose.position = {0.3, -0.2, -3.4};
  pose.rotation = {0.2, 0.1, 0.0, std::sqrt(1 - 0.05)};
  a.contacts_ok = physics.contacts(ConvexShape::box({0.8, 0.6, 0.7}), pose, manifolds).ok();
  a.manifolds = manifolds.size();
  // A sphere half in the pool.
  Pose in_water;
  in_water.position = {-10, 3, -10};
  const auto sub = submerged(physics, ConvexShape::sphere(1.5), in_water);
  a.water_ok = sub.ok();
  if (sub.ok()) a.submerged = sub->volume, a.sphere_volume = sub->shape_volume;
  return nullptr;
}

}  // namespace

TEST_CASE("stack budget: the heaviest queries fit on a thread with the documented stack size") {
  // Ground below y = 0; ridges 2 voxels wide and 4 high, 2 apart, over z in [0, 16); a pool of water 3 deep.
  auto world = vtp::test::flatRockWorld(16);
  for (int x = -16; x < 16; x += 4) REQUIRE(world->fillBox(VoxelBox{{x, 0, 0}, {x + 2, 4, 16}}, 3).ok());
  REQUIRE(world->fillBox(VoxelBox{{-14, 0, -14}, {-6, 3, -6}}, kWaterMaterial).ok());
  auto physics = vtp::test::makePhysics(*world);

  Answers answers;
  answers.physics = physics.get();
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  REQUIRE(pthread_attr_setstacksize(&attr, kStackBytes) == 0);
  pthread_t thread;
  REQUIRE(pthread_create(&thread, &attr, run, &answers) == 0);
  REQUIRE(pthread_join(thread, nullptr) == 0);
  pthread_attr_destroy(&attr);

  CHECK(answers.rays_ok);
  CHECK(answers.ray_hits >= 14);  // 8 ridges, each entered and left
  CHECK(answers.batch_ok);
  CHECK(answers.batch_touches >= 200);
  CHECK(answers.contacts_ok);
  CHECK(answers.manifolds >= 1);
  CHECK(answers.water_ok);
  CHECK(answers.submerged > 0.2 * answers.sphere_volume);
  CHECK(answers.submerged < 0.8 * answers.sphere_volume);
}
