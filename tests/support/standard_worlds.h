#pragma once
// Test helpers: small standard worlds that several tests build the same way.

#include <doctest/doctest.h>

#include <memory>

#include "support/materials.h"
#include "support/random_world.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

/// Flat ground: full rock 8 voxels deep below y = 0 over x, z in [-half_width, half_width), air elsewhere, so the
/// surface is the plane y = 0 (half_width 16: the 4x4 chunk columns around the origin). Fails the test on an error.
inline std::unique_ptr<terrain::World> flatRockWorld(int half_width) {
  auto world = makeWorld();
  REQUIRE(world->fillBox({{-half_width, -8, -half_width}, {half_width, 0, half_width}}, kRockId).ok());
  return world;
}

}  // namespace vtp::test
