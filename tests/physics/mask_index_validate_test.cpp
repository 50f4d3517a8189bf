// MaskIndex::validate after each edit of random sequences (fixed seeds): voxel sizes 1 and 0.37, negative
// coordinates, water, whole chunks emptied; a grid that grows, and a world spread too far for any grid (the hash
// table alone); an index created on a populated world. (A failing validate is not reachable here: the index's state
// is private to mask_index.cpp and every edit reaches it through the world's events.)
#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>

#include "support/random_world.h"
#include "vtp/physics/mask_index.h"

using namespace vtp::terrain;
using vtp::physics::MaskIndex;

namespace {

std::unique_ptr<MaskIndex> makeIndex(World& world) {
  auto index = MaskIndex::create(world);
  REQUIRE(index.ok());
  return std::move(index.value());
}

void checkValid(const MaskIndex& index, const std::string& what) {
  const vtp::Status s = index.validate();
  CHECK_MESSAGE(s.ok(), what << ": " << (s.ok() ? std::string() : s.error().message));
}

}  // namespace

TEST_CASE("MaskIndex validate: valid after every edit of a random sequence") {
  for (const double voxel_size : {1.0, 0.37}) {
    for (const std::uint64_t seed : {31u, 32u}) {
      WorldConfig config;
      config.voxel_size = voxel_size;
      auto world = vtp::test::makeWorld(std::move(config));
      auto index = makeIndex(*world);
      checkValid(*index, "empty world");
      std::mt19937_64 rng(seed);
      for (int edit = 0; edit < 14; ++edit) {
        const std::string what = "voxel size " + std::to_string(voxel_size) + ", seed " + std::to_string(seed) +
                                 ", edit " + std::to_string(edit);
        if (edit % 5 == 4) {
          // Empty a whole chunk (its entry goes, its neighbours' change).
          const ChunkCoord c{int(rng() % 4) - 2, int(rng() % 4) - 2, int(rng() % 4) - 2};
          REQUIRE(world->clearBox(chunkBox(c)).ok());
        } else if (edit % 5 == 3) {
          REQUIRE(world->fillSphere({double(rng() % 24) - 12, double(rng() % 24) - 12, double(rng() % 24) - 12},
                                    2.0 + double(rng() % 40) / 10, kWaterMaterial)
                      .ok());
        } else {
          vtp::test::randomEdits(*world, VoxelBox{{-14, -12, -14}, {14, 12, 14}}, 1, rng);
        }
        checkValid(*index, what);
      }
      // An index created on the populated world.
      checkValid(*makeIndex(*world), "created on the populated world, voxel size " + std::to_string(voxel_size));
    }
  }
}

TEST_CASE("MaskIndex validate: valid as the grid grows and when the world is too spread for a grid") {
  auto world = vtp::test::makeWorld();
  std::mt19937_64 rng(33);
  vtp::test::randomEdits(*world, VoxelBox{{-12, -10, -12}, {12, 10, 12}}, 10, rng);
  auto index = makeIndex(*world);
  checkValid(*index, "grid");
  REQUIRE(world->fillSphere({120.0, 4.0, -100.0}, 3.0, 2).ok());  // outside the grid and its room
  checkValid(*index, "grown grid");
  REQUIRE(world->fillSphere({30000.0, 0.0, -30000.0}, 3.0, 2).ok());  // too far for any grid
  checkValid(*index, "hash table");
  vtp::test::randomEdits(*world, VoxelBox{{-12, -10, -12}, {12, 10, 12}}, 3, rng);
  checkValid(*index, "hash table after edits");
  checkValid(*makeIndex(*world), "created on the spread world");
  REQUIRE(world->clearBox({{29990, -10, -30010}, {30010, 10, -29990}}).ok());
  checkValid(*index, "after clearing the far sphere");
}
