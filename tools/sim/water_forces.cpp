// Buoyancy for vtp-sim's bodies (water_forces.h).
#include "water_forces.h"

namespace vtp::tools::sim {

Result<std::unique_ptr<WaterForces>> WaterForces::create(terrain::World& world, const Scene& scene) {
  if (!scene.water.has_water) return std::unique_ptr<WaterForces>();
  auto physics = physics::TerrainPhysics::create(world);
  if (!physics) return physics.error();
  auto forces = std::unique_ptr<WaterForces>(new WaterForces());
  forces->m_physics = std::move(physics.value());
  forces->m_options.gravity = {0, -9.81 * scene.voxel_size, 0};
  forces->m_top = scene.water.water_top * scene.voxel_size;
  return forces;
}

int WaterForces::apply(std::span<btRigidBody* const> bodies) {
  int wet = 0;
  for (btRigidBody* body : bodies) {
    if (!body->isActive()) continue;
    btVector3 lo, hi;
    body->getAabb(lo, hi);
    if (double(lo.y()) >= m_top) continue;
    auto submersion = physics::applyBuoyancy(*m_physics, *body, m_options);
    if (submersion && submersion->volume > 0) ++wet;
  }
  return wet;
}

}  // namespace vtp::tools::sim
