// Collider::validate: every collider built after each edit of a random sequence (fixed seeds) is valid, for both
// uses and several leaf sizes; and a collider corrupted on purpose (white-box, through ColliderTestAccess) fails,
// the message naming the broken invariant.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "support/random_world.h"
#include "vtp/mesher/surface_mesher.h"
#include "vtp/physics/collider.h"
#include "vtp/physics/collider_builder.h"

using namespace vtp::terrain;
using namespace vtp::physics;

namespace vtp::physics {

// Write access to a built collider's packed layout (collider.h befriends it), to corrupt it.
struct ColliderTestAccess {
  static std::int16_t* boxes(Collider& c) { return const_cast<std::int16_t*>(c.boxes()); }
  static std::uint16_t* leafStart(Collider& c) { return const_cast<std::uint16_t*>(c.leafStart()); }
  static std::int16_t* positions(Collider& c) { return const_cast<std::int16_t*>(c.positions()); }
  static std::uint16_t* corner(Collider& c, int k) { return const_cast<std::uint16_t*>(c.corner(k)); }
  static std::array<std::int16_t, 6>& bounds(Collider& c) { return c.m_bounds; }
  static std::array<std::uint32_t, 3>& sections(Collider& c) { return c.m_sections; }
  static std::uint8_t& flatAxes(Collider& c) { return c.m_flat_axes; }
};

}  // namespace vtp::physics

namespace {

using Access = vtp::physics::ColliderTestAccess;

// Chunk c's collider for `use` from the world as it is: the 12^3 box with the wide apron for contacts, the 10^3 box
// for queries (as the collider cache builds them).
std::unique_ptr<Collider> build(const World& world, ChunkCoord c, ColliderUse use, ColliderBuilder& builder) {
  thread_local vtp::mesher::SurfaceMesher mesher;
  thread_local vtp::mesher::ChunkMesh mesh;
  const int apron = use == ColliderUse::kContacts ? vtp::mesher::kWideApron : vtp::mesher::kApron;
  std::vector<Voxel> box(std::size_t(vtp::mesher::boxVolume(apron)));
  REQUIRE(world.readBox(grown(chunkBox(c), apron), box).ok());
  REQUIRE(mesher.mesh(box, apron, mesh).ok());
  auto built = builder.build(mesh, c, use);
  REQUIRE(built.ok());
  return std::move(built.value());
}

// The chunk with the most leaves among those near the stored ones of a seeded random world, built for `use`.
std::unique_ptr<Collider> busyCollider(ColliderUse use) {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(5);
  vtp::test::randomEdits(*world, VoxelBox{{-12, -10, -12}, {12, 10, 12}}, 30, rng);
  ColliderBuilder builder;
  std::unique_ptr<Collider> best;
  for (const ChunkCoord c : vtp::test::chunksNearStored(*world)) {
    auto collider = build(*world, c, use, builder);
    if (!best || collider->leafCount() > best->leafCount()) best = std::move(collider);
  }
  REQUIRE(best);
  REQUIRE(best->leafCount() >= 3);
  REQUIRE(best->validate().ok());
  return best;
}

void checkBroken(const Collider& c, const std::string& names) {
  const vtp::Status s = c.validate();
  REQUIRE(!s.ok());
  INFO(s.error().message);
  CHECK(s.error().code == vtp::ErrorCode::kCorrupt);
  CHECK(s.error().message.find(names) != std::string::npos);
}

}  // namespace

TEST_CASE("collider validate: every collider built after each edit of a random sequence is valid") {
  for (const std::uint64_t seed : {21u, 22u}) {
    auto world = vtp::test::makeWorld();
    REQUIRE(world->fillBox({{-12, -8, -12}, {12, -2, 12}}, 2).ok());
    std::mt19937_64 rng(seed);
    ColliderBuilder small({1, 32}), normal, large({16, 32}), flat({8, 0});
    int checked = 0;
    for (int edit = 0; edit < 8; ++edit) {
      vtp::test::randomEdits(*world, VoxelBox{{-12, -10, -12}, {12, 6, 12}}, 1, rng);
      for (const ChunkCoord c : vtp::test::chunksNearStored(*world)) {
        for (ColliderBuilder* builder : {&small, &normal, &large, &flat}) {
          for (const ColliderUse use : {ColliderUse::kQueries, ColliderUse::kContacts}) {
            // The default builder for both uses, the others for queries only (their edge flags are the same).
            if (builder != &normal && use == ColliderUse::kContacts) continue;
            auto collider = build(*world, c, use, *builder);
            const vtp::Status s = collider->validate();
            INFO("seed ", seed, ", edit ", edit, ", chunk (", c.x, ",", c.y, ",", c.z, ")");
            CHECK_MESSAGE(s.ok(), (s.ok() ? std::string() : s.error().message));
            checked += collider->triangleCount() > 0;
          }
        }
      }
    }
    CHECK(checked > 200);
  }
}

TEST_CASE("collider validate: an empty collider is valid") {
  auto world = vtp::test::makeWorld();
  ColliderBuilder builder;
  for (const ColliderUse use : {ColliderUse::kQueries, ColliderUse::kContacts}) {
    auto collider = build(*world, {0, 0, 0}, use, builder);
    CHECK(collider->triangleCount() == 0);
    CHECK(collider->validate().ok());
  }
}

TEST_CASE("collider validate: a corrupted collider fails, naming the broken invariant") {
  SUBCASE("a leaf box that does not hold one of its triangles") {
    auto c = busyCollider(ColliderUse::kQueries);
    const GridBox box = c->leafBounds(1);
    // Leaf 1's max x one below its triangles' largest x (group 0, lane 1, plane max x).
    Access::boxes(*c)[3 * kLeafGroup + 1] = std::int16_t(box.max[0] - 1);
    checkBroken(*c, "leaf 1's box");
  }
  SUBCASE("a triangle in no leaf: the first leaf starts past triangle 0") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::leafStart(*c)[0] = 1;
    checkBroken(*c, "triangle 0 lies in no leaf");
  }
  SUBCASE("a triangle in no leaf: the last leaf ends before the last triangle") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::leafStart(*c)[c->leafCount()] = std::uint16_t(c->triangleCount() - 1);
    checkBroken(*c, "triangle " + std::to_string(c->triangleCount() - 1) + " lies in no leaf");
  }
  SUBCASE("a leaf range running backwards (its triangles would be in two leaves)") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::leafStart(*c)[1] = std::uint16_t(c->leafTriangles(1)[1] + 1);
    checkBroken(*c, "leaf 1's range");
  }
  SUBCASE("a corner offset past the vertices") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::corner(*c, 1)[0] = std::uint16_t(3 * c->vertexCount());
    checkBroken(*c, "corner 1 of triangle 0");
  }
  SUBCASE("an edge flag on a collider built without them") {
    auto c = busyCollider(ColliderUse::kQueries);
    REQUIRE(!c->hasEdgeFlags());
    Access::corner(*c, 2)[3] = std::uint16_t(Access::corner(*c, 2)[3] | 0x8000);
    checkBroken(*c, "edge flag");
  }
  SUBCASE("a collider with edge flags may have them set") {
    auto c = busyCollider(ColliderUse::kContacts);
    REQUIRE(c->hasEdgeFlags());
    Access::corner(*c, 2)[3] = std::uint16_t(Access::corner(*c, 2)[3] | 0x8000);
    CHECK(c->validate().ok());
  }
  SUBCASE("corner padding that is not zero") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::corner(*c, 3)[kCornerPadding - 1] = 3;
    checkBroken(*c, "corner padding");
  }
  SUBCASE("a vertex outside the mesher's range") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::positions(*c)[1] = std::int16_t(vtp::mesher::kMaxPosition + 1);
    checkBroken(*c, "outside the mesher's range");
  }
  SUBCASE("bounds() that do not match the triangles") {
    auto c = busyCollider(ColliderUse::kQueries);
    ++Access::bounds(*c)[4];
    checkBroken(*c, "bounds()");
  }
  SUBCASE("a flat-axis bit that disagrees with bounds()") {
    auto c = busyCollider(ColliderUse::kQueries);
    Access::flatAxes(*c) = std::uint8_t(Access::flatAxes(*c) ^ 2);
    checkBroken(*c, "flat-axis bit of axis 1");
  }
  SUBCASE("a section that does not start where the counts put it") {
    auto c = busyCollider(ColliderUse::kQueries);
    ++Access::sections(*c)[1];
    checkBroken(*c, "section 1");
  }
  SUBCASE("an unused leaf lane holding a box") {
    auto c = busyCollider(ColliderUse::kQueries);
    const int leaves = c->leafCount();
    if (leaves % kLeafGroup != 0) {
      std::int16_t* group = Access::boxes(*c) + 6 * kLeafGroup * (leaves / kLeafGroup) + leaves % kLeafGroup;
      for (int a = 0; a < 3; ++a) {
        group[a * kLeafGroup] = 0;
        group[(3 + a) * kLeafGroup] = 1;
      }
      checkBroken(*c, "unused leaf lane " + std::to_string(leaves));
    }
  }
}
