#pragma once
// Water for vtp-sim's bodies: Archimedes' force and drag from vtp's water (physics/bullet/buoyancy.h) on every body
// that reaches below the top of the world's water, before each step. The same code runs in both collision modes, on
// a TerrainPhysics of the mode's world made for it alone (outside the allocation hook's scopes and outside time to
// first step): water is not terrain collision, so neither mode's collision figures include it; its time is reported
// on its own (`water_ms_per_step_p50`) and is not part of the step time. (Its masks follow the edits like the vtp
// mode's: that listener runs inside the edit, in both modes alike.)

#include <btBulletDynamicsCommon.h>

#include <memory>
#include <span>
#include <vector>

#include "scene.h"
#include "vtp/physics/bullet/buoyancy.h"
#include "vtp/physics/task_runner.h"
#include "vtp/physics/terrain_physics.h"

namespace vtp::tools::sim {

class WaterForces {
 public:
  /// Nothing to do (nullptr) when the scene has no water.
  static Result<std::unique_ptr<WaterForces>> create(terrain::World& world, const Scene& scene);
  /// Applies buoyancy and drag to the bodies that reach below the water's top; returns how many had water around
  /// them. Bodies whose shape or pose the water query rejects are left alone. On `tasks`' threads when given (each
  /// body's force is its own; the same forces for any number of threads).
  int apply(std::span<btRigidBody* const> bodies, physics::TaskRunner* tasks);

 private:
  std::unique_ptr<physics::TerrainPhysics> m_physics;
  physics::BuoyancyOptions m_options;
  double m_top = 0;  ///< [Unit: world units]
  std::vector<unsigned char> m_wet;  ///< per body, reused
};

}  // namespace vtp::tools::sim
