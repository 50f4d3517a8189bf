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

int WaterForces::apply(std::span<btRigidBody* const> bodies, physics::TaskRunner* tasks) {
  m_wet.assign(bodies.size(), 0);
  auto one = [&](std::size_t k, unsigned) {
    btRigidBody* body = bodies[k];
    if (!body->isActive()) return;
    btVector3 lo, hi;
    body->getAabb(lo, hi);
    if (double(lo.y()) >= m_top) return;
    auto submersion = physics::applyBuoyancy(*m_physics, *body, m_options);
    m_wet[k] = submersion && submersion->volume > 0;
  };
  if (tasks) {
    tasks->forEach(bodies.size(), one);
  } else {
    for (std::size_t k = 0; k < bodies.size(); ++k) one(k, 0);
  }
  int wet = 0;
  for (unsigned char w : m_wet) wet += w;
  return wet;
}

}  // namespace vtp::tools::sim
