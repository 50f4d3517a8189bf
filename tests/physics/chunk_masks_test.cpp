// buildChunkMasks against the voxel-by-voxel 27-neighbour reference (physics/mask_reference.h): random boxes of every
// density, every single voxel (apron corners included), thin walls on every axis and plane, uniform boxes, the
// occupancy thresholds and the tag rules; and rejected input.
#include "vtp/physics/chunk_masks.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "physics/mask_reference.h"
#include "support/materials.h"
#include "support/random_world.h"

using namespace vtp::terrain;
using vtp::physics::ChunkMasks;
using vtp::physics::MaskTag;
using vtp::test::kRock;
using vtp::test::maskBoxIndex;

namespace {

constexpr Voxel kSandInside{vtp::test::kSandId, 128};   // the lowest solid-inside occupancy
constexpr Voxel kDirtOutside{vtp::test::kDirtId, 127};  // solid material, but outside the surface
constexpr Voxel kWaterFull{kWaterMaterial, 255};
constexpr Voxel kWaterThin{kWaterMaterial, 1};  // the least water there is: still water
constexpr int kBoxVolume = vtp::physics::kMaskBoxVolume;

using Box = std::vector<Voxel>;

Box uniformBox(Voxel v) { return Box(std::size_t(kBoxVolume), v); }

// Builds the masks and checks them against the reference; returns the built masks (or the reference on failure).
ChunkMasks checkAgainstReference(const Box& box, const std::string& what) {
  const ChunkMasks expected = vtp::test::referenceMasks(box);
  auto built = vtp::physics::buildChunkMasks(box);
  REQUIRE_MESSAGE(built.ok(), what);
  if (*built != expected) {
    FAIL_CHECK(what << "\n  built:     " << vtp::test::describe(*built)
                    << "\n  reference: " << vtp::test::describe(expected));
  }
  return expected;
}

bool allZero(const vtp::physics::SliceMask& m) {
  for (const auto w : m) {
    if (w != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("mask reference: a lone solid or water voxel sets exactly the bits worked out by hand") {
  // The reference is itself checked on cases worked out by hand, so a wrong oracle cannot pass the tests below.
  SUBCASE("a lone solid voxel at a chunk voxel sets exactly its 3x3x3 neighbourhood clipped to the chunk") {
    Box box = uniformBox(kAir);
    box[std::size_t(maskBoxIndex(1, 1, 1))] = kRock;  // chunk voxel (0,0,0)
    const ChunkMasks m = vtp::test::referenceMasks(box);
    CHECK(m.tag == MaskTag::kMixed);
    CHECK(m.solid[0] == 0x0303u);  // x 0..1 at z 0..1
    CHECK(m.solid[1] == 0x0303u);
    for (int y = 2; y < 8; ++y) CHECK(m.solid[std::size_t(y)] == 0);
    CHECK(allZero(m.water));
  }
  SUBCASE("a lone water voxel in the far apron corner sets only chunk voxel (7,7,7)") {
    Box box = uniformBox(kAir);
    box[std::size_t(maskBoxIndex(9, 9, 9))] = kWaterThin;
    const ChunkMasks m = vtp::test::referenceMasks(box);
    CHECK(m.tag == MaskTag::kMixed);
    CHECK(m.water[7] == (std::uint64_t{1} << 63));
    for (int y = 0; y < 7; ++y) CHECK(m.water[std::size_t(y)] == 0);
    CHECK(allZero(m.solid));
  }
}

TEST_CASE("buildChunkMasks: masks and tags equal the 27-neighbour reference and a wrong-sized box is refused") {
  SUBCASE("random boxes of every density match the 27-neighbour reference") {
    std::mt19937_64 rng(0x6d61736b31ull);
    int mixed = 0;
    for (int round = 0; round < 3000; ++round) {
      // Density from "one voxel in a thousand" to "everything", so sparse, dense and near-uniform boxes all occur.
      const double keep = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
      const double p = keep * keep * keep;
      const int style = round % 4;
      Box box = uniformBox(style == 3 ? kRock : kAir);
      for (auto& v : box) {
        if (std::uniform_real_distribution<double>(0.0, 1.0)(rng) >= p) continue;
        switch (style) {
          case 0: v = vtp::test::randomVoxel(rng); break;                                         // anything
          case 1: v = Voxel{std::uint8_t(2 + rng() % 5), std::uint8_t(120 + rng() % 16)}; break;  // near 128
          case 2: v = rng() % 2 ? kWaterThin : Voxel{2, std::uint8_t(1 + rng() % 255)}; break;    // lake bed
          default: v = rng() % 2 ? kWaterFull : kAir; break;                                      // holes in rock
        }
      }
      const ChunkMasks m = checkAgainstReference(box, "random box, round " + std::to_string(round));
      mixed += m.tag == MaskTag::kMixed ? 1 : 0;
    }
    CHECK(mixed > 2000);  // the rounds are not all trivially uniform
  }

  SUBCASE("a single solid or water voxel at every position, apron corners included, matches the reference") {
    for (const Voxel single : {kRock, kSandInside, kWaterThin, kWaterFull}) {
      for (int i = 0; i < kBoxVolume; ++i) {
        Box box = uniformBox(kAir);
        box[std::size_t(i)] = single;
        const ChunkMasks m = checkAgainstReference(box, "single voxel " + std::to_string(single.material) + "/" +
                                                            std::to_string(single.occupancy) + " at box index " +
                                                            std::to_string(i));
        REQUIRE(m.tag == MaskTag::kMixed);
      }
    }
  }

  SUBCASE("a single hole at every position of a full solid or full water box is mixed and matches the reference") {
    for (const Voxel fill : {kRock, kWaterFull}) {
      for (const Voxel hole : {kAir, kDirtOutside, fill == kRock ? kWaterThin : kSandInside}) {
        for (int i = 0; i < kBoxVolume; i += (hole == kAir ? 1 : 7)) {
          Box box = uniformBox(fill);
          box[std::size_t(i)] = hole;
          checkAgainstReference(box, "hole at box index " + std::to_string(i));
        }
      }
    }
  }

  SUBCASE("thin walls on every axis and every plane match the reference") {
    for (const Voxel wall : {kRock, kSandInside, kWaterThin}) {
      for (int axis = 0; axis < 3; ++axis) {
        for (int plane = 0; plane < 10; ++plane) {
          for (const bool hollow : {false, true}) {  // a wall of the material, or a full box with a gap of air
            Box box = uniformBox(hollow ? wall : kAir);
            for (int a = 0; a < 10; ++a) {
              for (int b = 0; b < 10; ++b) {
                const int x = axis == 0 ? plane : a, y = axis == 1 ? plane : (axis == 0 ? a : b);
                const int z = axis == 2 ? plane : b;
                box[std::size_t(maskBoxIndex(x, y, z))] = hollow ? kAir : wall;
              }
            }
            const ChunkMasks m = checkAgainstReference(
                box, "wall axis " + std::to_string(axis) + " plane " + std::to_string(plane) + (hollow ? " hollow" : ""));
            CHECK(m.tag == MaskTag::kMixed);
          }
        }
      }
    }
  }

  SUBCASE("a full solid-inside box is FULL_SOLID with no masks, whatever the solid materials") {
    for (const Voxel v : {kRock, kSandInside, Voxel{255, 128}}) {
      auto m = vtp::physics::buildChunkMasks(uniformBox(v));
      REQUIRE(m.ok());
      CHECK(m->tag == MaskTag::kFullSolid);
      CHECK(allZero(m->solid));
      CHECK(allZero(m->water));
    }
    std::mt19937_64 rng(7);
    Box mixed_materials = uniformBox(kRock);
    for (auto& v : mixed_materials) v = Voxel{std::uint8_t(2 + rng() % 254), std::uint8_t(128 + rng() % 128)};
    auto m = vtp::physics::buildChunkMasks(mixed_materials);
    REQUIRE(m.ok());
    CHECK(*m == ChunkMasks{MaskTag::kFullSolid, {}, {}});
  }

  SUBCASE("a full water box is FULL_WATER with no masks, occupancy 1 included") {
    for (const Voxel v : {kWaterFull, kWaterThin}) {
      auto m = vtp::physics::buildChunkMasks(uniformBox(v));
      REQUIRE(m.ok());
      CHECK(*m == ChunkMasks{MaskTag::kFullWater, {}, {}});
    }
    std::mt19937_64 rng(8);
    Box levels = uniformBox(kWaterFull);
    for (auto& v : levels) v.occupancy = std::uint8_t(1 + rng() % 255);
    auto m = vtp::physics::buildChunkMasks(levels);
    REQUIRE(m.ok());
    CHECK(*m == ChunkMasks{MaskTag::kFullWater, {}, {}});
  }

  SUBCASE("an all-air box and a box of solids below occupancy 128 are EMPTY with no masks") {
    std::mt19937_64 rng(9);
    Box low = uniformBox(kAir);
    for (auto& v : low) {
      if (rng() % 3 != 0) v = Voxel{std::uint8_t(2 + rng() % 5), std::uint8_t(1 + rng() % 127)};
    }
    for (const Box& box : {uniformBox(kAir), uniformBox(kDirtOutside), low}) {
      auto m = vtp::physics::buildChunkMasks(box);
      REQUIRE(m.ok());
      CHECK(*m == ChunkMasks{});
      CHECK(m->tag == MaskTag::kEmpty);
    }
  }

  SUBCASE("non-canonical air (occupancy >= 128, which World never holds) never makes a FULL tag, only more bits") {
    // buildChunkMasks reads solid-inside from occupancy alone when a box has no water; air of occupancy >= 128 must
    // still not make a FULL_SOLID box, and may only add solid bits: an empty box with one such voxel may come out
    // MIXED (found in review), a mixed box keeps at least its exact bits.
    constexpr Voxel kHeavyAir{0, 200};
    Box box = uniformBox(kHeavyAir);
    box[std::size_t(maskBoxIndex(4, 4, 4))] = kRock;
    Box one = uniformBox(kAir);
    one[std::size_t(maskBoxIndex(5, 5, 5))] = kHeavyAir;
    for (const Box& b : {uniformBox(kHeavyAir), box, one}) {
      auto m = vtp::physics::buildChunkMasks(b);
      REQUIRE(m.ok());
      const ChunkMasks exact = vtp::test::referenceMasks(b);
      CHECK((m->tag == exact.tag || (exact.tag == MaskTag::kEmpty && m->tag == MaskTag::kMixed)));
      for (std::size_t y = 0; y < 8; ++y) CHECK((m->solid[y] & exact.solid[y]) == exact.solid[y]);
      CHECK(m->water == exact.water);
    }
  }

  SUBCASE("solid next to water is MIXED and both masks match the reference") {
    // A lake bed: rock below y = 5 (box coordinates), water above.
    Box lake = uniformBox(kWaterFull);
    for (int z = 0; z < 10; ++z) {
      for (int y = 0; y < 5; ++y) {
        for (int x = 0; x < 10; ++x) lake[std::size_t(maskBoxIndex(x, y, z))] = kRock;
      }
    }
    const ChunkMasks m = checkAgainstReference(lake, "lake bed");
    CHECK(m.tag == MaskTag::kMixed);
    CHECK(!allZero(m.solid));
    CHECK(!allZero(m.water));
    // Half solid-inside, half water of occupancy 1: no air at all, still mixed.
    Box split = uniformBox(kSandInside);
    for (int i = 0; i < kBoxVolume; i += 2) split[std::size_t(i)] = kWaterThin;
    CHECK(checkAgainstReference(split, "checkerboard of sand and water").tag == MaskTag::kMixed);
  }

  SUBCASE("solid voxels below occupancy 128 set no solid bit, next to water or alone") {
    Box box = uniformBox(kDirtOutside);
    box[std::size_t(maskBoxIndex(4, 4, 4))] = kWaterThin;
    const ChunkMasks m = checkAgainstReference(box, "dirt at 127 around one water voxel");
    CHECK(m.tag == MaskTag::kMixed);
    CHECK(allZero(m.solid));
  }

  SUBCASE("a box that does not hold exactly 1000 voxels is rejected") {
    for (const std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(512), std::size_t(999), std::size_t(1001),
                                std::size_t(1728)}) {
      const Box box(n, kRock);
      auto m = vtp::physics::buildChunkMasks(box);
      REQUIRE_FALSE(m.ok());
      CHECK(m.error().code == vtp::ErrorCode::kInvalidArgument);
      CHECK(!m.error().message.empty());
    }
  }
}
