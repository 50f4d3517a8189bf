#pragma once
// Test helper: a TerrainPhysics for a test's world, failing the test if creation fails.

#include <doctest/doctest.h>

#include <memory>

#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

/// The physics of `world` (which must outlive it).
inline std::unique_ptr<physics::TerrainPhysics> makePhysics(terrain::World& world) {
  auto created = physics::TerrainPhysics::create(world);
  REQUIRE(created.ok());
  return std::move(created.value());
}

}  // namespace vtp::test
