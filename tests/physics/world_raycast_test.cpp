// Rays across chunks (TerrainPhysics::raycast*) against brute force: every chunk near a stored one built into a
// collider and asked directly. Closest, any and all hits agree on random worlds with negative coordinates, on long and
// short segments, axis-aligned ones, segments running along chunk boundaries or one voxel off them (grazing a chunk's
// spill bounds) and starting inside rock, at two voxel sizes, and after edits; bad rays are refused.
#include "vtp/physics/terrain_physics.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/collider_builder.h"

using namespace vtp::terrain;
using namespace vtp::physics;
using P3 = std::array<double, 3>;

namespace {

struct Brute {
  std::map<ChunkCoord, std::unique_ptr<Collider>> colliders;  // every chunk near a stored one that owns triangles
};

Brute buildBrute(const World& world) {
  Brute b;
  ColliderBuilder builder;
  for (const ChunkCoord c : vtp::test::chunksNearStored(world)) {
    auto collider = vtp::test::freshCollider(world, c, builder);
    if (collider->triangleCount() > 0) b.colliders.emplace(c, std::move(collider));
  }
  return b;
}

using HitKey = std::tuple<double, ChunkCoord, int>;

std::vector<HitKey> bruteAll(const Brute& b, const Ray& ray, double voxel_size) {
  std::vector<HitKey> out;
  std::vector<RayHit> hits(3072);
  for (const auto& [c, collider] : b.colliders) {
    auto prepared = prepareRay(ray, c, voxel_size);
    REQUIRE(prepared.ok());
    const int n = collider->allHits(*prepared, hits);
    for (int i = 0; i < n; ++i) out.emplace_back(hits[std::size_t(i)].t, c, hits[std::size_t(i)].triangle);
  }
  std::sort(out.begin(), out.end());
  return out;
}

double bruteClosest(const Brute& b, const Ray& ray, double voxel_size) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& [c, collider] : b.colliders) {
    auto prepared = prepareRay(ray, c, voxel_size);
    REQUIRE(prepared.ok());
    RayHit h;
    if (collider->closestHit(*prepared, h)) best = std::min(best, h.t);
  }
  return best;
}

// Checks the three queries on `ray`; returns the number of disagreements.
int check(TerrainPhysics& physics, const Brute& brute, const Ray& ray, double voxel_size) {
  int bad = 0;
  const double want = bruteClosest(brute, ray, voxel_size);
  WorldRayHit hit;
  auto found = physics.raycastClosest(ray, hit);
  REQUIRE(found.ok());
  if (*found != std::isfinite(want) || (*found && hit.hit.t != want)) ++bad;
  auto any = physics.raycastAny(ray);
  REQUIRE(any.ok());
  if (*any != std::isfinite(want)) ++bad;
  std::vector<WorldRayHit> all;
  REQUIRE(physics.raycastAll(ray, all).ok());
  std::vector<HitKey> got;
  // Each hit carries its triangle's corners as the chunk's collider stores them.
  auto corners_match = [&](const WorldRayHit& h) {
    const auto it = brute.colliders.find(h.chunk);
    if (it == brute.colliders.end()) return false;
    const ColliderTriangle t = it->second->triangle(h.hit.triangle);
    for (int k = 0; k < 3; ++k) {
      const vtp::mesher::Vertex &a = t.vertices[std::size_t(k)], &b = h.vertices[std::size_t(k)];
      if (a.x != b.x || a.y != b.y || a.z != b.z) return false;
    }
    return true;
  };
  if (*found && !corners_match(hit)) ++bad;
  for (const WorldRayHit& h : all) {
    got.emplace_back(h.hit.t, h.chunk, h.hit.triangle);
    if (!corners_match(h)) ++bad;
  }
  std::sort(got.begin(), got.end());
  if (got != bruteAll(brute, ray, voxel_size)) ++bad;
  if (*found && !all.empty() && all.front().hit.t != hit.hit.t) ++bad;
  return bad;
}

}  // namespace

TEST_CASE("world raycast: closest, any and all hits equal brute force over every chunk") {
  for (const double voxel_size : {1.0, 0.6}) {
    WorldConfig config;
    config.voxel_size = voxel_size;
    auto world = vtp::test::makeWorld(std::move(config));
    std::mt19937_64 rng(17);
    vtp::test::randomEdits(*world, {{-28, -14, -28}, {28, 14, 28}}, 60, rng);
    auto physics = vtp::test::makePhysics(*world);
    Brute brute = buildBrute(*world);
    REQUIRE(brute.colliders.size() > 30);
    const double s = voxel_size;
    vtp::test::RandomRays random(34 * s);
    int rays = 0, bad = 0, hits = 0;
    for (int i = 0; i < 480; ++i) {
      const int kind = i % 6;
      Ray ray = random.next(rng, (kind == 0 ? 0.05 : 1.0) * 70 * s);
      if (kind == 2) ray.direction = {0, -1, 0}, ray.max_t = 60 * s;  // straight down
      if (kind == 3) {  // along a chunk boundary plane, axis-aligned
        ray.origin[0] = 8 * s * double(int(rng() % 7) - 3);
        ray.direction = {0, 0, 1};
        ray.max_t = 60 * s;
      }
      if (kind == 4) ray.origin = {double(int(rng() % 9) - 4) * 8 * s, -13 * s, double(int(rng() % 9) - 4) * 8 * s};
      if (kind == 5) {  // in a plane exactly one voxel (the spill) off a chunk boundary, so it grazes grown bounds
        const int axis = int(rng() % 3);
        ray.origin[std::size_t(axis)] = 8 * s * double(int(rng() % 7) - 3) + (rng() % 2 != 0 ? s : -s);
        ray.direction[std::size_t(axis)] = 0;
        if (ray.direction[0] == 0 && ray.direction[1] == 0 && ray.direction[2] == 0) ray.direction[(axis + 1) % 3] = 1;
      }
      bad += check(*physics, brute, ray, voxel_size);
      WorldRayHit h;
      hits += physics->raycastClosest(ray, h).value() ? 1 : 0;
      ++rays;
    }
    CHECK(bad == 0);
    CHECK(hits > rays / 8);
    CHECK(physics->colliders().stats().builds > 10);
  }
}

TEST_CASE("world raycast: edits are seen by the next ray") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-20, -10, -20}, {20, 0, 20}}, 2).ok());
  auto physics = vtp::test::makePhysics(*world);
  const Ray down{{3.3, 10, -4.6}, {0, -1, 0}, 30};
  WorldRayHit hit;
  REQUIRE(physics->raycastClosest(down, hit).value());
  CHECK(hit.hit.point[1] == doctest::Approx(0.0).epsilon(1e-3));
  CHECK(hit.hit.front_face);
  // Dig a pit under the ray, then build a pillar: each time the next ray sees it.
  REQUIRE(world->clearBox(VoxelBox{{0, -6, -8}, {8, 0, 0}}).ok());
  REQUIRE(physics->raycastClosest(down, hit).value());
  CHECK(hit.hit.point[1] == doctest::Approx(-6.0).epsilon(1e-3));
  REQUIRE(world->fillBox(VoxelBox{{2, -6, -6}, {5, 3, -3}}, 3).ok());
  REQUIRE(physics->raycastClosest(down, hit).value());
  CHECK(hit.hit.point[1] == doctest::Approx(3.0).epsilon(1e-3));
  CHECK(hit.hit.material == 3);
  // A ray that misses everything.
  CHECK_FALSE(physics->raycastAny({{3.3, 10, -4.6}, {0, 1, 0}, 30}).value());
}

TEST_CASE("world raycast: bad rays are refused") {
  auto world = vtp::test::makeWorld();
  auto physics = vtp::test::makePhysics(*world);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  WorldRayHit hit;
  CHECK_FALSE(physics->raycastClosest({{nan, 0, 0}, {1, 0, 0}, 1}, hit).ok());
  CHECK_FALSE(physics->raycastAny({{0, 0, 0}, {0, 0, 0}, 1}).ok());
  // A direction too small for t to be finite: refused, not a hit at t = NaN.
  REQUIRE(world->fillBox(VoxelBox{{-16, -8, -16}, {16, 0, 16}}, 2).ok());
  auto tiny = physics->raycastClosest({{0.5, 0, 0.5}, {0, -5e-324, 0}, 1e308}, hit);
  REQUIRE_FALSE(tiny.ok());
  CHECK(tiny.error().code == vtp::ErrorCode::kInvalidArgument);
  std::vector<WorldRayHit> all;
  CHECK_FALSE(physics->raycastAll({{1e9, 0, 0}, {1, 0, 0}, 1}, all).ok());
  CHECK(physics->raycastAny({{0, 0, 0}, {1, 0, 0}, 1}).ok());
}
