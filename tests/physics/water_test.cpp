// Submerged volume and centre of buoyancy (water.h) against analytic volumes in flat water: spheres, boxes, capsules
// and cylinders at several depths and orientations, with the surface on a voxel boundary and inside a partly filled
// layer, across chunk seams, at negative coordinates and at two voxel sizes; fully submerged and dry bodies; the
// occupancy weighting of single voxels; rock is not water; bad input is refused.
#include "vtp/physics/water.h"

#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <vector>

#include "water/hull_chords.h"
#include "support/random_world.h"
#include "support/terrain_physics_support.h"

using namespace vtp::terrain;
using namespace vtp::physics;
using P3 = std::array<double, 3>;

namespace {

constexpr double kPi = std::numbers::pi;

// A world whose water fills voxels x, z in [-24, 24), y in [floor, top), plus a layer at y = top of occupancy
// `partial` (0: none), so the surface lies at top + partial / 255 voxels.
struct FlatWater {
  std::unique_ptr<World> world;
  std::unique_ptr<TerrainPhysics> physics;
  double surface = 0;  // [Unit: world units]
};

FlatWater flatWater(double voxel_size, int top, int partial, int floor = -30) {
  WorldConfig config;
  config.voxel_size = voxel_size;
  FlatWater w;
  w.world = vtp::test::makeWorld(std::move(config));
  REQUIRE(w.world->fillBox(VoxelBox{{-24, floor, -24}, {24, top, 24}}, kWaterMaterial).ok());
  if (partial > 0) {
    const VoxelBox layer{{-24, top, -24}, {24, top + 1, 24}};
    std::vector<Voxel> voxels(std::size_t(layer.volume()), Voxel{kWaterMaterial, std::uint8_t(partial)});
    REQUIRE(w.world->writeRegion(layer, voxels).ok());
  }
  w.physics = vtp::test::makePhysics(*w.world);
  w.surface = (top + partial / 255.0) * voxel_size;
  return w;
}

// A unit quaternion for `angle` radians about `axis`.
std::array<double, 4> rotation(P3 axis, double angle) {
  const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  const double s = std::sin(angle / 2) / n;
  return {axis[0] * s, axis[1] * s, axis[2] * s, std::cos(angle / 2)};
}

// Row 1 of the rotation matrix: world y of a local vector is pose.y + up . local.
P3 upRow(const std::array<double, 4>& q) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  return {2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)};
}

// Volume of the part of a sphere of radius r below a plane cutting it at depth d from its bottom (a cap).
double capVolume(double r, double d) {
  d = std::clamp(d, 0.0, 2 * r);
  return kPi * d * d * (3 * r - d) / 3;
}

// Area of the part of a disc of radius r below a line at depth d from its bottom (a circular segment).
double segmentArea(double r, double d) {
  d = std::clamp(d, 0.0, 2 * r);
  return r * r * std::acos((r - d) / r) - (r - d) * std::sqrt(std::max(0.0, 2 * r * d - d * d));
}

// Exact volume of the box [-h, h] (local) below world height `level` at `pose`: inclusion-exclusion over the box's
// corners of the simplex {n.x <= d} (valid when every |n_i| is well away from 0).
double boxBelow(const P3& h, const Pose& pose, double level) {
  P3 n = upRow(pose.rotation);
  double d = level - pose.position[1];
  for (int i = 0; i < 3; ++i) {
    d += n[std::size_t(i)] * h[std::size_t(i)];  // shift the box to [0, 2h]
    if (n[std::size_t(i)] < 0) d -= 2 * n[std::size_t(i)] * h[std::size_t(i)], n[std::size_t(i)] = -n[std::size_t(i)];
  }
  double sum = 0;
  for (int v = 0; v < 8; ++v) {
    double e = d;
    int sign = 1;
    for (int i = 0; i < 3; ++i)
      if (v >> i & 1) e -= n[std::size_t(i)] * 2 * h[std::size_t(i)], sign = -sign;
    sum += sign * std::pow(std::max(0.0, e), 3);
  }
  return sum / (6 * n[0] * n[1] * n[2]);
}

Submersion check(const TerrainPhysics& physics, const ConvexShape& shape, const Pose& pose, double want,
                 double tolerance = 0.02) {
  auto got = submerged(physics, shape, pose);
  REQUIRE(got.ok());
  INFO("shape kind ", int(shape.kind), " at y ", pose.position[1], ", want ", want, ", got ", got->volume);
  if (want < 1e-12) CHECK(got->volume == 0);
  else CHECK(std::abs(got->volume - want) <= tolerance * want);
  return *got;
}

}  // namespace

TEST_CASE("submerged volume: bodies in flat water match their analytic volumes at several depths and orientations") {
  for (const double s : {1.0, 0.5}) {
    for (const int partial : {0, 100}) {
      CAPTURE(s);
      CAPTURE(partial);
      // Water up to y = -3 voxels (+ a partial layer), so the bodies sit at negative coordinates; x = -8 and z = 0 are
      // chunk seams.
      const FlatWater w = flatWater(s, -3, partial);
      const double H = w.surface;

      SUBCASE("a sphere at several depths matches the cap volume, and its centre of buoyancy the cap's centroid") {
        for (const double r : {0.5, 1.0, 2.3}) {
          for (const double depth : {0.1, 0.3, 0.5, 0.8, 1.0, 1.3, 1.7, 1.95}) {
            const double rr = r * s, d = depth * rr;
            const Pose pose{{-8.0 * s + 0.1 * s, H - d + rr, 0.37 * s}, rotation({1, 2, 3}, 0.7)};
            const Submersion got = check(*w.physics, ConvexShape::sphere(rr), pose, capVolume(rr, d));
            // The cap's centroid lies 3 (2r - d)^2 / (4 (3r - d)) below the centre.
            const double below = 3 * (2 * rr - d) * (2 * rr - d) / (4 * (3 * rr - d));
            CHECK(std::abs(got.centre[1] - (pose.position[1] - below)) < 0.02 * rr);
            CHECK(std::abs(got.centre[0] - pose.position[0]) < 0.01 * rr);
            CHECK(std::abs(got.centre[2] - pose.position[2]) < 0.01 * rr);
          }
        }
      }

      SUBCASE("a box upright and tilted matches the exact volume below the plane") {
        const P3 h{0.5 * s, 0.4 * s, 0.7 * s};
        const std::array<std::array<double, 4>, 4> turns = {rotation({1, 0, 0}, 0.0), rotation({1, 0.3, 0.2}, 0.6),
                                                            rotation({0.2, 0.1, 1}, kPi / 4),
                                                            rotation({-1, 2, 0.5}, 2.1)};
        for (std::size_t k = 0; k < turns.size(); ++k) {
          for (const double y : {-0.5, -0.2, 0.0, 0.15, 0.45}) {
            const Pose pose{{0.2 * s, H + y * s, -8.0 * s}, turns[k]};
            double want;
            if (k == 0) want = 4 * h[0] * h[2] * std::clamp(H - (pose.position[1] - h[1]), 0.0, 2 * h[1]);
            else want = boxBelow(h, pose, H);
            check(*w.physics, ConvexShape::box(h), pose, want);
          }
        }
      }

      SUBCASE("a capsule upright and lying down matches its analytic volume") {
        const double r = 0.45 * s, hh = 0.6 * s;
        for (const double d : {0.1, 0.4, 0.9, 1.2, 1.7}) {
          const double depth = d * s;
          // Upright: cap, cylinder, cap from the bottom.
          const double total = kPi * r * r * (2 * hh + 4.0 / 3.0 * r);
          double up;
          if (depth <= r) up = capVolume(r, depth);
          else if (depth <= r + 2 * hh) up = capVolume(r, r) + kPi * r * r * (depth - r);
          else up = total - capVolume(r, 2 * r + 2 * hh - depth);
          check(*w.physics, ConvexShape::capsule(r, hh), {{-7.9 * s, H - depth + r + hh, 0.1 * s}}, up);
          // Lying along x: a circular segment along the cylinder, plus a sphere cap.
          if (depth < 2 * r) {
            const double lying = segmentArea(r, depth) * 2 * hh + capVolume(r, depth);
            check(*w.physics, ConvexShape::capsule(r, hh),
                  {{-8.1 * s, H - depth + r, 0.05 * s}, rotation({0, 0, 1}, kPi / 2)}, lying);
          }
        }
      }

      SUBCASE("a cylinder upright and lying down matches its analytic volume") {
        const double r = 0.6 * s, hh = 0.5 * s;
        for (const double d : {0.1, 0.35, 0.6, 0.9, 1.15}) {
          const double depth = d * s;
          if (depth <= 2 * hh)
            check(*w.physics, ConvexShape::cylinder(r, hh), {{0.3 * s, H - depth + hh, -0.2 * s}},
                  kPi * r * r * depth);
          if (depth <= 2 * r)
            check(*w.physics, ConvexShape::cylinder(r, hh),
                  {{0.3 * s, H - depth + r, -0.2 * s}, rotation({1, 0, 0}, kPi / 2)}, segmentArea(r, depth) * 2 * hh);
        }
      }
    }
  }
}

// The volume of `shape` (capsule or cylinder) below world height `level` by brute force: the midpoints of an n^3 grid
// over its local bounds.
double bruteBelow(const ConvexShape& shape, const Pose& pose, double level, int n) {
  const P3 up = upRow(pose.rotation);
  const bool capsule = shape.kind == ShapeKind::kCapsule;
  const double r = capsule ? shape.radius : shape.half_extents[0];
  const double hy = capsule ? shape.half_height + r : shape.half_extents[1];
  const double dx = 2 * r / n, dy = 2 * hy / n;
  double count = 0;
  for (int i = 0; i < n; ++i) {
    const double x = -r + (i + 0.5) * dx;
    for (int j = 0; j < n; ++j) {
      const double y = -hy + (j + 0.5) * dy;
      const double cap = capsule ? std::max(0.0, std::abs(y) - shape.half_height) : 0.0;
      for (int k = 0; k < n; ++k) {
        const double z = -r + (k + 0.5) * dx;
        if (x * x + z * z + cap * cap <= r * r && pose.position[1] + up[0] * x + up[1] * y + up[2] * z <= level)
          count += 1;
      }
    }
  }
  return count * dx * dy * dx;
}

TEST_CASE("submerged volume: tilted capsules and cylinders, and bodies too large for one read") {
  const FlatWater w = flatWater(1.0, -3, 60);
  SUBCASE("tilted capsules and cylinders agree with a fine voxelisation") {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1, 1);
    for (int i = 0; i < 12; ++i) {
      const ConvexShape shape = i % 2 ? ConvexShape::capsule(0.4, 0.5) : ConvexShape::cylinder(0.5, 0.6);
      const Pose pose{{-8 + u(rng), w.surface + 0.7 * u(rng), u(rng)}, rotation({u(rng), u(rng), u(rng)}, 3 * u(rng))};
      check(*w.physics, shape, pose, bruteBelow(shape, pose, w.surface, 160));
    }
  }
  SUBCASE("random sizes, places and depths from 0.1 r to 1.9 r stay within 1% (shallow caps are the hard case)") {
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 60; ++i) {
      const double r = 0.3 + 1.2 * u(rng), d = (0.1 + 1.8 * u(rng)) * r, hh = 0.5 * r;
      const double x = -8 + 6 * u(rng), z = -3 + 6 * u(rng);
      check(*w.physics, ConvexShape::sphere(r), {{x, w.surface - d + r, z}, rotation({u(rng), 1, 0}, 3 * u(rng))},
            capVolume(r, d), 0.01);
      check(*w.physics, ConvexShape::capsule(r, hh), {{x, w.surface - d + r, z}, rotation({0, 0, 1}, kPi / 2)},
            segmentArea(r, d) * 2 * hh + capVolume(r, d), 0.01);
      check(*w.physics, ConvexShape::cylinder(r, hh), {{x, w.surface - d + r, z}, rotation({1, 0, 0}, kPi / 2)},
            segmentArea(r, d) * 2 * hh, 0.01);
    }
  }
  SUBCASE("a body reaching more than 32^3 voxels is read chunk by chunk and still matches") {
    const P3 h{19.5, 12, 19.5};  // reaches 40 x 25 x 40 voxels
    for (const double y : {-2.0, 0.5, 4.0}) {
      const Pose pose{{-0.3, w.surface + y, 0.6}};
      check(*w.physics, ConvexShape::box(h), pose,
            4 * h[0] * h[2] * std::clamp(w.surface - (pose.position[1] - h[1]), 0.0, 2 * h[1]));
    }
  }
}

TEST_CASE("submerged volume: a ship-sized body over water of uneven levels, across the tiles it is read in") {
  // Water from y = -40 up to a level of its own in each column of chunks (x, z in [-64, 64)), between -20 and 20; a
  // box reaching 91 x 61 x 91 voxels across x, y and z = 0 (tile faces: its voxels are read in tiles of 64 x 32 x 64).
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(41);
  std::map<std::pair<int, int>, int> level;
  for (int cz = -8; cz < 8; ++cz)
    for (int cx = -8; cx < 8; ++cx) {
      const int top = int(rng() % 41) - 20;
      level[{cx, cz}] = top;
      REQUIRE(world->fillBox(VoxelBox{{8 * cx, -40, 8 * cz}, {8 * cx + 8, top, 8 * cz + 8}}, kWaterMaterial).ok());
    }
  auto physics = vtp::test::makePhysics(*world);
  const P3 h{45.5, 30.5, 45.5};
  for (const P3 centre : {P3{3.3, 0.4, -2.7}, P3{-1.1, -6.2, 5.9}}) {
    // The exact volume below each column's level, over the box's footprint.
    double want = 0;
    const double bottom = centre[1] - h[1];
    for (const auto& [column, top] : level) {
      const double x0 = std::max(8.0 * column.first, centre[0] - h[0]);
      const double x1 = std::min(8.0 * column.first + 8, centre[0] + h[0]);
      const double z0 = std::max(8.0 * column.second, centre[2] - h[2]);
      const double z1 = std::min(8.0 * column.second + 8, centre[2] + h[2]);
      if (x0 < x1 && z0 < z1) want += (x1 - x0) * (z1 - z0) * std::clamp(top - bottom, 0.0, 2 * h[1]);
    }
    check(*physics, ConvexShape::box(h), Pose{WorldVec3(centre)}, want, 0.005);
  }
}

TEST_CASE("submerged volume: whole, dry, occupancy-weighted, not in rock") {
  SUBCASE("a body deep in full water gets exactly its volume and its centre; one above the water gets nothing") {
    const FlatWater w = flatWater(0.75, 0, 0);
    for (const ConvexShape& shape : {ConvexShape::sphere(0.8), ConvexShape::box({0.3, 0.9, 0.4}),
                                     ConvexShape::capsule(0.3, 0.7), ConvexShape::cylinder(0.5, 0.4)}) {
      const Pose deep{{-3.3, -5.1, 2.2}, rotation({1, 1, 0}, 0.4)};
      auto got = submerged(*w.physics, shape, deep);
      REQUIRE(got.ok());
      CHECK(got->volume == doctest::Approx(got->shape_volume).epsilon(1e-12));
      for (std::size_t a = 0; a < 3; ++a) CHECK(got->centre[a] == doctest::Approx(deep.position[a]).epsilon(1e-6));
      const Pose dry{{-3.3, 3.0, 2.2}, deep.rotation};
      got = submerged(*w.physics, shape, dry);
      REQUIRE(got.ok());
      CHECK(got->volume == 0);
      CHECK(got->centre == dry.position);
    }
  }

  SUBCASE("a lone water voxel inside a body adds occupancy / 255 of a cell, at the wet part's centre") {
    auto world = vtp::test::makeWorld();
    REQUIRE(world->setVoxel({-5, 2, 7}, Voxel{kWaterMaterial, 51}).ok());
    auto physics = vtp::test::makePhysics(*world);
    auto got = submerged(*physics, ConvexShape::box({2, 2, 2}), {{-4.5, 2.5, 7.5}});
    REQUIRE(got.ok());
    CHECK(got->volume == doctest::Approx(0.2).epsilon(1e-9));
    CHECK(got->centre[0] == doctest::Approx(-4.5));
    CHECK(got->centre[1] == doctest::Approx(2.1));  // water settles: the lower fifth of the cell
    CHECK(got->centre[2] == doctest::Approx(7.5));
  }

  SUBCASE("the part of a body inside rock is not submerged") {
    FlatWater w = flatWater(1.0, 0, 0);
    REQUIRE(w.world->fillBox(VoxelBox{{-24, -30, -24}, {0, 0, 24}}, 2).ok());  // rock for x < 0
    check(*w.physics, ConvexShape::box({1, 1, 1}), {{0, -3, 5}}, 4.0, 1e-9);
  }

  SUBCASE("a convex hull gets its hull's volume when submerged, and about half when half in") {
    const FlatWater w = flatWater(1.0, 0, 0);
    const std::vector<std::array<float, 3>> cube = {{-0.5f, -0.5f, -0.5f}, {0.5f, -0.5f, -0.5f}, {-0.5f, 0.5f, -0.5f},
                                                    {0.5f, 0.5f, -0.5f},   {-0.5f, -0.5f, 0.5f}, {0.5f, -0.5f, 0.5f},
                                                    {-0.5f, 0.5f, 0.5f},   {0.5f, 0.5f, 0.5f},   {0.0f, 0.0f, 0.0f}};
    check(*w.physics, ConvexShape::hull(cube), {{2, -4, 3}, rotation({1, 2, 0}, 0.3)}, 1.0, 1e-6);
    // Off its origin, a submerged hull's centre of buoyancy is its centroid.
    std::vector<std::array<float, 3>> shifted = cube;
    for (auto& p : shifted) p[0] += 2.0f;
    const Submersion got = check(*w.physics, ConvexShape::hull(shifted), {{-3, -5, 1}}, 1.0, 1e-6);
    CHECK(got.centre[0] == doctest::Approx(-1.0));
    check(*w.physics, ConvexShape::hull(cube), {{2, 0, 3}, rotation({1, 2, 0}, 0.3)}, 0.5);
  }

  SUBCASE("hulls are recognised by their points, not by where the caller keeps them") {
    // Each thread keeps the chords of the hulls it met last (hull_chords.h): the same buffer with new points, more
    // hulls than it keeps, and every axis must all give what a first call gives.
    const FlatWater w = flatWater(1.0, 0, 0);
    std::vector<std::array<float, 3>> points = {{-0.5f, -0.5f, -0.5f}, {0.5f, -0.5f, -0.5f}, {-0.5f, 0.5f, -0.5f},
                                                {0.5f, 0.5f, -0.5f},   {-0.5f, -0.5f, 0.5f}, {0.5f, -0.5f, 0.5f},
                                                {-0.5f, 0.5f, 0.5f},   {0.5f, 0.5f, 0.5f}};
    const ConvexShape shape = ConvexShape::hull(points);
    const Pose half_in{{2, 0, 3}, rotation({1, 2, 0}, 0.3)};
    const Submersion first = check(*w.physics, shape, half_in, 0.5);
    for (int round = 0; round < 2; ++round) {
      // More boxes than a thread keeps, in one buffer; the first few checked thoroughly.
      for (int size = 1; size <= int(vtp::physics::water::kHullCacheEntries) + 64; ++size) {
        const float half_x = size <= 20 ? 0.25f * float(size) : 0.5f + 0.0005f * float(size);  // all distinct
        for (auto& p : points) p = {std::copysign(half_x, p[0]), p[1], p[2]};
        if (size > 20) {
          (void)submerged(*w.physics, shape, {{2, -6, 3}, rotation({0, 1, 1}, 0.7)}).value();
          continue;
        }
        check(*w.physics, shape, {{2, -6, 3}, rotation({0, 1, 1}, 0.7)}, 0.5 * size, 1e-6);
        // Lying on each side in turn, so chords run along every local axis.
        for (const auto& axis : {std::array<double, 3>{1, 0, 0}, std::array<double, 3>{0, 0, 1}}) {
          check(*w.physics, shape, {{2, -6, 3}, rotation(axis, 1.5)}, 0.5 * size, 1e-6);
        }
      }
      for (auto& p : points) p[0] = std::copysign(0.5f, p[0]);
      const Submersion again = check(*w.physics, shape, half_in, 0.5);
      CHECK(again.volume == first.volume);  // bit for bit: the same chords
      CHECK(again.centre == first.centre);
    }
    // A flat hull has no volume, whatever was kept for the buffer before.
    for (auto& p : points) p[1] = 0;
    auto flat = submerged(*w.physics, shape, half_in);
    REQUIRE(!flat.ok());
    CHECK(flat.error().code == vtp::ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("submerged volume: bad shapes and poses are refused as invalid or out of range") {
  const FlatWater w = flatWater(1.0, 0, 0);
  const double nan = std::nan("");
  auto code = [&](const ConvexShape& shape, const Pose& pose) {
    auto r = submerged(*w.physics, shape, pose);
    REQUIRE(!r.ok());
    return r.error().code;
  };
  CHECK(code(ConvexShape::sphere(0), {}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::sphere(nan), {}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::box({1, -1, 1}), {}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::sphere(1), {{nan, 0, 0}}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::sphere(1), {{0, 0, 0}, {0, 0, 0, 2}}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::sphere(1), {{0, HUGE_VAL, 0}}) == vtp::ErrorCode::kInvalidArgument);
  CHECK(code(ConvexShape::sphere(1), {{65536.5, 0, 0}}) == vtp::ErrorCode::kOutOfRange);
  CHECK(code(ConvexShape::sphere(1), {{0, 0, -65535.5}}) == vtp::ErrorCode::kOutOfRange);
}
