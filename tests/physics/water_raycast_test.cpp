// The first entry of a segment into water (raycastWater, water.h) against brute force over every water voxel of
// random worlds (fixed seeds, negative coordinates, rays along chunk seams, two voxel sizes), plus the surface of a
// partly filled layer, a ray starting in water, edits, and bad rays.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "support/random_world.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/water.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace {

// The smallest t at which the segment is inside the wet part of some water voxel (the lower occupancy/255 of its
// cell) for a positive length, over every voxel of `box`; infinity when none. A segment lying in a voxel face belongs
// to the voxel on the face's positive side (voxels are half-open), except on a partly filled voxel's surface.
double bruteEntry(const World& world, const VoxelBox& box, const Ray& ray, double voxel_size) {
  double best = std::numeric_limits<double>::infinity();
  for (std::int32_t z = box.min.z; z < box.max.z; ++z)
    for (std::int32_t y = box.min.y; y < box.max.y; ++y)
      for (std::int32_t x = box.min.x; x < box.max.x; ++x) {
        const Voxel v = world.voxel({x, y, z});
        if (!isWater(v)) continue;
        const double lo[3] = {double(x), double(y), double(z)};
        const double hi[3] = {x + 1.0, y + v.occupancy / 255.0, z + 1.0};
        double t0 = 0, t1 = ray.max_t;
        for (int a = 0; a < 3; ++a) {
          const double o = ray.origin[std::size_t(a)] / voxel_size, d = ray.direction[std::size_t(a)] / voxel_size;
          if (d == 0) {
            const bool closed = a == 1 && v.occupancy < 255;
            if (o < lo[a] || o > hi[a] || (o == hi[a] && !closed)) t1 = -1;
            continue;
          }
          double n = (lo[a] - o) / d, f = (hi[a] - o) / d;
          if (n > f) std::swap(n, f);
          t0 = std::max(t0, n);
          t1 = std::min(t1, f);
        }
        if (t0 < t1) best = std::min(best, t0);
      }
  return best;
}

}  // namespace

TEST_CASE("water ray: the first entry into water equals brute force over every water voxel") {
  for (const double voxel_size : {1.0, 0.7}) {
    CAPTURE(voxel_size);
    WorldConfig config;
    config.voxel_size = voxel_size;
    auto world = vtp::test::makeWorld(std::move(config));
    std::mt19937_64 rng(29);
    const VoxelBox region{{-24, -12, -24}, {24, 12, 24}};
    vtp::test::randomEdits(*world, region, 50, rng);
    // And a lake with a partly filled top layer.
    REQUIRE(world->fillBox(VoxelBox{{-20, -10, -6}, {-2, -3, 9}}, kWaterMaterial).ok());
    std::vector<Voxel> top(18 * 15, Voxel{kWaterMaterial, 77});
    REQUIRE(world->writeRegion(VoxelBox{{-20, -3, -6}, {-2, -2, 9}}, top).ok());
    auto physics = vtp::test::makePhysics(*world);
    const VoxelBox all{{-26, -14, -26}, {26, 14, 26}};
    const double s = voxel_size;
    vtp::test::RandomRays random(26 * s);
    int bad = 0, hits = 0, starts = 0;
    for (int i = 0; i < 300; ++i) {
      const int kind = i % 4;
      Ray ray = random.next(rng, (kind == 0 ? 0.1 : 1.0) * 50 * s);
      if (kind == 2) ray.direction = {0, -1, 0}, ray.max_t = 30 * s;  // straight down onto surfaces
      if (kind == 3) {  // along a chunk seam plane, axis-aligned
        ray.origin[0] = 8 * s * double(int(rng() % 5) - 2);
        ray.origin[1] = (std::floor(ray.origin[1] / s) + 0.5) * s;
        ray.direction = {0, 0, 1};
        ray.max_t = 50 * s;
        ray.origin[2] = -25 * s;
      }
      const double want = bruteEntry(*world, all, ray, s);
      WaterHit hit;
      auto found = raycastWater(*physics, ray, hit);
      REQUIRE(found.ok());
      if (*found != std::isfinite(want)) {
        ++bad;
        continue;
      }
      if (!*found) continue;
      ++hits;
      starts += hit.starts_in_water ? 1 : 0;
      if (std::abs(hit.t - want) > 1e-9 * std::max(1.0, ray.max_t)) ++bad;
      // The voxel hit is water, its chunk holds it, and the point lies in (or on) its cell.
      const Voxel v = world->voxel(hit.voxel);
      if (!isWater(v) || !(hit.chunk == chunkOf(hit.voxel))) ++bad;
      const std::int32_t c[3] = {hit.voxel.x, hit.voxel.y, hit.voxel.z};
      for (std::size_t a = 0; a < 3; ++a) {
        const double p = hit.point[a] / s;
        if (p < c[a] - 1e-7 || p > c[a] + 1 + 1e-7) ++bad;
      }
      // The normal points out of the water, against the ray.
      const double facing = hit.normal[0] * ray.direction[0] + hit.normal[1] * ray.direction[1] +
                            hit.normal[2] * ray.direction[2];
      if (!(facing < 0)) ++bad;
    }
    CHECK(bad == 0);
    CHECK(hits > 40);
    CHECK(starts > 3);
  }
}

TEST_CASE("water ray: surfaces, starting in water, edits and bad rays") {
  auto world = vtp::test::makeWorld();
  REQUIRE(world->fillBox(VoxelBox{{-16, -12, -16}, {16, -1, 16}}, kWaterMaterial).ok());
  std::vector<Voxel> top(32 * 32, Voxel{kWaterMaterial, 51});
  REQUIRE(world->writeRegion(VoxelBox{{-16, -1, -16}, {16, 0, 16}}, top).ok());
  auto physics = vtp::test::makePhysics(*world);

  SUBCASE("a ray down meets the partly filled layer's surface, with an upward normal") {
    WaterHit hit;
    REQUIRE(raycastWater(*physics, {{-3.5, 10, -9.25}, {0, -1, 0}, 20}, hit).value());
    CHECK(hit.t == doctest::Approx(10.8));  // surface at -1 + 51/255 = -0.8
    CHECK(hit.point[1] == doctest::Approx(-0.8));
    CHECK(hit.normal == std::array<double, 3>{0, 1, 0});
    CHECK(hit.voxel == VoxelCoord{-4, -1, -10});
    CHECK(hit.chunk == ChunkCoord{-1, -1, -2});
    CHECK(!hit.starts_in_water);
  }
  SUBCASE("a ray from the side enters through a voxel face, across a chunk seam") {
    WaterHit hit;
    REQUIRE(raycastWater(*physics, {{-30, -5.5, 0.5}, {1, 0, 0}, 40}, hit).value());
    CHECK(hit.t == doctest::Approx(14));
    CHECK(hit.normal == std::array<double, 3>{-1, 0, 0});
    CHECK(hit.voxel == VoxelCoord{-16, -6, 0});
  }
  SUBCASE("a ray starting in water hits at t = 0; one ending short of the water misses") {
    WaterHit hit;
    REQUIRE(raycastWater(*physics, {{1.5, -4, 2.5}, {0, 1, 0}, 10}, hit).value());
    CHECK(hit.t == 0);
    CHECK(hit.starts_in_water);
    CHECK(hit.normal == std::array<double, 3>{0, -1, 0});
    CHECK(!raycastWater(*physics, {{1.5, 10, 2.5}, {0, -1, 0}, 10.5}, hit).value());
  }
  SUBCASE("starting in water, the normal is the unit reverse direction however long or short the direction") {
    const double s = std::sqrt(0.5);
    const std::array<std::pair<Ray, std::array<double, 3>>, 4> cases{{
        {{{1.5, -4, 2.5}, {0, -1e-200, 0}, 1}, {0, 1, 0}},
        {{{1.5, -4, 2.5}, {1e-200, -1e-200, 0}, 1}, {-s, s, 0}},
        {{{1.5, -4, 2.5}, {0, -1e200, 0}, 1e-200}, {0, 1, 0}},
        {{{1.5, -4, 2.5}, {3e200, 0, -3e200}, 1e-200}, {-s, 0, s}},
    }};
    for (const auto& [ray, normal] : cases) {
      WaterHit hit;
      REQUIRE(raycastWater(*physics, ray, hit).value());
      CHECK(hit.starts_in_water);
      for (std::size_t a = 0; a < 3; ++a) CHECK(hit.normal[a] == doctest::Approx(normal[a]).epsilon(1e-12));
    }
  }
  SUBCASE("a ray starting deep in a lake, in a chunk whose whole 10^3 box is water (FULL_WATER), hits at t = 0") {
    REQUIRE(world->fillBox(VoxelBox{{-32, -32, -32}, {32, -1, 32}}, kWaterMaterial).ok());
    WaterHit hit;
    REQUIRE(raycastWater(*physics, {{4.5, -12.5, 4.5}, {0, 1, 0}, 30}, hit).value());
    CHECK(hit.t == 0);  // not 4.5, the entry into the next chunk up
    CHECK(hit.starts_in_water);
    CHECK(hit.chunk == ChunkCoord{0, -2, 0});
  }
  SUBCASE("draining the water is seen by the next ray") {
    WaterHit hit;
    REQUIRE(world->clearBox(VoxelBox{{0, -12, 0}, {4, 0, 4}}).ok());
    REQUIRE(raycastWater(*physics, {{1.5, 10, 2.5}, {0, -1, 0}, 30}, hit).value() == false);
  }
  SUBCASE("bad rays are refused") {
    WaterHit hit;
    CHECK(raycastWater(*physics, {{0, 0, 0}, {0, 0, 0}, 1}, hit).error().code == vtp::ErrorCode::kInvalidArgument);
    CHECK(raycastWater(*physics, {{0, std::nan(""), 0}, {0, 1, 0}, 1}, hit).error().code ==
          vtp::ErrorCode::kInvalidArgument);
    CHECK(raycastWater(*physics, {{0, 0, 0}, {1, 0, 0}, -1}, hit).error().code == vtp::ErrorCode::kInvalidArgument);
    CHECK(raycastWater(*physics, {{65530, 0, 0}, {1, 0, 0}, 10}, hit).error().code == vtp::ErrorCode::kOutOfRange);
  }
}

TEST_CASE("water ray: a ray through a water voxel's edge or corner only touches it but one a hair inside enters") {
  // Single full water voxels: at the origin, at a chunk corner (its corner (8, 8, 8) is one), and at negative
  // coordinates. Rays along lines that meet the voxel's closed cell in one point, a corner or a point of an edge,
  // from origins at multiples of 1/16 (so the line passes through that point exactly), with directions of several
  // lengths.
  auto world = vtp::test::makeWorld();
  const std::array<VoxelCoord, 3> voxels{{{0, 0, 0}, {7, 7, 7}, {-9, -1, 15}}};
  for (const VoxelCoord& w : voxels) REQUIRE(world->setVoxel(w, Voxel{kWaterMaterial, 255}).ok());
  auto physics = vtp::test::makePhysics(*world);
  int touches = 0, entries = 0, rays = 0;
  for (const VoxelCoord& w : voxels) {
    for (const double scale : {1.0, 2.5, 0.3}) {
      for (int k = 1; k <= 48; ++k) {
        const double u = k / 16.0;
        // (corner or edge point, direction): the corner (1, 1, 1) along (1, -1, 1); a point of the edge x = 1,
        // y = 1 along (1, -1, 0); both relative to the voxel.
        const double f = (k % 15 + 1) / 16.0;
        const std::array<std::pair<std::array<double, 3>, std::array<double, 3>>, 2> lines{{
            {{w.x + 1.0, w.y + 1.0, w.z + 1.0}, {scale, -scale, scale}},
            {{w.x + 1.0, w.y + 1.0, w.z + f}, {scale, -scale, 0}},
        }};
        for (const auto& [p, d] : lines) {
          Ray ray{{p[0] - u * d[0], p[1] - u * d[1], p[2] - u * d[2]}, WorldVec3(d), 2 * u};
          WaterHit hit;
          touches += raycastWater(*physics, ray, hit).value() ? 1 : 0;
          // The same line moved a millionth of a voxel into the voxel on x and z: it crosses a corner of the
          // voxel's inside (a wet span of about 1e-6 voxel), and enters.
          ray.origin[0] -= 1e-6, ray.origin[2] -= d[2] != 0 ? 1e-6 : 0;
          entries += raycastWater(*physics, ray, hit).value() ? 1 : 0;
          ++rays;
        }
      }
    }
  }
  CHECK(rays == 864);
  CHECK(touches == 0);
  CHECK(entries == rays);
}

TEST_CASE("water ray: a ray crossing thousands of chunks to a water voxel's corner only touches it") {
  // One full water voxel whose top corner (48976, 19616) lies on a chunk corner; rays in the z = 0.5 plane through
  // that corner exactly (dyadic directions, integer parameters), coming from up to 30,000 units away, meet the voxel
  // only there. Moved 1e-5 voxel along +x they pass inside its corner, and enter.
  auto world = vtp::test::makeWorld();
  REQUIRE(world->setVoxel({48976, 19615, 0}, Voxel{kWaterMaterial, 255}).ok());
  auto physics = vtp::test::makePhysics(*world);
  int touches = 0, entries = 0, rays = 0;
  for (const std::array<double, 2> d : {std::array<double, 2>{1.5, 0.875}, {1.25, 1.0}, {1.0, 0.5625}, {0.75, 1.125}}) {
    for (const double u : {1000.0, 4000.0, 16000.0, 30000.0}) {
      Ray ray{{48976 - u * d[0], 19616 - u * d[1], 0.5}, {d[0], d[1], 0}, u + 8};  // ends 8 steps past the corner
      WaterHit hit;
      touches += raycastWater(*physics, ray, hit).value() ? 1 : 0;
      ray.origin[0] += 1e-5;
      entries += raycastWater(*physics, ray, hit).value() ? 1 : 0;
      ++rays;
    }
  }
  CHECK(touches == 0);
  CHECK(entries == rays);
}
