#pragma once
/// \file
/// Engine-neutral convex shapes and poses: what a contact or water query is asked about. No Bullet types here; the
/// physics library converts to Bullet's shapes internally (vtp/physics/bullet/bullet_terrain.h is the Bullet side).
///
/// The definitions are Bullet's so a server moving between the two APIs sees the same bodies: capsules and cylinders
/// stand along their local Y axis; a shape's `margin` is Bullet's collision margin (a box's and a cylinder's margin
/// lies inside their given extents, a sphere's and a capsule's radius is the margin, a hull's margin is added around
/// its points). [Unit: world units]

#include <array>
#include <cstdint>
#include <span>

#include "vtp/physics/world_vec.h"
#include "vtp/terrain/status.h"

namespace vtp::physics {

enum class ShapeKind : std::uint8_t { kSphere, kBox, kCapsule, kCylinder, kConvexHull };

/// A convex shape in its local frame. Make one with the factories; they do not validate (validate() does, and every
/// query calls it).
struct ConvexShape {
  ShapeKind kind = ShapeKind::kSphere;
  /// Box and cylinder: half extents (a cylinder's radius is x, its half height y). Unused otherwise.
  std::array<double, 3> half_extents{};
  /// Sphere and capsule radius.
  double radius = 0;
  /// Capsule: half the distance between its two sphere centres.
  double half_height = 0;
  /// Convex hull points (local frame, not owned: they must outlive the query). At most 256.
  std::span<const std::array<float, 3>> points;
  /// Collision margin (see the file comment). Bullet's default 0.04 for boxes, cylinders and hulls.
  double margin = 0.04;

  static ConvexShape sphere(double radius) {
    ConvexShape s;
    s.kind = ShapeKind::kSphere;
    s.radius = radius;
    s.margin = radius;
    return s;
  }
  static ConvexShape box(std::array<double, 3> half_extents, double margin = 0.04) {
    ConvexShape s;
    s.kind = ShapeKind::kBox;
    s.half_extents = half_extents;
    s.margin = margin;
    return s;
  }
  static ConvexShape capsule(double radius, double half_height) {
    ConvexShape s;
    s.kind = ShapeKind::kCapsule;
    s.radius = radius;
    s.half_height = half_height;
    s.margin = radius;
    return s;
  }
  static ConvexShape cylinder(double radius, double half_height, double margin = 0.04) {
    ConvexShape s;
    s.kind = ShapeKind::kCylinder;
    s.half_extents = {radius, half_height, radius};
    s.margin = margin;
    return s;
  }
  static ConvexShape hull(std::span<const std::array<float, 3>> points, double margin = 0.04) {
    ConvexShape s;
    s.kind = ShapeKind::kConvexHull;
    s.points = points;
    s.margin = margin;
    return s;
  }
};

/// The most points a convex hull may have.
inline constexpr std::size_t kMaxHullPoints = 256;

/// Checks a shape: finite positive sizes (every extent and radius > 1e-4 world units, the margin finite, >= 0 and not
/// larger than a box's or cylinder's smallest half extent), 4..kMaxHullPoints finite hull points spanning a volume.
/// Errors: kInvalidArgument with what is wrong.
Status validate(const ConvexShape& shape);

/// A rigid transform: the shape's local frame placed in the world.
struct Pose {
  WorldVec3 position;                                   ///< [Unit: world]
  std::array<double, 4> rotation{0.0, 0.0, 0.0, 1.0};  ///< Unit quaternion x, y, z, w.
};

/// Checks a pose: finite, the quaternion's length within 1e-3 of 1. Errors: kInvalidArgument.
Status validate(const Pose& pose);

}  // namespace vtp::physics
