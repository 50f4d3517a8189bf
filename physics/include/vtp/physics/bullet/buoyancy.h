#pragma once
/// \file
/// Buoyancy for Bullet rigid bodies: the body's collision shape is converted to a ConvexShape, its submerged volume
/// and centre of buoyancy come from the water voxels (water.h), and the helper applies Archimedes' force there plus a
/// simple water drag. Call it once per simulation step for every body that may be in water, before
/// btDynamicsWorld::stepSimulation (Bullet clears applied forces after each step; with more than one internal substep
/// per call, call it from a pre-tick callback instead so every substep gets it).
///
/// Units: Bullet's world units are the terrain's world units (voxels x voxel_size); with voxel_size = 1 m and SI
/// densities and gravity the forces are in newtons.
/// Thread-safety: reads the terrain like any water query; writes only the given body (Bullet's own rules apply: not
/// while the dynamics world is stepping).

#include <btBulletDynamicsCommon.h>

#include <array>
#include <vector>

#include "vtp/physics/terrain_physics.h"
#include "vtp/physics/water.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

struct BuoyancyOptions {
  /// Mass per world unit^3 of the water (kg/m^3 when a world unit is a metre); finite, >= 0.
  double fluid_density = 1000;
  /// Gravity; buoyancy pushes against it: F = -fluid_density * gravity * V. [Unit: world units / s^2]; finite.
  std::array<double, 3> gravity{0, -9.81, 0};
  /// Linear drag rate: a force -linear_drag * f * m * v on the centre of mass, with f the submerged fraction
  /// (volume / shape volume), m the body's mass and v its velocity, so a fully submerged body loses speed at
  /// linear_drag per second whatever its mass. [Unit: 1/s]; finite, >= 0.
  double linear_drag = 2.0;
  /// Angular drag rate: a torque -angular_drag * f * I * w, with I the body's world inertia tensor and w its angular
  /// velocity. [Unit: 1/s]; finite, >= 0.
  double angular_drag = 2.0;
};

/// Applies buoyancy and drag to `body` for the coming step and returns its submersion (water.h). Supported collision
/// shapes: btSphereShape, btBoxShape, btCapsuleShape (Y axis), btCylinderShape (Y axis) and btConvexHullShape (its
/// local scaling applied); margins as in shape.h. A static or kinematic body (zero inverse mass) gets its submersion
/// and no force. A body with some volume submerged is activated.
/// Errors: another shape type, a capsule or cylinder along X or Z, invalid options, or forces that do not fit a float
/// (finite options such as a density of 1e300, or a body moving too fast for its drag) (kInvalidArgument); whatever
/// submerged() returns (an invalid pose, out of range). The body is unchanged on error.
Result<Submersion> applyBuoyancy(const TerrainPhysics& physics, btRigidBody& body, const BuoyancyOptions& options = {});

/// The engine-neutral shape of a Bullet collision shape (the conversion applyBuoyancy uses). A convex hull's points
/// (scaled) are copied into `hull_points`, which the returned shape refers to. Errors as applyBuoyancy's.
Result<ConvexShape> convexShapeOf(const btCollisionShape& shape, std::vector<std::array<float, 3>>& hull_points);

}  // namespace vtp::physics
