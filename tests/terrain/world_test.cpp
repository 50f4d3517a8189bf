#include <doctest/doctest.h>

#include "support/random_world.h"
#include "vtp/terrain/world.h"

using namespace vtp::terrain;

TEST_CASE("World") {
  auto world = vtp::test::makeWorld();
  SUBCASE("a new world is all air") {
    CHECK(world->voxel({0, 0, 0}) == kAir);
    CHECK(world->stats().stored_chunks == 0);
  }
}
