// Buoyancy for Bullet rigid bodies (buoyancy.h): Bullet shape -> ConvexShape, submerged(), then Archimedes' force at
// the centre of buoyancy and drag proportional to the submerged fraction.
#include "vtp/physics/bullet/buoyancy.h"

#include <cmath>
#include <string>

namespace vtp::physics {
namespace {

Error bad(const std::string& what) { return Error{ErrorCode::kInvalidArgument, "buoyancy: " + what, {}}; }

Status validateOptions(const BuoyancyOptions& o) {
  auto nonNegative = [](double v) { return std::isfinite(v) && v >= 0; };
  if (!nonNegative(o.fluid_density)) return bad("fluid density must be finite and >= 0");
  for (double g : o.gravity)
    if (!std::isfinite(g)) return bad("gravity must be finite");
  if (!nonNegative(o.linear_drag) || !nonNegative(o.angular_drag)) return bad("drag rates must be finite and >= 0");
  return {};
}

}  // namespace

Result<ConvexShape> convexShapeOf(const btCollisionShape& shape, std::vector<std::array<float, 3>>& hull_points) {
  switch (shape.getShapeType()) {
    case SPHERE_SHAPE_PROXYTYPE:
      return ConvexShape::sphere(static_cast<const btSphereShape&>(shape).getRadius());
    case BOX_SHAPE_PROXYTYPE: {
      const auto& box = static_cast<const btBoxShape&>(shape);
      const btVector3 h = box.getHalfExtentsWithMargin();
      return ConvexShape::box({h.x(), h.y(), h.z()}, box.getMargin());
    }
    case CAPSULE_SHAPE_PROXYTYPE: {
      const auto& capsule = static_cast<const btCapsuleShape&>(shape);
      if (capsule.getUpAxis() != 1) return bad("only capsules along Y (btCapsuleShape) are supported");
      return ConvexShape::capsule(capsule.getRadius(), capsule.getHalfHeight());
    }
    case CYLINDER_SHAPE_PROXYTYPE: {
      const auto& cylinder = static_cast<const btCylinderShape&>(shape);
      if (cylinder.getUpAxis() != 1) return bad("only cylinders along Y (btCylinderShape) are supported");
      const btVector3 h = cylinder.getHalfExtentsWithMargin();
      return ConvexShape::cylinder(h.x(), h.y(), cylinder.getMargin());
    }
    case CONVEX_HULL_SHAPE_PROXYTYPE: {
      const auto& hull = static_cast<const btConvexHullShape&>(shape);
      hull_points.resize(std::size_t(hull.getNumPoints()));
      for (int i = 0; i < hull.getNumPoints(); ++i) {
        const btVector3 p = hull.getScaledPoint(i);
        hull_points[std::size_t(i)] = {p.x(), p.y(), p.z()};
      }
      return ConvexShape::hull(hull_points, hull.getMargin());
    }
    default:
      return bad(std::string("unsupported collision shape ") + shape.getName());
  }
}

Result<Submersion> applyBuoyancy(const TerrainPhysics& physics, btRigidBody& body, const BuoyancyOptions& options) {
  if (Status s = validateOptions(options); !s) return s.error();
  const btCollisionShape* collision = body.getCollisionShape();
  if (collision == nullptr) return bad("body has no collision shape");
  thread_local std::vector<std::array<float, 3>> hull_points;
  Result<ConvexShape> shape = convexShapeOf(*collision, hull_points);
  if (!shape) return shape.error();
  const btTransform& transform = body.getCenterOfMassTransform();
  const btVector3 origin = transform.getOrigin();
  const btQuaternion q = transform.getRotation();
  const Pose pose{{origin.x(), origin.y(), origin.z()}, {q.x(), q.y(), q.z(), q.w()}};
  Result<Submersion> sub = submerged(physics, *shape, pose);
  if (!sub || sub->volume <= 0 || body.getInvMass() == 0) return sub;

  const double f = sub->volume / sub->shape_volume;
  const auto& g = options.gravity;
  const double lift = -options.fluid_density * sub->volume;
  const btVector3 at(btScalar(sub->centre[0] - origin.x()), btScalar(sub->centre[1] - origin.y()),
                     btScalar(sub->centre[2] - origin.z()));
  const btVector3 buoyancy(btScalar(lift * g[0]), btScalar(lift * g[1]), btScalar(lift * g[2]));
  const double mass = 1.0 / body.getInvMass();
  const btVector3 drag = body.getLinearVelocity() * btScalar(-options.linear_drag * f * mass);
  // Angular drag needs the inertia: none when rotation is locked (a singular inverse inertia).
  const btMatrix3x3& inv_inertia = body.getInvInertiaTensorWorld();
  const btVector3 torque = std::abs(inv_inertia.determinant()) > 1e-30f
                               ? inv_inertia.inverse() * body.getAngularVelocity() * btScalar(-options.angular_drag * f)
                               : btVector3(0, 0, 0);
  // Finite options can still give forces beyond a float (a density of 1e300, a gravity of 1e39): refused before the
  // body is touched, as an infinite force would poison it at the next step. Bullet adds the lift's torque about the
  // centre of mass (at x lift) and sums the forces: those are checked too.
  const btVector3 lift_torque = at.cross(buoyancy), total = buoyancy + drag, total_torque = lift_torque + torque;
  for (const btVector3* v : {&buoyancy, &drag, &torque, &lift_torque, &total, &total_torque}) {
    if (!std::isfinite(v->x()) || !std::isfinite(v->y()) || !std::isfinite(v->z())) {
      return bad("the forces are not finite in single precision (options or the body's velocity too large)");
    }
  }
  body.activate();
  body.applyForce(buoyancy, at);
  body.applyCentralForce(drag);
  body.applyTorque(torque);
  return sub;
}

}  // namespace vtp::physics
