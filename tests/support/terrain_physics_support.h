#pragma once
// Test helpers for queries across chunks: a TerrainPhysics for a test's world, and random segments.

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <random>

#include "vtp/physics/terrain_physics.h"
#include "vtp/terrain/world.h"

namespace vtp::test {

/// The physics of `world` (which must outlive it).
inline std::unique_ptr<physics::TerrainPhysics> makePhysics(terrain::World& world) {
  auto created = physics::TerrainPhysics::create(world);
  REQUIRE(created.ok());
  return std::move(created.value());
}

/// Random segments for ray tests: origins uniform in [-e, e] x [-e/2, e/2] x [-e, e], directions uniform on the
/// sphere (unnormalised), `length` long. The same seed gives the same rays. [Unit: world units]
class RandomRays {
 public:
  explicit RandomRays(double extent) : m_at(-extent, extent) {}
  physics::Ray next(std::mt19937_64& rng, double length) {
    physics::Ray ray;
    ray.origin = {m_at(rng), m_at(rng) / 2, m_at(rng)};
    ray.direction = {m_normal(rng), m_normal(rng), m_normal(rng)};
    ray.max_t = length / std::sqrt(ray.direction[0] * ray.direction[0] + ray.direction[1] * ray.direction[1] +
                                   ray.direction[2] * ray.direction[2]);
    return ray;
  }

 private:
  std::uniform_real_distribution<double> m_at;
  std::normal_distribution<double> m_normal;
};

}  // namespace vtp::test
