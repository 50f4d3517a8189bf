// Contacts (TerrainPhysics::contacts and the per-chunk search under it) against brute force: Bullet's GJK/EPA run on
// every triangle of every chunk near the shape, built fresh from the world. Before reduction every contact the brute
// force reports is found on the same chunk and triangle with the same depth and normal (or, where EPA may pick among
// equally deep axes, a normal along which the overlap is as deep); after reduction each manifold keeps its chunk's
// deepest point. Random spheres, boxes, capsules, cylinders and hulls at random poses near and in the surface of a
// random world with negative coordinates and chunk seams; bad input is refused.
#include "vtp/physics/terrain_physics.h"

#include <doctest/doctest.h>

#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/CollisionShapes/btTriangleShape.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkEpaPenetrationDepthSolver.h>
#include <BulletCollision/NarrowPhaseCollision/btGjkPairDetector.h>
#include <BulletCollision/NarrowPhaseCollision/btVoronoiSimplexSolver.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "contact/gjk_shape.h"
#include "contact/chunk_contacts.h"
#include "support/collider_fingerprint.h"
#include "support/random_world.h"
#include "support/standard_worlds.h"
#include "support/terrain_physics_support.h"
#include "vtp/physics/collider_builder.h"
#include "vtp/physics/water.h"

using namespace vtp::terrain;
using namespace vtp::physics;
using vtp::ErrorCode;
using vtp::Status;

namespace {

constexpr double kThreshold = 0.02;

struct RefContact {
  btVector3 normal, point;
  double depth;  // > 0 overlapping
};
using Key = std::pair<ChunkCoord, int>;

struct RefResult final : btDiscreteCollisionDetectorInterface::Result {
  bool found = false;
  RefContact c{};
  void setShapeIdentifiersA(int, int) override {}
  void setShapeIdentifiersB(int, int) override {}
  void addContactPoint(const btVector3& n, const btVector3& p, btScalar d) override {
    found = true;
    c = {n, p, -double(d)};
  }
};

// Bullet's GJK/EPA on one triangle, written out here independently of the library's wrapper.
bool referenceContact(const btConvexShape& shape, const btTransform& pose, const btVector3 t[3], RefContact& out) {
  btTriangleShape tri(t[0], t[1], t[2]);
  tri.setMargin(0);
  btVoronoiSimplexSolver simplex;
  btGjkEpaPenetrationDepthSolver epa;
  btGjkPairDetector gjk(&shape, &tri, &simplex, &epa);
  btGjkPairDetector::ClosestPointInput in;
  in.m_transformA = pose;
  in.m_transformB.setIdentity();
  const double reach = shape.getMargin() + kThreshold;
  in.m_maximumDistanceSquared = btScalar(reach * reach);
  RefResult r;
  gjk.getClosestPoints(in, r, nullptr);
  if (!r.found || !(-r.c.depth < kThreshold)) return false;
  out = r.c;
  return true;
}

// How deep the shape reaches past the triangle along `n` (out of the triangle towards the shape).
double overlapAlong(const btConvexShape& shape, const btTransform& pose, const btVector3 t[3], const btVector3& n) {
  const double tri_max = std::max({t[0].dot(n), t[1].dot(n), t[2].dot(n)});
  const btVector3 local_dir = pose.getBasis().transpose() * -n;
  // The margin rounds the core (Bullet's localGetSupportingVertex gives a box's sharp corner instead).
  const btVector3 support =
      pose * (shape.localGetSupportingVertexWithoutMargin(local_dir) + local_dir.normalized() * shape.getMargin());
  return tri_max - double(support.dot(n));
}

ConvexShape randomShape(std::mt19937_64& rng, int kind, std::vector<std::array<float, 3>>& hull) {
  std::uniform_real_distribution<double> size(0.2, 1.5);
  switch (kind) {
    case 0: return ConvexShape::sphere(size(rng));
    case 1: return ConvexShape::box({size(rng), size(rng), size(rng)});
    case 2: return ConvexShape::capsule(size(rng) * 0.6, size(rng));
    case 3: return ConvexShape::cylinder(size(rng), size(rng));
    default: {
      hull.clear();
      std::normal_distribution<float> g(0, 1);
      const double r = size(rng);
      for (int i = 0; i < 12; ++i) {
        std::array<float, 3> p{g(rng), g(rng), g(rng)};
        const float len = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
        for (float& v : p) v = float(v / len * r);
        hull.push_back(p);
      }
      return ConvexShape::hull(hull);
    }
  }
}

std::array<double, 4> randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> g(0, 1);
  std::array<double, 4> q{g(rng), g(rng), g(rng), g(rng)};
  const double len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (double& v : q) v /= len;
  return q;
}

void triangleInWorld(const Collider& c, int id, double voxel_size, btVector3 out[3]) {
  const ColliderTriangle t = c.triangle(id);
  const double s = voxel_size / kGridScale;
  for (int k = 0; k < 3; ++k)
    out[k] = btVector3(btScalar(t.vertices[std::size_t(k)].x * s), btScalar(t.vertices[std::size_t(k)].y * s),
                       btScalar(t.vertices[std::size_t(k)].z * s));
}

void checkAgainstBruteForce(double voxel_size, std::uint64_t seed) {
  WorldConfig config;
  config.voxel_size = voxel_size;
  auto world = vtp::test::makeWorld(config);
  REQUIRE(world->fillBox({{-20, -8, -20}, {20, 1, 20}}, 2).ok());
  std::mt19937_64 rng(seed);
  vtp::test::randomEdits(*world, {{-16, -6, -16}, {16, 6, 16}}, 40, rng);
  auto physics = TerrainPhysics::create(*world);
  REQUIRE(physics.ok());
  TerrainPhysics& tp = **physics;

  std::map<ChunkCoord, std::unique_ptr<Collider>> brute;
  ColliderBuilder builder;
  for (const ChunkCoord c : vtp::test::chunksNearStored(*world)) {
    auto collider = vtp::test::freshCollider(*world, c, builder);
    if (collider->triangleCount() > 0) brute.emplace(c, std::move(collider));
  }

  std::vector<std::array<float, 3>> hull;
  int compared = 0, specialised = 0, equally_deep = 0, unconverged = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int kind = trial % 5;
    const ConvexShape shape = randomShape(rng, kind, hull);
    Pose pose;
    pose.rotation = randomRotation(rng);
    std::uniform_real_distribution<double> xz(-15 * voxel_size, 15 * voxel_size);
    pose.position = {xz(rng), 20 * voxel_size, xz(rng)};
    WorldRayHit down;
    auto hit = tp.raycastClosest({pose.position, {0, -1, 0}, 40 * voxel_size}, down);
    REQUIRE(hit.ok());
    if (!*hit) continue;
    pose.position[1] = down.hit.point[1] + std::uniform_real_distribution<double>(-0.6, 1.2)(rng) * voxel_size;

    const GjkShapePtr bt = makeGjkShape(shape);
    btQuaternion q{btScalar(pose.rotation[0]), btScalar(pose.rotation[1]), btScalar(pose.rotation[2]),
                   btScalar(pose.rotation[3])};
    const btMatrix3x3 basis(q);
    std::array<double, 3> min, max;
    shapeBounds(*bt, basis, pose.position.array(), kThreshold, min, max);

    // Brute force: every triangle of every chunk whose grown bounds meet the shape's box.
    std::map<Key, RefContact> reference;
    std::map<ChunkCoord, double> deepest;
    for (const auto& [c, collider] : brute) {
      const std::array<double, 3> o = chunkOriginWorld(c, voxel_size);
      bool near = true;
      for (int a = 0; a < 3; ++a)
        near = near && max[std::size_t(a)] >= o[std::size_t(a)] - voxel_size &&
               min[std::size_t(a)] <= o[std::size_t(a)] + 9 * voxel_size;
      if (!near) continue;
      const ShapeInChunk placed = placeInChunk(*bt, basis, pose.position.array(), c, voxel_size);
      for (int id = 0; id < collider->triangleCount(); ++id) {
        btVector3 t[3];
        triangleInWorld(*collider, id, voxel_size, t);
        RefContact r;
        if (!referenceContact(*bt, placed.pose, t, r)) continue;
        reference[{c, id}] = r;
        auto [it, fresh] = deepest.emplace(c, r.depth);
        if (!fresh) it->second = std::max(it->second, r.depth);
      }
    }

    // Ours, before reduction.
    std::vector<ChunkTouch> touches;
    REQUIRE(tp.masks().query({{min[0], min[1], min[2]}, {max[0], max[1], max[2]}}, touches).ok());
    ContactScratch scratch;
    ContactCounters counters;
    std::map<Key, TriangleContact> ours;
    for (const ChunkTouch& touch : touches) {
      if (!touch.solid || touch.tag != MaskTag::kMixed) continue;
      auto pin = tp.colliders().acquire(touch.chunk);
      REQUIRE(pin.ok());
      const ShapeInChunk placed = placeInChunk(*bt, basis, pose.position.array(), touch.chunk, voxel_size);
      chunkContacts(*pin.value(), placed, min, max, voxel_size, btScalar(kThreshold), scratch, counters,
                    /*correct_edges=*/false);
      for (const ChunkContact& c : scratch.contacts) ours.emplace(Key{touch.chunk, c.triangle}, c.contact);  // GJK's first
    }
    if (kind <= 2) specialised += int(reference.size());

    for (const auto& [key, ref] : reference) {
      if (-ref.depth > kThreshold - 1e-4) continue;  // at the reporting edge: float rounding decides
      const auto it = ours.find(key);
      INFO("trial " << trial << " kind " << kind << " chunk " << key.first.x << "," << key.first.y << ","
                    << key.first.z << " triangle " << key.second << " ref depth " << ref.depth);
      REQUIRE(it != ours.end());
      const TriangleContact& c = it->second;
      const double depth = -double(c.distance);
      if (std::abs(depth - ref.depth) > 1e-4) {
        // EPA stops when its polytope (inside the Minkowski difference) is within its tolerance, so its depth is a
        // lower bound of the true one and the overlap along its normal an upper bound. Where those are more than
        // 1e-4 apart, ours must lie between them and be the overlap along our own normal (an exact separating-axis
        // depth): EPA had not converged, ours is the closer.
        btVector3 t[3];
        triangleInWorld(*brute.at(key.first), key.second, voxel_size, t);
        const ShapeInChunk placed = placeInChunk(*bt, basis, pose.position.array(), key.first, voxel_size);
        const double upper = overlapAlong(*bt, placed.pose, t, ref.normal);
        INFO("ours " << depth << ", EPA's bracket " << ref.depth << " .. " << upper);
        CHECK(upper - ref.depth > 1e-4);
        CHECK(depth >= ref.depth);
        CHECK(depth <= upper + 1e-6);
        CHECK(std::abs(overlapAlong(*bt, placed.pose, t, c.normal) - depth) <= 1e-5);
        ++unconverged;
        ++compared;
        continue;  // (EPA's normal is as unconverged as its depth)
      }
      const double angle = std::acos(std::clamp(double(c.normal.dot(ref.normal)), -1.0, 1.0));
      if (angle > 1e-3) {
        // EPA may pick among equally deep axes: ours must be one of them.
        btVector3 t[3];
        triangleInWorld(*brute.at(key.first), key.second, voxel_size, t);
        const ShapeInChunk placed = placeInChunk(*bt, basis, pose.position.array(), key.first, voxel_size);
        INFO("ours " << c.normal.x() << " " << c.normal.y() << " " << c.normal.z() << " depth " << depth << " ref "
                     << ref.normal.x() << " " << ref.normal.y() << " " << ref.normal.z() << " overlap along ref "
                     << overlapAlong(*bt, placed.pose, t, ref.normal));
        CHECK(ref.depth > 0);
        CHECK(std::abs(overlapAlong(*bt, placed.pose, t, c.normal) - ref.depth) <= 1e-4);
        ++equally_deep;
      }
      ++compared;
    }

    // After reduction: one manifold per chunk with contacts, keeping its deepest point.
    std::vector<ChunkManifold> manifolds;
    ContactOptions options;
    options.contact_distance = kThreshold;
    REQUIRE(tp.contacts(shape, pose, manifolds, options).ok());
    for (const ChunkManifold& m : manifolds) {
      REQUIRE(m.count >= 1);
      REQUIRE(m.count <= 4);
      double best = -1e9;
      for (int i = 0; i < m.count; ++i) best = std::max(best, m.points[std::size_t(i)].depth);
      const auto want = deepest.find(m.chunk);
      REQUIRE(want != deepest.end());
      CHECK(std::abs(best - want->second) <= 1e-4);
    }
    for (const auto& [c, d] : deepest)
      if (-d < kThreshold - 1e-4)
        CHECK(std::any_of(manifolds.begin(), manifolds.end(), [&](const ChunkManifold& m) { return m.chunk == c; }));
  }
  MESSAGE("compared " << compared << " triangle contacts (" << specialised << " sphere/box/capsule, " << equally_deep
                      << " with an equally deep normal, " << unconverged << " where EPA stopped short)");
  CHECK(compared > 500);
  CHECK(specialised > 100);
  CHECK(unconverged * 100 <= compared);  // EPA stopping short is rare; more would hide a real disagreement
}

// Rock below y = 0 over x, z in [-16, 16), and its physics.
struct FlatGround {
  std::unique_ptr<World> world = vtp::test::flatRockWorld(16);
  std::unique_ptr<TerrainPhysics> physics;
  FlatGround() { physics = vtp::test::makePhysics(*world); }
};

}  // namespace

TEST_CASE("contacts: every brute-force GJK/EPA triangle contact is found with its depth and normal") {
  checkAgainstBruteForce(1.0, 17);
}

TEST_CASE("contacts: the same at voxel size 0.5") { checkAgainstBruteForce(0.5, 99); }

TEST_CASE("contacts: bad shapes, poses and options are refused and report nothing") {
  FlatGround ground;
  TerrainPhysics& physics = *ground.physics;
  std::vector<ChunkManifold> out(3);
  Pose pose;
  pose.position = {0, 0.2, 0};
  REQUIRE(physics.contacts(ConvexShape::sphere(0.5), pose, out).ok());
  CHECK(out.size() >= 1);
  const double nan = std::nan("");
  auto refused = [&](const ConvexShape& s, const Pose& p, ErrorCode code, ContactOptions o = {}) {
    out.resize(2);
    const Status st = physics.contacts(s, p, out, o);
    REQUIRE(!st.ok());
    CHECK(st.error().code == code);
    CHECK(out.empty());
  };
  refused(ConvexShape::sphere(0), pose, ErrorCode::kInvalidArgument);
  refused(ConvexShape::sphere(nan), pose, ErrorCode::kInvalidArgument);
  refused(ConvexShape::box({1, 0, 1}), pose, ErrorCode::kInvalidArgument);
  refused(ConvexShape::box({0.5, 0.5, 0.5}, 0.6), pose, ErrorCode::kInvalidArgument);
  refused(ConvexShape::capsule(0.5, -1), pose, ErrorCode::kInvalidArgument);
  const std::array<float, 3> flat[4] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {1, 0, 1}};
  refused(ConvexShape::hull(flat), pose, ErrorCode::kInvalidArgument);
  Pose p = pose;
  p.position[0] = nan;
  refused(ConvexShape::sphere(0.5), p, ErrorCode::kInvalidArgument);
  p = pose;
  p.rotation = {0, 0, 0, 2};
  refused(ConvexShape::sphere(0.5), p, ErrorCode::kInvalidArgument);
  p = pose;
  p.position[2] = 1e6;
  refused(ConvexShape::sphere(0.5), p, ErrorCode::kOutOfRange);
  // Valid shapes too large for a float reach beyond 2^16 voxels too.
  refused(ConvexShape::sphere(1e300), pose, ErrorCode::kOutOfRange);
  refused(ConvexShape::sphere(1e39), pose, ErrorCode::kOutOfRange);
  refused(ConvexShape::box({1e39, 1, 1}), pose, ErrorCode::kOutOfRange);
  refused(ConvexShape::sphere(1e5), pose, ErrorCode::kOutOfRange);
  ContactOptions o;
  o.contact_distance = -1;
  refused(ConvexShape::sphere(0.5), pose, ErrorCode::kInvalidArgument, o);
}

TEST_CASE("contacts: a sphere resting where four chunks meet touches the ground at its lowest point") {
  FlatGround ground;
  Pose pose;
  pose.position = {0, 0.5, 0};  // the ground's surface is y = 0 (solid voxels fill [.., 0))
  std::vector<ChunkManifold> out;
  REQUIRE(ground.physics->contacts(ConvexShape::sphere(0.5), pose, out).ok());
  REQUIRE(!out.empty());
  for (const ChunkManifold& m : out) {
    for (int i = 0; i < m.count; ++i) {
      const ContactPoint& p = m.points[std::size_t(i)];
      CHECK(p.depth == doctest::Approx(0).epsilon(0).scale(1).epsilon(1e-5));
      CHECK(p.normal[1] == doctest::Approx(1).epsilon(1e-6));
      CHECK(std::abs(p.point[0]) < 1e-5);
      CHECK(std::abs(p.point[2]) < 1e-5);
      CHECK(p.friction == doctest::Approx(ground.world->materials()[2].friction));
    }
  }
}

TEST_CASE("TerrainPhysics: queries answer in a world whose edit caps are below a chunk's apron box") {
  // The masks read 10^3 boxes, contact colliders 12^3, water up to 32^3: none is an edit, so none meets the edit caps.
  WorldConfig config;
  config.limits.max_edit_voxels = 512;
  config.limits.max_batch_voxels = 512;
  auto world = vtp::test::makeWorld(config);
  for (int x = -16; x < 16; x += 8) {
    for (int z = -16; z < 16; z += 8) {
      REQUIRE(world->fillBox({{x, -8, z}, {x + 8, 0, z + 8}}, 2).ok());
      if (x >= 8) REQUIRE(world->fillBox({{x, 0, z}, {x + 8, 8, z + 8}}, kWaterMaterial).ok());
    }
  }
  auto physics = vtp::test::makePhysics(*world);
  CHECK(physics->masks().stats().entries > 0);
  WorldRayHit hit;
  REQUIRE(physics->raycastClosest({{0.5, 5, 0.5}, {0, -1, 0}, 10}, hit).value());
  CHECK(hit.hit.point[1] == doctest::Approx(0).scale(1).epsilon(1e-4));
  std::vector<ChunkManifold> out;
  REQUIRE(physics->contacts(ConvexShape::sphere(0.5), Pose{{0.5, 0.4, 0.5}}, out).ok());
  CHECK_FALSE(out.empty());
  auto wet = submerged(*physics, ConvexShape::sphere(1), Pose{{12, 4, 0}});
  REQUIRE(wet.ok());
  CHECK(wet->volume == doctest::Approx(wet->shape_volume).epsilon(0.05));
}

TEST_CASE("contacts: a box resting on flat ground gets its four corners at ground height") {
  FlatGround ground;
  Pose pose;
  pose.position = {4, 0.5, 4};  // inside chunk (0, -1, 0)'s surface
  std::vector<ChunkManifold> out;
  REQUIRE(ground.physics->contacts(ConvexShape::box({0.5, 0.5, 0.5}), pose, out).ok());
  REQUIRE(out.size() == 1);
  const ChunkManifold& m = out[0];
  REQUIRE(m.count == 4);
  int corners = 0;
  for (int i = 0; i < m.count; ++i) {
    const ContactPoint& p = m.points[std::size_t(i)];
    CHECK(std::abs(p.depth) < 1e-4);
    CHECK(std::abs(p.point[1]) < 1e-4);
    CHECK(p.normal[1] == doctest::Approx(1).epsilon(1e-6));
    // The flat part of the face ends the margin (0.04) inside the box's edges.
    if (std::abs(std::abs(p.point[0] - 4) - 0.46) < 1e-4 && std::abs(std::abs(p.point[2] - 4) - 0.46) < 1e-4) ++corners;
  }
  CHECK(corners == 4);
}

TEST_CASE("contacts: one-sided terrain turns a contact from behind to the face over it and drops it past a ridge") {
  // Triangle in the plane y = 0, facing up (counter-clockwise seen from above), over x, z in [0, 2].
  const btVector3 t[3] = {btVector3(0, 0, 0), btVector3(0, 0, 2), btVector3(2, 0, 0)};
  btSphereShape sphere(0.5f);
  ShapeInChunk s;
  s.shape = &sphere;
  s.special = Special::kSphere;
  s.radius = 0.5f;
  auto at = [&](float x, float y, float z) {
    s.pose.setIdentity();
    s.pose.setOrigin(btVector3(x, y, z));
  };
  SUBCASE("a centre over the face: the face normal, as deep as the sphere reaches below the plane") {
    at(0.5f, -0.2f, 0.5f);
    TriangleContact c{btVector3(0, -1, 0), btVector3(0.5f, 0, 0.5f), -0.3f};  // two-sided: pushed further down
    REQUIRE(faceFront(t, s, c));
    CHECK(c.normal.y() == doctest::Approx(1));
    CHECK(c.distance == doctest::Approx(-0.7));  // the sphere's lowest point, 0.7 below the plane
    CHECK(c.point.y() == doctest::Approx(0));
    CHECK(c.point.x() == doctest::Approx(0.5));
  }
  SUBCASE("a centre past the face's edge (in front of a neighbour, behind this plane): dropped") {
    at(-0.3f, -0.2f, 0.5f);
    TriangleContact c{btVector3(-0.8f, -0.6f, 0), btVector3(0, 0, 0.5f), -0.1f};
    CHECK_FALSE(faceFront(t, s, c));
  }
  SUBCASE("a contact from the front is left alone") {
    at(0.5f, 0.4f, 0.5f);
    TriangleContact c{btVector3(0, 1, 0), btVector3(0.5f, 0, 0.5f), -0.1f};
    REQUIRE(faceFront(t, s, c));
    CHECK(c.distance == doctest::Approx(-0.1));
    CHECK(c.normal.y() == doctest::Approx(1));
  }
}

TEST_CASE("contacts: chunks whose colliders rays built first (no edge flags) give the same contacts") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(41);
  vtp::test::randomEdits(*world, {{-20, -10, -20}, {20, 10, 20}}, 40, rng);
  auto rays_first = vtp::test::makePhysics(*world);
  auto contacts_only = vtp::test::makePhysics(*world);
  std::uniform_real_distribution<double> at(-18, 18);
  std::vector<Pose> poses;
  for (int i = 0; i < 200; ++i) {
    WorldRayHit down;
    auto hit = rays_first->raycastClosest({{at(rng), 30, at(rng)}, {0, -1, 0}, 60}, down);
    REQUIRE(hit.ok());
    if (!*hit) continue;
    Pose pose;
    for (int a = 0; a < 3; ++a) {
      pose.position[std::size_t(a)] = down.hit.point[std::size_t(a)] + 0.45 * down.hit.normal[std::size_t(a)];
    }
    poses.push_back(pose);
  }
  const auto built = rays_first->colliders().stats().builds;
  REQUIRE(poses.size() > 50);
  REQUIRE(built > 0);
  int points = 0;
  for (const Pose& pose : poses) {
    for (const ConvexShape& shape : {ConvexShape::sphere(0.5), ConvexShape::box({0.4, 0.4, 0.4})}) {
      std::vector<ChunkManifold> a, b;
      REQUIRE(rays_first->contacts(shape, pose, a).ok());
      REQUIRE(contacts_only->contacts(shape, pose, b).ok());
      REQUIRE(a.size() == b.size());
      for (std::size_t m = 0; m < a.size(); ++m) {
        CHECK(a[m].chunk == b[m].chunk);
        REQUIRE(a[m].count == b[m].count);
        for (int i = 0; i < a[m].count; ++i) {
          const ContactPoint &p = a[m].points[std::size_t(i)], &q = b[m].points[std::size_t(i)];
          CHECK(p.point == q.point);
          CHECK(p.normal == q.normal);
          CHECK(p.depth == q.depth);
          ++points;
        }
      }
    }
  }
  CHECK(points > 100);
  CHECK(rays_first->colliders().stats().upgrades > 0);  // the rays' colliders were replaced, not used for contacts
}
